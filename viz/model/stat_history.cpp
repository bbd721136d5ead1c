// stat_history.cpp — see stat_history.hpp.
#include "model/stat_history.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/numerics/limits.hpp"
#include "flashlab/report/format.hpp"

namespace flashlab::viz {

std::string numerics_too_large(const Problem& p) {
  const Tiling& t = p.tiling;
  const std::int64_t work = t.n_q * t.n_k * t.d;
  const std::int64_t stats = t.n_q * (t.t_c() + 2) * 2;
  if (work > kNumericsWorkLimit) {
    // The largest N_q = N_k = N each tool takes at this d (the viewer: N^2 d <= 2^28).
    auto viewer_n = std::int64_t(std::sqrt(double(kNumericsWorkLimit / t.d)));
    while (viewer_n * viewer_n * t.d > kNumericsWorkLimit) --viewer_n;
    while ((viewer_n + 1) * (viewer_n + 1) * t.d <= kNumericsWorkLimit) ++viewer_n;
    const std::string at_d = " at d = " + std::to_string(t.d);
    std::string why = "N_q N_k d = " + report::group_digits(std::uint64_t(work)) + " is over the viewer's limit " +
                      report::group_digits(std::uint64_t(kNumericsWorkLimit)) + " (2^28: N_q = N_k <= " +
                      report::group_digits(std::uint64_t(viewer_n)) + at_d + ")";
    const std::int64_t run_n = numerics_max_square_n(t.d);
    const bool run_takes_it = t.n_q <= kNumericsMaxScores / t.n_k &&
                              t.n_q * t.n_k <= kNumericsMaxWork / std::max<std::int64_t>(t.d, 64);
    why += run_takes_it ? "; `flashlab run --steps I` computes m and l of one Q block at this size"
                        : "; `flashlab run --steps I` takes up to N_q N_k <= 2^28 and N_q N_k max(d, 64) <= 2^34 "
                          "(N_q = N_k <= " + report::group_digits(std::uint64_t(run_n)) + at_d + "): lower --seq (or --nq/--nk)";
    return why;
  }
  if (stats > kNumericsStatLimit)
    return "m and l of every step would be " + report::group_digits(std::uint64_t(stats)) +
           " values, over the limit " + report::group_digits(std::uint64_t(kNumericsStatLimit));
  return "";
}

StatHistory::StatHistory(const Problem& p) {
  if (const std::string why = numerics_too_large(p); !why.empty()) throw ConfigError("numerics", "on", why);
  const Executor schedule(p);
  block_of_.assign(std::size_t(p.tiling.t_r()), 0);
  if (has_tiles(schedule.schedule()))
    for (std::int64_t i = 0; i < p.tiling.t_r(); ++i) block_of_[std::size_t(i)] = schedule.tile_step(i, 0).block;
  NumericsOptions opt;
  opt.trace_blocks.resize(std::size_t(p.tiling.t_r()));
  std::iota(opt.trace_blocks.begin(), opt.trace_blocks.end(), std::int64_t(0));
  const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 0);
  traces_ = simulate(p, in, opt).traces;
}

const StatSnapshot* StatHistory::at(std::int64_t i, std::uint32_t block, std::uint32_t step) const {
  if (i < 0 || i >= blocks()) return nullptr;
  // Steps are numbered within a thread block: where Q block i has a thread block of its own (V2),
  // a step of an earlier block comes before all of i's snapshots, a step of a later block after them.
  const std::uint32_t own = block_of_[std::size_t(i)];
  if (block != own) {
    const auto& s = traces_[std::size_t(i)];
    return block > own && !s.empty() ? &s.back() : nullptr;
  }
  const auto& s = traces_[std::size_t(i)];
  auto it = std::upper_bound(s.begin(), s.end(), step,
                             [](std::uint32_t v, const StatSnapshot& snap) { return v < snap.step; });
  return it == s.begin() ? nullptr : &*(it - 1);
}

StatResult run_numerics(const Problem& p) {
  try {
    return {std::make_shared<const StatHistory>(p), ""};
  } catch (const ConfigError& e) {
    return {nullptr, e.what()};
  }
}

}  // namespace flashlab::viz
