// v2.cu — FlashAttention-2 forward (FA2 paper, Algorithm 1), one thread block per Q block.
//
// Grid (T_r, batch*heads): thread block (i, bh) loads Q_i once, walks the K/V blocks j that hold
// a visible element of row block i (block skip, FA2 §3.1.1; every j without it), keeps O_i, m_i,
// l_i on chip, rescales O_i by exp(m_old - m_new) only (the division by l_i is delayed to the
// end, FA2 §3.1.1 "tweaks"), and writes O_i and L_i = m_i + ln(l_i) once. Warps split Q_i by rows
// (split-Q, FA2 §3.3): warp w owns rows [w B_r/W, (w+1) B_r/W) and never talks to the others;
// barriers only guard the shared K_j, V_j buffers. K_{j+1} is fetched with cp.async while P~ V_j
// is computed, V_j while S_ij is computed.
//
// Read beside Algorithm 1 (the kernel is the loop body of its line 3, for one i):
//   load_q           line 4        Q_i (and the first K_j of line 7) into SRAM
//   init_on_chip     line 5        O_i = 0, l_i = 0, m_i = -inf in registers
//   main_loop        lines 6-11    per K/V block j: load K_j, V_j; S_ij; softmax_update; update_output
//   softmax_update   line 9        m_i, P~_ij, l_i
//   update_output    line 10       O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j
//   epilogue         lines 12-15   O_i / l_i, L_i = m_i + ln(l_i), written to HBM
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

/// The sizes of one compiled V2 kernel (K: an Instance, launch.cuh): split-Q warps, and the
/// SRAM of Q_i, K_j, V_j and L_i.
template <class K>
struct V2Shape : SplitQ<K> {
  static constexpr int kSmemBytes =
      (K::BR + 2 * K::BC) * K::D * int(sizeof(typename K::T)) + K::BR * int(sizeof(float));
  static_assert(K::BR <= SplitQ<K>::kThreads, "the epilogue stores L_i with one thread per row");
};

/// Where thread block (i, bh) stands in Algorithm 1, and this thread in the block.
struct V2Block {
  int i;                           // Q block (line 3)
  int lane, warp_row0;             // lane in the warp; the warp's first row within Q_i
  Tiling t;
  int rows_i;                      // rows(i)
  BlockRange range;                // the K/V blocks visited (all of them without block skip)
  bool visits;                     // at least one tile is visited
  std::uint32_t step_j0, step_end; // the simulator's step of K/V block 0, and of the epilogue
  bool stats;                      // this block records m, l snapshots
};

/// SRAM of a V2 thread block: Q_i (B_r, d), which holds O_i at the end; K_j, V_j (B_c, d); L_i (B_r).
template <class T>
struct V2Sram {
  T* Qi;
  T* Kj;
  T* Vj;
  float* Li;
};

/// This thread block's tiles in HBM.
template <class T>
struct V2Hbm {
  const T* Qi;  // (rows_i, d)
  const T* K;   // (N_k, d)
  const T* V;   // (N_k, d)
  T* Oi;        // (rows_i, d)
  float* Li;    // (rows_i)
};

/// The row statistics of this thread's rows: row (mt, h) = warp * kRowsPerWarp + mt*16 + g + 8h.
template <int kMT>
struct RowStats {
  float m[kMT][2];  // running row max of S (raw scores; the softmax scale is applied in exp2)
  float l[kMT][2];  // this thread's part of the running row sum of exp(scale (S - m))
};

/// Writes m (natural-log units: max of scale * S) and l of the thread's rows after `step`.
template <bool kRecord, int kMT>
__device__ void snapshot(Recorder<kRecord>& rec, std::uint32_t step, const RowStats<kMT>& st, int row0, int rows,
                         int b_r, float scale, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.l[mt][h]);
      const int r = row0 + mt * 16 + lane / 4 + 8 * h;
      if (lane % 4 == 0 && r < rows)
        rec.stat(step, r, b_r, st.m[mt][h] == -INFINITY ? -INFINITY : st.m[mt][h] * scale, l);
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

/// Line 4: starts loading Q_i into SRAM, with the first visited K_j of line 7 (one cp.async group).
template <class Sh>
__device__ __forceinline__ void load_q(const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                       const V2Hbm<typename Sh::T>& hbm) {
  using T = typename Sh::T;
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
      alpha[mt][h] = m_new == -INFINITY ? 1.f : exp2f((st.m[mt][h] - m_new) * scale_log2);
      st.m[mt][h] = m_new;
    }
  exp_scores(s, tile_sum, st.m, scale_log2);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) st.l[mt][h] = alpha[mt][h] * st.l[mt][h] + tile_sum[mt][h];
}

/// Line 10: O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j. The rescale runs while V_j is still
/// landing; `next_k_in_flight`: K_{j+1} was requested after V_j.
template <class Sh>
__device__ __forceinline__ void update_output(float (&o)[Sh::kMT][Sh::kDT][4], const float (&p)[Sh::kMT][Sh::kNT][4],
                                              const float (&alpha)[Sh::kMT][2], const typename Sh::T* sram_Vj,
                                              bool next_k_in_flight, int lane) {
  constexpr int kMT = Sh::kMT;
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
  for (int kc = 0; kc < Sh::BC / 16; ++kc) {
    std::uint32_t pa[kMT][4];  // P~_ij, the warp's rows x 16 keys
    p_fragment<typename Sh::T>(pa, p, kc);
    pv_chunk<typename Sh::T, kMT, Sh::D>(o, pa, sram_Vj + kc * 16 * Sh::D, lane);
  }
}

/// Lines 6-11: for each K/V block j of the range, load K_j and V_j (line 7), S_ij = Q_i K_j^T
/// (line 8), the softmax update (line 9) and the output update (line 10). Skipped tiles (outside
/// the range) only record their event; m, l are snapshotted after every step of the traced block.
template <class Sh>
__device__ __forceinline__ void main_loop(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                          const V2Hbm<typename Sh::T>& hbm, float (&o)[Sh::kMT][Sh::kDT][4],
                                          RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BC = Sh::BC, e = sizeof(T);
  const int i = b.i;
  const float scale_log2 = a.scale * kLog2e;
  for (std::int64_t j = 0; j < b.t.t_c(); ++j)  // skipped tiles: one event each, nothing else
    if (j < b.range.first || j > b.range.last) rec.skip(b.step_j0 + std::uint32_t(j), i, int(j), b.rows_i, b.t.cols(j));
  if (b.stats) {  // m, l after step 0 and after each skipped tile before the first visited one
    if (b.visits) snapshot(rec, 0, st, b.warp_row0, b.rows_i, Sh::BR, a.scale, b.lane);
    for (std::int64_t j = 0; j < (b.visits ? b.range.first : b.t.t_c()); ++j)
      snapshot(rec, b.step_j0 + std::uint32_t(j), st, b.warp_row0, b.rows_i, Sh::BR, a.scale, b.lane);
  }

  for (std::int64_t j = b.range.first; j <= b.range.last; ++j) {  // line 6: for each K/V block j
    const std::uint32_t step = b.step_j0 + std::uint32_t(j);
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

    // Line 9: m_i, P~_ij (in s), l_i.
    float alpha[Sh::kMT][2];
    softmax_update(s, st, alpha, scale_log2);
    rec.compute(step, Eq::softmax_v2, i, int(j), b.rows_i, cols_j);

    // Line 10: O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j.
    update_output<Sh>(o, s, alpha, sram.Vj, j < b.range.last, b.lane);
    rec.compute(step, Eq::output_v2, i, int(j), b.rows_i, cols_j);
    __syncthreads();  // every warp is done with V_j
    if (b.stats) snapshot(rec, step, st, b.warp_row0, b.rows_i, Sh::BR, a.scale, b.lane);
  }
  if (b.stats && b.visits)  // ... and after each skipped tile past the last visited one
    for (std::int64_t j = b.range.last + 1; j < b.t.t_c(); ++j)
      snapshot(rec, b.step_j0 + std::uint32_t(j), st, b.warp_row0, b.rows_i, Sh::BR, a.scale, b.lane);
}

/// Lines 12-15: O_i = diag(l_i)^-1 O_i, L_i = m_i + ln(l_i) (a row with no visible key has
/// l_i = 0 and gets O = 0, L = +inf, never NaN); O_i (B_r, d) and L_i (B_r) are written to HBM,
/// staged through SRAM so that every store is a whole 16-byte chunk (O) or 32 consecutive rows (L).
template <class Sh>
__device__ __forceinline__ void epilogue(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                         const V2Hbm<typename Sh::T>& hbm, const float (&o)[Sh::kMT][Sh::kDT][4],
                                         const RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int kMT = Sh::kMT, D = Sh::D, e = sizeof(T);
  if (b.visits) rec.compute(b.step_end, Eq::finalize_v2, b.i, -1, b.rows_i, D);
  float inv_l[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.l[mt][h]);
      inv_l[mt][h] = l > 0.f ? 1.f / l : 0.f;
      const int r = b.warp_row0 + mt * 16 + b.lane / 4 + 8 * h;
      if (b.lane % 4 == 0) sram.Li[r] = l > 0.f ? st.m[mt][h] * a.scale + logf(l) : INFINITY;
    }
  if (b.stats) snapshot(rec, b.step_end, st, b.warp_row0, b.rows_i, Sh::BR, a.scale, b.lane);

  store_fragments<T, kMT, Sh::kDT, D>(sram.Qi + b.warp_row0 * D, o, inv_l, b.lane);
  __syncthreads();
  store_tile<T, Sh::BR, D, Sh::kThreads>(hbm.Oi, D, sram.Qi, b.rows_i, D);
  if (int(threadIdx.x) < b.rows_i) hbm.Li[threadIdx.x] = sram.Li[threadIdx.x];  // B_r <= threads: one row each
  rec.store(b.step_end, Tensor::O, b.i, -1, b.rows_i, D, e);
  rec.store(b.step_end, Tensor::L, b.i, -1, b.rows_i, 1, 4);
}

/// Algorithm 1, lines 4-15, for Q block i = blockIdx.x of (batch, head) blockIdx.y.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_forward(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, BC = K::BC, e = sizeof(T);
  const int i = blockIdx.x;
  const std::int64_t bh = blockIdx.y;
  Recorder<K::kRecord> rec(trace, bh, std::uint32_t(i));
  V2Block b;
  b.i = i;
  b.lane = threadIdx.x % 32;
  b.warp_row0 = int(threadIdx.x / 32) * Sh::kRowsPerWarp;
  b.t = Tiling{a.n_q, a.n_k, D, BR, BC};
  b.rows_i = int(b.t.rows(i));
  // The K/V blocks this Q block visits; the simulator numbers the block's steps: 0 = load Q_i
  // (when it visits a tile), then one per K/V block j (visited or skipped), then the final one.
  b.range = a.block_skip ? visible_col_blocks(b.t, a.band, i) : BlockRange{0, b.t.t_c() - 1};
  b.visits = !b.range.empty();
  b.step_j0 = b.visits ? 1 : 0;
  b.step_end = b.step_j0 + std::uint32_t(b.t.t_c());
  b.stats = rec.stats_for(i);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Qi = reinterpret_cast<T*>(smem);
  const V2Sram<T> sram{sram_Qi, sram_Qi + BR * D, sram_Qi + (BR + BC) * D,
                       reinterpret_cast<float*>(sram_Qi + (BR + 2 * BC) * D)};
  const V2Hbm<T> hbm{static_cast<const T*>(a.q) + (bh * a.n_q + std::int64_t(i) * BR) * D,
                     static_cast<const T*>(a.k) + bh * a.n_k * D, static_cast<const T*>(a.v) + bh * a.n_k * D,
                     static_cast<T*>(a.o) + (bh * a.n_q + std::int64_t(i) * BR) * D,
                     a.lse + bh * a.n_q + std::int64_t(i) * BR};

  float o[Sh::kMT][Sh::kDT][4];  // O_i, the warp's rows: (B_r/W, d) in registers
  RowStats<Sh::kMT> st;          // m_i, l_i of the warp's rows
  init_on_chip(o, st);           // line 5
  if (b.visits) {                // line 4
    rec.load(0, Tensor::Q, i, -1, b.rows_i, D, e);
    rec.compute(0, Eq::init_stats, i, -1, b.rows_i, D);
    load_q<Sh>(b, sram, hbm);
  }
  main_loop<Sh>(a, b, sram, hbm, o, st, rec);  // lines 6-11
  epilogue<Sh>(a, b, sram, hbm, o, st, rec);   // lines 12-15
}

struct V2Launcher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = V2Shape<K>;
    const dim3 grid(unsigned((a.n_q + K::BR - 1) / K::BR), unsigned(a.bh));
    launch_kernel(fl_v2_forward<K>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
  }
};

}  // namespace

void launch_v2(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v2, V2Launcher>(a, trace, stream);
}

}  // namespace flashlab::gpu
