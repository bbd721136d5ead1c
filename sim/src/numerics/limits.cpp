// limits.cpp — the size of problem the tools run the numerics on (numerics.hpp check_numerics_size,
// limits.hpp).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/limits.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/report/format.hpp"

namespace flashlab {

void check_numerics_size(const Problem& p) {
  // FA2's backward with grouped K/V heads ends in at::sum over each group's expanded dK, dV
  // (docs/model.md "What PyTorch's FA2 backward launches"): a sum over query heads, which the
  // numerics, walking one (batch, head), do not hold; counting it needs no values
  if (p.kernel == Kernel::fa2 && p.backward() && p.kv_heads < p.heads)
    throw ConfigError("kv-heads", std::to_string(p.kv_heads),
                      fmt::format("heads ({}) with --kernel fa2 --pass backward in run: FA2's backward sums each "
                                  "group's dK, dV over its query heads (at::sum), and the numerics walk one "
                                  "(batch, head); `flashlab count` and `trace` count it, or leave --kernel fa2 out",
                                  p.heads));
  const std::int64_t n_q = p.tiling.n_q, n_k = p.tiling.n_k;
  if (n_q > kNumericsMaxScores / n_k)
    throw ConfigError("nq*nk", fmt::format("{}*{} = {} elements", n_q, n_k, report::group_digits(std::uint64_t(n_q * n_k))),
                      fmt::format("at most 2^28 = {} score elements in numerics (the float64 reference holds "
                                  "N_q x N_k); lower --nq/--nk/--seq, or use `flashlab count`",
                                  report::group_digits(std::uint64_t(kNumericsMaxScores))));
  const std::int64_t d = std::max<std::int64_t>(p.tiling.d, 64);
  if (n_q * n_k > kNumericsMaxWork / d)
    throw ConfigError("nq*nk*max(d,64)",
                      fmt::format("{}*{}*{} = {}", n_q, n_k, d, report::group_digits(std::uint64_t(n_q * n_k) * std::uint64_t(d))),
                      fmt::format("at most 2^34 = {} (the work of the float64 reference and of the simulation, "
                                  "N_q N_k d multiply-adds each); lower --nq/--nk/--seq or --d, or use `flashlab count`",
                                  report::group_digits(std::uint64_t(kNumericsMaxWork))));
}

}  // namespace flashlab
