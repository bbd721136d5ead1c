// fa3.cpp — FA3's choices for its Hopper forward (config.hpp fa3_forward_tile, fa3_p_in_registers, fa3_switches), read
// off Dao-AILab/flash-attention hopper/tile_size.h (tile_size_fwd_sm90), hopper/
// flash_fwd_launch_template.h (kStages, UsePersistentScheduler) and hopper/
// mainloop_fwd_sm90_tma_gmma_ws.hpp (UseSchedulerBarrier).
#include "flashlab/config/config.hpp"

#include <string>

#include "flashlab/contract/error.hpp"

namespace flashlab {

Fa3Tile fa3_forward_tile(std::int64_t d, MaskKind mask) {
  if (d < 1 || d > 256) throw ConfigError("d", std::to_string(d), "1 to 256 (FA3's Hopper forward)");
  const bool local = mask == MaskKind::window;
  const bool causal = mask == MaskKind::causal_tl || mask == MaskKind::causal_br;
  // tile_size_fwd_sm90, element_size 2, headdim_v = headdim: {kBlockM, kBlockN}
  if (d <= 64) return {192, causal || local ? 128 : 192};
  if (d <= 96) return {192, local ? 128 : 144};
  if (d <= 128) return {128, causal || local ? 128 : 176};
  if (d <= 192) return {128, local ? 96 : 112};
  return {128, local ? 64 : 80};
}

bool fa3_p_in_registers(std::int64_t d, std::int64_t b_c) {
  // tile_size_fwd_sm90's MmaPV_is_RS: same_hdim && use_blockN_128 at d <= 64, false at d <= 96
  if (d <= 64) return b_c <= 128;
  return d > 96;
}

HopperSwitches fa3_switches(std::int64_t d, std::int64_t b_r) {
  const std::int64_t groups = b_r / 64;  // NumMmaWarpGroups
  // UseSchedulerBarrier with IntraWGOverlap (fp16/bf16): two or more warpgroups and d <= 128
  return {.warp_specialize = true, .stages = 2, .pingpong = groups >= 2 && d <= 128, .intra_overlap = true,
          .scheduler = TileScheduler::persistent};
}

}  // namespace flashlab
