// counters.cpp — arithmetic and names of the counters.
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

std::string_view to_string(Tensor t) {
  static constexpr std::string_view names[] = {"Q",  "K",  "V",  "O", "l",     "m",  "L",  "S", "P",
                                                "dO", "dQ", "dK", "dV", "D", "dQacc", "dP", "dS", "Oacc", "Lacc", "-"};
  static_assert(std::size(names) == kTensorCount + 1);
  return names[int(t)];
}

std::string_view to_string(Op o) {
  static constexpr std::string_view names[] = {"load", "store", "compute", "skip", "barrier", "reduce", "atomic"};
  static_assert(std::size(names) == kOpCount);
  return names[int(o)];
}

std::string_view to_string(Eq e) {
  static constexpr std::string_view names[] = {"-",          "init_stats", "scores",        "softmax_v1",
                                                "output_v1",  "softmax_v2", "output_v2",     "finalize_v2",
                                                "softmax_dense", "output_dense", "normalize",   "logsumexp",
                                                "bwd_D",      "init_grads", "zero_dq",       "probs_v1",      "probs_v2",
                                                "grad_v",     "grad_p",     "grad_s",        "grad_q",
                                                "grad_k",     "convert_dq", "grad_v_dense",  "grad_p_dense",
                                                "grad_s_dense", "grad_q_dense", "grad_k_dense", "finalize_split", "combine"};
  static_assert(std::size(names) == kEqCount);
  return names[int(e)];
}

std::string_view to_string(TileClass c) {
  static constexpr std::string_view names[] = {"full", "partial", "skipped"};
  return names[int(c)];
}

}  // namespace flashlab
