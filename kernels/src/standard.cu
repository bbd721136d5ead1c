// standard.cu — standard attention (FA1 paper, Algorithm 0): three kernels, S and P in HBM.
//
//   line 1: S = scale Q K^T   fl_standard_scores   grid (T_r, bh): block i keeps Q_i, streams K_j
//   line 2: P = softmax(S)    fl_standard_softmax  grid (N_q, bh): one row of S per thread block
//   line 3: O = P V           fl_standard_output   grid (T_r, bh): block i streams P_ij and V_j
// The mask is applied element-wise by the softmax (masked P = 0); S is computed in full. The
// matmuls use the tensor-core warp tiles of V2 (split-Q: a warp owns 16 rows of the tile).
//
// Read beside Algorithm 0:
//   line 1: load_q_k (Q_i, the first K_j), then per j: scores, store_s_tile
//   line 2: load_row (the row of S, masked, and its max), exp_row (P~ and its sum), store_row (P)
//   line 3: per j: load_p_v (P_ij, V_j), then P_ij V_j accumulated; store_o (O_i)
// Each kernel records its whole-kernel events from thread block 0 (the simulator's step 0, 1, 2).
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/warp_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

constexpr int kSoftmaxThreads = 128;

/// The sizes of the compiled S = scale Q K^T and O = P V kernels (K: an Instance, launch.cuh):
/// split-Q warps, and the SRAM of each kernel.
template <class K>
struct StandardShape : SplitQ<K> {
  static constexpr std::size_t kScoresSmem = ((K::BR + K::BC) * K::D + K::BR * K::BC) * sizeof(typename K::T);
  static constexpr std::size_t kOutputSmem = (K::BR * K::BC + K::BC * K::D) * sizeof(typename K::T);
  static_assert(K::BR * K::BC + K::BC * K::D >= K::BR * K::D, "O_i is staged over P_ij and V_j");
};

// ---- Line 1: S = scale Q K^T -------------------------------------------------------------------

/// Line 1, loads: starts copying Q_i (B_r, d) and K_0 (B_c, d) into SRAM (one cp.async group).
template <class Sh>
__device__ __forceinline__ void load_q_k(typename Sh::T* sram_Qi, typename Sh::T* sram_Kj, const typename Sh::T* hbm_Qi,
                                         const typename Sh::T* hbm_K, int rows_i, int cols_0) {
  using T = typename Sh::T;
  load_tile_async<T, Sh::BR, Sh::D, Sh::kThreads>(sram_Qi, hbm_Qi, Sh::D, rows_i, Sh::D);
  load_tile_async<T, Sh::BC, Sh::D, Sh::kThreads>(sram_Kj, hbm_K, Sh::D, cols_0, Sh::D);
  cp_async_commit();
}

/// Line 1, writes: S_ij = scale (the warp's rows of Q_i K_j^T), at the input type, staged through
/// the SRAM tile sram_Sij (B_r, B_c) so that every HBM store is a whole 16-byte chunk.
template <class Sh>
__device__ __forceinline__ void store_s_tile(typename Sh::T* hbm_Sij, std::int64_t ld, typename Sh::T* sram_Sij,
                                             const float (&s)[Sh::kMT][Sh::kNT][4], float scale, int warp_row0,
                                             int rows_i, int cols_j, int lane) {
  float scale_rows[Sh::kMT][2];
#pragma unroll
  for (int mt = 0; mt < Sh::kMT; ++mt) scale_rows[mt][0] = scale_rows[mt][1] = scale;
  store_fragments<typename Sh::T, Sh::kMT, Sh::kNT, Sh::BC>(sram_Sij + warp_row0 * Sh::BC, s, scale_rows, lane);
  __syncthreads();
  store_tile<typename Sh::T, Sh::BR, Sh::BC, Sh::kThreads>(hbm_Sij, ld, sram_Sij, rows_i, cols_j);
}

/// Line 1 for Q block i = blockIdx.x of (batch, head) blockIdx.y: S_ij = scale Q_i K_j^T for every j.
template <class K>
__global__ void fl_standard_scores(const Args a, const TraceBuffers trace) {
  using Sh = StandardShape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, BC = K::BC, e = sizeof(T);
  const int i = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32, warp_row0 = warp * Sh::kRowsPerWarp;
  const std::int64_t bh = blockIdx.y, ld = standard_ld(a.n_k);
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int rows_i = int(t.rows(i));
  Recorder<K::kRecord> rec(trace, bh, 0, i == 0);
  rec.load(0, Tensor::Q, -1, -1, a.n_q, D, e);
  rec.load(0, Tensor::K, -1, -1, a.n_k, D, e);
  rec.compute(0, Eq::scores, -1, -1, a.n_q, a.n_k);
  rec.store(0, Tensor::S, -1, -1, a.n_q, a.n_k, e);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Qi = reinterpret_cast<T*>(smem);  // (B_r, d)
  T* sram_Kj = sram_Qi + BR * D;            // (B_c, d)
  T* sram_Sij = sram_Kj + BC * D;           // (B_r, B_c)
  const T* hbm_K = static_cast<const T*>(a.k) + kv_head(a, bh) * a.n_k * D;
  T* hbm_Si = static_cast<T*>(a.s) + (bh * a.n_q + std::int64_t(i) * BR) * ld;  // (rows_i, ld)

  load_q_k<Sh>(sram_Qi, sram_Kj, static_cast<const T*>(a.q) + (bh * a.n_q + std::int64_t(i) * BR) * D, hbm_K,
               rows_i, int(t.cols(0)));
  for (std::int64_t j = 0; j < t.t_c(); ++j) {
    cp_async_wait<0>();
    __syncthreads();  // K_j has landed; the previous S_ij has been stored
    float s[Sh::kMT][Sh::kNT][4];
    scores<T, Sh::kMT, Sh::kNT, D>(s, sram_Qi + warp_row0 * D, sram_Kj, lane);
    __syncthreads();  // every warp is done with K_j
    if (j + 1 < t.t_c()) {
      load_tile_async<T, BC, D, Sh::kThreads>(sram_Kj, hbm_K + (j + 1) * BC * D, D, int(t.cols(j + 1)), D);
      cp_async_commit();
    }
    store_s_tile<Sh>(hbm_Si + j * BC, ld, sram_Sij, s, a.scale, warp_row0, rows_i, int(t.cols(j)), lane);
  }
}

// ---- Line 2: P = softmax(S) --------------------------------------------------------------------

/// Block-wide reduction of one value per thread (op = max or sum) over kSoftmaxThreads threads.
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

/// Line 2, read: row r of S from HBM (16-byte chunks) into sram_row as fp32, masked entries (and
/// the padding past N_k) as -inf; returns this thread's part of the row max.
template <class T>
__device__ __forceinline__ float load_row(float* sram_row, const T* hbm_Srow, const Args& a, std::int64_t r,
                                         int chunks) {
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
  return x_max;
}

/// Line 2, on chip: sram_row = exp(S - m) in place, with m = 0 for a row with no visible key (every
/// entry -inf, so every p = 0); returns this thread's part of the row sum.
__device__ __forceinline__ float exp_row(float* sram_row, float m, int chunks) {
  const float m_use = m == -INFINITY ? 0.f : m;
  float x_sum = 0.f;
  for (int c = threadIdx.x; c < chunks * 8; c += kSoftmaxThreads) {
    const float p = expf(sram_row[c] - m_use);
    sram_row[c] = p;
    x_sum += p;
  }
  return x_sum;
}

/// Line 2, write: P = sram_row / l at the input type (l = 0: P = 0), 16-byte chunks.
template <class T>
__device__ __forceinline__ void store_row(T* hbm_Prow, const float* sram_row, float l, int chunks) {
  const float inv_l = l > 0.f ? 1.f / l : 0.f;
#pragma unroll 1  // one warp request per 32 chunks (see v1.cu)
  for (int c = threadIdx.x; c < chunks; c += kSoftmaxThreads) {
    uint4 raw;
    T* x = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = ElemTraits<T>::from_float(sram_row[c * 8 + k] * inv_l);
    *reinterpret_cast<uint4*>(hbm_Prow + c * 8) = raw;
  }
}

/// Line 2 for row r = blockIdx.x of (batch, head) blockIdx.y: P = softmax(S), masked entries (and
/// rows with no visible key) give P = 0. Templated on T and kRecord only: one kernel for every tile.
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
  const int chunks = int((a.n_k + 7) / 8);  // 16-byte chunks of the row

  const float x_max = load_row(sram_row, static_cast<const T*>(a.s) + (bh * a.n_q + r) * ld, a, r, chunks);
  const float m = block_reduce(x_max, sram_scratch, [](float p, float q) { return fmaxf(p, q); });
  const float x_sum = exp_row(sram_row, m, chunks);
  const float l = block_reduce(x_sum, sram_scratch, [](float p, float q) { return p + q; });
  store_row(static_cast<T*>(a.p) + (bh * a.n_q + r) * ld, sram_row, l, chunks);
  if (rec.stats_for(int(r / b_r)) && threadIdx.x == 0)
    for (std::uint32_t step = 1; step <= 2; ++step) rec.stat(step, int(r % b_r), b_r, m, l);
}

// ---- Line 3: O = P V ---------------------------------------------------------------------------

/// Line 3, loads: P_ij (rows_i, cols_j) and V_j (cols_j, d) into SRAM, and waits for them.
template <class Sh>
__device__ __forceinline__ void load_p_v(typename Sh::T* sram_Pij, typename Sh::T* sram_Vj,
                                         const typename Sh::T* hbm_Pij, std::int64_t ld, const typename Sh::T* hbm_Vj,
                                         int rows_i, int cols_j) {
  using T = typename Sh::T;
  load_tile_async<T, Sh::BR, Sh::BC, Sh::kThreads>(sram_Pij, hbm_Pij, ld, rows_i, cols_j);
  load_tile_async<T, Sh::BC, Sh::D, Sh::kThreads>(sram_Vj, hbm_Vj, Sh::D, cols_j, Sh::D);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
}

/// Line 3, write: the warp's rows of O_i (fp32 accumulators) at the input type, staged through
/// SRAM (over P_ij and V_j) so that every HBM store is a whole 16-byte chunk.
template <class Sh>
__device__ __forceinline__ void store_o(typename Sh::T* hbm_Oi, typename Sh::T* sram_Oi,
                                        const float (&o)[Sh::kMT][Sh::kDT][4], int warp_row0, int rows_i, int lane) {
  float ones[Sh::kMT][2];
#pragma unroll
  for (int mt = 0; mt < Sh::kMT; ++mt) ones[mt][0] = ones[mt][1] = 1.f;
  store_fragments<typename Sh::T, Sh::kMT, Sh::kDT, Sh::D>(sram_Oi + warp_row0 * Sh::D, o, ones, lane);
  __syncthreads();
  store_tile<typename Sh::T, Sh::BR, Sh::D, Sh::kThreads>(hbm_Oi, Sh::D, sram_Oi, rows_i, Sh::D);
}

/// Line 3 for Q block i = blockIdx.x of (batch, head) blockIdx.y: O_i = sum_j P_ij V_j.
template <class K>
__global__ void fl_standard_output(const Args a, const TraceBuffers trace) {
  using Sh = StandardShape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, BC = K::BC, kMT = Sh::kMT, e = sizeof(T);
  const int i = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32, warp_row0 = warp * Sh::kRowsPerWarp;
  const std::int64_t bh = blockIdx.y, ld = standard_ld(a.n_k);
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int rows_i = int(t.rows(i));
  Recorder<K::kRecord> rec(trace, bh, 0, i == 0);
  rec.load(2, Tensor::P, -1, -1, a.n_q, a.n_k, e);
  rec.load(2, Tensor::V, -1, -1, a.n_k, D, e);
  rec.compute(2, Eq::output_dense, -1, -1, a.n_q, a.n_k);
  rec.store(2, Tensor::O, -1, -1, a.n_q, D, e);

  extern __shared__ __align__(16) unsigned char smem[];
  T* sram_Pij = reinterpret_cast<T*>(smem);  // (B_r, B_c)
  T* sram_Vj = sram_Pij + BR * BC;           // (B_c, d)
  T* sram_Oi = sram_Pij;                     // (B_r, d), at the end
  const T* hbm_Pi = static_cast<const T*>(a.p) + (bh * a.n_q + std::int64_t(i) * BR) * ld;
  const T* hbm_V = static_cast<const T*>(a.v) + kv_head(a, bh) * a.n_k * D;

  float o[kMT][Sh::kDT][4];  // O_i, the warp's rows: (B_r/W, d) in registers
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < Sh::kDT; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.f;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {
    load_p_v<Sh>(sram_Pij, sram_Vj, hbm_Pi + j * BC, ld, hbm_V + j * BC * D, rows_i, int(t.cols(j)));
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc) {
      std::uint32_t pa[kMT][4];
      p_fragment_sram<T, kMT, BC>(pa, sram_Pij + warp_row0 * BC, kc, lane);
      pv_chunk<T, kMT, D>(o, pa, sram_Vj + kc * 16 * D, lane);
    }
    __syncthreads();  // every warp is done with P_ij and V_j
  }
  store_o<Sh>(static_cast<T*>(a.o) + (bh * a.n_q + std::int64_t(i) * BR) * D, sram_Oi, o, warp_row0, rows_i, lane);
}

struct StandardLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = StandardShape<K>;
    const dim3 tiles(unsigned((a.n_q + K::BR - 1) / K::BR), unsigned(a.bh)), rows(unsigned(a.n_q), unsigned(a.bh));
    const std::size_t softmax_smem = ((a.n_k + 7) / 8 * 8 + kSoftmaxThreads / 32) * sizeof(float);
    // The three launches record Event::launch 0, 1, 2 (docs/events.md).
    TraceBuffers softmax_trace = trace, output_trace = trace;
    softmax_trace.launch = 1;
    output_trace.launch = 2;
    launch_kernel(fl_standard_scores<K>, tiles, Sh::kThreads, Sh::kScoresSmem, stream, a, trace);
    launch_kernel(fl_standard_softmax<typename K::T, K::kRecord>, rows, kSoftmaxThreads, softmax_smem, stream, a,
                  softmax_trace);
    launch_kernel(fl_standard_output<K>, tiles, Sh::kThreads, Sh::kOutputSmem, stream, a, output_trace);
  }
};

}  // namespace

void launch_standard(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  if (a.n_k > kStandardMaxNk)
    throw ConfigError("nk", std::to_string(a.n_k),
                      "at most " + std::to_string(kStandardMaxNk) +
                          " for standard attention (its softmax kernel holds a row of S in SRAM)");
  dispatch<Algo::standard, StandardLauncher>(a, trace, stream);
}

}  // namespace flashlab::gpu
