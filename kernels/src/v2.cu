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
// Read beside Algorithm 1 (the kernel is the loop body of its line 3, for one i); lines 4-11 are
// common/v2_tile.cuh's, which split-KV's split kernel (v2_split.cu) shares:
//   start_block      lines 4-5     Q_i (and the first K_j of line 7) into SRAM; O_i, l_i, m_i on chip
//   main_loop        lines 6-11    per K/V block j: load K_j, V_j; S_ij; softmax_update; update_output
//   epilogue         lines 12-15   O_i / l_i, L_i = m_i + ln(l_i), written to HBM
#include "common/launch.cuh"
#include "common/v2_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

/// Lines 12-15: O_i = diag(l_i)^-1 O_i, L_i = m_i + ln(l_i) (a row with no visible key has
/// l_i = 0 and gets O = 0, L = +inf, never NaN); O_i (B_r, d) and L_i (B_r) are written to HBM,
/// staged through SRAM so that every store is a whole 16-byte chunk (O) or 32 consecutive rows (L).
template <class Sh>
__device__ __forceinline__ void epilogue(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                         typename Sh::T* hbm_Oi, float* hbm_Li, const float (&o)[Sh::kMT][Sh::kDT][4],
                                         const RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, e = sizeof(T);
  if (b.visits) rec.compute(b.step_end, Eq::finalize_v2, b.i, -1, b.rows_i, D);
  float inv_l[Sh::kMT][2];
  finish_rows<Sh>(a, b, st, inv_l, sram.Li, INFINITY, rec);
  store_fragments<T, Sh::kMT, Sh::kDT, D>(sram.Qi + b.warp_row0 * D, o, inv_l, b.lane);
  __syncthreads();
  store_tile<T, Sh::BR, D, Sh::kThreads>(hbm_Oi, D, sram.Qi, b.rows_i, D);
  if (int(threadIdx.x) < b.rows_i) hbm_Li[threadIdx.x] = sram.Li[threadIdx.x];  // B_r <= threads: one row each
  rec.store(b.step_end, Tensor::O, b.i, -1, b.rows_i, D, e);
  rec.store(b.step_end, Tensor::L, b.i, -1, b.rows_i, 1, 4);
}

/// Algorithm 1, lines 4-15, for Q block i = blockIdx.x of (batch, head) blockIdx.y.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_forward(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<K>;
  const int i = blockIdx.x;
  const std::int64_t bh = blockIdx.y;
  Recorder<K::kRecord> rec(trace, bh, std::uint32_t(i));
  // every K/V block: the visible ones are visited (block skip), the others skipped
  const V2Block b = v2_block<Sh>(a, i, 0, Tiling{a.n_q, a.n_k, K::D, K::BR, K::BC}.t_c(), rec.stats_for(i), 0);
  extern __shared__ __align__(16) unsigned char smem[];
  const V2Sram<typename K::T> sram = v2_sram<Sh>(smem);
  const V2Hbm<typename K::T> hbm = v2_hbm<Sh>(a, bh, i);
  const std::int64_t row0 = bh * a.n_q + std::int64_t(i) * K::BR;  // Q block i's first row, all heads

  float o[Sh::kMT][Sh::kDT][4];  // O_i, the warp's rows: (B_r/W, d) in registers
  RowStats<Sh::kMT> st;          // m_i, l_i of the warp's rows
  start_block<Sh>(b, sram, hbm, o, st, rec);   // lines 4-5
  main_loop<Sh>(a, b, sram, hbm, o, st, rec);  // lines 6-11
  epilogue<Sh>(a, b, sram, static_cast<typename K::T*>(a.o) + row0 * K::D, a.lse + row0, o, st, rec);  // lines 12-15
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
