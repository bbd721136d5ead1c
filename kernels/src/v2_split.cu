// v2_split.cu — split-KV (Flash-Decoding; FA2's flash_fwd_splitkv_kernel and
// flash_fwd_splitkv_combine_kernel): the K/V blocks of each Q block are cut into `splits` ranges,
// each walked by its own thread block, so that a short Q (a decode step: N_q = 1) still fills the
// GPU; a second launch merges the splits' partial results. Two launches, as the simulator's split
// schedule writes them (schedule.hpp make_split_schedule):
//
//   fl_v2_forward_split  grid (T_r, splits, bh)  thread block (i, s): FA2 Alg. 1 lines 4-11 for Q
//                                                block i over split s's K/V blocks (split_kv_range,
//                                                visible ones only with block skip), as V2 walks
//                                                them (common/v2_tile.cuh); then its partial result
//                                                in fp32: O_s = diag(l)^-1 O_i (0 where l = 0) into
//                                                Oacc and L_s = m + ln l (-inf where l = 0) into Lacc
//   fl_v2_combine        grid (T_r, bh)          Q block i: every split's L_s and O_s of its rows;
//                                                L = max_s L_s + log1p(sum over the other splits of
//                                                exp(L_s - max)), O = sum_s exp(L_s - L) O_s (as
//                                                numerics' merge_splits); a row no split saw gets
//                                                O = 0, L = +inf
//
// A split with no visible tile (or a range past T_c) loads nothing and stores O_s = 0, L_s = -inf.
// Step numbers are the simulator's: thread block s T_r + i numbers its steps from 0 (0 = load
// Q_i when it visits a tile, one per K/V block of its split, the final one), and the combine's
// block i continues after the split launch's block i (split 0's): a thread block's steps count on
// across launches for the same block number.
#include "common/launch.cuh"
#include "common/v2_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

/// The split kernel's epilogue: lines 12-13 on the split's keys, kept in fp32 for the combine.
/// O_s (rows_i, d) goes from the accumulators straight to HBM (each quad of threads writes 32
/// consecutive bytes of a row with one 8-byte store each: whole sectors), L_s through SRAM, one row
/// per thread.
template <class Sh>
__device__ __forceinline__ void split_epilogue(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                               float* hbm_Oacc, float* hbm_Lacc, const float (&o)[Sh::kMT][Sh::kDT][4],
                                               const RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  constexpr int D = Sh::D;
  if (b.visits) rec.compute(b.step_end, Eq::finalize_split, b.i, -1, b.rows_i, D);
  float inv_l[Sh::kMT][2];
  finish_rows<Sh>(a, b, st, inv_l, sram.Li, -INFINITY, rec);
  for_each_pair<Sh::kMT, Sh::kDT>(b.lane, [&](int mt, int dt, int h, int row, int col) {
    const int r = b.warp_row0 + row;
    if (r < b.rows_i)
      store_global_v2(hbm_Oacc + r * D + col, __float_as_uint(o[mt][dt][2 * h] * inv_l[mt][h]),
                      __float_as_uint(o[mt][dt][2 * h + 1] * inv_l[mt][h]));
  });
  __syncthreads();
  if (int(threadIdx.x) < b.rows_i) hbm_Lacc[threadIdx.x] = sram.Li[threadIdx.x];  // B_r <= threads: one row each
  rec.store(b.step_end, Tensor::Oacc, b.i, -1, b.rows_i, D, 4);
  rec.store(b.step_end, Tensor::Lacc, b.i, -1, b.rows_i, 1, 4);
}

/// Split s = blockIdx.y of Q block i = blockIdx.x of (batch, head) blockIdx.z.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_forward_split(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<K>;
  const int i = blockIdx.x, s = blockIdx.y;
  const std::int64_t bh = blockIdx.z;
  const std::int64_t t_r = (a.n_q + K::BR - 1) / K::BR, t_c = (a.n_k + K::BC - 1) / K::BC;
  Recorder<K::kRecord> rec(trace, bh, std::uint32_t(s * t_r + i));
  const SplitRange kv = split_kv_range(t_c, a.splits, s);
  const V2Block b = v2_block<Sh>(a, i, kv.first, kv.end, rec.stats_for(i),
                                 std::uint32_t(s * split_block_steps(t_c, a.splits)));
  extern __shared__ __align__(16) unsigned char smem[];
  const V2Sram<typename K::T> sram = v2_sram<Sh>(smem);
  const V2Hbm<typename K::T> hbm = v2_hbm<Sh>(a, bh, i);
  const std::int64_t row0 = (s * a.bh + bh) * a.n_q + std::int64_t(i) * K::BR;  // in Oacc, Lacc (splits, bh, N_q)

  float o[Sh::kMT][Sh::kDT][4];  // O_i over the split's keys, the warp's rows: (B_r/W, d) in registers
  RowStats<Sh::kMT> st;          // m_i, l_i of the warp's rows over the split's keys
  start_block<Sh>(b, sram, hbm, o, st, rec);   // lines 4-5
  main_loop<Sh>(a, b, sram, hbm, o, st, rec);  // lines 6-11, the split's K/V blocks
  split_epilogue<Sh>(a, b, sram, a.o_acc + row0 * K::D, a.lse_acc + row0, o, st, rec);
}

/// The combine for Q block i = blockIdx.x of (batch, head) blockIdx.y. SRAM holds every split's
/// L_s of the block's rows, (splits, B_r) fp32, replaced by the weights exp(L_s - L).
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_combine(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<K>;
  using T = typename K::T;
  constexpr int D = K::D, BR = K::BR, kThreads = Sh::kThreads, kWarps = K::W;
  const int i = blockIdx.x, splits = a.splits, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t bh = blockIdx.y;
  const std::int64_t t_c = (a.n_k + K::BC - 1) / K::BC;
  Recorder<K::kRecord> rec(trace, bh, std::uint32_t(i));
  // the step after split 0's thread block i, whose block number this one continues
  const SplitRange kv0 = split_kv_range(t_c, splits, 0);
  const std::uint32_t step = v2_block<Sh>(a, i, kv0.first, kv0.end, false, 0).step_end + 1;
  const int rows = int(Tiling{a.n_q, a.n_k, D, BR, K::BC}.rows(i));
  const std::int64_t row0 = bh * a.n_q + std::int64_t(i) * BR;  // Q block i's first row, all heads
  const std::int64_t split_rows = a.bh * a.n_q;                 // rows of one split's Lacc, Oacc
  extern __shared__ __align__(16) unsigned char smem[];
  float* sram_w = reinterpret_cast<float*>(smem);  // (splits, B_r): L_s, then exp(L_s - L)

  // Lacc_i of every split: each warp reads 32 consecutive rows of one split (whole 128-byte requests
  // from the start of the split's rows, as the simulator's sector model counts them)
  const int row_groups = (rows + 31) / 32;
  for (int x = warp; x < splits * row_groups; x += kWarps) {
    const int sp = x / row_groups, r = (x % row_groups) * 32 + lane;
    if (r < rows) sram_w[sp * BR + r] = a.lse_acc[sp * split_rows + row0 + r];
  }
  __syncthreads();

  // L = mx + log1p(sum_{s != argmax} exp(L_s - mx)), weights exp(L_s - L); one thread per row
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    int top = 0;
    for (int sp = 1; sp < splits; ++sp)
      if (sram_w[sp * BR + r] > sram_w[top * BR + r]) top = sp;
    const float mx = sram_w[top * BR + r];
    float L = INFINITY;  // no split saw a key: O = 0, L = +inf
    if (mx != -INFINITY) {
      float rest = 0.f;  // <= splits - 1
      for (int sp = 0; sp < splits; ++sp)
        if (sp != top) rest += expf(sram_w[sp * BR + r] - mx);
      L = mx + log1pf(rest);
    }
    for (int sp = 0; sp < splits; ++sp) sram_w[sp * BR + r] = L == INFINITY ? 0.f : expf(sram_w[sp * BR + r] - L);
    a.lse[row0 + r] = L;
  }
  __syncthreads();

  // O = sum_s w_s O_s: each thread takes 4 columns of a row (16 bytes of each split's Oacc row)
  T* hbm_O = static_cast<T*>(a.o) + row0 * D;
  for (int x = threadIdx.x; x < rows * (D / 4); x += kThreads) {
    const int r = x / (D / 4), c = (x % (D / 4)) * 4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int sp = 0; sp < splits; ++sp) {
      const float w = sram_w[sp * BR + r];
      const float4 v = *reinterpret_cast<const float4*>(a.o_acc + (sp * split_rows + row0 + r) * D + c);
      acc = make_float4(fmaf(w, v.x, acc.x), fmaf(w, v.y, acc.y), fmaf(w, v.z, acc.z), fmaf(w, v.w, acc.w));
    }
    store_global_v2(hbm_O + r * D + c, ElemTraits<T>::pack(acc.x, acc.y), ElemTraits<T>::pack(acc.z, acc.w));
  }
  rec.load(step, Tensor::Lacc, i, -1, std::int64_t(rows) * splits, 1, 4);
  rec.load(step, Tensor::Oacc, i, -1, std::int64_t(rows) * splits, D, 4);
  rec.compute(step, Eq::combine, i, -1, rows, D);
  rec.store(step, Tensor::O, i, -1, rows, D, sizeof(T));
  rec.store(step, Tensor::L, i, -1, rows, 1, 4);
}

struct SplitLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = V2Shape<K>;
    const unsigned t_r = unsigned((a.n_q + K::BR - 1) / K::BR);
    TraceBuffers tr = trace;  // Event::launch as the simulator numbers the split schedule's launches
    tr.launch = 0;
    launch_kernel(fl_v2_forward_split<K>, dim3(t_r, unsigned(a.splits), unsigned(a.bh)), Sh::kThreads,
                  Sh::kSmemBytes, stream, a, tr);
    tr.launch = 1;
    launch_kernel(fl_v2_combine<K>, dim3(t_r, unsigned(a.bh)), Sh::kThreads,
                  std::size_t(a.splits) * K::BR * sizeof(float), stream, a, tr);
  }
};

}  // namespace

void launch_v2_split(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v2, SplitLauncher, Family::split>(a, trace, stream);
}

}  // namespace flashlab::gpu
