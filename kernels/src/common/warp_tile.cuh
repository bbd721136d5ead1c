// warp_tile.cuh — what one warp does with its slice of a tile, on the tensor cores.
//
// A warp owns kMT m-tiles of 16 rows. Its accumulators live in registers in the C-fragment layout
// of mma.cuh: thread (g, t) of the warp holds, for every m-tile mt and 8-column n-tile nt, rows
// g and g + 8 at columns 2t and 2t + 1. The row statistics of FA1/FA2 (m, l) therefore need a
// reduction over the 4 threads of a quad (the threads with the same g), never over the warp.
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/mma.cuh"
#include "flashlab/contract/tiling.hpp"

namespace flashlab::gpu {

/// The warp tiling of split-Q (FA2 §3.3), for a compiled kernel K (an Instance, launch.cuh): warp
/// w owns rows [w B_r/W, (w+1) B_r/W) of the B_r x B_c tile S_ij and of O_i (B_r, d). V2 and
/// standard attention's two matmul kernels derive their sizes from it.
template <class K>
struct SplitQ : K {
  static constexpr int kThreads = K::W * 32;
  static constexpr int kRowsPerWarp = K::BR / K::W;
  static constexpr int kMT = kRowsPerWarp / 16;  // m16 tiles per warp
  static constexpr int kNT = K::BC / 8;          // n8 tiles of the warp's rows of S_ij
  static constexpr int kDT = K::D / 8;           // n8 tiles of the warp's rows of O_i
  static_assert(kRowsPerWarp % 16 == 0 && K::BC % 16 == 0 && K::D % 16 == 0);
};

/// s (kMT*16, kNT*8) = Q_w K_w^T: Q_w is the warp's row slice of sram_Qi, starting at `sram_Q`
/// (swizzled rows of d); K_w the kNT*8 key rows of sram_Kj starting at `sram_K` (FA2 Alg. 1 line 8,
/// without the scale, which the softmax folds into its exp2).
template <class T, int kMT, int kNT, int D>
__device__ __forceinline__ void scores(float (&s)[kMT][kNT][4], const T* sram_Q, const T* sram_K, int lane) {
  static_assert(kNT % 2 == 0 && D % 16 == 0);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[kMT][4];  // Q_w, 16 rows x 16 of d per m-tile
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
      ldmatrix_x4(a[mt], sram_Q + swizzle<D>(mt * 16 + lane % 16, kk * 16 + (lane / 16) * 8));
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      std::uint32_t b[4];  // K_w^T, 16 of d x 16 keys: two n-tiles
      ldmatrix_x4(b, sram_K + swizzle<D>(np * 16 + lane % 8 + (lane / 16) * 8, kk * 16 + ((lane / 8) % 2) * 8));
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<T>(s[mt][2 * np], a[mt], b[0], b[1]);
        mma_16816<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

/// The A fragment of P~ for 16-key chunk kc, cast to the input type (FA2 casts P~ before P~V).
template <class T, int kMT, int kNT>
__device__ __forceinline__ void p_fragment(std::uint32_t (&pa)[kMT][4], const float (&s)[kMT][kNT][4], int kc) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    pa[mt][0] = ElemTraits<T>::pack(s[mt][2 * kc][0], s[mt][2 * kc][1]);
    pa[mt][1] = ElemTraits<T>::pack(s[mt][2 * kc][2], s[mt][2 * kc][3]);
    pa[mt][2] = ElemTraits<T>::pack(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
    pa[mt][3] = ElemTraits<T>::pack(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
  }
}

/// The A fragment of P for 16-key chunk kc from an SRAM tile (standard attention reads P from HBM).
template <class T, int kMT, int kColsP>
__device__ __forceinline__ void p_fragment_sram(std::uint32_t (&pa)[kMT][4], const T* sram_P, int kc, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
    ldmatrix_x4(pa[mt], sram_P + swizzle<kColsP>(mt * 16 + lane % 16, kc * 16 + (lane / 16) * 8));
}

/// o (kMT*16, D) += P~ (kMT*16, 16 keys) V_c, V_c the 16 rows of sram_Vj starting at `sram_V`,
/// columns [col0, col0 + D) of its kLd (by default D) columns.
template <class T, int kMT, int D, int kLd = D>
__device__ __forceinline__ void pv_chunk(float (&o)[kMT][D / 8][4], const std::uint32_t (&pa)[kMT][4],
                                         const T* sram_V, int lane, int col0 = 0) {
#pragma unroll
  for (int dp = 0; dp < D / 16; ++dp) {
    std::uint32_t b[4];  // V_c, 16 keys x 16 of d, transposed into two n-tiles
    ldmatrix_x4_trans(b, sram_V + swizzle<kLd>(lane % 8 + ((lane / 8) % 2) * 8, col0 + dp * 16 + (lane / 16) * 8));
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      mma_16816<T>(o[mt][2 * dp], pa[mt], b[0], b[1]);
      mma_16816<T>(o[mt][2 * dp + 1], pa[mt], b[2], b[3]);
    }
  }
}

/// Calls f(mt, nt, h, row, col) for each pair of accumulator values [mt][nt][2h], [mt][nt][2h + 1]
/// that `lane` holds in the C-fragment layout (thread (g, t) = (lane / 4, lane % 4)): row
/// mt * 16 + g + 8h of the warp's tile, columns col = nt * 8 + 2t and col + 1.
template <int kMT, int kNT, class F>
__device__ __forceinline__ void for_each_pair(int lane, F&& f) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) f(mt, nt, h, mt * 16 + g + 8 * h, nt * 8 + 2 * t);
}

/// Sets masked scores to -inf: key c >= N_k (ragged last tile) or outside the band (the mask:
/// visible(band, r, c), c - r within [lo, hi]). row0 / col0: global query row / key of the warp's
/// first row / column. Thread (g, t)'s element (mt, nt, h, e) is row r = row0 + mt*16 + g + 8h and
/// key c = col0 + nt*8 + 2t + e, so c - r = base + k with base = col0 + 2t - row0 - g the same for
/// all of the thread's elements and k = nt*8 + e - mt*16 - 8h a compile-time constant: the band and
/// N_k are moved to this thread's origin once (three 32-bit bounds), and each element costs three
/// compares with constants (no 64-bit arithmetic per element, few live registers).
template <int kMT, int kNT>
__device__ __forceinline__ void mask_scores(float (&s)[kMT][kNT][4], const Band& band, std::int64_t row0,
                                            std::int64_t col0, std::int64_t n_k, int lane) {
  const int g = lane / 4, t = lane % 4;
  const std::int64_t c0 = col0 + 2 * t, base = c0 - (row0 + g);
  const auto clamp32 = [](std::int64_t x) {  // |k| < 2^16, so any bound beyond 2^30 acts alike
    return int(x < -(std::int64_t(1) << 30) ? -(std::int64_t(1) << 30) : x > (std::int64_t(1) << 30) ? (std::int64_t(1) << 30) : x);
  };
  const int lo = clamp32(band.lo - base), hi = clamp32(band.hi - base), keys = clamp32(n_k - c0);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = nt * 8 + e, k = col - mt * 16 - 8 * h;
          if (col >= keys || k < lo || k > hi) s[mt][nt][2 * h + e] = -INFINITY;
        }
}

/// 2^x on the special-function unit (ex2.approx.ftz.f32: a result below 2^-126 is flushed to 0, and
/// 2^-inf = 0). Plain exp2f keeps subnormal results and costs three more instructions per score
/// around the same MUFU.EX2 (compare, pre- and post-scale): on the softmax's path, once per
/// element of S_ij, that is as many instructions as the rest of the softmax. FA2 builds with
/// --use_fast_math, which gives this form.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/// Row max of the warp's scores: out[mt][h] for row mt*16 + g + 8h (reduced over the quad).
template <int kMT, int kNT>
__device__ __forceinline__ void row_max(float (&out)[kMT][2], const float (&s)[kMT][kNT][4]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float x = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) x = fmaxf(x, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
      out[mt][h] = quad_max(x);
    }
}

/// s = exp(scale * (s - m)) with m per row (in units of raw scores; a row with m = -inf, all of
/// it masked so far, uses 0 so that every p is exp(-inf) = 0, never NaN). Returns this thread's
/// part of each row sum in sum[mt][h] (a quad_sum away from the row's).
template <int kMT, int kNT>
__device__ __forceinline__ void exp_scores(float (&s)[kMT][kNT][4], float (&sum)[kMT][2], const float (&m)[kMT][2],
                                           float scale_log2) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m_scaled = m[mt][h] == -INFINITY ? 0.f : m[mt][h] * scale_log2;
      float acc = 0.f;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          s[mt][nt][e] = exp2_ftz(fmaf(s[mt][nt][e], scale_log2, -m_scaled));
          acc += s[mt][nt][e];
        }
      sum[mt][h] = acc;
    }
}

/// Writes a warp's fp32 accumulators, row (mt, h) multiplied by row_scale[mt][h], into a swizzled
/// SRAM tile of T with kCols columns, starting at the warp's first row, at column col0 + (0..8 kNT).
template <class T, int kMT, int kNT, int kCols>
__device__ __forceinline__ void store_fragments(T* sram, const float (&acc)[kMT][kNT][4],
                                                const float (&row_scale)[kMT][2], int lane, int col0 = 0) {
  for_each_pair<kMT, kNT>(lane, [&](int mt, int nt, int h, int row, int col) {
    *reinterpret_cast<std::uint32_t*>(sram + swizzle<kCols>(row, col0 + col)) =
        ElemTraits<T>::pack(acc[mt][nt][2 * h] * row_scale[mt][h], acc[mt][nt][2 * h + 1] * row_scale[mt][h]);
  });
}

}  // namespace flashlab::gpu
