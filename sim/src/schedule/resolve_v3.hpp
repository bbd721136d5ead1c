// resolve_v3.hpp — resolve()'s steps for V3, FA3's Hopper forward (internal to sim/src/schedule;
// resolve.cpp calls them in its order, resolve_v3.cpp holds the rules).
#pragma once

#include <cstdint>
#include <utility>

#include "flashlab/config/config.hpp"

namespace flashlab::v3_resolve {

/// The largest tile V3 takes (blocks): three consumer warpgroups of 64 rows, a WGMMA's largest N.
inline constexpr std::int64_t kMaxBr = 192, kMaxBc = 256;

/// Throws ConfigError naming the first V3 switch given (--warp-specialize, --stages, --pingpong,
/// --intra-overlap, --scheduler) when c.algo is not v3: they mean nothing to another algorithm.
void refuse_hopper_switches(const Config& c);

/// What V3 takes (FA3's Hopper forward, hopper/flash_api.cpp): the forward pass only, fp16 or bf16,
/// d <= 256, --block-skip on or unset (V2's loop: resolve.cpp's untaken_switch refuses --order,
/// --grid, --rescale, --warp-split), explicit or default tiles (no --br/--bc auto). Throws ConfigError naming the field otherwise.
void check_config(const Config& c);

/// {B_r, B_c}: --br and --bc as given, else FA3's tile for d and the mask (fa3_forward_tile). B_r
/// must be 64, 128 or 192 (one to three consumer warpgroups of 64 rows: FA3's NumMmaWarpGroups),
/// B_c a multiple of 16 from 16 to 256 (a WGMMA's N). Throws ConfigError otherwise.
std::pair<std::int64_t, std::int64_t> blocks(const Config& c);

/// p.hopper from FA3's defaults (fa3_switches(d, B_r)) and the switches given, and p.warps: 4 per
/// consumer warpgroup plus the producer warpgroup's 4 with warp specialization (FA3 launches
/// (B_r / 64 + 1) x 128 threads). Requires p.tiling. Throws ConfigError for --pingpong on with one
/// consumer warpgroup, and for --warps other than that count.
void resolve_switches(const Config& c, Problem& p);

/// Throws ConfigError ("br x bc") when the tiles V3 keeps in SRAM — Q_i, `stages` buffers of K_j
/// and V_j, P~_ij where FA3 keeps it there — exceed p.sram_capacity, naming the bytes, the
/// capacity and the stages (fewer stages or a smaller B_c fit).
void check_sram(const Problem& p);

}  // namespace flashlab::v3_resolve
