// config.cpp — defaults: FA2's tiles and warps, the presets' switches, split-KV's tile and split
// count. Checking and resolving a Config into a Problem (resolve(), tile fitting) needs the
// schedule's SRAM rule: schedule/resolve.cpp. The names of config values are in config_names.cpp.
#include "flashlab/config/config.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "flashlab/contract/error.hpp"

namespace flashlab {

int element_bytes(Dtype t) { return t == Dtype::fp32 ? 4 : 2; }

Fa2BackwardTraits fa2_backward_traits(std::int64_t d) {
  if (d < 1 || d > 256) throw ConfigError("d", std::to_string(d), "1 to 256 (FA2's backward kernels)");
  const std::int64_t hd = d <= 32 ? 32 : (d + 31) / 32 * 32;
  if (hd <= 64) return {hd, 128, 128, 8, 4};   // run_mha_bwd_hdim32, hdim64
  if (hd <= 128) return {hd, 64, 128, 8, 2};   // hdim96, hdim128
  return {hd, 64, 64, 8, 4};                    // hdim160 ... hdim256
}

std::pair<std::int64_t, std::int64_t> default_blocks(std::int64_t d, Pass pass) {
  if (pass == Pass::backward) {
    const Fa2BackwardTraits t = fa2_backward_traits(std::min<std::int64_t>(d, 256));
    return {t.b_r, t.b_c};
  }
  if (d <= 64) return {128, 128};
  if (d <= 128) return {128, 64};
  return {64, 64};
}

int default_warps(Algo algo, Pass pass, std::int64_t d, std::int64_t b_r, std::int64_t b_c) {
  const bool fa2_tile = algo == Algo::v2 && pass == Pass::backward && d <= 128 &&
                        std::pair<std::int64_t, std::int64_t>{b_r, b_c} == default_blocks(d, Pass::backward);
  return fa2_tile ? int(fa2_backward_traits(d).warps) : 4;
}

Switches preset_switches(Algo a) {
  switch (a) {
    case Algo::v1: return {LoopOrder::kv_outer, GridKind::head, Rescale::step, WarpSplit::split_k, false};
    case Algo::v2:
    case Algo::v3: return {LoopOrder::q_outer, GridKind::q_block, Rescale::delayed, WarpSplit::split_q, true};
    case Algo::standard: break;
  }
  return {LoopOrder::q_outer, GridKind::q_block, Rescale::delayed, WarpSplit::split_q, false};
}

std::vector<WalkStep> v1_to_v2_walk() {
  std::vector<WalkStep> out;
  Switches s = preset_switches(Algo::v1);
  out.push_back({"V1 (FA1 Algorithm 1)", "v1", s});
  s.order = LoopOrder::q_outer;
  out.push_back({"+ Q outer loop: O_i on chip", "order", s});
  s.grid = GridKind::q_block;
  out.push_back({"+ one block per Q block", "grid", s});
  s.rescale = Rescale::delayed;
  out.push_back({"+ delayed rescaling", "rescale", s});
  s.split = WarpSplit::split_q;
  out.push_back({"+ split-Q warps", "warp_split", s});
  s.block_skip = true;
  out.push_back({"+ block skip = V2 (FA2 Alg. 1)", "block_skip", s});
  return out;
}

Config with_switches(Config c, const Switches& s) {
  c.algo = Algo::v1;
  c.order = s.order;
  c.grid = s.grid;
  c.rescale = s.rescale;
  c.split = s.split;
  c.block_skip = s.block_skip;
  return c;
}

std::pair<std::int64_t, std::int64_t> split_blocks(std::int64_t d) {
  return {64, d <= 64 ? 256 : d <= 128 ? 128 : 64};
}

std::int64_t split_heuristic(std::int64_t work, std::int64_t slots, std::int64_t kv_blocks, std::int64_t max_splits) {
  if (double(work) >= 0.8 * double(slots)) return 1;  // enough thread blocks to almost fill the GPU
  const std::int64_t most = std::min({max_splits, slots, kv_blocks});
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  // s splits that leave ceil(kv_blocks / s) as for s - 1 are s - 1 splits with an empty one
  const auto eligible = [&](std::int64_t s) { return s == 1 || ceil_div(kv_blocks, s) != ceil_div(kv_blocks, s - 1); };
  std::vector<double> eff(std::size_t(std::max<std::int64_t>(most, 0)) + 1, 0.0);
  double best = 0;
  for (std::int64_t s = 1; s <= most; ++s) {
    if (!eligible(s)) continue;
    const double waves = double(work * s) / double(slots);
    eff[std::size_t(s)] = waves / std::ceil(waves);
    best = std::max(best, eff[std::size_t(s)]);
  }
  for (std::int64_t s = 1; s <= most; ++s)
    if (eligible(s) && eff[std::size_t(s)] >= 0.85 * best) return s;
  return 1;
}

}  // namespace flashlab
