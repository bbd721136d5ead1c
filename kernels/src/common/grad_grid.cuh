// grad_grid.cuh — one tile (i, j) of V2's backward (FA2 Alg. 2 as released, v2_backward.cu) on
// warp grids, as FA2's kernels tile it (csrc/flash_attn/src/kernel_traits.h Flash_bwd_kernel_traits,
// flash_bwd_kernel.h): P_ij^T and dS_ij^T go through SRAM, so each product has a warp grid of its own.
//
//   1. S^T = K_j Q_i^T, dP^T = V_j dO_i^T (lines 10, 13) on kKG x kQG warps, 32 keys x kQW queries
//      each; P^T = exp(scale S^T - L) and dS^T = P^T o (dP^T - D) (lines 11, 14) in registers, then
//      both into SRAM at the input type. Barrier.
//   2. dQ_i += dS_ij K_j (line 15) on DqGrid (grad_tile.cuh grad_dq), added to HBM by the caller;
//      dV_j += P^T dO_i and dK_j += dS^T Q_i (lines 12, 16) on kKG x (W / kKG) warps, 32 keys x kDW
//      columns of d each, accumulated in registers over the Q blocks.
//
// The split-by-keys tiling of grad_tile.cuh (V1's kernel) keeps P^T and dS^T in registers, but then
// every warp reads all of Q_i and dO_i twice per tile (for S^T and for dK, dV) and 16 keys of K_j and
// V_j per chunk of queries: about a third more shared-memory reads than this grid (ldmatrix per warp
// and tile, d = 128 on 64 x 128 x 8: 192 against 144), and shared memory's bandwidth is what bounds
// the backward on the H200 (tests/data/gpu_profile/backward).
#pragma once

#include "common/grad_tile.cuh"

namespace flashlab::gpu {

/// V2's backward warp grids for a compiled kernel K (an Instance, launch.cuh); dQ_i's is DqGrid's.
/// kKG = B_c / 32 groups of 32 keys (FA2's AtomLayoutNdKV = 4 at B_c = 128), the W / kKG warps of a
/// group split B_r for S^T and dP^T (kQW queries each) and d for dK_j, dV_j (kDW columns each).
/// Accumulators per thread: 2 kQW (S^T, dP^T) + 2 kDW (dK_j, dV_j), 192 on FA2's tiles (128 x 128 x 8
/// at d = 64, 64 x 128 x 8 at d = 128; tiles.hpp fits).
template <class K>
struct GridShape : DqGrid<K> {
  static constexpr int kKG = K::BC / 32;       // key groups
  static constexpr int kQG = K::W / kKG;       // warps per key group
  static constexpr int kQW = K::BR / kQG;      // queries of S^T, dP^T per warp
  static constexpr int kNQ = kQW / 8;          // their n8 tiles
  static constexpr int kMK = 2;                // m16 tiles of a warp's 32 keys
  static constexpr int kDW = K::D / kQG;       // columns of dK_j, dV_j per warp
  static constexpr int kDT = kDW / 8;          // their n8 tiles (GradAcc)
  static_assert(K::W % kKG == 0 && kQW % 16 == 0 && kDW % 16 == 0);
  /// GradSram, then P_ij^T (B_c, B_r) at the input type; a kernel's buffers after it start 256-aligned.
  static constexpr int kSmemBytes = GridShape::kSramBytes + K::BC * K::BR * int(sizeof(typename K::T));
  static_assert(kSmemBytes % 256 == 0);
  static __device__ __forceinline__ int key0(int w) { return (w % kKG) * 32; }
  static __device__ __forceinline__ int query0(int w) { return (w / kKG) * kQW; }
  static __device__ __forceinline__ int col0(int w) { return (w / kKG) * kDW; }
  /// P_ij^T's SRAM tile, after GradSram.
  static __device__ __forceinline__ typename K::T* pt(unsigned char* smem) {
    return reinterpret_cast<typename K::T*>(smem + GridShape::kSramBytes);
  }
};

/// Step 1 for warp w's 32 keys (key0) and kQW queries (query0) of tile t: S^T, dP^T, then P^T and
/// dS^T into SRAM (pt, sram.dS). The caller has Q_i, dO_i, shift and D in SRAM; after this every
/// warp must pass a barrier before step 2 reads them.
template <class Sh>
__device__ __forceinline__ void grid_scores(const GradSram<typename Sh::T>& sram, typename Sh::T* pt, const GradTile& t,
                                            const Band& band, std::int64_t n_q, std::int64_t n_k, float scale,
                                            int lane, int key0, int query0) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, kMK = Sh::kMK, kNQ = Sh::kNQ;
  constexpr float kLog2e = 1.4426950408889634f;
  const SwizzledAt<D> k_at(sram.K + key0 * D, lane % 16, lane / 16);
  const SwizzledAt<D> q_at(sram.Q + query0 * D, lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  const auto kv_bytes = std::uint32_t(smem_addr(sram.V) - smem_addr(sram.K));
  const auto q_do_bytes = std::uint32_t(smem_addr(sram.dO) - smem_addr(sram.Q));
  float p[kMK][kNQ][4], ds[kMK][kNQ][4];
  scores_and_dp<T, kMK, kNQ, D>(p, ds, k_at, kv_bytes, q_at, q_do_bytes);  // lines 10, 13
  if (t.masked) mask_scores_t<kMK, kNQ>(p, band, t.col0 + key0, t.row0 + query0, n_q, n_k, lane);
  probs_and_grad_s<kMK, kNQ>(p, ds, sram.shift, sram.D, query0, scale * kLog2e, lane);  // lines 11, 14
  const SwizzledAt<Sh::BR> ds_at(sram.dS + key0 * Sh::BR, lane / 4, 0, 2 * (lane % 4));
  const SwizzledAt<Sh::BR> pt_at(pt + key0 * Sh::BR, lane / 4, 0, 2 * (lane % 4));
  store_transposed<T, kMK, kNQ, Sh::BR>(pt_at, p, query0, lane);
  store_transposed<T, kMK, kNQ, Sh::BR>(ds_at, ds, query0, lane);
}

/// Step 2's dV_w += P^T dO_i and dK_w += dS^T Q_i (lines 12 and 16) for warp w's 32 keys (key0) and
/// kDW columns of d (col0), over all B_r queries of the tile, 16 at a time, the two products
/// interleaved (independent accumulators; each sums over the queries in order). P^T and dS^T are
/// read from SRAM as A fragments, dO_i and Q_i as transposed B fragments.
template <class Sh>
__device__ __forceinline__ void grid_grad_kv(GradAcc<Sh>& acc, const GradSram<typename Sh::T>& sram,
                                             const typename Sh::T* pt, int lane, int key0, int col0) {
  using T = typename Sh::T;
  constexpr int kMK = Sh::kMK, kDW = Sh::kDW;
  const SwizzledAt<Sh::BR> pa_at(pt + key0 * Sh::BR, lane % 16, lane / 16);
  const auto ds_bytes = std::uint32_t(smem_addr(sram.dS) - smem_addr(pt));
  const SwizzledAt<Sh::D> qt_at(sram.Q, lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
  const auto q_do_bytes = std::uint32_t(smem_addr(sram.dO) - smem_addr(sram.Q));
#pragma unroll
  for (int kc = 0; kc < Sh::BR / 16; ++kc) {
    std::uint32_t pa[kMK][4], sa[kMK][4];  // P^T, dS^T: the warp's keys x 16 queries
#pragma unroll
    for (int mt = 0; mt < kMK; ++mt) {
      ldmatrix_x4(pa[mt], pa_at(mt * 16, kc * 16));
      ldmatrix_x4(sa[mt], pa_at(mt * 16, kc * 16) + ds_bytes);
    }
#pragma unroll
    for (int dp = 0; dp < kDW / 16; ++dp) {
      std::uint32_t bo[4], bq[4];  // dO_i, Q_i: 16 queries x 16 of d, transposed into two n-tiles
      ldmatrix_x4_trans(bo, qt_at(kc * 16, col0 + dp * 16) + q_do_bytes);
      ldmatrix_x4_trans(bq, qt_at(kc * 16, col0 + dp * 16));
#pragma unroll
      for (int mt = 0; mt < kMK; ++mt)
        mma_interleaved<T>(acc.dv[mt][2 * dp], acc.dv[mt][2 * dp + 1], pa[mt], bo, acc.dk[mt][2 * dp],
                           acc.dk[mt][2 * dp + 1], sa[mt], bq);
    }
  }
}

}  // namespace flashlab::gpu
