// row_tile.cuh — one thread block's step of V1's row-update family (kernels/src/v1.cu): the tile
// S_ij = Q_i K_j^T on split-K or split-Q warps, its softmax statistics and P~_ij V_j left in SRAM
// (fp32, one partial result per warp for split-K, one in all for split-Q), and the update of O_i's
// rows in whole 16-byte chunks with the weights of the row's softmax update (FA1 Alg. 1 lines 9-12;
// FA2 Alg. 1 lines 8-10 with --rescale delayed). v1.cu's loop nests (K/V outer with a thread block
// per head, or a Q block's row of tiles) call tile_step once per visited tile; O_i's chunks live in
// HBM between steps (kv-outer: read_rows, write_rows) or in fp32 registers (q-outer).
//
// Read beside Algorithm 1:
//   load_k, load_v / load_q  lines 6, 8    K_j, V_j, Q_i into SRAM
//   read_rows / write_rows   lines 8, 12-13 O_i, l_i, m_i between HBM and registers
//   tile_softmax             line 10       m~_ij, P~_ij, l~_ij (over the warps' slices for split-K)
//   partial_pv               (line 12)     each warp's P~_ij V_j, into SRAM
//   softmax_update           lines 11, 13  m_new, l_new and the weights of line 12
//   update_chunks            line 12       O_i = c_old O_i + c_new P~_ij V_j, chunk by chunk
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {
/// The sizes of one compiled kernel of the family (K: an Instance, launch.cuh): the warp split and
/// whether O_i lives on chip (q-outer) or in HBM (kv-outer).
template <class K, bool kSplitK_, bool kOnChip_>
struct RowShape : K {
  static constexpr bool kSplitK = kSplitK_, kOnChip = kOnChip_;
  static constexpr int kThreads = K::W * 32;
  static constexpr int kWarpRows = kSplitK ? K::BR : K::BR / K::W;  // rows of S_ij a warp computes
  static constexpr int kWarpCols = kSplitK ? K::BC / K::W : K::BC;  // its key columns
  static constexpr int kParts = kSplitK ? K::W : 1;                 // partial results per row
  static constexpr int kMT = kWarpRows / 16;
  static constexpr int kNT = kWarpCols / 8;
  static constexpr int kDT = K::D / 8;
  static constexpr int kPitchPV = K::D + 8;  // fp32 partials: +8 floats keep a half-warp's float2
                                             // stores in distinct banks
  static constexpr int kTileBytes = (K::BR + 2 * K::BC) * K::D * int(sizeof(typename K::T));
  static constexpr int kPartialBytes = kParts * K::BR * kPitchPV * int(sizeof(float));
  static constexpr int kRowBytes = (2 * kParts + 2) * K::BR * int(sizeof(float));
  static constexpr int kSmemBytes = kTileBytes + kPartialBytes + kRowBytes;
  // thread c's 16-byte chunks of O_i: c, c + threads, ... of the B_r x d/8 chunks
  static constexpr int kChunks = (K::BR * (K::D / 8) + kThreads - 1) / kThreads;
  static_assert(kWarpCols % 16 == 0 && kWarpRows % 16 == 0 && K::BR <= kThreads);
};

/// SRAM of a thread block.
template <class T>
struct RowSram {
  T* Kj;         // (B_c, d)
  T* Vj;         // (B_c, d)
  T* Qi;         // (B_r, d)
  float* PV;     // (parts, B_r, d): P~ V per partial result
  float* max;    // (parts, B_r): raw row max per partial result
  float* sum;    // (parts, B_r): row sum per partial result
  float* c_old;  // (B_r): weight of O_i (or 1 / l_i when O_i is normalised at the end)
  float* c_new;  // (B_r): weight of P~ V (or L_i at the end)
};

template <class Sh>
__device__ RowSram<typename Sh::T> row_sram(unsigned char* smem) {
  using T = typename Sh::T;
  constexpr int BR = Sh::BR, BC = Sh::BC, D = Sh::D, P = Sh::kParts;
  T* Kj = reinterpret_cast<T*>(smem);
  float* PV = reinterpret_cast<float*>(smem + Sh::kTileBytes);
  float* max = PV + P * BR * Sh::kPitchPV;
  return {Kj, Kj + BC * D, Kj + 2 * BC * D, PV, max, max + P * BR, max + 2 * P * BR, max + 2 * P * BR + BR};
}

/// This (batch, head)'s tensors in HBM.
template <class T>
struct RowHbm {
  const T* Q;  // (N_q, d)
  const T* K;  // (N_k, d)
  const T* V;  // (N_k, d)
  T* O;        // (N_q, d)
  float* l;    // (N_q): kv-outer
  float* m;    // (N_q): kv-outer
  float* L;    // (N_q): q-outer
};

template <class Sh>
__device__ RowHbm<typename Sh::T> row_hbm(const Args& a, std::int64_t bh) {
  using T = typename Sh::T;
  constexpr int D = Sh::D;
  const std::int64_t kv = kv_head(a, bh) * a.n_k * D;
  return {static_cast<const T*>(a.q) + bh * a.n_q * D, static_cast<const T*>(a.k) + kv,
          static_cast<const T*>(a.v) + kv,                static_cast<T*>(a.o) + bh * a.n_q * D,
          a.l ? a.l + bh * a.n_q : nullptr,               a.m ? a.m + bh * a.n_q : nullptr,
          a.lse ? a.lse + bh * a.n_q : nullptr};
}

/// This thread's place: its warp computes rows [row0, row0 + kWarpRows) and key columns
/// [col0, col0 + kWarpCols) of S_ij, and writes partial result `part`.
struct RowThread {
  int warp, lane, g, row0, col0, part;
};

template <class Sh>
__device__ RowThread row_thread() {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if constexpr (Sh::kSplitK) return {warp, lane, lane / 4, 0, warp * Sh::kWarpCols, warp};
  else return {warp, lane, lane / 4, warp * Sh::kWarpRows, 0, 0};
}

/// O_i's chunks that this thread updates: 8 elements of one row each, chunk c = threadIdx.x +
/// k * threads of the rows_i x d/8 chunks. In HBM order (kv-outer) they are the input type as read
/// at the step's start; on chip (q-outer) fp32.
template <class Sh, bool kOnChip = Sh::kOnChip>
struct OChunks {
  uint4 o[Sh::kChunks];
  __device__ float get(int k, int e) const { return ElemTraits<typename Sh::T>::to_float(reinterpret_cast<const typename Sh::T*>(&o[k])[e]); }
  __device__ void set(int k, int e, float x) { reinterpret_cast<typename Sh::T*>(&o[k])[e] = ElemTraits<typename Sh::T>::from_float(x); }
};
template <class Sh>
struct OChunks<Sh, true> {
  float o[Sh::kChunks][8];
  __device__ float get(int k, int e) const { return o[k][e]; }
  __device__ void set(int k, int e, float x) { o[k][e] = x; }
};

/// The softmax statistics of row threadIdx.x (B_r <= threads): m in natural-log units (the row
/// max of scale * S, -inf before any visible key), l the row sum of exp(scale * S - m).
struct RowStat {
  float m = -INFINITY, l = 0.f;
};

/// Calls f(k, r, col) for each chunk of O_i (rows_i x d) this thread owns: row r, columns col..col+7.
template <class Sh, class F>
__device__ __forceinline__ void for_each_o_chunk(int rows_i, F&& f) {
  constexpr int D = Sh::D;
#pragma unroll
  for (int k = 0; k < Sh::kChunks; ++k) {
    const int c = threadIdx.x + k * Sh::kThreads;
    if (c < rows_i * (D / 8)) f(k, c / (D / 8), (c % (D / 8)) * 8);
  }
}

/// Line 8: issues the reads of O_i (rows_i, d), and of l_i, m_i of this thread's row, into
/// registers; they complete while the step computes S_ij. One warp request per unrolled pass.
template <class Sh>
__device__ __forceinline__ void read_rows(const RowHbm<typename Sh::T>& hbm, std::int64_t i, int rows_i,
                                          OChunks<Sh>& o, RowStat& row) {
  constexpr int D = Sh::D;
  const int r = threadIdx.x;
  if (r < rows_i) {
    row.m = hbm.m[i * Sh::BR + r];
    row.l = hbm.l[i * Sh::BR + r];
  }
  const typename Sh::T* hbm_Oi = hbm.O + i * Sh::BR * D;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int rr, int col) { o.o[k] = *reinterpret_cast<const uint4*>(hbm_Oi + rr * D + col); });
}

/// Lines 12-13: O_i (chunks), l_i, m_i of this thread's row written back to HBM.
template <class Sh>
__device__ __forceinline__ void write_rows(const RowHbm<typename Sh::T>& hbm, std::int64_t i, int rows_i,
                                           const OChunks<Sh>& o, const RowStat& row) {
  constexpr int D = Sh::D;
  const int r = threadIdx.x;
  if (r < rows_i) {
    hbm.m[i * Sh::BR + r] = row.m;
    hbm.l[i * Sh::BR + r] = row.l;
  }
  typename Sh::T* hbm_Oi = hbm.O + i * Sh::BR * D;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int rr, int col) { *reinterpret_cast<uint4*>(hbm_Oi + rr * D + col) = o.o[k]; });
}

/// Line 6: starts loading K_j (and V_j), (B_c, d), into SRAM as one cp.async group.
template <class Sh>
__device__ __forceinline__ void load_k(const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm,
                                       std::int64_t j, int cols_j) {
  load_tile_async<typename Sh::T, Sh::BC, Sh::D, Sh::kThreads>(sram.Kj, hbm.K + j * Sh::BC * Sh::D, Sh::D, cols_j, Sh::D);
  cp_async_commit();
}
template <class Sh>
__device__ __forceinline__ void load_v(const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm,
                                       std::int64_t j, int cols_j) {
  load_tile_async<typename Sh::T, Sh::BC, Sh::D, Sh::kThreads>(sram.Vj, hbm.V + j * Sh::BC * Sh::D, Sh::D, cols_j, Sh::D);
  cp_async_commit();
}

/// Line 8: starts loading Q_i (B_r, d) into SRAM (one cp.async group).
template <class Sh>
__device__ __forceinline__ void load_q(const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm,
                                       std::int64_t i, int rows_i) {
  load_tile_async<typename Sh::T, Sh::BR, Sh::D, Sh::kThreads>(sram.Qi, hbm.Q + i * Sh::BR * Sh::D, Sh::D, rows_i, Sh::D);
  cp_async_commit();
}

/// Waits for every copy in flight and makes the SRAM tiles visible to the whole block.
__device__ __forceinline__ void wait_tiles() {
  cp_async_wait<0>();
  __syncthreads();
}

/// Line 10: m~_ij = rowmax(S_ij) — for split-K each warp's max over its columns, then across the
/// warps through SRAM —, P~_ij = exp(S_ij - m~_ij) (in place of s) and the warp's part of
/// l~_ij = rowsum(P~_ij) into sram.sum (summed over the parts by softmax_update). Ends with every
/// warp past its reads of Q_i and K_j.
template <class Sh>
__device__ __forceinline__ void tile_softmax(float (&s)[Sh::kMT][Sh::kNT][4], const RowSram<typename Sh::T>& sram,
                                             const RowThread& th, float scale_log2) {
  constexpr int kMT = Sh::kMT, BR = Sh::BR;
  float m_warp[kMT][2], m_tile[kMT][2], l_warp[kMT][2];
  row_max(m_warp, s);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = th.row0 + mt * 16 + th.g + 8 * h;
      if (th.lane % 4 == 0) sram.max[th.part * BR + r] = m_warp[mt][h];
      m_tile[mt][h] = m_warp[mt][h];
    }
  __syncthreads();  // split-K: the warps' maxima are in SRAM; both: Q_i and K_j are free
  if constexpr (Sh::kSplitK) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float x = -INFINITY;
        for (int w = 0; w < Sh::kParts; ++w) x = fmaxf(x, sram.max[w * BR + mt * 16 + th.g + 8 * h]);
        m_tile[mt][h] = x;
      }
  }
  exp_scores(s, l_warp, m_tile, scale_log2);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(l_warp[mt][h]);
      if (th.lane % 4 == 0) sram.sum[th.part * BR + th.row0 + mt * 16 + th.g + 8 * h] = l;
    }
}

/// The matmul of line 12 over the warp's keys and rows: a partial product P~_ij V_j into sram.PV
/// (summed over the parts by update_chunks).
template <class Sh>
__device__ __forceinline__ void partial_pv(const float (&p)[Sh::kMT][Sh::kNT][4], const RowSram<typename Sh::T>& sram,
                                           const RowThread& th) {
  constexpr int kMT = Sh::kMT, kDT = Sh::kDT, kPitch = Sh::kPitchPV;
  float pv[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) pv[mt][dt][0] = pv[mt][dt][1] = pv[mt][dt][2] = pv[mt][dt][3] = 0.f;
#pragma unroll
  for (int kc = 0; kc < Sh::kWarpCols / 16; ++kc) {
    std::uint32_t pa[kMT][4];
    p_fragment<typename Sh::T>(pa, p, kc);
    pv_chunk<typename Sh::T, kMT, Sh::D>(pv, pa, sram.Vj + (th.col0 + kc * 16) * Sh::D, th.lane);
  }
  float* mine = sram.PV + (th.part * Sh::BR + th.row0) * kPitch;
  for_each_pair<kMT, kDT>(th.lane, [&](int mt, int dt, int h, int row, int col) {
    *reinterpret_cast<float2*>(mine + row * kPitch + col) = make_float2(pv[mt][dt][2 * h], pv[mt][dt][2 * h + 1]);
  });
}

/// Line 11: m_new = max(m_i, m~_ij), l_new = e^(m_i - m_new) l_i + e^(m~_ij - m_new) l~_ij for row
/// threadIdx.x, and the weights of line 12 into SRAM: FA1's c_old = l_i e^(m_i - m_new) / l_new,
/// c_new = e^(m~_ij - m_new) / l_new (rescale step), or FA2's c_old = e^(m_i - m_new),
/// c_new = e^(m~_ij - m_new) with O_i left unnormalised (rescale delayed).
template <class Sh>
__device__ __forceinline__ void softmax_update(const Args& a, const RowSram<typename Sh::T>& sram, int rows_i,
                                               bool delayed, RowStat& row) {
  constexpr int BR = Sh::BR;
  const int r = threadIdx.x;
  if (r >= rows_i) return;
  float m_raw = -INFINITY, l_tilde = 0.f;
#pragma unroll
  for (int w = 0; w < Sh::kParts; ++w) {
    m_raw = fmaxf(m_raw, sram.max[w * BR + r]);
    l_tilde += sram.sum[w * BR + r];
  }
  const float m_tilde = m_raw == -INFINITY ? -INFINITY : m_raw * a.scale;  // natural units
  const float m_new = fmaxf(row.m, m_tilde);
  const float a_old = row.m == -INFINITY ? 0.f : __expf(row.m - m_new);
  const float a_new = m_tilde == -INFINITY ? 0.f : __expf(m_tilde - m_new);
  const float l_new = a_old * row.l + a_new * l_tilde;
  if (delayed) {
    sram.c_old[r] = a_old;
    sram.c_new[r] = a_new;
  } else {
    sram.c_old[r] = l_new > 0.f ? row.l * a_old / l_new : 0.f;
    sram.c_new[r] = l_new > 0.f ? a_new / l_new : 0.f;
  }
  row.m = m_new;
  row.l = l_new;
}

/// Line 12: O_i = c_old O_i + c_new (sum over the parts of P~ V), chunk by chunk. The partials are
/// read as 16-byte pieces, so that 8 lanes of a row read 8 different 32-byte pieces of it.
template <class Sh>
__device__ __forceinline__ void update_chunks(const RowSram<typename Sh::T>& sram, int rows_i, OChunks<Sh>& o) {
  constexpr int kPitch = Sh::kPitchPV;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) {
    float pv[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < Sh::kParts; ++w) {
      const float4* part = reinterpret_cast<const float4*>(sram.PV + (w * Sh::BR + r) * kPitch + col);
      const float4 lo = part[0], hi = part[1];
      pv[0] += lo.x, pv[1] += lo.y, pv[2] += lo.z, pv[3] += lo.w;
      pv[4] += hi.x, pv[5] += hi.y, pv[6] += hi.z, pv[7] += hi.w;
    }
    const float c_old = sram.c_old[r], c_new = sram.c_new[r];
#pragma unroll
    for (int e = 0; e < 8; ++e) o.set(k, e, c_old * o.get(k, e) + c_new * pv[e]);
  });
}

/// Lines 9-12 of one visited tile (i, j) with Q_i, K_j and V_j landing in SRAM: S_ij, its softmax,
/// the row update and O_i's. `free_qk` runs once no warp reads Q_i or K_j again, `free_v` once no
/// warp reads V_j (the prefetches of the next tiles); `rows_done` after m_new, l_new are known.
template <class Sh, class FreeQK, class FreeV, class RowsDone>
__device__ __forceinline__ void tile_step(const Args& a, const Tiling& t, const RowSram<typename Sh::T>& sram,
                                          const RowThread& th, std::int64_t i, std::int64_t j, bool delayed,
                                          OChunks<Sh>& o, RowStat& row, FreeQK&& free_qk, FreeV&& free_v,
                                          RowsDone&& rows_done) {
  const int rows_i = int(t.rows(i)), cols_j = int(t.cols(j));
  wait_tiles();
  // Line 9: S_ij = tau Q_i K_j^T, the warp's slice in registers.
  float s[Sh::kMT][Sh::kNT][4];
  scores<typename Sh::T, Sh::kMT, Sh::kNT, Sh::D>(s, sram.Qi + th.row0 * Sh::D, sram.Kj + th.col0 * Sh::D, th.lane);
  if (tile_class(t, a.band, i, j) != TileClass::full || cols_j < Sh::BC)
    mask_scores(s, a.band, i * Sh::BR + th.row0, j * Sh::BC + th.col0, a.n_k, th.lane);
  // Line 10: m~_ij, P~_ij (in s), l~_ij; and the warp's P~_ij V_j for line 12.
  tile_softmax<Sh>(s, sram, th, a.scale * 1.4426950408889634f);
  free_qk();
  partial_pv<Sh>(s, sram, th);
  __syncthreads();
  free_v();
  // Line 11: m_new, l_new and line 12's weights.
  softmax_update<Sh>(a, sram, rows_i, delayed, row);
  rows_done();
  __syncthreads();
  // Line 12: O_i.
  update_chunks<Sh>(sram, rows_i, o);
}

}  // namespace flashlab::gpu
