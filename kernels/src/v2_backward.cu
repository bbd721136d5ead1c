// v2_backward.cu — FlashAttention-2's backward (FA2 paper, Algorithm 2) as FA2's released kernels
// run it (csrc/flash_attn/src/flash_bwd_*): three launches, as the simulator's released schedule
// (sim/src/schedule/backward.cpp) writes them.
//
//   fl_v2_bwd_dot_do_o    grid (T_r, bh)   D_i = rowsum(dO_i o O_i) (line 4), dQacc_i = 0
//   fl_v2_bwd_dq_dk_dv    grid (T_c, bh)   K/V block j: load K_j, V_j (line 6), dK_j = dV_j = 0
//                                          (line 7); Q blocks i from the last visible one down:
//                                          lines 9-16 (grad_grid.cuh), dQ_i's part added to
//                                          dQacc_i with atomicAdd; write dK_j, dV_j (line 18)
//   fl_v2_bwd_convert_dq  grid (T_r, bh)   dQ_i = scale dQacc_i at the input type (the softmax scale
//                                          that dS_ij leaves out, grad_tile.cuh; FA2's convert_dQ)
//
// Deterministic (Args::deterministic; FA2's deterministic=True, flash_bwd_launch_template.h
// run_flash_bwd_seqk_parallel and flash_bwd_kernel.h compute_dq_dk_dv_seqk_parallel): dQacc has
// nsplits = Args::dq_splits slices, all zeroed by the first launch; the main kernel's grid is
// (nsplits, bh) and thread block s walks K/V blocks s, s + nsplits, ..., each as above, adding
// into slice s (still atomicAdd, but no other thread block touches slice s, and the block adds a
// given element in its walk order: the sum is fixed); the convert launch sums the slices of
// dQacc_i in order s = 0, 1, ... (flash_bwd_preprocess_kernel.h convert_dQ).
//
// Step numbers are the simulator's (executor.hpp StepView::step): a thread block's steps count on
// across launches for the same block number, so K/V block j of the main kernel starts at 1 when
// block j of the first launch ran (j < T_r), and the convert launch's block i after both. A
// thread block of the main kernel takes T_r + 2 steps per K/V block it walks.
#include "common/grad_grid.cuh"
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

/// The K/V blocks main-kernel thread block b walks: b, b + stride, ... below T_c, where stride =
/// the grid's x (T_c when released: one block each; nsplits when deterministic).
FL_HD std::int64_t kv_blocks_walked(std::int64_t t_c, std::int64_t stride, std::int64_t b) {
  return b < t_c ? (t_c - b + stride - 1) / stride : 0;
}

/// Q block i = blockIdx.x of (batch, head) bh = blockIdx.y, as the first and last launches take it:
/// its rows(i) rows, the first of which is row `first` of all heads' (batch * heads * N_q) rows.
template <class K>
struct QBlockOfHead {
  int i = int(blockIdx.x);
  std::int64_t bh = blockIdx.y;
  Tiling t;
  int rows;
  std::int64_t first;
  __device__ explicit QBlockOfHead(const Args& a)
      : t{a.n_q, a.n_k, K::D, K::BR, K::BC}, rows(int(t.rows(i))), first(bh * a.n_q + std::int64_t(i) * K::BR) {}
};

/// D_i = rowsum(dO_i o O_i) in fp32 and dQacc_i = 0, for Q block i = blockIdx.x. Threads take
/// 16-byte chunks of the rows (whole sectors) and add their partial dot products into SRAM.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_bwd_dot_do_o(const Args a, const TraceBuffers trace) {
  using Sh = GridShape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, e = sizeof(T);
  const QBlockOfHead<K> qb(a);
  const int i = qb.i, rows = qb.rows;
  const std::int64_t first = qb.first;
  Recorder<K::kRecord> rec(trace, qb.bh, std::uint32_t(i));
  const T* o = static_cast<const T*>(a.o) + first * D;
  const T* d_o = static_cast<const T*>(a.d_o) + first * D;
  __shared__ float sum[BR];
  if (int(threadIdx.x) < BR) sum[threadIdx.x] = 0.f;
  __syncthreads();
  for_each_chunk<BR, D, Sh::kThreads>([&](int r, int col) {
    if (r >= rows) return;
    const uint4 x = *reinterpret_cast<const uint4*>(o + r * D + col);
    const uint4 y = *reinterpret_cast<const uint4*>(d_o + r * D + col);
    const T* xs = reinterpret_cast<const T*>(&x);
    const T* ys = reinterpret_cast<const T*>(&y);
    float part = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) part += ElemTraits<T>::to_float(xs[k]) * ElemTraits<T>::to_float(ys[k]);
    atomicAdd(&sum[r], part);
  });
  __syncthreads();
  if (int(threadIdx.x) < rows) a.d_sum[first + threadIdx.x] = sum[threadIdx.x];
  for (int s = 0; s < a.dq_splits; ++s) {  // every slice of dQacc_i (one unless deterministic)
    float4* acc = reinterpret_cast<float4*>(a.dq_acc + (s * a.bh * a.n_q + first) * D);
    for (int c = int(threadIdx.x); c < rows * D / 4; c += Sh::kThreads) acc[c] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  rec.load(0, Tensor::O, i, -1, rows, D, e);
  rec.load(0, Tensor::dO, i, -1, rows, D, e);
  rec.compute(0, Eq::bwd_D, i, -1, rows, D);
  rec.store(0, Tensor::D, i, -1, rows, 1, 4);
  rec.compute(0, Eq::zero_dq, i, -1, rows, D);
  rec.store(0, Tensor::dQacc, i, -1, std::int64_t(rows) * a.dq_splits, D, 4);
}

/// Line 15's sum into HBM: the warp's block dq of dQ_i's contribution (grad_dq) added to dQacc_i
/// (rows r0.., `rows` valid) with atomics. Thread (g, t) adds rows g (+ 8h, + 16 mt), columns 2t,
/// 2t + 1 (+ 8 dt) of its block: one address per thread and constant offsets; only a ragged last
/// Q block checks its rows.
template <class Sh>
__device__ __forceinline__ void add_dq(float* dq_acc, const float (&dq)[Sh::kMQ][Sh::kDQT][4], std::int64_t r0,
                                       int rows, int row0, int col0, int lane) {
  float* const dq_at = dq_acc + (r0 + row0 + lane / 4) * Sh::D + col0 + 2 * (lane % 4);
  const auto add = [&](int mt, int dt, int h) {
    float* x = dq_at + (mt * 16 + 8 * h) * Sh::D + dt * 8;
#if __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2*>(x), make_float2(dq[mt][dt][2 * h], dq[mt][dt][2 * h + 1]));
#else
    atomicAdd(x, dq[mt][dt][2 * h]);
    atomicAdd(x + 1, dq[mt][dt][2 * h + 1]);
#endif
  };
  if (rows == Sh::BR) {
    for_each_pair<Sh::kMQ, Sh::kDQT>(lane, [&](int mt, int dt, int h, int, int) { add(mt, dt, h); });
  } else {
    for_each_pair<Sh::kMQ, Sh::kDQT>(lane, [&](int mt, int dt, int h, int row, int) {
      if (row0 + row < rows) add(mt, dt, h);
    });
  }
}

/// What a thread block of the main kernel holds for its whole walk: its warp's places on the grids
/// (keys of K_j, queries of S^T, columns of dK_j and dV_j, block of dQ_i), the SRAM tiles, (batch,
/// head) bh's rows of Q, dO, L, D and its slice of dQacc.
template <class K>
struct DqDkDvBlock {
  using Sh = GridShape<K>;
  using T = typename K::T;
  const Args& a;
  Recorder<K::kRecord>& rec;
  const Tiling t;
  const int b, lane, key0, query0, kv_col0, row0, col0;
  const std::int64_t bh;
  const GradSram<T> sram;
  T* const pt;        // P_ij^T, after GradSram
  T* const q_second;  // Q_i, dO_i's second buffer, after P_ij^T
  const T *q, *d_o;
  const float *lse, *d_sum;
  float* const dq_acc;  // slice b of dQacc when deterministic (no other thread block adds into it), else the one

  __device__ DqDkDvBlock(const Args& a_, Recorder<K::kRecord>& rec_, unsigned char* smem)
      : a(a_), rec(rec_), t{a.n_q, a.n_k, K::D, K::BR, K::BC}, b(int(blockIdx.x)), lane(int(threadIdx.x % 32)),
        key0(Sh::key0(int(threadIdx.x / 32))), query0(Sh::query0(int(threadIdx.x / 32))),
        kv_col0(Sh::col0(int(threadIdx.x / 32))), row0(Sh::dq_row0(int(threadIdx.x / 32))),
        col0(Sh::dq_col0(int(threadIdx.x / 32))), bh(blockIdx.y), sram(grad_sram<Sh>(smem)), pt(Sh::pt(smem)),
        q_second(reinterpret_cast<T*>(smem + Sh::kSmemBytes)), q(static_cast<const T*>(a.q) + bh * a.n_q * K::D),
        d_o(static_cast<const T*>(a.d_o) + bh * a.n_q * K::D), lse(a.lse + bh * a.n_q), d_sum(a.d_sum + bh * a.n_q),
        dq_acc(a.dq_acc + ((a.deterministic ? b * a.bh : 0) + bh) * a.n_q * K::D) {}

  // Q_i and dO_i are double-buffered: the next visited Q block's copy starts before this one's math
  // (chosen by arithmetic, not by indexing an array of pointers, which put the array in local memory)
  __device__ T* q_buf(int buf) const { return buf ? q_second : sram.Q; }
  __device__ T* do_buf(int buf) const { return buf ? q_second + K::BR * K::D : sram.dO; }
  __device__ void fetch(int i, int buf) const {
    const std::int64_t r0 = std::int64_t(i) * K::BR;
    load_tile_async<T, K::BR, K::D, Sh::kThreads>(q_buf(buf), q + r0 * K::D, K::D, int(t.rows(i)), K::D);
    load_tile_async<T, K::BR, K::D, Sh::kThreads>(do_buf(buf), d_o + r0 * K::D, K::D, int(t.rows(i)), K::D);
    cp_async_commit();
  }
  /// L_i (as L_i log2 e) and D_i of Q block i, one row per thread < B_r, read into registers a tile
  /// ahead so that their latency hides behind the current tile's math.
  __device__ void read_stats(int i, float& shift, float& d) const {
    if (int(threadIdx.x) >= K::BR) return;
    const std::int64_t r = std::int64_t(i) * K::BR + threadIdx.x;
    const bool in = int(threadIdx.x) < int(t.rows(i));
    shift = in ? lse[r] * kLog2e : INFINITY;
    d = in ? d_sum[r] : 0.f;
  }
  /// The events of visited tile (i, j) at `step` (lines 9-16).
  __device__ void record_tile(std::uint32_t step, int i, int j, int rows, int cols) const {
    for (Tensor x : {Tensor::Q, Tensor::dO}) rec.load(step, x, i, j, rows, K::D, int(sizeof(T)));
    for (Tensor x : {Tensor::L, Tensor::D}) rec.load(step, x, i, j, rows, 1, 4);
    for (Eq eq : {Eq::scores, Eq::probs_v2, Eq::grad_v, Eq::grad_p, Eq::grad_s, Eq::grad_q})
      rec.compute(step, eq, i, j, rows, cols);
    rec.atomic(step, Tensor::dQacc, i, j, rows, K::D, 4);
    rec.compute(step, Eq::grad_k, i, j, rows, cols);
  }

  /// Lines 5-19 for K/V block j, the `walked`-th this thread block walks.
  __device__ void walk(int j, int walked) const {
    constexpr int D = K::D, BR = K::BR, BC = K::BC, e = sizeof(T);
    const int cols = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    // block b of fl_v2_bwd_dot_do_o ran step 0; each K/V block walked before took T_r + 2 steps
    const std::uint32_t step0 = (b < t.t_r() ? 1 : 0) + std::uint32_t(walked) * std::uint32_t(t.t_r() + 2);
    float next_shift = INFINITY, next_d = 0.f;
    GradAcc<Sh> acc;
    acc.zero();  // line 7
    if (!range.empty()) {  // line 6
      rec.load(step0, Tensor::K, -1, j, cols, D, e);
      rec.load(step0, Tensor::V, -1, j, cols, D, e);
      const std::int64_t kv0 = (bh * a.n_k + std::int64_t(j) * BC) * D;
      load_tile_async<T, BC, D, Sh::kThreads>(sram.K, static_cast<const T*>(a.k) + kv0, D, cols, D);
      load_tile_async<T, BC, D, Sh::kThreads>(sram.V, static_cast<const T*>(a.v) + kv0, D, cols, D);
      cp_async_commit();
      fetch(int(range.last), 0);
      read_stats(int(range.last), next_shift, next_d);
    }
    rec.compute(step0, Eq::init_grads, -1, j, cols, D);
    int buf = 0;
    for (std::int64_t k = 0; k < t.t_r(); ++k) {  // line 8, from the last Q block down
      const int i = int(t.t_r() - 1 - k);
      const std::uint32_t step = step0 + 1 + std::uint32_t(k);
      const int rows = int(t.rows(i));
      if (i < range.first || i > range.last) {
        rec.skip(step, i, j, rows, cols);
        continue;
      }
      // line 9: Q_i, dO_i into SRAM (fetched ahead); L_i, D_i one row per thread
      const bool more = i > range.first;
      if (int(threadIdx.x) < BR) {
        sram.shift[threadIdx.x] = next_shift;
        sram.D[threadIdx.x] = next_d;
      }
      cp_async_wait<0>();  // this Q block's copy has landed (the only one in flight)
      __syncthreads();
      // the next Q block's copy goes into the other buffer, which the last tile's step 2 read: every
      // warp is past it now
      if (more) {
        fetch(i - 1, buf ^ 1);
        read_stats(i - 1, next_shift, next_d);
      }
      GradSram<T> cur = sram;
      cur.Q = q_buf(buf);
      cur.dO = do_buf(buf);
      const std::int64_t r0 = std::int64_t(i) * BR;
      const GradTile tile{r0, std::int64_t(j) * BC, rows, cols,
                          tile_class(t, a.band, i, j) != TileClass::full || rows < BR || cols < BC};
      grid_scores<Sh>(cur, pt, tile, a.band, a.n_q, a.n_k, a.scale, lane, key0, query0);  // lines 10, 11, 13, 14
      __syncthreads();
      grid_grad_kv<Sh>(acc, cur, pt, lane, key0, kv_col0);  // lines 12, 16
      float dq[Sh::kMQ][Sh::kDQT][4];
      grad_dq<Sh>(dq, cur, lane, row0, col0);  // line 15: dS_ij K_j, added to dQacc_i
      add_dq<Sh>(dq_acc, dq, r0, rows, row0, col0, lane);
      record_tile(step, i, j, rows, cols);
      // No barrier here: past the one above, the warps read only P_ij^T, dS_ij, K_j, Q_i and dO_i.
      // The next Q block's L_i, D_i and its prefetch (into the other buffer) overwrite nothing they
      // read, and its P^T and dS_ij are written only after its first barrier, which every warp
      // reaches once done here.
      buf ^= 1;
    }
    // line 18: write dK_j, dV_j (zeros for a K/V block that no query sees)
    const std::uint32_t end = step0 + 1 + std::uint32_t(t.t_r());
    const std::int64_t kv0 = (bh * a.n_k + std::int64_t(j) * BC) * D;
    store_grads<Sh>(sram.Q, acc, static_cast<T*>(a.dk) + kv0, static_cast<T*>(a.dv) + kv0, cols, lane, key0, a.scale,
                    kv_col0);
    rec.store(end, Tensor::dK, -1, j, cols, D, e);
    rec.store(end, Tensor::dV, -1, j, cols, D, e);
  }
};

/// Lines 5-19 for K/V block j = blockIdx.x of (batch, head) blockIdx.y; deterministic: for K/V
/// blocks j = blockIdx.x, blockIdx.x + gridDim.x, ..., into slice blockIdx.x of dQacc.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_bwd_dq_dk_dv(const Args a, const TraceBuffers trace) {
  extern __shared__ __align__(256) unsigned char smem[];
  Recorder<K::kRecord> rec(trace, std::int64_t(blockIdx.y), std::uint32_t(blockIdx.x));
  const DqDkDvBlock<K> block(a, rec, smem);
  for (int j = block.b, walked = 0; j < block.t.t_c(); j += int(gridDim.x), ++walked) {
    if (walked > 0) __syncthreads();  // the last K/V block's dK, dV staging in SRAM is read out
    block.walk(j, walked);
  }
}

/// dQ_i = scale dQacc_i at the input type, for Q block i = blockIdx.x.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_bwd_convert_dq(const Args a, const TraceBuffers trace) {
  using Sh = GridShape<K>;
  using T = typename K::T;
  constexpr int D = K::D, e = sizeof(T);
  const QBlockOfHead<K> qb(a);
  const Tiling& t = qb.t;
  const int i = qb.i, rows = qb.rows;
  const std::int64_t first = qb.first;
  // block i ran step 0 in the first launch and T_r + 2 for each K/V block it walked in the main one
  const std::int64_t main_grid = a.deterministic ? a.dq_splits : t.t_c();
  const std::uint32_t step =
      1 + (i < main_grid ? std::uint32_t(kv_blocks_walked(t.t_c(), main_grid, i) * (t.t_r() + 2)) : 0);
  Recorder<K::kRecord> rec(trace, qb.bh, std::uint32_t(i));
  T* dq = static_cast<T*>(a.dq) + first * D;
  const std::int64_t slice = a.bh * a.n_q * D;  // floats between two slices of dQacc
  // four fp32 values in, four of the input type out per thread and pass: whole sectors both ways;
  // the slices summed in order s = 0, 1, ... (one slice unless deterministic)
  const float4* in = reinterpret_cast<const float4*>(a.dq_acc + first * D);
  uint2* out = reinterpret_cast<uint2*>(dq);
  for (int c = int(threadIdx.x); c < rows * D / 4; c += Sh::kThreads) {
    float4 x = in[c];
    for (int s = 1; s < a.dq_splits; ++s) {
      const float4 y = in[s * slice / 4 + c];
      x.x += y.x, x.y += y.y, x.z += y.z, x.w += y.w;
    }
    const float s = a.scale;
    out[c] = make_uint2(ElemTraits<T>::pack(s * x.x, s * x.y), ElemTraits<T>::pack(s * x.z, s * x.w));
  }
  rec.load(step, Tensor::dQacc, i, -1, std::int64_t(rows) * a.dq_splits, D, 4);
  rec.compute(step, Eq::convert_dq, i, -1, rows, D);
  rec.store(step, Tensor::dQ, i, -1, rows, D, e);
}

struct V2BackwardLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = GridShape<K>;
    const unsigned t_r = unsigned((a.n_q + K::BR - 1) / K::BR), t_c = unsigned((a.n_k + K::BC - 1) / K::BC);
    TraceBuffers tr = trace;
    tr.launch = 0;
    launch_kernel(fl_v2_bwd_dot_do_o<K>, dim3(t_r, unsigned(a.bh)), Sh::kThreads, 0, stream, a, tr);
    tr.launch = 1;
    const unsigned grid_x = a.deterministic ? unsigned(a.dq_splits) : t_c;  // deterministic: nsplits
    launch_kernel(fl_v2_bwd_dq_dk_dv<K>, dim3(grid_x, unsigned(a.bh)), Sh::kThreads,
                  Sh::kSmemBytes + 2 * K::BR * K::D * int(sizeof(typename K::T)), stream, a, tr);
    tr.launch = 2;
    launch_kernel(fl_v2_bwd_convert_dq<K>, dim3(t_r, unsigned(a.bh)), Sh::kThreads, 0, stream, a, tr);
  }
};

}  // namespace

void launch_v2_backward(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v2, V2BackwardLauncher, Family::backward>(a, trace, stream);
}

}  // namespace flashlab::gpu
