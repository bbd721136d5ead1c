// counters.cpp — arithmetic and names of the counters (the contract's enums: contract/names.hpp).
#include "flashlab/executor/counters.hpp"

#include <iterator>

namespace flashlab {

Cost& Cost::operator+=(const Cost& o) {
  for (int t = 0; t < kTensorCount; ++t)
    for (int d = 0; d < kDirCount; ++d) hbm[t][d] += o.hbm[t][d];
  for (int k = 0; k < kOpKindCount; ++k) ops[k] += o.ops[k];
  flops += o.flops;
  return *this;
}

Cost& Cost::operator*=(std::uint64_t f) {
  for (auto& t : hbm)
    for (auto& x : t) x *= f;
  for (auto& k : ops) k *= f;
  flops *= f;
  return *this;
}

std::uint64_t total(const TensorBytes& b, Dir d) {
  std::uint64_t s = 0;
  for (const auto& t : b) s += t[int(d)];
  return s;
}

std::uint64_t Cost::read_bytes() const { return total(hbm, Dir::read); }

std::uint64_t Cost::write_bytes() const { return total(hbm, Dir::write); }

std::uint64_t Cost::atomic_bytes() const { return total(hbm, Dir::atomic); }

std::string_view to_string(Dir d) {
  static constexpr std::string_view names[] = {"read", "write", "atomic"};
  static_assert(std::size(names) == kDirCount);
  return names[int(d)];
}

std::string_view to_string(OpKind k) {
  static constexpr std::string_view names[] = {"exp", "max", "add", "sub", "mul", "div", "log"};
  return names[int(k)];
}

}  // namespace flashlab
