// v2.cu — FlashAttention-2 forward (FA2 paper, Algorithm 1), one thread block per Q block.
//
// Grid (T_r, batch*heads): thread block (i, bh) loads Q_i once, walks the K/V blocks j that hold
// a visible element of row block i (block skip, FA2 §3.1.1; every j without it), keeps O_i, m_i,
// l_i on chip, rescales O_i by exp(m_old - m_new) only (the division by l_i is delayed to the
// end, FA2 §3.1.1 "tweaks"), and writes O_i and L_i = m_i + ln(l_i) once. Warps split Q_i by rows
// (split-Q, FA2 §3.3): warp w owns rows [w B_r/W, (w+1) B_r/W) and never talks to the others;
// barriers only guard the shared K_j, V_j buffers. K_{j+1} is fetched with cp.async while P~ V_j
// is computed, V_j while S_ij is computed.
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "tiles.hpp"

namespace flashlab::gpu {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

template <class T, int D, int BR, int BC, int W>
struct V2Shape {
  static constexpr int kThreads = W * 32;
  static constexpr int kRowsPerWarp = BR / W;
  static constexpr int kMT = kRowsPerWarp / 16;  // m16 tiles per warp
  static constexpr int kNT = BC / 8;             // n8 tiles of S_ij per warp
  static constexpr int kDT = D / 8;              // n8 tiles of O_i per warp
  static constexpr int kSmemBytes = (BR + 2 * BC) * D * int(sizeof(T)) + BR * int(sizeof(float));
  static_assert(kRowsPerWarp % 16 == 0 && BC % 16 == 0 && D % 16 == 0 && BR <= kThreads);
};

// The row statistics of this thread's rows: row (mt, h) = warp * kRowsPerWarp + mt*16 + g + 8h.
template <int kMT>
struct RowStats {
  float m[kMT][2];  // running row max of S (raw scores; the softmax scale is applied in exp2)
  float l[kMT][2];  // this thread's part of the running row sum of exp(scale (S - m))
};

// Writes m (natural-log units: max of scale * S) and l of the thread's rows after `step`.
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

template <class T, int D, int BR, int BC, int W, bool kRecord>
__global__ void __launch_bounds__(W * 32) fl_v2_forward(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<T, D, BR, BC, W>;
  constexpr int kMT = Sh::kMT, kNT = Sh::kNT, kDT = Sh::kDT, kThreads = Sh::kThreads, e = sizeof(T);
  const int i = blockIdx.x;
  const std::int64_t bh = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_row0 = warp * Sh::kRowsPerWarp;  // the warp's first row within Q_i
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int rows_i = int(t.rows(i));
  const float scale_log2 = a.scale * kLog2e;
  Recorder<kRecord> rec(trace, bh, std::uint32_t(i));

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Qi = reinterpret_cast<T*>(smem);                              // (B_r, d); O_i at the end
  T* sram_Kj = sram_Qi + BR * D;                                // (B_c, d)
  T* sram_Vj = sram_Kj + BC * D;                                // (B_c, d)
  float* sram_Li = reinterpret_cast<float*>(sram_Vj + BC * D);  // (B_r)

  const T* hbm_Qi = static_cast<const T*>(a.q) + (bh * a.n_q + std::int64_t(i) * BR) * D;  // (rows_i, d)
  const T* hbm_K = static_cast<const T*>(a.k) + bh * a.n_k * D;                            // (N_k, d)
  const T* hbm_V = static_cast<const T*>(a.v) + bh * a.n_k * D;                            // (N_k, d)
  T* hbm_Oi = static_cast<T*>(a.o) + (bh * a.n_q + std::int64_t(i) * BR) * D;              // (rows_i, d)
  float* hbm_Li = a.lse + bh * a.n_q + std::int64_t(i) * BR;                               // (rows_i)

  // The K/V blocks this Q block visits; the simulator numbers the block's steps: 0 = load Q_i
  // (when it visits a tile), then one per K/V block j (visited or skipped), then the final one.
  const BlockRange range = a.block_skip ? visible_col_blocks(t, a.band, i) : BlockRange{0, t.t_c() - 1};
  const bool visits = !range.empty();
  const std::uint32_t step_j0 = visits ? 1 : 0, step_end = step_j0 + std::uint32_t(t.t_c());
  const bool stats = rec.stats_for(i);

  // Lines 4-5: O_i = 0 (B_r, d), l_i = 0, m_i = -inf, on chip.
  float o[kMT][kDT][4];
  RowStats<kMT> st;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.f;
    st.m[mt][0] = st.m[mt][1] = -INFINITY;
    st.l[mt][0] = st.l[mt][1] = 0.f;
  }
  for (std::int64_t j = 0; j < t.t_c(); ++j)  // skipped tiles: one event each, nothing else
    if (j < range.first || j > range.last) rec.skip(step_j0 + std::uint32_t(j), i, int(j), rows_i, t.cols(j));

  if (visits) {
    rec.load(0, Tensor::Q, i, -1, rows_i, D, e);
    rec.compute(0, Eq::init_stats, i, -1, rows_i, D);
    load_tile_async<T, BR, D, kThreads>(sram_Qi, hbm_Qi, D, rows_i, D);
    load_tile_async<T, BC, D, kThreads>(sram_Kj, hbm_K + range.first * BC * D, D, int(t.cols(range.first)), D);
    cp_async_commit();
  }
  if (stats) {  // m, l after step 0 and after each skipped tile before the first visited one
    if (visits) snapshot(rec, 0, st, warp_row0, rows_i, BR, a.scale, lane);
    for (std::int64_t j = 0; j < (visits ? range.first : t.t_c()); ++j)
      snapshot(rec, step_j0 + std::uint32_t(j), st, warp_row0, rows_i, BR, a.scale, lane);
  }

  for (std::int64_t j = range.first; j <= range.last; ++j) {  // line 6: for each K/V block j
    const std::uint32_t step = step_j0 + std::uint32_t(j);
    const int cols_j = int(t.cols(j));
    // Line 7: load K_j, V_j (K_j was fetched during the previous tile's P~ V).
    rec.load(step, Tensor::K, i, int(j), cols_j, D, e);
    rec.load(step, Tensor::V, i, int(j), cols_j, D, e);
    load_tile_async<T, BC, D, kThreads>(sram_Vj, hbm_V + j * BC * D, D, cols_j, D);
    cp_async_commit();
    cp_async_wait<1>();  // Q_i and K_j have landed
    __syncthreads();

    // Line 8: S_ij = Q_i K_j^T, the warp's rows: (B_r/W, B_c) in registers.
    float s[kMT][kNT][4];
    scores<T, kMT, kNT, D>(s, sram_Qi + warp_row0 * D, sram_Kj, lane);
    rec.compute(step, Eq::scores, i, int(j), rows_i, cols_j);
    __syncthreads();  // every warp is done with K_j
    if (j < range.last) {
      load_tile_async<T, BC, D, kThreads>(sram_Kj, hbm_K + (j + 1) * BC * D, D, int(t.cols(j + 1)), D);
      cp_async_commit();
    }
    if (tile_class(t, a.band, i, j) != TileClass::full || cols_j < BC)
      mask_scores(s, a.band, std::int64_t(i) * BR + warp_row0, j * BC, a.n_k, lane);

    // Line 9: m_new = max(m_old, rowmax(S_ij)), P~_ij = exp(S_ij - m_new),
    //         l_new = exp(m_old - m_new) l_old + rowsum(P~_ij).
    float tile_max[kMT][2], alpha[kMT][2], tile_sum[kMT][2];
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
    rec.compute(step, Eq::softmax_v2, i, int(j), rows_i, cols_j);

    // Line 10: O_i = diag(exp(m_old - m_new)) O_i + P~_ij V_j.
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[mt][dt][0] *= alpha[mt][0];
        o[mt][dt][1] *= alpha[mt][0];
        o[mt][dt][2] *= alpha[mt][1];
        o[mt][dt][3] *= alpha[mt][1];
      }
    if (j < range.last) cp_async_wait<1>();  // V_j has landed (K_{j+1} may still be in flight)
    else cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc) {
      std::uint32_t pa[kMT][4];  // P~_ij, the warp's rows x 16 keys
      p_fragment<T>(pa, s, kc);
      pv_chunk<T, kMT, D>(o, pa, sram_Vj + kc * 16 * D, lane);
    }
    rec.compute(step, Eq::output_v2, i, int(j), rows_i, cols_j);
    __syncthreads();  // every warp is done with V_j
    if (stats) snapshot(rec, step, st, warp_row0, rows_i, BR, a.scale, lane);
  }
  if (stats && visits)  // ... and after each skipped tile past the last visited one
    for (std::int64_t j = range.last + 1; j < t.t_c(); ++j)
      snapshot(rec, step_j0 + std::uint32_t(j), st, warp_row0, rows_i, BR, a.scale, lane);

  // Lines 12-13: O_i = diag(l_i)^-1 O_i, L_i = m_i + ln(l_i); a row with no visible key has
  // l_i = 0 and gets O = 0, L = +inf (never NaN).
  if (visits) rec.compute(step_end, Eq::finalize_v2, i, -1, rows_i, D);
  float inv_l[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.l[mt][h]);
      inv_l[mt][h] = l > 0.f ? 1.f / l : 0.f;
      const int r = warp_row0 + mt * 16 + lane / 4 + 8 * h;
      if (lane % 4 == 0) sram_Li[r] = l > 0.f ? st.m[mt][h] * a.scale + logf(l) : INFINITY;
    }
  if (stats) snapshot(rec, step_end, st, warp_row0, rows_i, BR, a.scale, lane);

  // Lines 14-15: write O_i (B_r, d) and L_i (B_r) to HBM, staged through SRAM so that every
  // store is a whole 16-byte chunk (O) or 32 consecutive rows (L).
  store_fragments<T, kMT, kDT, D>(sram_Qi + warp_row0 * D, o, inv_l, lane);
  __syncthreads();
  store_tile<T, BR, D, kThreads>(hbm_Oi, D, sram_Qi, rows_i, D);
  if (int(threadIdx.x) < rows_i) hbm_Li[threadIdx.x] = sram_Li[threadIdx.x];  // B_r <= threads: one row each
  rec.store(step_end, Tensor::O, i, -1, rows_i, D, e);
  rec.store(step_end, Tensor::L, i, -1, rows_i, 1, 4);
}

template <class T, int D, int BR, int BC, int W>
void launch_shape(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  using Sh = V2Shape<T, D, BR, BC, W>;
  const dim3 grid(unsigned((a.n_q + BR - 1) / BR), unsigned(a.bh));
  if (trace)
    launch_kernel(fl_v2_forward<T, D, BR, BC, W, true>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, *trace);
  else
    launch_kernel(fl_v2_forward<T, D, BR, BC, W, false>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, TraceBuffers{});
}

}  // namespace

void launch_v2(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch_elem(a.elem, [&](auto elem) {
    using T = decltype(elem);
    dispatch_d(a.d, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const bool found = dispatch_tile<kV2Tiles>(a.tile, [&](auto index) {
        constexpr TileShape s = kV2Tiles[decltype(index)::value];
        if constexpr (fits(Kernel::v2, s, D)) launch_shape<T, D, s.b_r, s.b_c, s.warps>(a, trace, stream);
        else unsupported_tile("v2", a.tile, a.d);
      });
      if (!found) unsupported_tile("v2", a.tile, a.d);
    });
  });
}

}  // namespace flashlab::gpu
