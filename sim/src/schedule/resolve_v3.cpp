// resolve_v3.cpp — resolve()'s rules for V3 (resolve_v3.hpp).
#include "resolve_v3.hpp"

#include <algorithm>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

std::pair<std::string, std::string> hopper_switch_given(const Config& c) {
  if (c.warp_specialize) return {"warp-specialize", std::string(on_off(*c.warp_specialize))};
  if (c.stages) return {"stages", std::to_string(*c.stages)};
  if (c.pingpong) return {"pingpong", std::string(on_off(*c.pingpong))};
  if (c.intra_overlap) return {"intra-overlap", std::string(on_off(*c.intra_overlap))};
  if (c.scheduler) return {"scheduler", std::string(to_string(*c.scheduler))};
  return {};
}

}  // namespace flashlab

namespace flashlab::v3_resolve {

void refuse_hopper_switches(const Config& c) {
  if (const auto [flag, value] = hopper_switch_given(c); !flag.empty())
    throw ConfigError(flag, value,
                      "none with --algo " + std::string(to_string(c.algo)) +
                          ": it is a switch of --algo v3 only (FA3's Hopper schedule)");
}

void check_config(const Config& c) {
  if (c.pass != Pass::forward)
    throw ConfigError("pass", std::string(to_string(c.pass)),
                      "forward with --algo v3 (FA3's backward is not modelled for v3)");
  if (c.dtype == Dtype::fp32)
    throw ConfigError("dtype", "fp32", "fp16 or bf16 with --algo v3 (FA3's Hopper forward takes no fp32 inputs)");
  if (c.d > 256) throw ConfigError("d", std::to_string(c.d), "1 to 256 with --algo v3 (FA3's largest head dim)");
  if (c.gpu != "h100" && c.gpu != "h200")
    throw ConfigError("gpu", c.gpu, "h100 or h200 with --algo v3 (FA3's schedule needs Hopper's TMA, mbarriers and WGMMA)");
  if (c.block_skip && !*c.block_skip)
    throw ConfigError("block-skip", "off", "on with --algo v3 (FA3 always skips the tiles a causal or window mask hides)");
  if (c.auto_blocks)
    throw ConfigError("br/bc", "auto", "explicit sizes or none with --algo v3 (none: FA3's tile for d, hopper/tile_size.h)");
  if (c.splits && *c.splits != 1)
    throw ConfigError("splits", *c.splits == 0 ? "auto" : std::to_string(*c.splits),
                      "1 with --algo v3 (FA3's split-KV, its num_splits, is not modelled; split-KV is V2's: --algo v2)");
}

std::pair<std::int64_t, std::int64_t> blocks(const Config& c) {
  const Fa3Tile t = fa3_forward_tile(c.d, c.mask.kind);
  const std::int64_t b_r = c.b_r.value_or(t.b_r), b_c = c.b_c.value_or(t.b_c);
  if (b_r != 64 && b_r != 128 && b_r != kMaxBr)
    throw ConfigError("br", std::to_string(b_r),
                      "64, 128 or 192 with --algo v3 (one to three consumer warpgroups of 64 rows each)");
  if (b_c < 16 || b_c > kMaxBc || b_c % 16 != 0)
    throw ConfigError("bc", std::to_string(b_c), "a multiple of 16 from 16 to 256 with --algo v3 (a WGMMA's N)");
  return {b_r, b_c};
}

void resolve_switches(const Config& c, Problem& p) {
  const HopperSwitches fa3 = fa3_switches(p.tiling.d, p.tiling.b_r);
  p.hopper = {.warp_specialize = c.warp_specialize.value_or(fa3.warp_specialize),
              .stages = c.stages.value_or(fa3.stages),
              .pingpong = c.pingpong.value_or(fa3.pingpong),
              .intra_overlap = c.intra_overlap.value_or(fa3.intra_overlap),
              .scheduler = c.scheduler.value_or(fa3.scheduler)};
  const std::int64_t groups = p.tiling.b_r / 64;
  if (p.hopper.pingpong && groups < 2)
    throw ConfigError("pingpong", "on",
                      "off with one consumer warpgroup (B_r = " + std::to_string(p.tiling.b_r) +
                          "): ping-pong alternates two or more (B_r >= 128)");
  const std::int64_t warps = 4 * (groups + (p.hopper.warp_specialize ? 1 : 0));
  if (c.warps && *c.warps != warps)
    throw ConfigError("warps", std::to_string(*c.warps),
                      std::to_string(warps) + " with --algo v3 at B_r = " + std::to_string(p.tiling.b_r) +
                          " (4 per consumer warpgroup" + (p.hopper.warp_specialize ? ", 4 for the producer's" : "") + ")");
  p.warps = int(warps);
}

void check_sram(const Problem& p) {
  const Tiling& t = p.tiling;
  // the SRAM peak of p's schedule at `stages` stages of B_r x d and B_c x d tiles (sram_bytes)
  auto need_at = [&](std::int64_t stages, std::int64_t b_r, std::int64_t b_c) {
    Problem q = p;
    q.hopper.stages = stages;
    return sram_bytes(make_schedule(q), std::min(b_r, t.n_q), std::min(b_c, t.n_k), t.d, p.e_in);
  };
  const std::int64_t need = need_at(p.hopper.stages, t.b_r, t.b_c);
  if (need <= p.sram_capacity) return;
  // what would fit: one stage and the narrowest B_c (a WGMMA's N: 16), at this B_r or at one warpgroup's 64
  const std::int64_t at_b_r = need_at(1, t.b_r, 16), at_64 = need_at(1, 64, 16);
  const std::string fix =
      at_b_r <= p.sram_capacity ? "fewer --stages or a smaller --bc fit"
      : at_64 <= p.sram_capacity
          ? "at B_r = " + std::to_string(t.b_r) + " none fits (1 stage and B_c = 16 need " + std::to_string(at_b_r) +
                " bytes); --br 64 with fewer --stages or a smaller --bc fits"
          : "no V3 tile fits: the smallest, --br 64 --bc 16 with 1 stage, needs " + std::to_string(at_64) +
                " bytes at d = " + std::to_string(t.d) + "; raise --sram";
  throw ConfigError("br x bc", std::to_string(t.b_r) + " x " + std::to_string(t.b_c),
                    "tiles needing at most the SRAM capacity: Q_i, " + std::to_string(p.hopper.stages) +
                        " stages of K_j and V_j (and P~_ij where FA3 keeps it in SRAM) need " + std::to_string(need) +
                        " bytes, the capacity is " + std::to_string(p.sram_capacity) + " bytes; " + fix);
}

}  // namespace flashlab::v3_resolve
