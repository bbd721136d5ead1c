// tiles.hpp — what is compiled: the head dims and, per algorithm and kernel family (forward,
// backward, split-KV), the tile shapes (B_r x B_c, warps per thread block). The dispatch chain (common/launch.cuh) instantiates exactly these,
// and compiled_tiles (api.cpp) lists them; nothing else names a shape.
//
// A short list per algorithm, chosen for validation (small, ragged-friendly tiles) and speed
// (FA2's own 128-row tiles). Register limits rule some out at large d (fits below): a warp of
// V2 keeps its rows of O_i (rows x d) and S_ij (rows x B_c) in fp32 registers; a warp of V1 keeps
// its partial P~ V (B_r x d) and its column slice of S_ij (B_r x B_c/W).
#pragma once

#include "flashlab/contract/algo.hpp"
#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {

/// The head dims d the kernels are compiled for.
inline constexpr int kHeadDims[] = {32, 64, 128};

/// The tile shapes of one algorithm (the first `count` entries of `shape`).
struct TileList {
  static constexpr int kMax = 6;
  TileShape shape[kMax];
  int count = 0;
};

/// The tile shapes listed for algorithm `algo` (before the register check of `fits`); with
/// `backward`, listed_backward_tiles:
/// - V2 (split-Q): each warp owns B_r / W rows, a multiple of 16. 128 x 64 with 4 warps gives a
///   warp 32 rows, as FA2's kernels do at d = 64 and 128: every K_j, V_j fragment read from SRAM
///   serves twice the rows, which halves the SRAM reads per FLOP. At d = 128 it needs 192
///   accumulators and ptxas spills about 110 bytes, yet it ran 17% faster than 128 x 128 x 8 on the
///   H200 (265 vs 227 TFLOP/s, batch 4, 16 heads, N = 4096; scripts/gpu/configs/d128_4warps.txt).
///   FA2's own d = 64 tile, 128 x 128 with 4 warps (192 accumulators: compiled at d <= 64), halves
///   the per-step costs that do not grow with B_c (the rescale of O_i, the barriers, the row
///   reductions' shuffles) per key.
/// - V1 (split-K): each warp owns B_c / W key columns, a multiple of 16.
/// - standard attention: the tiles of its S = scale Q K^T and O = P V kernels (split-Q warps).
constexpr TileList listed_tiles(Algo algo) {
  switch (algo) {
    case Algo::standard: return {{{64, 64, 4}, {128, 64, 8}}, 2};
    case Algo::v1: return {{{32, 64, 4}, {64, 64, 4}}, 2};
    case Algo::v2: return {{{64, 64, 4}, {64, 128, 4}, {128, 64, 8}, {128, 128, 8}, {128, 64, 4}, {128, 128, 4}}, 6};
  }
  return {};
}

/// The tile shapes of the backward kernels: FA2's own backward tiles on sm_90
/// (flash_bwd_launch_template.h, the kernels PyTorch 2.11 runs on the H200), 128 x 128 with 8 warps
/// at d = 64 and 64 x 128 with 8 warps at d = 128, and 64 x 64 with 4 (small, ragged-friendly: the
/// validation grid). V2's warps work on grids of 32 keys (common/grad_grid.cuh GridShape), V1's
/// split the B_c keys 16 per warp (B_c = 16 W; common/grad_tile.cuh GradShape); both then split
/// B_r x d for dQ_i = dS_ij K_j. Standard attention has no backward kernel.
constexpr TileList listed_backward_tiles(Algo algo) {
  switch (algo) {
    case Algo::v1: return {{{64, 64, 4}}, 1};
    case Algo::v2: return {{{64, 64, 4}, {128, 128, 8}, {64, 128, 8}}, 3};
    case Algo::standard: break;
  }
  return {};
}

/// The tile shapes of split-KV's kernels (v2_split.cu: the split kernel and its combine) at head
/// dim d: FA2's split tiles (flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch: B_r = 64,
/// B_c = 256 at d = 64, 128 at d = 128; the simulator's split_blocks) and the smaller 64 x 64 and
/// 64 x 128, with 4 warps. Few on purpose: each is one more split kernel for every dtype (compile
/// time). None at d = 32.
constexpr TileList listed_split_tiles(int d) {
  switch (d) {
    case 64: return {{{64, 64, 4}, {64, 128, 4}, {64, 256, 4}}, 3};
    case 128: return {{{64, 64, 4}, {64, 128, 4}}, 2};
    default: return {};
  }
}

/// The tiles of one kernel family of `algo` at head dim d (split: V2's split-KV kernels only).
constexpr TileList family_tiles(Algo algo, Family f, int d) {
  switch (f) {
    case Family::forward: return listed_tiles(algo);
    case Family::backward: return listed_backward_tiles(algo);
    case Family::split: return algo == Algo::v2 ? listed_split_tiles(d) : TileList{};
  }
  return {};
}

/// fp32 accumulator registers per thread that a shape needs at head dim d.
constexpr int v2_acc_registers(TileShape s, int d) { return (s.b_r / s.warps) * (d + s.b_c) / 32; }
constexpr int v1_acc_registers(TileShape s, int d) { return s.b_r * (d + s.b_c / s.warps) / 32; }
/// dQ_i's warp grid in the backward (grad_tile.cuh GradShape): the warps split B_r into this many
/// row groups and d into warps / that many column groups; 32 rows per warp where the columns left
/// per warp are a multiple of 16, else 16 rows; 0 where neither works.
constexpr int backward_dq_row_groups(TileShape s, int d) {
  for (int rows : {32, 16}) {
    const int m = s.b_r / rows;
    if (m >= 1 && s.b_r % rows == 0 && s.warps % m == 0 && d % (s.warps / m) == 0 && (d / (s.warps / m)) % 16 == 0)
      return m;
  }
  return 0;
}

/// V2's backward warp grid (common/grad_grid.cuh GridShape): B_c / 32 groups of 32 keys, the warps
/// of a group splitting B_r (S^T, dP^T) and d (dK_j, dV_j); 0 where the shape has no such grid.
constexpr int backward_key_groups(TileShape s, int d) {
  const int g = s.b_c / 32, per = g > 0 && s.b_c % 32 == 0 && s.warps % g == 0 ? s.warps / g : 0;
  return per > 0 && s.b_r % (16 * per) == 0 && d % (16 * per) == 0 ? g : 0;
}

/// The backward's fp32 accumulators per thread. V1 (grad_tile.cuh GradShape): dK_j and dV_j of its
/// 16 keys (16 x d each), S^T and dP^T of one chunk of queries (GradShape::kQC: at least 16; 64 up
/// to d = 64, at most 32 above). V2 (grad_grid.cuh GridShape): S^T and dP^T of 32 keys x B_r / per,
/// dK_j and dV_j of 32 keys x d / per, per = the warps of a key group.
constexpr int backward_acc_registers(Algo algo, TileShape s, int d) {
  if (algo == Algo::v2) {
    const int g = backward_key_groups(s, d);
    return g > 0 ? 2 * 32 * (s.b_r + d) / (s.warps / g) / 32 : 1 << 20;
  }
  const int chunk = d <= 64 ? (s.b_r < 64 ? s.b_r : 64) : 16;
  return s.b_c == 16 * s.warps ? 2 * (s.b_c / s.warps) * (d + chunk) / 32 : 1 << 20;
}

/// Whether shape s is compiled for family f of algorithm `algo` at head dim d: at most 192
/// accumulator registers for split-Q warps (V2, its split kernel, standard) and 160 for V1's
/// split-K warps, under the 255-register limit. The build prints ptxas's -warn-spills report: the
/// V2 shapes at 192 spill about a hundred bytes, the others at most a few dozen.
constexpr bool fits(Algo algo, TileShape s, int d, Family f = Family::forward) {
  // the forward that writes O and L first runs on the same B_r x B_c
  // (flashlab-gpu: with the same warps where the forward compiles them, else 4), which must fit too
  if (f == Family::backward)
    return algo != Algo::standard && backward_dq_row_groups(s, d) > 0 && backward_acc_registers(algo, s, d) <= 192 &&
           (fits(algo, s, d, Family::forward) || fits(algo, TileShape{s.b_r, s.b_c, 4}, d, Family::forward));
  if (f == Family::split) return algo == Algo::v2 && v2_acc_registers(s, d) <= 192;
  switch (algo) {
    case Algo::v2: case Algo::standard: return v2_acc_registers(s, d) <= 192;
    case Algo::v1: return v1_acc_registers(s, d) <= 160;
  }
  return false;
}

}  // namespace flashlab::gpu
