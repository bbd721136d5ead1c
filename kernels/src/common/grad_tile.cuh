// grad_tile.cuh — one tile (i, j) of the attention backward on the tensor cores, shared by V1's
// kernel (FA1 Alg. 4, v1_backward.cu) and V2's (FA2 Alg. 2 as released, v2_backward.cu).
//
// A thread block owns K/V block j. Its warps first split the B_c keys (16 per warp): warp w computes
// the transposed tiles S_ij^T = K_w Q_i^T and dP_ij^T = V_w dO_i^T (keys x B_r, in registers), then
// P^T = exp(scale S^T - L) (FA2 line 11; V1 gives L = m + ln l, so that this is FA1 line 13's
// diag(l)^-1 exp(S - m)), dV_w += P^T dO_i (line 12), dS^T = scale P^T o (dP^T - D) (line 14, the
// scale of FA1 lines 20-21 folded in once) and dK_w += dS^T Q_i (line 16): each warp's keys are
// its own, so dK_j and dV_j accumulate in its registers with no communication. dQ_i = dS_ij K_j
// (line 15) sums over the keys, which the warps split: dS^T goes through SRAM, and the warps then
// split the B_r rows of Q_i (16 per warp) for dQ_i's contribution, which the caller adds to HBM
// (V2: atomically into the fp32 accumulator; V1: read, add, write at the input type).
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/warp_tile.cuh"
#include "flashlab/contract/tiling.hpp"

namespace flashlab::gpu {

/// The warp tiling of the backward for a compiled kernel K (an Instance, launch.cuh).
template <class K>
struct GradShape : K {
  static constexpr int kThreads = K::W * 32;
  static constexpr int kKeysPerWarp = K::BC / K::W;  // keys of K_j per warp (S^T, dP^T, dK, dV)
  static constexpr int kMK = kKeysPerWarp / 16;      // m16 tiles of keys per warp
  static constexpr int kNQ = K::BR / 8;              // n8 tiles of the queries of Q_i
  static constexpr int kDT = K::D / 8;               // n8 tiles of d
  static constexpr int kRowsPerWarp = K::BR / K::W;  // rows of Q_i per warp for dQ_i
  static constexpr int kMQ = kRowsPerWarp / 16;
  static_assert(kKeysPerWarp % 16 == 0 && kRowsPerWarp % 16 == 0 && K::BR % 16 == 0 && K::BC % 32 == 0);
  static_assert(K::BR <= kThreads, "one thread per row of Q_i loads L_i and D_i");
  /// Bytes of GradSram (a kernel may add buffers after them: their start is 16-byte aligned).
  static constexpr int kSmemBytes = (2 * K::BC + 2 * K::BR) * K::D * int(sizeof(typename K::T)) +
                                    K::BR * K::BC * int(sizeof(typename K::T)) + 2 * K::BR * int(sizeof(float));
  static_assert(kSmemBytes % 16 == 0);
};

/// SRAM of a backward thread block: K_j, V_j (B_c, d); Q_i, dO_i (B_r, d); dS_ij^T (B_c, B_r);
/// per row of Q_i, L_i log2(e) (the exponent shift) and D_i (fp32).
template <class T>
struct GradSram {
  T* K;
  T* V;
  T* Q;
  T* dO;
  T* dS;
  float* shift;
  float* D;
};

template <class Sh>
__device__ __forceinline__ GradSram<typename Sh::T> grad_sram(unsigned char* smem) {
  using T = typename Sh::T;
  T* base = reinterpret_cast<T*>(smem);
  T* dS = base + (2 * Sh::BC + 2 * Sh::BR) * Sh::D;
  float* f = reinterpret_cast<float*>(dS + Sh::BR * Sh::BC);
  return {base, base + Sh::BC * Sh::D, base + 2 * Sh::BC * Sh::D, base + (2 * Sh::BC + Sh::BR) * Sh::D, dS, f,
          f + Sh::BR};
}

/// dK_j and dV_j of the warp's keys, in registers (C-fragment layout).
template <class Sh>
struct GradAcc {
  float dk[Sh::kMK][Sh::kDT][4];
  float dv[Sh::kMK][Sh::kDT][4];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int mt = 0; mt < Sh::kMK; ++mt)
#pragma unroll
      for (int dt = 0; dt < Sh::kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[mt][dt][e] = dv[mt][dt][e] = 0.f;
  }
};

/// Where tile (i, j) lies: its first query row and key, rows(i), cols(j), whether a mask or a ragged
/// edge touches it.
struct GradTile {
  std::int64_t row0, col0;
  int rows, cols;
  bool masked;
};

/// Lines 10-14 and 16 for the warp's keys, then dS_ij into SRAM: after it (and a barrier) the
/// warps compute dQ_i's contribution with grad_dq. The caller has Q_i, dO_i, shift, D in SRAM.
template <class Sh>
__device__ __forceinline__ void grad_keys(const GradSram<typename Sh::T>& sram, GradAcc<Sh>& acc, const GradTile& t,
                                          const Band& band, std::int64_t n_q, std::int64_t n_k, float scale,
                                          int lane, int key0) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, kMK = Sh::kMK, kNQ = Sh::kNQ;
  constexpr float kLog2e = 1.4426950408889634f;
  float p[kMK][kNQ][4], ds[kMK][kNQ][4];
  scores<T, kMK, kNQ, D>(p, sram.K + key0 * D, sram.Q, lane);    // S^T = K_w Q_i^T (line 10)
  scores<T, kMK, kNQ, D>(ds, sram.V + key0 * D, sram.dO, lane);  // dP^T = V_w dO_i^T (line 13)
  const float scale_log2 = scale * kLog2e;
  // line 11: P^T = exp(scale S^T - L), 0 where the mask or a ragged edge hides (row, key)
  for_each_pair<kMK, kNQ>(lane, [&](int mt, int nt, int h, int row, int col) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int q = col + e;
      const std::int64_t c = t.col0 + key0 + row, r = t.row0 + q;
      const bool seen = !t.masked || (c < n_k && r < n_q && visible(band, r, c));
      p[mt][nt][2 * h + e] = seen ? exp2_ftz(fmaf(p[mt][nt][2 * h + e], scale_log2, -sram.shift[q])) : 0.f;
    }
  });
  // line 12: dV_w += P^T dO_i, 16 queries at a time (P^T cast to the input type, as FA2 casts P)
#pragma unroll
  for (int kc = 0; kc < Sh::BR / 16; ++kc) {
    std::uint32_t pa[kMK][4];
    p_fragment<T>(pa, p, kc);
    pv_chunk<T, kMK, D>(acc.dv, pa, sram.dO + kc * 16 * D, lane);
  }
  // line 14: dS^T = scale P^T o (dP^T - D)
  for_each_pair<kMK, kNQ>(lane, [&](int mt, int nt, int h, int row, int col) {
#pragma unroll
    for (int e = 0; e < 2; ++e)
      ds[mt][nt][2 * h + e] = scale * p[mt][nt][2 * h + e] * (ds[mt][nt][2 * h + e] - sram.D[col + e]);
  });
  // line 16: dK_w += dS^T Q_i
#pragma unroll
  for (int kc = 0; kc < Sh::BR / 16; ++kc) {
    std::uint32_t pa[kMK][4];
    p_fragment<T>(pa, ds, kc);
    pv_chunk<T, kMK, D>(acc.dk, pa, sram.Q + kc * 16 * D, lane);
  }
  // dS_ij^T (B_c, B_r) into SRAM at the input type, as the warp holds it (two queries per store);
  // grad_dq reads it back transposed
  for_each_pair<kMK, kNQ>(lane, [&](int mt, int nt, int h, int row, int col) {
    *reinterpret_cast<std::uint32_t*>(sram.dS + swizzle<Sh::BR>(key0 + row, col)) =
        ElemTraits<T>::pack(ds[mt][nt][2 * h], ds[mt][nt][2 * h + 1]);
  });
}

/// Line 15's product for the warp's rows of Q_i: dq = dS_ij[rows, :] K_j (kRowsPerWarp, d), fp32.
/// Every warp must have stored its part of dS_ij (grad_keys) and passed a barrier.
template <class Sh>
__device__ __forceinline__ void grad_dq(float (&dq)[Sh::kMQ][Sh::kDT][4], const GradSram<typename Sh::T>& sram,
                                        int lane, int row0) {
  using T = typename Sh::T;
#pragma unroll
  for (int mt = 0; mt < Sh::kMQ; ++mt)
#pragma unroll
    for (int dt = 0; dt < Sh::kDT; ++dt) dq[mt][dt][0] = dq[mt][dt][1] = dq[mt][dt][2] = dq[mt][dt][3] = 0.f;
#pragma unroll
  for (int kc = 0; kc < Sh::BC / 16; ++kc) {
    std::uint32_t pa[Sh::kMQ][4];
    a_fragment_sram_t<T, Sh::kMQ, Sh::BR>(pa, sram.dS, row0, kc, lane);
    pv_chunk<T, Sh::kMQ, Sh::D>(dq, pa, sram.K + kc * 16 * Sh::D, lane);
  }
}

/// Writes dK_j (then dV_j) of the thread block to HBM through SRAM (`stage`, B_c x d): whole 16-byte
/// chunks of the cols(j) valid rows.
template <class Sh>
__device__ __forceinline__ void store_grads(typename Sh::T* stage, const GradAcc<Sh>& acc, typename Sh::T* dk,
                                            typename Sh::T* dv, int cols, int lane, int key0) {
  using T = typename Sh::T;
  float one[Sh::kMK][2];
#pragma unroll
  for (int mt = 0; mt < Sh::kMK; ++mt) one[mt][0] = one[mt][1] = 1.f;
  __syncthreads();  // every warp is done with the SRAM that `stage` reuses
  store_fragments<T, Sh::kMK, Sh::kDT, Sh::D>(stage + key0 * Sh::D, acc.dk, one, lane);
  __syncthreads();
  store_tile<T, Sh::BC, Sh::D, Sh::kThreads>(dk, Sh::D, stage, cols, Sh::D);
  __syncthreads();
  store_fragments<T, Sh::kMK, Sh::kDT, Sh::D>(stage + key0 * Sh::D, acc.dv, one, lane);
  __syncthreads();
  store_tile<T, Sh::BC, Sh::D, Sh::kThreads>(dv, Sh::D, stage, cols, Sh::D);
}

}  // namespace flashlab::gpu
