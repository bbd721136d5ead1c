// split_kv.hpp — split-KV's partition of the K/V blocks and the rule for when a forward may be
// split (host + device): the simulator's schedules (schedule.hpp split_range), its configuration
// check (schedule/resolve.cpp) and the CUDA kernels (kernels/src/v2_split.cu, kernels/src/api.cpp)
// all read this one copy, as they read the mask from tiling.hpp.
//
// Source: FA2's flash_fwd_splitkv_kernel (csrc/flash_attn/src/flash_fwd_kernel.h,
// compute_attn_1rowblock_splitkv: n_blocks_per_split = ceil(T_c / num_splits)) and its launch
// limit (flash_api.cpp: num_splits <= 128); Flash-Decoding.
#pragma once

#include <cstdint>

#include "flashlab/contract/hd.hpp"

namespace flashlab {

/// The most splits a forward may take (FA2's limit, flash_api.cpp).
inline constexpr std::int64_t kMaxKvSplits = 128;

/// K/V blocks [first, end) of one split; empty for a split past the last block.
struct SplitRange {
  std::int64_t first = 0, end = 0;
  FL_HD bool empty() const { return first >= end; }
};

/// K/V blocks per split: ceil(T_c / splits) (FA2's n_blocks_per_split). splits >= 1.
FL_HD std::int64_t split_kv_blocks_per_split(std::int64_t t_c, std::int64_t splits) {
  return (t_c + splits - 1) / splits;
}

/// The K/V blocks split s of `splits` walks: [s n, min((s + 1) n, T_c)), n = split_kv_blocks_per_split;
/// the last splits may have fewer blocks or none.
FL_HD SplitRange split_kv_range(std::int64_t t_c, std::int64_t splits, std::int64_t s) {
  const std::int64_t n = split_kv_blocks_per_split(t_c, splits), first = s * n, end = first + n;
  return {first < t_c ? first : t_c, end < t_c ? end : t_c};
}

/// Whether `splits` may split a forward, and if not what is allowed (nullptr: it may). splits = 0
/// stands for "auto" (the simulator picks; FA2's num_splits_heuristic). Split-KV splits V2's K/V
/// loop of the forward: v2_loop says whether the forward is V2's (Q outer, one thread block per Q
/// block, delayed rescaling, split-Q warps), forward whether the pass is the forward alone.
FL_HD const char* split_kv_refusal(std::int64_t splits, bool v2_loop, bool forward) {
  if (splits < 0 || splits > kMaxKvSplits) return "auto or an integer from 1 to 128 (FA2's limit)";
  if (splits == 1) return nullptr;
  if (!v2_loop)
    return "1 unless the forward is V2's loop (--algo v2 with --order q-outer --grid qblock --rescale delayed "
           "--warp-split split-q): split-KV splits V2's K/V loop";
  if (!forward) return "1 unless --pass forward (split-KV is a forward schedule; FA2's backward does not split)";
  return nullptr;
}

}  // namespace flashlab
