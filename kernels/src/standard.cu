// standard.cu — standard attention (FA1 paper, Algorithm 0): three kernels, S and P in HBM.
//
//   line 1: S = scale Q K^T   fl_standard_scores   grid (T_r, bh): block i keeps Q_i, streams K_j
//   line 2: P = softmax(S)    fl_standard_softmax  grid (N_q, bh): one row of S per thread block
//   line 3: O = P V           fl_standard_output   grid (T_r, bh): block i streams P_ij and V_j
// The mask is applied element-wise by the softmax (masked P = 0); S is computed in full. The
// matmuls use the tensor-core warp tiles of V2 (split-Q: a warp owns 16 rows of the tile).
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "tiles.hpp"

namespace flashlab::gpu {
namespace {

constexpr int kSoftmaxThreads = 128;

// Line 1: S_ij = scale Q_i K_j^T for every j, stored at the input type.
template <class T, int D, int BR, int BC, int W, bool kRecord>
__global__ void fl_standard_scores(const Args a, const TraceBuffers trace) {
  constexpr int kMT = BR / W / 16, kNT = BC / 8, kThreads = W * 32, e = sizeof(T);
  const int i = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32, warp_row0 = warp * (BR / W);
  const std::int64_t bh = blockIdx.y, ld = standard_ld(a.n_k);
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int rows_i = int(t.rows(i));
  Recorder<kRecord> rec(trace, bh, 0, i == 0);
  rec.load(0, Tensor::Q, -1, -1, a.n_q, D, e);
  rec.load(0, Tensor::K, -1, -1, a.n_k, D, e);
  rec.compute(0, Eq::scores, -1, -1, a.n_q, a.n_k);
  rec.store(0, Tensor::S, -1, -1, a.n_q, a.n_k, e);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Qi = reinterpret_cast<T*>(smem);    // (B_r, d)
  T* sram_Kj = sram_Qi + BR * D;      // (B_c, d)
  T* sram_Sij = sram_Kj + BC * D;     // (B_r, B_c)
  const T* hbm_K = static_cast<const T*>(a.k) + bh * a.n_k * D;
  T* hbm_Si = static_cast<T*>(a.s) + (bh * a.n_q + std::int64_t(i) * BR) * ld;  // (rows_i, ld)

  load_tile_async<T, BR, D, kThreads>(sram_Qi, static_cast<const T*>(a.q) + (bh * a.n_q + std::int64_t(i) * BR) * D,
                                      D, rows_i, D);
  load_tile_async<T, BC, D, kThreads>(sram_Kj, hbm_K, D, int(t.cols(0)), D);
  cp_async_commit();
  float scale_rows[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) scale_rows[mt][0] = scale_rows[mt][1] = a.scale;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {
    cp_async_wait<0>();
    __syncthreads();  // K_j has landed; the previous S_ij has been stored
    float s[kMT][kNT][4];
    scores<T, kMT, kNT, D>(s, sram_Qi + warp_row0 * D, sram_Kj, lane);
    __syncthreads();  // every warp is done with K_j
    if (j + 1 < t.t_c()) {
      load_tile_async<T, BC, D, kThreads>(sram_Kj, hbm_K + (j + 1) * BC * D, D, int(t.cols(j + 1)), D);
      cp_async_commit();
    }
    store_fragments<T, kMT, kNT, BC>(sram_Sij + warp_row0 * BC, s, scale_rows, lane);
    __syncthreads();
    store_tile<T, BR, BC, kThreads>(hbm_Si + j * BC, ld, sram_Sij, rows_i, int(t.cols(j)));
  }
}

// Block-wide reduction of one value per thread (op = max or sum) over kSoftmaxThreads threads.
template <class Op>
__device__ float block_reduce(float x, float* sram_scratch, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
  if (threadIdx.x % 32 == 0) sram_scratch[threadIdx.x / 32] = x;
  __syncthreads();
  float r = sram_scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) r = op(r, sram_scratch[w]);
  __syncthreads();  // the scratch may be reused by the next reduction
  return r;
}

// Line 2: P = softmax(S) row by row, masked entries (and rows with no visible key) give P = 0.
template <class T, bool kRecord>
__global__ void __launch_bounds__(kSoftmaxThreads) fl_standard_softmax(const Args a, const TraceBuffers trace) {
  const std::int64_t r = blockIdx.x, bh = blockIdx.y, ld = standard_ld(a.n_k);
  const int e = sizeof(T), b_r = a.tile.b_r;
  Recorder<kRecord> rec(trace, bh, 0, r == 0);
  rec.load(1, Tensor::S, -1, -1, a.n_q, a.n_k, e);
  rec.compute(1, Eq::softmax_dense, -1, -1, a.n_q, a.n_k);
  rec.store(1, Tensor::P, -1, -1, a.n_q, a.n_k, e);

  extern __shared__ __align__(16) unsigned char smem[];
  float* sram_row = reinterpret_cast<float*>(smem);  // (N_k rounded up to 8): the row of S, then P
  float* sram_scratch = sram_row + (a.n_k + 7) / 8 * 8;
  const T* hbm_Srow = static_cast<const T*>(a.s) + (bh * a.n_q + r) * ld;
  T* hbm_Prow = static_cast<T*>(a.p) + (bh * a.n_q + r) * ld;
  const int chunks = int((a.n_k + 7) / 8);  // 16-byte chunks of the row

  float x_max = -INFINITY;
#pragma unroll 1  // one warp request per 32 chunks (see v1.cu)
  for (int c = threadIdx.x; c < chunks; c += kSoftmaxThreads) {
    const uint4 raw = *reinterpret_cast<const uint4*>(hbm_Srow + c * 8);
    const T* x = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const std::int64_t col = c * 8 + k;
      const float v = col < a.n_k && visible(a.band, r, col) ? ElemTraits<T>::to_float(x[k]) : -INFINITY;
      sram_row[col] = v;
      x_max = fmaxf(x_max, v);
    }
  }
  const float m = block_reduce(x_max, sram_scratch, [](float p, float q) { return fmaxf(p, q); });
  const float m_use = m == -INFINITY ? 0.f : m;  // a row with no visible key: every p = 0
  float x_sum = 0.f;
  for (int c = threadIdx.x; c < chunks * 8; c += kSoftmaxThreads) {
    const float p = expf(sram_row[c] - m_use);
    sram_row[c] = p;
    x_sum += p;
  }
  const float l = block_reduce(x_sum, sram_scratch, [](float p, float q) { return p + q; });
  const float inv_l = l > 0.f ? 1.f / l : 0.f;
#pragma unroll 1  // one warp request per 32 chunks (see v1.cu)
  for (int c = threadIdx.x; c < chunks; c += kSoftmaxThreads) {
    uint4 raw;
    T* x = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = ElemTraits<T>::from_float(sram_row[c * 8 + k] * inv_l);
    *reinterpret_cast<uint4*>(hbm_Prow + c * 8) = raw;
  }
  if (rec.stats_for(int(r / b_r)) && threadIdx.x == 0)
    for (std::uint32_t step = 1; step <= 2; ++step) rec.stat(step, int(r % b_r), b_r, m, l);
}

// Line 3: O_i = sum_j P_ij V_j.
template <class T, int D, int BR, int BC, int W, bool kRecord>
__global__ void fl_standard_output(const Args a, const TraceBuffers trace) {
  constexpr int kMT = BR / W / 16, kDT = D / 8, kThreads = W * 32, e = sizeof(T);
  static_assert(BR * BC + BC * D >= BR * D, "O_i is staged over P_ij and V_j");
  const int i = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32, warp_row0 = warp * (BR / W);
  const std::int64_t bh = blockIdx.y, ld = standard_ld(a.n_k);
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int rows_i = int(t.rows(i));
  Recorder<kRecord> rec(trace, bh, 0, i == 0);
  rec.load(2, Tensor::P, -1, -1, a.n_q, a.n_k, e);
  rec.load(2, Tensor::V, -1, -1, a.n_k, D, e);
  rec.compute(2, Eq::output_dense, -1, -1, a.n_q, a.n_k);
  rec.store(2, Tensor::O, -1, -1, a.n_q, D, e);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Pij = reinterpret_cast<T*>(smem);  // (B_r, B_c)
  T* sram_Vj = sram_Pij + BR * BC;   // (B_c, d)
  T* sram_Oi = sram_Pij;                     // (B_r, d), at the end
  const T* hbm_Pi = static_cast<const T*>(a.p) + (bh * a.n_q + std::int64_t(i) * BR) * ld;
  const T* hbm_V = static_cast<const T*>(a.v) + bh * a.n_k * D;

  float o[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.f;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {
    const int cols_j = int(t.cols(j));
    load_tile_async<T, BR, BC, kThreads>(sram_Pij, hbm_Pi + j * BC, ld, rows_i, cols_j);
    load_tile_async<T, BC, D, kThreads>(sram_Vj, hbm_V + j * BC * D, D, cols_j, D);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc) {
      std::uint32_t pa[kMT][4];
      p_fragment_sram<T, kMT, BC>(pa, sram_Pij + warp_row0 * BC, kc, lane);
      pv_chunk<T, kMT, D>(o, pa, sram_Vj + kc * 16 * D, lane);
    }
    __syncthreads();  // every warp is done with P_ij and V_j
  }
  float ones[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) ones[mt][0] = ones[mt][1] = 1.f;
  store_fragments<T, kMT, kDT, D>(sram_Oi + warp_row0 * D, o, ones, lane);
  __syncthreads();
  store_tile<T, BR, D, kThreads>(static_cast<T*>(a.o) + (bh * a.n_q + std::int64_t(i) * BR) * D, D, sram_Oi,
                                 rows_i, D);
}

template <class T, int D, int BR, int BC, int W>
void launch_shape(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  const dim3 tiles(unsigned((a.n_q + BR - 1) / BR), unsigned(a.bh)), rows(unsigned(a.n_q), unsigned(a.bh));
  const std::size_t scores_smem = ((BR + BC) * D + BR * BC) * sizeof(T);
  const std::size_t softmax_smem = ((a.n_k + 7) / 8 * 8 + kSoftmaxThreads / 32) * sizeof(float);
  const std::size_t output_smem = (BR * BC + BC * D) * sizeof(T);
  const TraceBuffers none{};
  const TraceBuffers& tr = trace ? *trace : none;
  if (trace) {  // the three launches record Event::launch 0, 1, 2 (docs/events.md)
    TraceBuffers softmax_tr = tr, output_tr = tr;
    softmax_tr.launch = 1;
    output_tr.launch = 2;
    launch_kernel(fl_standard_scores<T, D, BR, BC, W, true>, tiles, W * 32, scores_smem, stream, a, tr);
    launch_kernel(fl_standard_softmax<T, true>, rows, kSoftmaxThreads, softmax_smem, stream, a, softmax_tr);
    launch_kernel(fl_standard_output<T, D, BR, BC, W, true>, tiles, W * 32, output_smem, stream, a, output_tr);
  } else {
    launch_kernel(fl_standard_scores<T, D, BR, BC, W, false>, tiles, W * 32, scores_smem, stream, a, tr);
    launch_kernel(fl_standard_softmax<T, false>, rows, kSoftmaxThreads, softmax_smem, stream, a, tr);
    launch_kernel(fl_standard_output<T, D, BR, BC, W, false>, tiles, W * 32, output_smem, stream, a, tr);
  }
}

}  // namespace

void launch_standard(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  if (a.n_k > kStandardMaxNk)
    throw ConfigError("nk", std::to_string(a.n_k),
                      "at most " + std::to_string(kStandardMaxNk) +
                          " for standard attention (its softmax kernel holds a row of S in SRAM)");
  dispatch_elem(a.elem, [&](auto elem) {
    using T = decltype(elem);
    dispatch_d(a.d, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const bool found = dispatch_tile<kStandardTiles>(a.tile, [&](auto index) {
        constexpr TileShape s = kStandardTiles[decltype(index)::value];
        if constexpr (fits(Kernel::standard, s, D)) launch_shape<T, D, s.b_r, s.b_c, s.warps>(a, trace, stream);
        else unsupported_tile("standard", a.tile, a.d);
      });
      if (!found) unsupported_tile("standard", a.tile, a.d);
    });
  });
}

}  // namespace flashlab::gpu
