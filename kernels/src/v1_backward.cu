// v1_backward.cu — FlashAttention's backward as the FA1 paper writes it (Algorithm 4), one thread
// block per (batch, head), the simulator's "v1_backward" schedule (sim/src/schedule/backward.cpp).
//
// Line 2 writes dQ, dK, dV = 0 to HBM. Then for each K/V block j (line 6): load K_j, V_j (line 7),
// dK_j = dV_j = 0 on chip (line 8), and for each Q block i (line 9): load Q_i, O_i, dO_i, dQ_i,
// l_i, m_i (line 10); S_ij, P_ij = diag(l_i)^-1 exp(S_ij - m_i), dV_j, dP_ij, D_i = rowsum(dO_i o
// O_i) (line 18, on chip at every step), dS_ij, dK_j (lines 11-21, grad_tile.cuh), and dQ_i + dS_ij
// K_j written back to HBM at the input type (line 20); write dK_j, dV_j (line 23). Every dQ_i goes
// through HBM T_c times, rounded to the input type each time: FA1's numerics, which the simulator
// reproduces (docs/model.md "Backward pass").
#include "common/grad_tile.cuh"
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

/// V1's warp tiling: GradShape with chunks of 16 queries (V1's kernel also holds dQ_i's SRAM tile
/// and its row statistics: with 64-query chunks ptxas spilled some 60 bytes at d = 64, 8 with 32).
template <class K>
using V1GradShape = GradShape<K, 16>;

constexpr float kLog2e = 1.4426950408889634f;

/// Line 2: dQ, dK, dV = 0 in HBM, in 16-byte chunks.
template <class T, int kThreads>
__device__ __forceinline__ void zero_rows(T* x, std::int64_t elements) {
  uint4* v = reinterpret_cast<uint4*>(x);
  for (std::int64_t c = threadIdx.x; c < elements / 8; c += kThreads) v[c] = make_uint4(0, 0, 0, 0);
}

/// Line 18: D_i = rowsum(dO_i o O_i) into sram.D, O_i read from HBM in 16-byte chunks, dO_i from SRAM.
template <class Sh>
__device__ __forceinline__ void row_dot(const GradSram<typename Sh::T>& sram, const typename Sh::T* o, int rows) {
  using T = typename Sh::T;
  constexpr int D = Sh::D;
  for_each_chunk<Sh::BR, D, Sh::kThreads>([&](int r, int col) {
    if (r >= rows) return;
    const uint4 x = *reinterpret_cast<const uint4*>(o + r * D + col);
    const T* xs = reinterpret_cast<const T*>(&x);
    const T* ys = sram.dO + swizzle<D>(r, col);
    float part = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) part += ElemTraits<T>::to_float(xs[k]) * ElemTraits<T>::to_float(ys[k]);
    atomicAdd(&sram.D[r], part);
  });
}

/// Line 10's statistics of Q block i (rows r0.., `rows` valid), one row per thread < B_r: l_i and
/// m_i as the exponent shift (m + ln l) log2 e, +inf on a row with no key (l = 0); D_i = 0 until
/// row_dot (line 18) adds it.
template <class Sh>
__device__ __forceinline__ void load_row_stats(const GradSram<typename Sh::T>& sram, const float* l, const float* m,
                                               std::int64_t r0, int rows) {
  if (int(threadIdx.x) >= Sh::BR) return;
  const int r = threadIdx.x;
  float lr = 0.f, mr = 0.f;
  if (r < rows) {  // both of line 10's loads, also where l = 0 makes m unused (as the simulator counts)
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(lr) : "l"(l + r0 + r));
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(mr) : "l"(m + r0 + r));
  }
  sram.shift[r] = lr > 0.f ? (mr + logf(lr)) * kLog2e : INFINITY;
  sram.D[r] = 0.f;
}

/// Line 20 in SRAM: dQ_i <- dQ_i + scale dS_ij K_j at the input type, the warp's block `part` of
/// dS_ij K_j (grad_dq) added to its rows and columns of the swizzled dQ_i tile.
template <class Sh>
__device__ __forceinline__ void add_dq_sram(typename Sh::T* sram_dq, const float (&part)[Sh::kMQ][Sh::kDQT][4],
                                            float scale, int row0, int col0, int lane) {
  using T = typename Sh::T;
  for_each_pair<Sh::kMQ, Sh::kDQT>(lane, [&](int mt, int dt, int h, int row, int col) {
    T* x = sram_dq + swizzle<Sh::D>(row0 + row, col0 + col);
    const float x0 = fmaf(scale, part[mt][dt][2 * h], ElemTraits<T>::to_float(x[0]));
    const float x1 = fmaf(scale, part[mt][dt][2 * h + 1], ElemTraits<T>::to_float(x[1]));
    *reinterpret_cast<std::uint32_t*>(x) = ElemTraits<T>::pack(x0, x1);
  });
}

/// The events of visited tile (i, j) at `step` (lines 10-21).
template <bool kRecord>
__device__ __forceinline__ void record_v1_tile(Recorder<kRecord>& rec, std::uint32_t step, int i, int j, int rows,
                                               int cols, int d, int e) {
  for (Tensor x : {Tensor::Q, Tensor::O, Tensor::dO, Tensor::dQ}) rec.load(step, x, i, j, rows, d, e);
  rec.load(step, Tensor::l, i, j, rows, 1, 4);
  rec.load(step, Tensor::m, i, j, rows, 1, 4);
  for (Eq eq : {Eq::scores, Eq::probs_v1, Eq::grad_v, Eq::grad_p, Eq::bwd_D, Eq::grad_s, Eq::grad_q})
    rec.compute(step, eq, i, j, rows, eq == Eq::bwd_D ? d : cols);
  rec.store(step, Tensor::dQ, i, j, rows, d, e);
  rec.compute(step, Eq::grad_k, i, j, rows, cols);
}

/// Line 2: dQ, dK, dV of the (batch, head) = 0 in HBM (N_q x d, N_k x d), at step 0.
template <class Sh, bool kRecord>
__device__ __forceinline__ void zero_grads(Recorder<kRecord>& rec, typename Sh::T* dq, typename Sh::T* dk,
                                           typename Sh::T* dv, std::int64_t n_q, std::int64_t n_k) {
  constexpr int D = Sh::D, e = sizeof(typename Sh::T);
  zero_rows<typename Sh::T, Sh::kThreads>(dq, n_q * D);
  zero_rows<typename Sh::T, Sh::kThreads>(dk, n_k * D);
  zero_rows<typename Sh::T, Sh::kThreads>(dv, n_k * D);
  rec.compute(0, Eq::zero_dq, -1, -1, n_q, D);
  rec.compute(0, Eq::init_grads, -1, -1, n_k, D);
  rec.store(0, Tensor::dQ, -1, -1, n_q, D, e);
  rec.store(0, Tensor::dK, -1, -1, n_k, D, e);
  rec.store(0, Tensor::dV, -1, -1, n_k, D, e);
  __syncthreads();
}

/// Algorithm 4 for (batch, head) blockIdx.y.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v1_backward(const Args a, const TraceBuffers trace) {
  using Sh = V1GradShape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, BC = K::BC, e = sizeof(T);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t bh = blockIdx.y;
  Recorder<K::kRecord> rec(trace, bh, 0);
  const Tiling t{a.n_q, a.n_k, D, BR, BC};
  const int key0 = warp * Sh::kKeysPerWarp, row0 = Sh::dq_row0(warp), col0 = Sh::dq_col0(warp);
  extern __shared__ __align__(256) unsigned char smem[];
  const GradSram<T> sram = grad_sram<Sh>(smem);
  T* sram_dq = reinterpret_cast<T*>(smem + Sh::kSmemBytes);  // dQ_i (B_r, d), read and written whole
  const T* q = static_cast<const T*>(a.q) + bh * a.n_q * D;
  const T* o = static_cast<const T*>(a.o) + bh * a.n_q * D;
  const T* d_o = static_cast<const T*>(a.d_o) + bh * a.n_q * D;
  const float* m = a.m + bh * a.n_q;
  const float* l = a.l + bh * a.n_q;
  T* dq = static_cast<T*>(a.dq) + bh * a.n_q * D;
  T* dk = static_cast<T*>(a.dk) + bh * a.n_k * D;
  T* dv = static_cast<T*>(a.dv) + bh * a.n_k * D;

  zero_grads<Sh>(rec, dq, dk, dv, a.n_q, a.n_k);  // line 2

  for (std::int64_t j = 0; j < t.t_c(); ++j) {  // line 6
    const int cols = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    const std::uint32_t begin = 1 + std::uint32_t(j * (t.t_r() + 2));
    GradAcc<Sh> acc;
    acc.zero();  // line 8
    if (!range.empty()) {  // line 7
      rec.load(begin, Tensor::K, -1, int(j), cols, D, e);
      rec.load(begin, Tensor::V, -1, int(j), cols, D, e);
      load_tile_async<T, BC, D, Sh::kThreads>(sram.K, static_cast<const T*>(a.k) + (bh * a.n_k + j * BC) * D, D, cols, D);
      load_tile_async<T, BC, D, Sh::kThreads>(sram.V, static_cast<const T*>(a.v) + (bh * a.n_k + j * BC) * D, D, cols, D);
      cp_async_commit();
    }
    rec.compute(begin, Eq::init_grads, -1, int(j), cols, D);

    for (std::int64_t i = 0; i < t.t_r(); ++i) {  // line 9
      const std::uint32_t step = begin + 1 + std::uint32_t(i);
      const int rows = int(t.rows(i));
      if (i < range.first || i > range.last) {
        rec.skip(step, int(i), int(j), rows, cols);
        continue;
      }
      // line 10: Q_i, dO_i, dQ_i into SRAM; l_i, m_i one row per thread (as the shift m + ln l);
      // O_i is read below, where it is used
      const std::int64_t r0 = i * BR;
      load_tile_async<T, BR, D, Sh::kThreads>(sram.Q, q + r0 * D, D, rows, D);
      load_tile_async<T, BR, D, Sh::kThreads>(sram.dO, d_o + r0 * D, D, rows, D);
      load_tile_async<T, BR, D, Sh::kThreads>(sram_dq, dq + r0 * D, D, rows, D);
      cp_async_commit();
      load_row_stats<Sh>(sram, l, m, r0, rows);
      cp_async_wait<0>();
      __syncthreads();
      row_dot<Sh>(sram, o + r0 * D, rows);  // line 18 (O_i from HBM)
      __syncthreads();
      const GradTile tile{r0, j * BC, rows, cols,
                          tile_class(t, a.band, i, j) != TileClass::full || rows < BR || cols < BC};
      grad_keys<Sh>(sram, acc, tile, a.band, a.n_q, a.n_k, a.scale, lane, key0);  // lines 11-19, 21
      __syncthreads();
      float part[Sh::kMQ][Sh::kDQT][4];
      grad_dq<Sh>(part, sram, lane, row0, col0);
      add_dq_sram<Sh>(sram_dq, part, a.scale, row0, col0, lane);  // line 20, each warp its rows
      __syncthreads();
      store_tile<T, BR, D, Sh::kThreads>(dq + r0 * D, D, sram_dq, rows, D);  // dQ_i written back whole
      record_v1_tile(rec, step, int(i), int(j), rows, cols, D, e);
      __syncthreads();  // every warp is done with Q_i, dO_i, dS_ij and dQ_i before the next Q block
    }
    // line 23
    const std::uint32_t end = begin + 1 + std::uint32_t(t.t_r());
    store_grads<Sh>(sram.Q, acc, dk + j * BC * D, dv + j * BC * D, cols, lane, key0, a.scale);
    rec.store(end, Tensor::dK, -1, int(j), cols, D, e);
    rec.store(end, Tensor::dV, -1, int(j), cols, D, e);
    __syncthreads();  // the stage (sram.Q) and K_j, V_j are free for the next K/V block
  }
}

struct V1BackwardLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = V1GradShape<K>;
    TraceBuffers tr = trace;
    tr.launch = 0;
    launch_kernel(fl_v1_backward<K>, dim3(1, unsigned(a.bh)), Sh::kThreads,
                  Sh::kSmemBytes + K::BR * K::D * int(sizeof(typename K::T)), stream, a, tr);
  }
};

}  // namespace

void launch_v1_backward(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v1, V1BackwardLauncher, Family::backward>(a, trace, stream);
}

}  // namespace flashlab::gpu
