// v1.cu — FlashAttention forward as the V1 paper writes it (FA1 paper, Algorithm 1).
//
// One thread block per (batch, head) (FA1 §3.1: "one thread block per attention head"). Line 2
// initialises O, l and m in HBM; the outer loop runs over K/V blocks j (line 5), the inner loop
// over Q blocks i (line 7), and every inner step reads Q_i, O_i, l_i, m_i from HBM and writes
// O_i, l_i, m_i back (lines 8-13). Warps split S_ij by key columns (split-K): warp w owns columns
// [w B_c/W, (w+1) B_c/W), so the row max, the row sum and the partial products P~ V of the
// warps are combined through shared memory, as in the simulator's warp model (sim/warps.hpp).
// Block skip is off by default (the paper's dense kernel); with it on, tiles without a visible
// element are skipped and a K/V block with none is not loaded.
//
// What the algorithm does not force is done as V2 does it: tensor cores for Q K^T and P V,
// cp.async copies, and no load waited for where it can be issued earlier. O_i, l_i, m_i are read
// from HBM into registers at the start of a step (their latency overlaps S_ij and the softmax),
// and Q_{i+1} is copied into SRAM while step (i, j) finishes (Q is never written, so it is safe to
// fetch early; O_i, l_i, m_i are fetched only after the step that last wrote them). The bytes and
// the requests are the same as a load at the point of use: only their time moves.
//
// Read beside Algorithm 1:
//   init_hbm         line 2        O = 0, l = 0, m = -inf written to HBM
//   main_loop        lines 5-15    for j: load K_j, V_j (line 6); for i: lines 8-13
//   load_q           line 8        Q_i into SRAM (Q_{i+1} is prefetched during step i)
//   read_step_rows   line 8        O_i, l_i, m_i from HBM into registers
//   tile_softmax     line 10       m~_ij, P~_ij, l~_ij, combined over the warps' column slices
//   partial_pv       (line 12)     each warp's P~_ij V_j over its keys, into SRAM
//   softmax_update   lines 11, 13  m_new, l_new, written back to HBM
//   update_output    line 12       O_i = diag(l_new)^-1 (...), read, updated and written in HBM
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

/// The sizes of one compiled V1 kernel (K: an Instance, launch.cuh).
template <class K>
struct V1Shape : K {
  static constexpr int kThreads = K::W * 32;
  static constexpr int kColsPerWarp = K::BC / K::W;
  static constexpr int kMT = K::BR / 16;           // every warp covers all B_r rows
  static constexpr int kNT = kColsPerWarp / 8;     // n8 tiles of the warp's columns of S_ij
  static constexpr int kDT = K::D / 8;
  static constexpr int kPitchPV = K::D + 8;        // fp32 partials: +8 floats keep a half-warp's
                                                   // float2 stores in distinct banks
  static constexpr int kTileBytes = (K::BR + 2 * K::BC) * K::D * int(sizeof(typename K::T));
  static constexpr int kPartialBytes = K::W * K::BR * kPitchPV * int(sizeof(float));
  static constexpr int kRowBytes = (2 * K::W + 2) * K::BR * int(sizeof(float));
  static constexpr int kSmemBytes = kTileBytes + kPartialBytes + kRowBytes;
  static_assert(kColsPerWarp % 16 == 0 && K::BR % 16 == 0 && K::BR <= kThreads);
};

/// SRAM of the V1 thread block.
template <class T>
struct V1Sram {
  T* Kj;         // (B_c, d)
  T* Vj;         // (B_c, d)
  T* Qi;         // (B_r, d)
  float* PV;     // (W, B_r, d): P~ V per warp
  float* max;    // (W, B_r): row max per warp
  float* sum;    // (W, B_r): row sum per warp
  float* c_old;  // (B_r): weight of O_i
  float* c_new;  // (B_r): weight of P~ V
};

/// This (batch, head)'s tensors in HBM.
template <class T>
struct V1Hbm {
  const T* Q;  // (N_q, d)
  const T* K;  // (N_k, d)
  const T* V;  // (N_k, d)
  T* O;        // (N_q, d)
  float* l;    // (N_q)
  float* m;    // (N_q)
};

/// This thread's place in the block: its warp owns key columns [col0, col0 + B_c/W) of each tile.
struct V1Thread {
  int warp, lane, g, col0;
};

/// Line 8's O_i, l_i, m_i of one step, read from HBM into this thread's registers: thread r
/// holds m_i[r], l_i[r] (r < rows_i) and the 16-byte chunks c = threadIdx.x + k * threads of O_i.
template <class Sh>
struct StepRows {
  static constexpr int kChunks = (Sh::BR * (Sh::D / 8) + Sh::kThreads - 1) / Sh::kThreads;
  float m_old = -INFINITY, l_old = 0.f;
  uint4 o[kChunks];
};

/// Line 8: issues the reads of O_i (B_r, d), l_i and m_i (B_r) into registers; they complete
/// while the step computes S_ij. Each unrolled pass is one warp request over the same addresses as
/// a loop at the point of use (whole passes: no warp's rows split between two requests).
template <class Sh>
__device__ __forceinline__ void read_step_rows(const V1Hbm<typename Sh::T>& hbm, std::int64_t i, int rows_i,
                                               StepRows<Sh>& in) {
  constexpr int D = Sh::D;
  const int r = threadIdx.x;
  if (r < rows_i) {
    in.m_old = hbm.m[i * Sh::BR + r];
    in.l_old = hbm.l[i * Sh::BR + r];
  }
  const typename Sh::T* hbm_Oi = hbm.O + i * Sh::BR * D;
#pragma unroll
  for (int k = 0; k < StepRows<Sh>::kChunks; ++k) {
    const int c = threadIdx.x + k * Sh::kThreads;
    if (c < rows_i * (D / 8)) in.o[k] = *reinterpret_cast<const uint4*>(hbm_Oi + (c / (D / 8)) * D + (c % (D / 8)) * 8);
  }
}

/// Line 2: O = 0 (N_q, d), l = 0 (N_q), m = -inf (N_q), in HBM.
template <class Sh>
__device__ __forceinline__ void init_hbm(const Args& a, const TraceBuffers& trace, const Tiling& t,
                                         const V1Hbm<typename Sh::T>& hbm, Recorder<Sh::kRecord>& rec) {
  constexpr int D = Sh::D, e = sizeof(typename Sh::T), kThreads = Sh::kThreads;
  rec.compute(0, Eq::init_stats, -1, -1, a.n_q, D);
  rec.store(0, Tensor::O, -1, -1, a.n_q, D, e);
  rec.store(0, Tensor::l, -1, -1, a.n_q, 1, 4);
  rec.store(0, Tensor::m, -1, -1, a.n_q, 1, 4);
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
  if (rec.stats_for(trace.stat_block))
    for (int r = threadIdx.x; r < int(t.rows(trace.stat_block)); r += kThreads) rec.stat(0, r, Sh::BR, -INFINITY, 0.f);
  __syncthreads();  // line 2's writes are visible to the whole block
}

/// Line 6: starts loading K_j, V_j (B_c, d) into SRAM (one cp.async group).
template <class Sh>
__device__ __forceinline__ void load_kv(const V1Sram<typename Sh::T>& sram, const V1Hbm<typename Sh::T>& hbm,
                                        std::int64_t j, int cols_j) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BC = Sh::BC;
  load_tile_async<T, BC, D, Sh::kThreads>(sram.Kj, hbm.K + j * BC * D, D, cols_j, D);
  load_tile_async<T, BC, D, Sh::kThreads>(sram.Vj, hbm.V + j * BC * D, D, cols_j, D);
  cp_async_commit();
}

/// Line 8: starts loading Q_i (B_r, d) into SRAM (one cp.async group). Called for the first Q
/// block of a K/V block at its step, and for Q_{i+1} during step i once no warp reads Q_i.
template <class Sh>
__device__ __forceinline__ void load_q(const V1Sram<typename Sh::T>& sram, const V1Hbm<typename Sh::T>& hbm,
                                       std::int64_t i, int rows_i) {
  constexpr int D = Sh::D;
  load_tile_async<typename Sh::T, Sh::BR, D, Sh::kThreads>(sram.Qi, hbm.Q + i * Sh::BR * D, D, rows_i, D);
  cp_async_commit();
}

/// Waits for every copy in flight (Q_i, and K_j, V_j at a K/V block's first step) and makes the
/// SRAM tiles visible to the whole block.
__device__ __forceinline__ void wait_tiles() {
  cp_async_wait<0>();
  __syncthreads();
}

/// Line 10: m~_ij = rowmax(S_ij) — each warp's max over its columns, then across warps through
/// SRAM —, P~_ij = exp(S_ij - m~_ij) (in place of s) and the warp's part of l~_ij = rowsum(P~_ij)
/// into sram.sum (summed across warps by softmax_update).
template <class Sh>
__device__ __forceinline__ void tile_softmax(float (&s)[Sh::kMT][Sh::kNT][4], const V1Sram<typename Sh::T>& sram,
                                             const V1Thread& th, float scale_log2) {
  constexpr int kMT = Sh::kMT, BR = Sh::BR, W = Sh::W;
  float m_warp[kMT][2], m_tile[kMT][2], l_warp[kMT][2];
  row_max(m_warp, s);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (th.lane % 4 == 0) sram.max[th.warp * BR + mt * 16 + th.g + 8 * h] = m_warp[mt][h];
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float x = -INFINITY;
      for (int w = 0; w < W; ++w) x = fmaxf(x, sram.max[w * BR + mt * 16 + th.g + 8 * h]);
      m_tile[mt][h] = x;
    }
  exp_scores(s, l_warp, m_tile, scale_log2);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(l_warp[mt][h]);
      if (th.lane % 4 == 0) sram.sum[th.warp * BR + mt * 16 + th.g + 8 * h] = l;
    }
}

/// The matmul of line 12 over the warp's keys: a (B_r, d) partial product P~_ij V_j per warp,
/// into sram.PV (summed across warps by update_output).
template <class Sh>
__device__ __forceinline__ void partial_pv(const float (&p)[Sh::kMT][Sh::kNT][4], const V1Sram<typename Sh::T>& sram,
                                           const V1Thread& th) {
  constexpr int kMT = Sh::kMT, kDT = Sh::kDT, kPitch = Sh::kPitchPV;
  float pv[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) pv[mt][dt][0] = pv[mt][dt][1] = pv[mt][dt][2] = pv[mt][dt][3] = 0.f;
#pragma unroll
  for (int kc = 0; kc < Sh::kColsPerWarp / 16; ++kc) {
    std::uint32_t pa[kMT][4];
    p_fragment<typename Sh::T>(pa, p, kc);
    pv_chunk<typename Sh::T, kMT, Sh::D>(pv, pa, sram.Vj + (th.col0 + kc * 16) * Sh::D, th.lane);
  }
  float* mine = sram.PV + th.warp * Sh::BR * kPitch;
  for_each_pair<kMT, kDT>(th.lane, [&](int mt, int dt, int h, int row, int col) {
    *reinterpret_cast<float2*>(mine + row * kPitch + col) = make_float2(pv[mt][dt][2 * h], pv[mt][dt][2 * h + 1]);
  });
}

/// Line 11: m_new = max(m_i, m~_ij), l_new = e^(m_i - m_new) l_i + e^(m~_ij - m_new) l~_ij, with
/// m_i, l_i read from HBM at the step's start (read_step_rows); line 13: m_new, l_new written back.
/// Also the weights of line 12: c_old = l_i e^(m_i - m_new) / l_new for O_i and
/// c_new = e^(m~_ij - m_new) / l_new for P~ V. Thread r owns row r (B_r <= threads).
template <class Sh>
__device__ __forceinline__ void softmax_update(const Args& a, const V1Sram<typename Sh::T>& sram,
                                               const V1Hbm<typename Sh::T>& hbm, const StepRows<Sh>& in,
                                               std::int64_t i, int rows_i, std::uint32_t step,
                                               Recorder<Sh::kRecord>& rec) {
  constexpr int BR = Sh::BR, W = Sh::W;
  const int r = threadIdx.x;
  if (r >= rows_i) return;
  float m_raw = -INFINITY, l_tilde = 0.f;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    m_raw = fmaxf(m_raw, sram.max[w * BR + r]);
    l_tilde += sram.sum[w * BR + r];
  }
  const float m_tilde = m_raw == -INFINITY ? -INFINITY : m_raw * a.scale;  // natural units
  const float m_old = in.m_old, l_old = in.l_old;
  const float m_new = fmaxf(m_old, m_tilde);
  const float a_old = m_old == -INFINITY ? 0.f : __expf(m_old - m_new);
  const float a_new = m_tilde == -INFINITY ? 0.f : __expf(m_tilde - m_new);
  const float l_new = a_old * l_old + a_new * l_tilde;
  sram.c_old[r] = l_new > 0.f ? l_old * a_old / l_new : 0.f;
  sram.c_new[r] = l_new > 0.f ? a_new / l_new : 0.f;
  hbm.m[i * BR + r] = m_new;
  hbm.l[i * BR + r] = l_new;
  if (rec.stats_for(int(i))) rec.stat(step, r, BR, m_new, l_new);
}

/// Line 12: O_i = diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i + e^(m~_ij - m_new) P~_ij V_j)
/// = c_old O_i + c_new (sum over warps of P~ V), on the chunks of O_i read at the step's start,
/// written back to HBM in the same 16-byte chunks.
template <class Sh>
__device__ __forceinline__ void update_output(const V1Sram<typename Sh::T>& sram, const V1Hbm<typename Sh::T>& hbm,
                                              StepRows<Sh>& in, std::int64_t i, int rows_i) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, kPitch = Sh::kPitchPV;
  T* hbm_Oi = hbm.O + i * Sh::BR * D;
#pragma unroll
  for (int k = 0; k < StepRows<Sh>::kChunks; ++k) {
    const int c = threadIdx.x + k * Sh::kThreads;
    if (c >= rows_i * (D / 8)) continue;
    const int r = c / (D / 8), col = (c % (D / 8)) * 8;
    // The warps' partial products of these 8 columns, summed: 16-byte SRAM reads (a lane's 8
    // floats as two float4), so that 8 lanes of a row read 8 different 32-byte pieces of it.
    float pv[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < Sh::W; ++w) {
      const float4* part = reinterpret_cast<const float4*>(sram.PV + (w * Sh::BR + r) * kPitch + col);
      const float4 lo = part[0], hi = part[1];
      pv[0] += lo.x, pv[1] += lo.y, pv[2] += lo.z, pv[3] += lo.w;
      pv[4] += hi.x, pv[5] += hi.y, pv[6] += hi.z, pv[7] += hi.w;
    }
    const float c_old = sram.c_old[r], c_new = sram.c_new[r];
    T* o8 = reinterpret_cast<T*>(&in.o[k]);
#pragma unroll
    for (int e = 0; e < 8; ++e)
      o8[e] = ElemTraits<T>::from_float(c_old * ElemTraits<T>::to_float(o8[e]) + c_new * pv[e]);
    *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = in.o[k];
  }
}

/// Lines 5-15: the outer loop over K/V blocks j, the inner loop over Q blocks i. Steps are the
/// simulator's: one per loaded K/V block, one per tile (i, j) visited or skipped.
template <class Sh>
__device__ __forceinline__ void main_loop(const Args& a, const Tiling& t, const V1Sram<typename Sh::T>& sram,
                                          const V1Hbm<typename Sh::T>& hbm, const V1Thread& th,
                                          Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, BC = Sh::BC, e = sizeof(T);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  std::uint32_t step = 1;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {  // line 5: for each K/V block j
    const int cols_j = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    if (!range.empty()) {  // line 6: load K_j, V_j
      rec.load(step, Tensor::K, -1, int(j), cols_j, D, e);
      rec.load(step, Tensor::V, -1, int(j), cols_j, D, e);
      ++step;
      load_kv<Sh>(sram, hbm, j, cols_j);
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
      StepRows<Sh> in;
      read_step_rows<Sh>(hbm, i, rows_i, in);
      if (!q_in_flight) load_q<Sh>(sram, hbm, i, rows_i);
      wait_tiles();

      // Line 9: S_ij = tau Q_i K_j^T; warp w computes its columns: (B_r, B_c/W) in registers.
      float s[Sh::kMT][Sh::kNT][4];
      scores<T, Sh::kMT, Sh::kNT, D>(s, sram.Qi, sram.Kj + th.col0 * D, th.lane);
      rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
      if (tile_class(t, a.band, i, j) != TileClass::full || cols_j < BC)
        mask_scores(s, a.band, i * BR, j * BC + th.col0, a.n_k, th.lane);

      // Line 10: m~_ij, P~_ij (in s), l~_ij; and each warp's P~_ij V_j for line 12.
      tile_softmax<Sh>(s, sram, th, scale_log2);
      // Every warp is past S_ij (tile_softmax synchronised): Q_{i+1} can replace Q_i in SRAM.
      q_in_flight = i + 1 <= range.last;
      if (q_in_flight) load_q<Sh>(sram, hbm, i + 1, int(t.rows(i + 1)));
      partial_pv<Sh>(s, sram, th);
      rec.compute(step, Eq::softmax_v1, int(i), int(j), rows_i, cols_j);
      __syncthreads();

      // Lines 11 and 13: m_new, l_new, written to HBM.
      softmax_update<Sh>(a, sram, hbm, in, i, rows_i, step, rec);
      __syncthreads();

      // Line 12: O_i updated in HBM.
      update_output<Sh>(sram, hbm, in, i, rows_i);
      rec.compute(step, Eq::output_v1, int(i), int(j), rows_i, cols_j);
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      __syncthreads();  // SRAM tiles and HBM rows of this step are done before the next one
    }
  }
}

/// Algorithm 1 for (batch, head) blockIdx.x.
template <class K>
__global__ void fl_v1_forward(const Args a, const TraceBuffers trace) {
  using Sh = V1Shape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, BC = K::BC, W = K::W;
  const std::int64_t bh = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const V1Thread th{warp, lane, lane / 4, warp * Sh::kColsPerWarp};
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  Recorder<K::kRecord> rec(trace, bh, 0);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Kj = reinterpret_cast<T*>(smem);
  float* sram_PV = reinterpret_cast<float*>(smem + Sh::kTileBytes);
  float* sram_max = sram_PV + W * BR * Sh::kPitchPV;
  const V1Sram<T> sram{sram_Kj,  sram_Kj + BC * D,         sram_Kj + 2 * BC * D,          sram_PV,
                       sram_max, sram_max + W * BR,        sram_max + 2 * W * BR,         sram_max + 2 * W * BR + BR};
  const V1Hbm<T> hbm{static_cast<const T*>(a.q) + bh * a.n_q * D, static_cast<const T*>(a.k) + kv_head(a, bh) * a.n_k * D,
                     static_cast<const T*>(a.v) + kv_head(a, bh) * a.n_k * D, static_cast<T*>(a.o) + bh * a.n_q * D,
                     a.l + bh * a.n_q,                            a.m + bh * a.n_q};

  init_hbm<Sh>(a, trace, t, hbm, rec);    // line 2
  main_loop<Sh>(a, t, sram, hbm, th, rec);  // lines 5-15
}

struct V1Launcher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = V1Shape<K>;
    launch_kernel(fl_v1_forward<K>, dim3(unsigned(a.bh)), Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
  }
};

}  // namespace

void launch_v1(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v1, V1Launcher>(a, trace, stream);
}

}  // namespace flashlab::gpu
