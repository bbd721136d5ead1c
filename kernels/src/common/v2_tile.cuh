// v2_tile.cuh — one thread block of FA2's forward (FA2 paper, Algorithm 1, lines 4-11) over a range
// of K/V blocks: what V2's kernel (v2.cu, every K/V block) and split-KV's split kernel
// (v2_split.cu, the K/V blocks of one split) share. Each adds its own epilogue (lines 12-15: O_i
// and L_i in the input type, or a split's partial O and L in fp32).
//
// Read beside Algorithm 1 (one thread block is the loop body of its line 3, for one i):
//   v2_block         line 3        which K/V blocks the block walks and how its steps are numbered
//   start_block      lines 4-5     Q_i (and the first K_j of line 7) into SRAM; O_i = 0, l_i = 0,
//                                  m_i = -inf in registers
//   main_loop        lines 6-11    per K/V block j: load K_j, V_j; S_ij; softmax_update; update_output
//   softmax_update   line 9        m_i, P~_ij, l_i
//   update_output    line 10       O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j
//   finish_rows      lines 12-13   1 / l_i and L_i = m_i + ln(l_i), on chip
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "flashlab/kernels/api.hpp"

namespace flashlab::gpu {

inline constexpr float kLog2e = 1.4426950408889634f;

/// The sizes of one compiled V2 kernel (K: an Instance, launch.cuh): split-Q warps, and the
/// SRAM of Q_i, K_j, V_j and L_i.
template <class K>
struct V2Shape : SplitQ<K> {
  static constexpr int kSmemBytes =
      (K::BR + 2 * K::BC) * K::D * int(sizeof(typename K::T)) + K::BR * int(sizeof(float));
  static_assert(K::BR <= SplitQ<K>::kThreads, "the epilogue stores L_i with one thread per row");
};

/// Where a thread block of Q block i stands in Algorithm 1, and this thread in the block. The
/// block walks K/V blocks [kv_first, kv_end) (all of them for V2, its split's for split-KV) and
/// numbers its steps as the simulator does: step_begin = load Q_i (when it visits a tile), then one
/// per K/V block of its range (visited or skipped), then the final one. step_begin is 0, or with
/// one thread block per head (--grid head) the step after the previous Q block's last.
struct V2Block {
  int i;                           // Q block (line 3)
  int lane, warp_row0;             // lane in the warp; the warp's first row within Q_i
  Tiling t;
  int rows_i;                      // rows(i)
  std::int64_t kv_first, kv_end;  // the K/V blocks walked
  BlockRange range;                // the K/V blocks visited (all of the walk's without block skip)
  bool visits;                     // at least one tile is visited
  std::uint32_t step_begin;        // the simulator's step of line 4 (when the block visits a tile)
  std::uint32_t step_j0, step_end; // the simulator's step of K/V block kv_first, and of the epilogue
  bool stats;                      // this block records m, l snapshots
  std::uint32_t stat_base;         // its snapshots' first slot in TraceBuffers::stats

  __device__ std::uint32_t step(std::int64_t j) const { return step_j0 + std::uint32_t(j - kv_first); }
};

/// The block of Q block i walking K/V blocks [kv_first, kv_end) (an empty range: it visits none),
/// its steps numbered from step0.
template <class Sh>
__device__ V2Block v2_block(const Args& a, int i, std::int64_t kv_first, std::int64_t kv_end, bool stats,
                            std::uint32_t stat_base, std::uint32_t step0 = 0) {
  V2Block b;
  b.i = i;
  b.lane = threadIdx.x % 32;
  b.warp_row0 = int(threadIdx.x / 32) * Sh::kRowsPerWarp;
  b.t = Tiling{a.n_q, a.n_k, Sh::D, Sh::BR, Sh::BC};
  b.rows_i = int(b.t.rows(i));
  b.kv_first = kv_first;
  b.kv_end = kv_end;
  b.range = BlockRange{kv_first, kv_end - 1};
  if (a.block_skip) {  // the visible K/V blocks of the walk (FA2 §3.1.1)
    const BlockRange seen = visible_col_blocks(b.t, a.band, i);
    b.range = BlockRange{seen.first > kv_first ? seen.first : kv_first, seen.last < kv_end - 1 ? seen.last : kv_end - 1};
  }
  b.visits = !b.range.empty();
  b.step_begin = step0;
  b.step_j0 = step0 + (b.visits ? 1 : 0);
  b.step_end = b.step_j0 + std::uint32_t(kv_end - kv_first);
  b.stats = stats;
  b.stat_base = stat_base;
  return b;
}

/// SRAM of a V2 thread block: Q_i (B_r, d), which holds O_i at the end; K_j, V_j (B_c, d); L_i (B_r).
template <class T>
struct V2Sram {
  T* Qi;
  T* Kj;
  T* Vj;
  float* Li;
};

template <class Sh>
__device__ V2Sram<typename Sh::T> v2_sram(unsigned char* smem) {
  using T = typename Sh::T;
  T* Qi = reinterpret_cast<T*>(smem);
  return {Qi, Qi + Sh::BR * Sh::D, Qi + (Sh::BR + Sh::BC) * Sh::D,
          reinterpret_cast<float*>(Qi + (Sh::BR + 2 * Sh::BC) * Sh::D)};
}

/// This thread block's input tiles in HBM.
template <class T>
struct V2Hbm {
  const T* Qi;  // (rows_i, d)
  const T* K;   // (N_k, d): the K/V head of query head bh
  const T* V;   // (N_k, d)
};

template <class Sh>
__device__ V2Hbm<typename Sh::T> v2_hbm(const Args& a, std::int64_t bh, int i) {
  using T = typename Sh::T;
  const std::int64_t kv = kv_head(a, bh) * a.n_k * Sh::D;
  return {static_cast<const T*>(a.q) + (bh * a.n_q + std::int64_t(i) * Sh::BR) * Sh::D, static_cast<const T*>(a.k) + kv,
          static_cast<const T*>(a.v) + kv};
}

/// The row statistics of this thread's rows: row (mt, h) = warp * kRowsPerWarp + mt*16 + g + 8h.
template <int kMT>
struct RowStats {
  float m[kMT][2];  // running row max of S (raw scores; the softmax scale is applied in exp2)
  float l[kMT][2];  // this thread's part of the running row sum of exp(scale (S - m))
};

/// Writes m (natural-log units: max of scale * S) and l of the thread's rows after `step`.
template <bool kRecord, int kMT>
__device__ void snapshot(Recorder<kRecord>& rec, const V2Block& b, std::uint32_t step, const RowStats<kMT>& st,
                         int b_r, float scale) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.l[mt][h]);
      const int r = b.warp_row0 + mt * 16 + b.lane / 4 + 8 * h;
      if (b.lane % 4 == 0 && r < b.rows_i)
        rec.stat(b.stat_base + step, r, b_r, st.m[mt][h] == -INFINITY ? -INFINITY : st.m[mt][h] * scale, l);
    }
}

/// Line 5: O_i = 0 (B_r, d), l_i = 0, m_i = -inf, in registers (the warp's rows).
template <int kMT, int kDT>
__device__ __forceinline__ void init_on_chip(float (&o)[kMT][kDT][4], RowStats<kMT>& st) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.f;
    st.m[mt][0] = st.m[mt][1] = -INFINITY;
    st.l[mt][0] = st.l[mt][1] = 0.f;
  }
}

/// Lines 4-5: O_i, l_i, m_i initialised on chip and, when the block visits a tile, Q_i loaded into
/// SRAM with the first visited K_j of line 7 (one cp.async group; step 0).
template <class Sh>
__device__ __forceinline__ void start_block(const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                            const V2Hbm<typename Sh::T>& hbm, float (&o)[Sh::kMT][Sh::kDT][4],
                                            RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  init_on_chip(o, st);  // line 5
  if (!b.visits) return;
  rec.load(b.step_begin, Tensor::Q, b.i, -1, b.rows_i, Sh::D, sizeof(T));  // line 4
  rec.compute(b.step_begin, Eq::init_stats, b.i, -1, b.rows_i, Sh::D);
  load_tile_async<T, Sh::BR, Sh::D, Sh::kThreads>(sram.Qi, hbm.Qi, Sh::D, b.rows_i, Sh::D);
  load_tile_async<T, Sh::BC, Sh::D, Sh::kThreads>(sram.Kj, hbm.K + b.range.first * Sh::BC * Sh::D, Sh::D,
                                                   int(b.t.cols(b.range.first)), Sh::D);
  cp_async_commit();
}

/// Line 9: m_new = max(m_old, rowmax(S_ij)), P~_ij = exp(S_ij - m_new) (in place of s),
/// l_new = exp(m_old - m_new) l_old + rowsum(P~_ij); alpha = exp(m_old - m_new) for line 10.
template <int kMT, int kNT>
__device__ __forceinline__ void softmax_update(float (&s)[kMT][kNT][4], RowStats<kMT>& st, float (&alpha)[kMT][2],
                                               float scale_log2) {
  float tile_max[kMT][2], tile_sum[kMT][2];
  row_max(tile_max, s);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m_new = fmaxf(st.m[mt][h], tile_max[mt][h]);
      alpha[mt][h] = m_new == -INFINITY ? 1.f : exp2_ftz((st.m[mt][h] - m_new) * scale_log2);
      st.m[mt][h] = m_new;
    }
  exp_scores(s, tile_sum, st.m, scale_log2);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) st.l[mt][h] = alpha[mt][h] * st.l[mt][h] + tile_sum[mt][h];
}

/// The whole row sums l_i of this thread's rows (st.l holds a quad's parts).
template <int kMT>
__device__ __forceinline__ void row_sums(float (&l)[kMT][2], const RowStats<kMT>& st) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) l[mt][h] = quad_sum(st.l[mt][h]);
}

/// FA1 Alg. 1 lines 11-12 on chip (--rescale step): O_i stays normalised, so line 10's weight of
/// O_i becomes l_old e^(m_old - m_new) / l_new (in alpha) and P~_ij is divided by l_new before
/// P~_ij V_j (a row with l_new = 0 has seen no key: both weights 0).
template <int kMT, int kNT>
__device__ __forceinline__ void normalise_step(float (&s)[kMT][kNT][4], const float (&l_old)[kMT][2],
                                               const RowStats<kMT>& st, float (&alpha)[kMT][2]) {
  float l_new[kMT][2];
  row_sums(l_new, st);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float inv = l_new[mt][h] > 0.f ? 1.f / l_new[mt][h] : 0.f;
      alpha[mt][h] = l_old[mt][h] * alpha[mt][h] * inv;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        s[mt][nt][2 * h] *= inv;
        s[mt][nt][2 * h + 1] *= inv;
      }
    }
}

/// Line 10: O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j. P~_ij is cast to the input type first
/// (FA2 casts it before P~V), which halves its registers before the rescale of O_i; the rescale runs
/// while V_j is still landing; `next_k_in_flight`: K_{j+1} was requested after V_j.
template <class Sh>
__device__ __forceinline__ void update_output(float (&o)[Sh::kMT][Sh::kDT][4], const float (&p)[Sh::kMT][Sh::kNT][4],
                                              const float (&alpha)[Sh::kMT][2], const typename Sh::T* sram_Vj,
                                              bool next_k_in_flight, int lane) {
  constexpr int kMT = Sh::kMT;
  std::uint32_t pa[Sh::BC / 16][kMT][4];  // P~_ij in the input type, per 16-key chunk
#pragma unroll
  for (int kc = 0; kc < Sh::BC / 16; ++kc) p_fragment<typename Sh::T>(pa[kc], p, kc);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < Sh::kDT; ++dt) {
      o[mt][dt][0] *= alpha[mt][0];
      o[mt][dt][1] *= alpha[mt][0];
      o[mt][dt][2] *= alpha[mt][1];
      o[mt][dt][3] *= alpha[mt][1];
    }
  if (next_k_in_flight) cp_async_wait<1>();  // V_j has landed (K_{j+1} may still be in flight)
  else cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int kc = 0; kc < Sh::BC / 16; ++kc) pv_chunk<typename Sh::T, kMT, Sh::D>(o, pa[kc], sram_Vj + kc * 16 * Sh::D, lane);
}

/// Lines 6-11: for each K/V block j of the range, load K_j and V_j (line 7), S_ij = Q_i K_j^T
/// (line 8), the softmax update (line 9) and the output update (line 10). Skipped tiles (of the
/// walk, outside the range) only record their event; m, l are snapshotted after every step of the
/// traced block. kRescaleSwitch: compiled with --rescale step too (a run-time switch, a.rescale_delayed);
/// without it, FA2's delayed rescale only (V2's and split-KV's kernels keep their registers).
template <class Sh, bool kRescaleSwitch = false>
__device__ __forceinline__ void main_loop(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                          const V2Hbm<typename Sh::T>& hbm, float (&o)[Sh::kMT][Sh::kDT][4],
                                          RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BC = Sh::BC, e = sizeof(T);
  const int i = b.i;
  const float scale_log2 = a.scale * kLog2e;
  for (std::int64_t j = b.kv_first; j < b.kv_end; ++j)  // skipped tiles: one event each, nothing else
    if (j < b.range.first || j > b.range.last) rec.skip(b.step(j), i, int(j), b.rows_i, b.t.cols(j));
  if (b.stats) {  // m, l after step 0 and after each skipped tile before the first visited one
    if (b.visits) snapshot(rec, b, b.step_begin, st, Sh::BR, a.scale);
    for (std::int64_t j = b.kv_first; j < (b.visits ? b.range.first : b.kv_end); ++j)
      snapshot(rec, b, b.step(j), st, Sh::BR, a.scale);
  }

  for (std::int64_t j = b.range.first; j <= b.range.last; ++j) {  // line 6: for each K/V block j
    const std::uint32_t step = b.step(j);
    const int cols_j = int(b.t.cols(j));
    // Line 7: load K_j, V_j (K_j was fetched during the previous tile's P~ V).
    rec.load(step, Tensor::K, i, int(j), cols_j, D, e);
    rec.load(step, Tensor::V, i, int(j), cols_j, D, e);
    load_tile_async<T, BC, D, Sh::kThreads>(sram.Vj, hbm.V + j * BC * D, D, cols_j, D);
    cp_async_commit();
    cp_async_wait<1>();  // Q_i and K_j have landed
    __syncthreads();

    // Line 8: S_ij = Q_i K_j^T, the warp's rows: (B_r/W, B_c) in registers.
    float s[Sh::kMT][Sh::kNT][4];
    scores<T, Sh::kMT, Sh::kNT, D>(s, sram.Qi + b.warp_row0 * D, sram.Kj, b.lane);
    rec.compute(step, Eq::scores, i, int(j), b.rows_i, cols_j);
    __syncthreads();  // every warp is done with K_j
    if (j < b.range.last) {
      load_tile_async<T, BC, D, Sh::kThreads>(sram.Kj, hbm.K + (j + 1) * BC * D, D, int(b.t.cols(j + 1)), D);
      cp_async_commit();
    }
    if (tile_class(b.t, a.band, i, j) != TileClass::full || cols_j < BC)
      mask_scores(s, a.band, std::int64_t(i) * Sh::BR + b.warp_row0, j * BC, a.n_k, b.lane);

    // Line 9: m_i, P~_ij (in s), l_i (--rescale step: FA1's lines 10-11, O_i kept normalised).
    const bool step_rescale = kRescaleSwitch && !a.rescale_delayed;
    float alpha[Sh::kMT][2], l_old[Sh::kMT][2];
    if (step_rescale) row_sums(l_old, st);
    softmax_update(s, st, alpha, scale_log2);
    if (step_rescale) normalise_step(s, l_old, st, alpha);
    rec.compute(step, step_rescale ? Eq::softmax_v1 : Eq::softmax_v2, i, int(j), b.rows_i, cols_j);

    // Line 10: O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j (FA1 line 12 with --rescale step).
    update_output<Sh>(o, s, alpha, sram.Vj, j < b.range.last, b.lane);
    rec.compute(step, step_rescale ? Eq::output_v1 : Eq::output_v2, i, int(j), b.rows_i, cols_j);
    __syncthreads();  // every warp is done with V_j
    if (b.stats) snapshot(rec, b, step, st, Sh::BR, a.scale);
  }
  if (b.stats && b.visits)  // ... and after each skipped tile past the last visited one
    for (std::int64_t j = b.range.last + 1; j < b.kv_end; ++j) snapshot(rec, b, b.step(j), st, Sh::BR, a.scale);
}

/// Lines 12-13 on chip, the start of every epilogue: inv_l = 1 / l_i (1 when --rescale step has
/// kept O_i normalised; 0 for a row with l_i = 0, whose O is then 0, never NaN) and L_i = m_i +
/// ln(l_i) into SRAM (`no_key`: the L of a row with l_i = 0); then the snapshot of the final step.
/// The caller syncs before reading sram_Li. kRescaleSwitch: as main_loop's.
template <class Sh, bool kRescaleSwitch = false>
__device__ __forceinline__ void finish_rows(const Args& a, const V2Block& b, const RowStats<Sh::kMT>& st,
                                            float (&inv_l)[Sh::kMT][2], float* sram_Li, float no_key,
                                            Recorder<Sh::kRecord>& rec) {
#pragma unroll
  for (int mt = 0; mt < Sh::kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.l[mt][h]);
      inv_l[mt][h] = l > 0.f ? (kRescaleSwitch && !a.rescale_delayed ? 1.f : 1.f / l) : 0.f;  // step: O_i is normalised
      const int r = b.warp_row0 + mt * 16 + b.lane / 4 + 8 * h;
      if (b.lane % 4 == 0) sram_Li[r] = l > 0.f ? st.m[mt][h] * a.scale + logf(l) : no_key;
    }
  if (b.stats) snapshot(rec, b, b.step_end, st, Sh::BR, a.scale);
}

}  // namespace flashlab::gpu
