// v1.cu — FlashAttention forward as the V1 paper writes it (FA1 paper, Algorithm 1), and every
// variant between it and V2 (docs/model.md "Variants") that does not keep O_i in split-Q warps'
// registers (that one is v2.cu): the kernels of the row-update family.
//
// What the family shares is how a step updates O_i: the warps leave the tile's row max m~_ij, row
// sum l~_ij and product P~_ij V_j in SRAM (fp32), and then each thread updates whole 16-byte
// chunks of O_i's rows, O_i = c_old O_i + c_new (P~_ij V_j), with the weights of the row's
// softmax update (FA1 Alg. 1 lines 11-12; FA2 Alg. 1 lines 9-10 with --rescale delayed). The
// switches pick, at compile time:
//   split-K (--split split-k, V1's): warp w owns key columns [w B_c/W, (w+1) B_c/W) of S_ij; the
//     row max, row sum and P~ V of the W warps are combined through SRAM (W partial results);
//   split-Q (--split split-q): warp w owns rows [w B_r/W, (w+1) B_r/W); one partial result;
//   O in HBM (--order kv-outer, V1's): O_i, l_i, m_i read from HBM at every step and written back
//     (lines 8, 12-13);
//   O on chip (--order q-outer, split-K only): O_i in fp32 registers, l_i, m_i too, O_i and
//     L_i = m_i + ln l_i written once (FA2 Alg. 1 lines 12-15);
// and at run time:
//   --grid head (V1's): one thread block per (batch, head); kv-outer walks K/V blocks j outside and
//     Q blocks i inside (lines 5, 7), q-outer the other way round;
//   --grid qblock: one thread block per (batch, head, Q block) walking its row of tiles;
//   --rescale step (V1's): O_i normalised by l_new at every step; delayed: O_i normalised once, at
//     the end of the Q block's thread block (grid qblock), or for kv-outer with grid head by a
//     second launch over the Q blocks (fl_normalize: O_i and l_i read back from HBM);
//   --block-skip on: tiles without a visible element are skipped; a K/V block (or Q block) with
//     none is not loaded.
// Events are the simulator's steps (sim/src/schedule/schedule.cpp flash_schedule), one per
// loaded K/V block, tile visited or skipped, and Q block begun or finished, in its action order.
//
// What the algorithm does not force is done as V2 does it: tensor cores for Q K^T and P V,
// cp.async copies, no load waited for where it can be issued earlier (K_{j+1}, V_{j+1} and Q_{i+1}
// are fetched while the step that last reads the buffer finishes; O_i, l_i, m_i are read into
// registers at the step's start so that their latency overlaps S_ij). Bytes and requests are those
// of a load at the point of use: only their time moves.
//
// Read beside Algorithm 1:
//   init_hbm / begin_rows  line 2        O = 0, l = 0, m = -inf written to HBM (all rows, or the Q block's)
//   load_kv / load_q       lines 6, 8    K_j, V_j, Q_i into SRAM
//   read_rows              line 8        O_i, l_i, m_i from HBM into registers
//   tile_softmax           line 10       m~_ij, P~_ij, l~_ij (over the warps' slices for split-K)
//   partial_pv             (line 12)     each warp's P~_ij V_j, into SRAM
//   softmax_update         lines 11, 13  m_new, l_new and the weights of line 12
//   update_chunks          line 12       O_i = c_old O_i + c_new P~_ij V_j, chunk by chunk
//   finish_rows            FA2 12-15     O_i / l_i (delayed), L_i = m_i + ln l_i, written (q-outer)
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

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

/// Line 2 for the whole head: O = 0 (N_q, d), l = 0 (N_q), m = -inf (N_q), in HBM.
template <class Sh>
__device__ __forceinline__ void init_hbm(const Args& a, const RowHbm<typename Sh::T>& hbm) {
  constexpr int D = Sh::D, kThreads = Sh::kThreads;
  // One warp request per iteration over HBM rows (here and below): when the compiler unrolled
  // these loops, it split a warp's 32 rows between the unrolled body and the remainder, and the
  // sector shared by the two requests was counted twice by the profiler (seen on the H200).
#pragma unroll 1
  for (std::int64_t c = threadIdx.x; c < a.n_q * D / 8; c += kThreads)
    reinterpret_cast<uint4*>(hbm.O)[c] = make_uint4(0, 0, 0, 0);
#pragma unroll 1
  for (std::int64_t r = threadIdx.x; r < a.n_q; r += kThreads) {
    hbm.l[r] = 0.f;
    hbm.m[r] = -INFINITY;
  }
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

/// The K/V outer order with one thread block per (batch, head) (V1): lines 2, 5-15. Steps: 0 =
/// line 2; per K/V block j one to load K_j, V_j (when a tile of it is visited), then one per tile
/// (i, j), visited or skipped.
template <class Sh>
__device__ void kv_outer_head(const Args& a, const TraceBuffers& trace, const Tiling& t,
                              const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm,
                              const RowThread& th, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  rec.compute(0, Eq::init_stats, -1, -1, a.n_q, D);  // line 2
  rec.store(0, Tensor::O, -1, -1, a.n_q, D, e);
  rec.store(0, Tensor::l, -1, -1, a.n_q, 1, 4);
  rec.store(0, Tensor::m, -1, -1, a.n_q, 1, 4);
  init_hbm<Sh>(a, hbm);
  if (rec.stats_for(trace.stat_block))
    for (int r = threadIdx.x; r < int(t.rows(trace.stat_block)); r += Sh::kThreads) rec.stat(0, r, BR, -INFINITY, 0.f);
  __syncthreads();  // line 2's writes are visible to the whole block

  const bool delayed = a.rescale_delayed;
  const Eq softmax = delayed ? Eq::softmax_v2 : Eq::softmax_v1, output = delayed ? Eq::output_v2 : Eq::output_v1;
  std::uint32_t step = 1;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {  // line 5: for each K/V block j
    const int cols_j = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    if (!range.empty()) {  // line 6: load K_j, V_j
      rec.load(step, Tensor::K, -1, int(j), cols_j, D, e);
      rec.load(step, Tensor::V, -1, int(j), cols_j, D, e);
      ++step;
      load_k<Sh>(sram, hbm, j, cols_j);
      load_v<Sh>(sram, hbm, j, cols_j);
    }
    bool q_in_flight = false;  // Q_i already copying (issued during the previous step)
    for (std::int64_t i = 0; i < t.t_r(); ++i, ++step) {  // line 7: for each Q block i
      const int rows_i = int(t.rows(i));
      if (i < range.first || i > range.last) {
        rec.skip(step, int(i), int(j), rows_i, cols_j);
        if (rec.stats_for(int(i)))  // m_i, l_i in HBM, unchanged by a skipped tile
          for (int r = threadIdx.x; r < rows_i; r += Sh::kThreads)
            rec.stat(step, r, BR, hbm.m[i * BR + r], hbm.l[i * BR + r]);
        continue;
      }
      // Line 8: load Q_i, O_i, l_i, m_i.
      rec.load(step, Tensor::Q, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.load(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      OChunks<Sh> o;
      RowStat row;
      read_rows<Sh>(hbm, i, rows_i, o, row);
      if (!q_in_flight) load_q<Sh>(sram, hbm, i, rows_i);
      rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
      tile_step<Sh>(
          a, t, sram, th, i, j, delayed, o, row,
          [&] {  // every warp is past S_ij: Q_{i+1} can replace Q_i in SRAM
            q_in_flight = i + 1 <= range.last;
            if (q_in_flight) load_q<Sh>(sram, hbm, i + 1, int(t.rows(i + 1)));
          },
          [] {},
          [&] {  // lines 11 and 13: m_new, l_new
            if (int(threadIdx.x) < rows_i) {
              hbm.m[i * BR + threadIdx.x] = row.m;
              hbm.l[i * BR + threadIdx.x] = row.l;
              if (rec.stats_for(int(i))) rec.stat(step, threadIdx.x, BR, row.m, row.l);
            }
          });
      rec.compute(step, softmax, int(i), int(j), rows_i, cols_j);
      rec.compute(step, output, int(i), int(j), rows_i, cols_j);
      // Line 12: O_i written back.
      T* hbm_Oi = hbm.O + i * BR * D;
      for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) { *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = o.o[k]; });
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      __syncthreads();  // SRAM tiles and HBM rows of this step are done before the next one
    }
  }
}

/// Writes the snapshot of row threadIdx.x of the traced Q block i after `step`.
template <class Sh>
__device__ __forceinline__ void snapshot(Recorder<Sh::kRecord>& rec, std::int64_t i, int rows_i, std::uint32_t step,
                                         const RowStat& row) {
  if (rec.stats_for(int(i)) && int(threadIdx.x) < rows_i) rec.stat(step, threadIdx.x, Sh::BR, row.m, row.l);
}

/// One Q block i walked by its thread block (grid qblock, or each Q block in turn of a q-outer
/// thread block per head), from step `step0`: its begin step, one per K/V block (visited or
/// skipped), and its end step. Returns the step after its last. O_i lives where Sh says:
///   HBM (kv-outer, FA1's released code): line 2 for the block's rows at the begin step (Q_i loaded
///     there too when a tile is visited); per visited tile K_j, V_j and O_i, l_i, m_i loaded and
///     O_i, l_i, m_i stored; delayed rescale: O_i = diag(l_i)^-1 O_i and stored at the end step.
///   on chip (q-outer, FA2 Alg. 1 lines 4-15): Q_i loaded and O_i, l_i, m_i set on chip at the
///     begin step (only when a tile is visited); per visited tile K_j, V_j loaded; at the end step
///     O_i (divided by l_i when delayed) and L_i = m_i + ln l_i written.
template <class Sh>
__device__ std::uint32_t q_block_walk(const Args& a, const Tiling& t, const RowSram<typename Sh::T>& sram,
                                      const RowHbm<typename Sh::T>& hbm, const RowThread& th, std::int64_t i,
                                      std::uint32_t step0, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  const int rows_i = int(t.rows(i));
  const BlockRange range = a.block_skip ? visible_col_blocks(t, a.band, i) : BlockRange{0, t.t_c() - 1};
  const bool visits = !range.empty(), delayed = a.rescale_delayed;
  const Eq softmax = delayed ? Eq::softmax_v2 : Eq::softmax_v1, output = delayed ? Eq::output_v2 : Eq::output_v1;
  OChunks<Sh> o;
  RowStat row;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int, int) {
    for (int x = 0; x < 8; ++x) o.set(k, x, 0.f);
  });

  // The begin step.
  std::uint32_t step = step0;
  if (visits) {
    rec.load(step, Tensor::Q, int(i), -1, rows_i, D, e);
    load_q<Sh>(sram, hbm, i, rows_i);
    load_k<Sh>(sram, hbm, range.first, int(t.cols(range.first)));
    load_v<Sh>(sram, hbm, range.first, int(t.cols(range.first)));
  }
  if (!Sh::kOnChip || visits) rec.compute(step, Eq::init_stats, int(i), -1, rows_i, D);
  if constexpr (!Sh::kOnChip) {  // line 2 for the block's own rows
    rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
    rec.store(step, Tensor::l, int(i), -1, rows_i, 1, 4);
    rec.store(step, Tensor::m, int(i), -1, rows_i, 1, 4);
    write_rows<Sh>(hbm, i, rows_i, o, row);
    __syncthreads();  // the block's own rows are initialised before its steps read them
  }
  if (!Sh::kOnChip || visits) snapshot<Sh>(rec, i, rows_i, step++, row);

  // One step per K/V block j.
  for (std::int64_t j = 0; j < t.t_c(); ++j, ++step) {
    const int cols_j = int(t.cols(j));
    if (j < range.first || j > range.last) {
      rec.skip(step, int(i), int(j), rows_i, cols_j);
      snapshot<Sh>(rec, i, rows_i, step, row);
      continue;
    }
    rec.load(step, Tensor::K, int(i), int(j), cols_j, D, e);
    rec.load(step, Tensor::V, int(i), int(j), cols_j, D, e);
    if constexpr (!Sh::kOnChip) {  // line 8: O_i, l_i, m_i
      rec.load(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.load(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      read_rows<Sh>(hbm, i, rows_i, o, row);
    }
    rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
    rec.compute(step, softmax, int(i), int(j), rows_i, cols_j);
    rec.compute(step, output, int(i), int(j), rows_i, cols_j);
    const bool next = j < range.last;
    tile_step<Sh>(
        a, t, sram, th, i, j, delayed, o, row,
        [&] { if (next) load_k<Sh>(sram, hbm, j + 1, int(t.cols(j + 1))); },
        [&] { if (next) load_v<Sh>(sram, hbm, j + 1, int(t.cols(j + 1))); }, [] {});
    if constexpr (!Sh::kOnChip) {  // lines 12-13
      write_rows<Sh>(hbm, i, rows_i, o, row);
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
    }
    snapshot<Sh>(rec, i, rows_i, step, row);
    __syncthreads();  // SRAM weights and partials of this step are read before the next one's
  }

  // The end step.
  const bool ends = Sh::kOnChip || (delayed && visits);
  if (!ends) return step;
  if (visits) {  // logsumexp (L_i only) is a rows x 1 equation, the others rows x d
    const Eq eq = Sh::kOnChip ? (delayed ? Eq::finalize_v2 : Eq::logsumexp) : Eq::normalize;
    rec.compute(step, eq, int(i), -1, rows_i, eq == Eq::logsumexp ? 1 : D);
  }
  if (int(threadIdx.x) < rows_i) {  // 1 / l_i (0 for a row with no visible key: its O is 0) and L_i
    sram.c_old[threadIdx.x] = !delayed ? 1.f : row.l > 0.f ? 1.f / row.l : 0.f;
    sram.c_new[threadIdx.x] = row.l > 0.f ? row.m + logf(row.l) : INFINITY;
  }
  __syncthreads();
  T* hbm_Oi = hbm.O + i * BR * D;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) {
    const float inv_l = sram.c_old[r];
    const uint4 out{ElemTraits<T>::pack(o.get(k, 0) * inv_l, o.get(k, 1) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 2) * inv_l, o.get(k, 3) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 4) * inv_l, o.get(k, 5) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 6) * inv_l, o.get(k, 7) * inv_l)};
    store_global_v4(hbm_Oi + r * D + col, out);
  });
  rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
  if constexpr (Sh::kOnChip) {
    if (int(threadIdx.x) < rows_i) hbm.L[i * BR + threadIdx.x] = sram.c_new[threadIdx.x];
    rec.store(step, Tensor::L, int(i), -1, rows_i, 1, 4);
  }
  snapshot<Sh>(rec, i, rows_i, step, row);
  __syncthreads();  // SRAM is free for the next Q block
  return step + 1;
}

/// The family's kernel for (batch, head) blockIdx.y; blockIdx.x is the Q block with grid qblock.
template <class Sh>
__global__ void __launch_bounds__(Sh::kThreads) fl_row_forward(const Args a, const TraceBuffers trace) {
  const std::int64_t bh = blockIdx.y;
  const Tiling t{a.n_q, a.n_k, Sh::D, Sh::BR, Sh::BC};
  extern __shared__ __align__(16) unsigned char smem[];
  const RowSram<typename Sh::T> sram = row_sram<Sh>(smem);
  const RowHbm<typename Sh::T> hbm = row_hbm<Sh>(a, bh);
  const RowThread th = row_thread<Sh>();
  if (a.grid_head) {
    Recorder<Sh::kRecord> rec(trace, bh, 0);
    if constexpr (Sh::kOnChip) {  // Q outer: each Q block in turn
      std::uint32_t step = 0;
      for (std::int64_t i = 0; i < t.t_r(); ++i) step = q_block_walk<Sh>(a, t, sram, hbm, th, i, step, rec);
    } else {
      kv_outer_head<Sh>(a, trace, t, sram, hbm, th, rec);
    }
  } else {
    Recorder<Sh::kRecord> rec(trace, bh, blockIdx.x);
    q_block_walk<Sh>(a, t, sram, hbm, th, blockIdx.x, 0, rec);
  }
}

/// The second launch of the K/V outer order with one thread block per head and delayed rescaling:
/// after the K/V loop every O_i in HBM is unnormalised; per Q block with a visited tile, O_i and l_i
/// read back, O_i = diag(l_i)^-1 O_i, O_i written. Its steps continue the first launch's.
template <class Sh>
__global__ void __launch_bounds__(Sh::kThreads) fl_row_normalize(const Args a, const TraceBuffers trace) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  const std::int64_t bh = blockIdx.y;
  const Tiling t{a.n_q, a.n_k, D, BR, Sh::BC};
  extern __shared__ __align__(16) unsigned char smem[];
  float* inv_l = reinterpret_cast<float*>(smem);  // (B_r)
  const RowHbm<T> hbm = row_hbm<Sh>(a, bh);
  Recorder<Sh::kRecord> rec(trace, bh, 0);
  // the first launch's steps: line 2, one per K/V block with a visited tile, one per tile
  std::uint32_t step = 1 + std::uint32_t(t.t_r() * t.t_c());
  for (std::int64_t j = 0; j < t.t_c(); ++j) step += !a.block_skip || !visible_row_blocks(t, a.band, j).empty();
  for (std::int64_t i = 0; i < t.t_r(); ++i) {
    if (a.block_skip && visible_col_blocks(t, a.band, i).empty()) continue;  // O_i = 0 as line 2 left it
    const int rows_i = int(t.rows(i));
    rec.load(step, Tensor::O, int(i), -1, rows_i, D, e);
    rec.load(step, Tensor::l, int(i), -1, rows_i, 1, 4);
    rec.compute(step, Eq::normalize, int(i), -1, rows_i, D);
    rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
    OChunks<Sh, false> o;
    T* hbm_Oi = hbm.O + i * BR * D;
    for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) { o.o[k] = *reinterpret_cast<const uint4*>(hbm_Oi + r * D + col); });
    if (int(threadIdx.x) < rows_i) {
      const float l = hbm.l[i * BR + threadIdx.x];
      inv_l[threadIdx.x] = l > 0.f ? 1.f / l : 0.f;
      if (rec.stats_for(int(i))) rec.stat(step, threadIdx.x, BR, hbm.m[i * BR + threadIdx.x], l);
    }
    __syncthreads();
    for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) {
      for (int x = 0; x < 8; ++x) o.set(k, x, o.get(k, x) * inv_l[r]);
      *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = o.o[k];
    });
    __syncthreads();
    ++step;
  }
}

struct RowLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    if (a.split_k) {
      if (a.kv_outer) return launch_family<RowShape<K, true, false>>(a, trace, stream);
      return launch_family<RowShape<K, true, true>>(a, trace, stream);
    }
    if (!a.kv_outer)
      throw ConfigError("order", "q-outer", "kv-outer with split-Q warps in this kernel (v2.cu runs split-Q with the Q outer order)");
    if constexpr (is_variant_tile(K::BR, K::BC, K::W)) return launch_family<RowShape<K, false, false>>(a, trace, stream);
    throw ConfigError("br x bc x warps",
                      std::to_string(K::BR) + " x " + std::to_string(K::BC) + " x " + std::to_string(K::W),
                      "64 x 64 x 4 with --split split-q and --order kv-outer (the one tile compiled for them)");
  }

  template <class Sh>
  static void launch_family(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    const dim3 grid(a.grid_head ? 1u : unsigned((a.n_q + Sh::BR - 1) / Sh::BR), unsigned(a.bh));
    launch_kernel(fl_row_forward<Sh>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
    if (!Sh::kOnChip && a.grid_head && a.rescale_delayed) {
      TraceBuffers second = trace;
      second.launch = 1;
      launch_kernel(fl_row_normalize<Sh>, dim3(1u, unsigned(a.bh)), Sh::kThreads, Sh::BR * sizeof(float), stream, a, second);
    }
  }
};

}  // namespace

void launch_v1(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v1, RowLauncher>(a, trace, stream);
}

}  // namespace flashlab::gpu
