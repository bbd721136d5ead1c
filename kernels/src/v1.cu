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
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "tiles.hpp"

namespace flashlab::gpu {
namespace {

template <class T, int D, int BR, int BC, int W>
struct V1Shape {
  static constexpr int kThreads = W * 32;
  static constexpr int kColsPerWarp = BC / W;
  static constexpr int kMT = BR / 16;            // every warp covers all B_r rows
  static constexpr int kNT = kColsPerWarp / 8;   // n8 tiles of the warp's columns of S_ij
  static constexpr int kDT = D / 8;
  static constexpr int kPitchPV = D + 8;         // fp32 partials: +8 floats keep a half-warp's
                                                 // float2 stores in distinct banks
  static constexpr int kTileBytes = (BR + 2 * BC) * D * int(sizeof(T));
  static constexpr int kPartialBytes = W * BR * kPitchPV * int(sizeof(float));
  static constexpr int kRowBytes = (2 * W + 2) * BR * int(sizeof(float));
  static constexpr int kSmemBytes = kTileBytes + kPartialBytes + kRowBytes;
  static_assert(kColsPerWarp % 16 == 0 && BR % 16 == 0 && BR <= kThreads);
};

template <class T, int D, int BR, int BC, int W, bool kRecord>
__global__ void fl_v1_forward(const Args a, const TraceBuffers trace) {
  using Sh = V1Shape<T, D, BR, BC, W>;
  constexpr int kMT = Sh::kMT, kNT = Sh::kNT, kDT = Sh::kDT, kThreads = Sh::kThreads, e = sizeof(T);
  const std::int64_t bh = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4;
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const float scale_log2 = a.scale * 1.4426950408889634f;
  Recorder<kRecord> rec(trace, bh, 0);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Kj = reinterpret_cast<T*>(smem);                                 // (B_c, d)
  T* sram_Vj = sram_Kj + BC * D;                                   // (B_c, d)
  T* sram_Qi = sram_Vj + BC * D;                                   // (B_r, d)
  float* sram_PV = reinterpret_cast<float*>(smem + Sh::kTileBytes);        // (W, B_r, d): P~ V per warp
  float* sram_max = sram_PV + W * BR * Sh::kPitchPV;                       // (W, B_r): row max per warp
  float* sram_sum = sram_max + W * BR;                                     // (W, B_r): row sum per warp
  float* sram_c_old = sram_sum + W * BR;                                   // (B_r): weight of O_i
  float* sram_c_new = sram_c_old + BR;                                     // (B_r): weight of P~ V

  const T* hbm_Q = static_cast<const T*>(a.q) + bh * a.n_q * D;  // (N_q, d)
  const T* hbm_K = static_cast<const T*>(a.k) + bh * a.n_k * D;  // (N_k, d)
  const T* hbm_V = static_cast<const T*>(a.v) + bh * a.n_k * D;  // (N_k, d)
  T* hbm_O = static_cast<T*>(a.o) + bh * a.n_q * D;              // (N_q, d)
  float* hbm_l = a.l + bh * a.n_q;                               // (N_q)
  float* hbm_m = a.m + bh * a.n_q;                               // (N_q)

  // Line 2: O = 0 (N_q, d), l = 0 (N_q), m = -inf (N_q), in HBM.
  rec.compute(0, Eq::init_stats, -1, -1, a.n_q, D);
  rec.store(0, Tensor::O, -1, -1, a.n_q, D, e);
  rec.store(0, Tensor::l, -1, -1, a.n_q, 1, 4);
  rec.store(0, Tensor::m, -1, -1, a.n_q, 1, 4);
  // One warp request per iteration over HBM rows (here and below): when the compiler unrolled
  // these loops, it split a warp's 32 rows between the unrolled body and the remainder, and the
  // sector shared by the two requests was counted twice by the profiler (seen on the H200).
#pragma unroll 1
  for (std::int64_t c = threadIdx.x; c < a.n_q * D / 8; c += kThreads)
    reinterpret_cast<uint4*>(hbm_O)[c] = make_uint4(0, 0, 0, 0);
#pragma unroll 1
  for (std::int64_t r = threadIdx.x; r < a.n_q; r += kThreads) {
    hbm_l[r] = 0.f;
    hbm_m[r] = -INFINITY;
  }
  if (rec.stats_for(trace.stat_block))
    for (int r = threadIdx.x; r < int(t.rows(trace.stat_block)); r += kThreads) rec.stat(0, r, BR, -INFINITY, 0.f);
  __syncthreads();  // line 2's writes are visible to the whole block

  std::uint32_t step = 1;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {  // line 5: for each K/V block j
    const int cols_j = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    if (!range.empty()) {  // line 6: load K_j, V_j (B_c, d)
      rec.load(step, Tensor::K, -1, int(j), cols_j, D, e);
      rec.load(step, Tensor::V, -1, int(j), cols_j, D, e);
      ++step;
      load_tile_async<T, BC, D, kThreads>(sram_Kj, hbm_K + j * BC * D, D, cols_j, D);
      load_tile_async<T, BC, D, kThreads>(sram_Vj, hbm_V + j * BC * D, D, cols_j, D);
      cp_async_commit();
    }
    for (std::int64_t i = 0; i < t.t_r(); ++i, ++step) {  // line 7: for each Q block i
      const int rows_i = int(t.rows(i));
      if (i < range.first || i > range.last) {
        rec.skip(step, int(i), int(j), rows_i, cols_j);
        if (rec.stats_for(int(i)))  // m_i, l_i in HBM, unchanged by a skipped tile
          for (int r = threadIdx.x; r < rows_i; r += kThreads) rec.stat(step, r, BR, hbm_m[i * BR + r], hbm_l[i * BR + r]);
        continue;
      }
      // Line 8: load Q_i (B_r, d), O_i (B_r, d), l_i, m_i (B_r) from HBM (O_i, l_i, m_i are read
      // where they are used, below).
      rec.load(step, Tensor::Q, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.load(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      load_tile_async<T, BR, D, kThreads>(sram_Qi, hbm_Q + i * BR * D, D, rows_i, D);
      cp_async_commit();
      cp_async_wait<0>();
      __syncthreads();

      // Line 9: S_ij = tau Q_i K_j^T; warp w computes its columns: (B_r, B_c/W) in registers.
      float s[kMT][kNT][4];
      const int col0 = warp * Sh::kColsPerWarp;
      scores<T, kMT, kNT, D>(s, sram_Qi, sram_Kj + col0 * D, lane);
      rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
      if (tile_class(t, a.band, i, j) != TileClass::full || cols_j < BC)
        mask_scores(s, a.band, i * BR, j * BC + col0, a.n_k, lane);

      // Line 10: m~_ij = rowmax(S_ij): each warp's max over its columns, then across warps.
      float m_warp[kMT][2], m_tile[kMT][2], l_warp[kMT][2];
      row_max(m_warp, s);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (lane % 4 == 0) sram_max[warp * BR + mt * 16 + g + 8 * h] = m_warp[mt][h];
      __syncthreads();
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float x = -INFINITY;
          for (int w = 0; w < W; ++w) x = fmaxf(x, sram_max[w * BR + mt * 16 + g + 8 * h]);
          m_tile[mt][h] = x;
        }
      // P~_ij = exp(S_ij - m~_ij) (B_r, B_c), l~_ij = rowsum(P~_ij): per warp, summed below.
      exp_scores(s, l_warp, m_tile, scale_log2);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float l = quad_sum(l_warp[mt][h]);
          if (lane % 4 == 0) sram_sum[warp * BR + mt * 16 + g + 8 * h] = l;
        }
      // P~_ij V_j over the warp's keys: a (B_r, d) partial product per warp, into SRAM.
      {
        float pv[kMT][kDT][4];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int dt = 0; dt < kDT; ++dt) pv[mt][dt][0] = pv[mt][dt][1] = pv[mt][dt][2] = pv[mt][dt][3] = 0.f;
#pragma unroll
        for (int kc = 0; kc < Sh::kColsPerWarp / 16; ++kc) {
          std::uint32_t pa[kMT][4];
          p_fragment<T>(pa, s, kc);
          pv_chunk<T, kMT, D>(pv, pa, sram_Vj + (col0 + kc * 16) * D, lane);
        }
        float* mine = sram_PV + warp * BR * Sh::kPitchPV;
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              *reinterpret_cast<float2*>(mine + (mt * 16 + g + 8 * h) * Sh::kPitchPV + dt * 8 + 2 * (lane % 4)) =
                  make_float2(pv[mt][dt][2 * h], pv[mt][dt][2 * h + 1]);
      }
      rec.compute(step, Eq::softmax_v1, int(i), int(j), rows_i, cols_j);
      __syncthreads();

      // Line 11: m_new = max(m_i, m~_ij), l_new = e^(m_i - m_new) l_i + e^(m~_ij - m_new) l~_ij;
      // line 13: write l_i, m_i. One thread per row (32 consecutive rows per warp).
#pragma unroll 1
      for (int r = threadIdx.x; r < rows_i; r += kThreads) {
        float m_raw = -INFINITY, l_tilde = 0.f;
        for (int w = 0; w < W; ++w) {
          m_raw = fmaxf(m_raw, sram_max[w * BR + r]);
          l_tilde += sram_sum[w * BR + r];
        }
        const float m_tilde = m_raw == -INFINITY ? -INFINITY : m_raw * a.scale;  // natural units
        const float m_old = hbm_m[i * BR + r], l_old = hbm_l[i * BR + r];
        const float m_new = fmaxf(m_old, m_tilde);
        const float a_old = m_old == -INFINITY ? 0.f : __expf(m_old - m_new);
        const float a_new = m_tilde == -INFINITY ? 0.f : __expf(m_tilde - m_new);
        const float l_new = a_old * l_old + a_new * l_tilde;
        sram_c_old[r] = l_new > 0.f ? l_old * a_old / l_new : 0.f;
        sram_c_new[r] = l_new > 0.f ? a_new / l_new : 0.f;
        hbm_m[i * BR + r] = m_new;
        hbm_l[i * BR + r] = l_new;
        if (rec.stats_for(int(i))) rec.stat(step, r, BR, m_new, l_new);
      }
      __syncthreads();

      // Line 12: O_i = diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i + e^(m~_ij - m_new) P~_ij V_j),
      // the partial products of the W warps summed here; written back to HBM (16-byte chunks).
      T* hbm_Oi = hbm_O + i * BR * D;
#pragma unroll 1
      for (int c = threadIdx.x; c < rows_i * (D / 8); c += kThreads) {
        const int r = c / (D / 8), col = (c % (D / 8)) * 8;
        uint4 chunk = *reinterpret_cast<const uint4*>(hbm_Oi + r * D + col);
        T* o8 = reinterpret_cast<T*>(&chunk);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          float pv = 0.f;
          for (int w = 0; w < W; ++w) pv += sram_PV[(w * BR + r) * Sh::kPitchPV + col + k];
          o8[k] = ElemTraits<T>::from_float(sram_c_old[r] * ElemTraits<T>::to_float(o8[k]) + sram_c_new[r] * pv);
        }
        *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = chunk;
      }
      rec.compute(step, Eq::output_v1, int(i), int(j), rows_i, cols_j);
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      __syncthreads();  // SRAM tiles and HBM rows of this step are done before the next one
    }
  }
}

template <class T, int D, int BR, int BC, int W>
void launch_shape(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  using Sh = V1Shape<T, D, BR, BC, W>;
  const dim3 grid(unsigned(a.bh));
  if (trace)
    launch_kernel(fl_v1_forward<T, D, BR, BC, W, true>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, *trace);
  else
    launch_kernel(fl_v1_forward<T, D, BR, BC, W, false>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, TraceBuffers{});
}

}  // namespace

void launch_v1(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch_elem(a.elem, [&](auto elem) {
    using T = decltype(elem);
    dispatch_d(a.d, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const bool found = dispatch_tile<kV1Tiles>(a.tile, [&](auto index) {
        constexpr TileShape s = kV1Tiles[decltype(index)::value];
        if constexpr (fits(Kernel::v1, s, D)) launch_shape<T, D, s.b_r, s.b_c, s.warps>(a, trace, stream);
        else unsupported_tile("v1", a.tile, a.d);
      });
      if (!found) unsupported_tile("v1", a.tile, a.d);
    });
  });
}

}  // namespace flashlab::gpu
