// v2.cu — FlashAttention-2 forward (FA2 paper, Algorithm 1), one thread block per Q block; and
// the two variants of it that keep O_i in split-Q warps' registers (docs/model.md "Variants"):
// --grid head (one thread block per (batch, head) walking its Q blocks in turn) and --rescale step
// (O_i normalised at every step, FA1 Alg. 1 lines 10-12 on chip; L_i = m_i + ln l_i at the end).
// The other variants are v1.cu's.
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
template <class Sh, bool kVariant>
__device__ __forceinline__ void epilogue(const Args& a, const V2Block& b, const V2Sram<typename Sh::T>& sram,
                                         typename Sh::T* hbm_Oi, float* hbm_Li, const float (&o)[Sh::kMT][Sh::kDT][4],
                                         const RowStats<Sh::kMT>& st, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, e = sizeof(T);
  if (b.visits) {  // logsumexp (L_i only: O_i is normalised already) is a rows x 1 equation
    const bool step = kVariant && !a.rescale_delayed;
    rec.compute(b.step_end, step ? Eq::logsumexp : Eq::finalize_v2, b.i, -1, b.rows_i, step ? 1 : D);
  }
  float inv_l[Sh::kMT][2];
  finish_rows<Sh, kVariant>(a, b, st, inv_l, sram.Li, INFINITY, rec);
  store_fragments<T, Sh::kMT, Sh::kDT, D>(sram.Qi + b.warp_row0 * D, o, inv_l, b.lane);
  __syncthreads();
  store_tile<T, Sh::BR, D, Sh::kThreads>(hbm_Oi, D, sram.Qi, b.rows_i, D);
  if (int(threadIdx.x) < b.rows_i) hbm_Li[threadIdx.x] = sram.Li[threadIdx.x];  // B_r <= threads: one row each
  rec.store(b.step_end, Tensor::O, b.i, -1, b.rows_i, D, e);
  rec.store(b.step_end, Tensor::L, b.i, -1, b.rows_i, 1, 4);
}

/// Algorithm 1, lines 4-15, for Q block i of (batch, head) bh from step `step0`; returns the step
/// after its last. kVariant: compiled with --rescale step too.
template <class Sh, bool kVariant>
__device__ std::uint32_t q_block(const Args& a, int i, std::int64_t bh, unsigned char* smem, std::uint32_t step0,
                                 Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  // every K/V block: the visible ones are visited (block skip), the others skipped
  const V2Block b = v2_block<Sh>(a, i, 0, Tiling{a.n_q, a.n_k, Sh::D, Sh::BR, Sh::BC}.t_c(), rec.stats_for(i), 0, step0);
  const V2Sram<T> sram = v2_sram<Sh>(smem);
  const V2Hbm<T> hbm = v2_hbm<Sh>(a, bh, i);
  const std::int64_t row0 = bh * a.n_q + std::int64_t(i) * Sh::BR;  // Q block i's first row, all heads

  float o[Sh::kMT][Sh::kDT][4];  // O_i, the warp's rows: (B_r/W, d) in registers
  RowStats<Sh::kMT> st;          // m_i, l_i of the warp's rows
  start_block<Sh>(b, sram, hbm, o, st, rec);   // lines 4-5
  main_loop<Sh, kVariant>(a, b, sram, hbm, o, st, rec);  // lines 6-11
  epilogue<Sh, kVariant>(a, b, sram, static_cast<T*>(a.o) + row0 * Sh::D, a.lse + row0, o, st, rec);  // lines 12-15
  return b.step_end + 1;
}

/// V2: Q block i = blockIdx.x of (batch, head) blockIdx.y (FA2's grid).
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_forward(const Args a, const TraceBuffers trace) {
  extern __shared__ __align__(16) unsigned char smem[];
  Recorder<K::kRecord> rec(trace, blockIdx.y, blockIdx.x);
  q_block<V2Shape<K>, false>(a, int(blockIdx.x), blockIdx.y, smem, 0, rec);
}

/// The variants of V2's kernel (its own registers stay V2's): --rescale step and --grid head, where
/// one thread block per (batch, head) walks every Q block in turn, as line 3's loop writes it.
template <class K>
__global__ void __launch_bounds__(K::W * 32) fl_v2_variant(const Args a, const TraceBuffers trace) {
  using Sh = V2Shape<K>;
  const std::int64_t bh = blockIdx.y;
  extern __shared__ __align__(16) unsigned char smem[];
  if (!a.grid_head) {
    Recorder<K::kRecord> rec(trace, bh, blockIdx.x);
    q_block<Sh, true>(a, int(blockIdx.x), bh, smem, 0, rec);
    return;
  }
  Recorder<K::kRecord> rec(trace, bh, 0);
  const std::int64_t t_r = (a.n_q + K::BR - 1) / K::BR;
  std::uint32_t step = 0;
  for (int i = 0; i < t_r; ++i) {
    step = q_block<Sh, true>(a, i, bh, smem, step, rec);
    __syncthreads();  // the epilogue's reads of SRAM are done before the next Q block loads Q_i
  }
}

struct V2Launcher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    using Sh = V2Shape<K>;
    const dim3 grid(a.grid_head ? 1u : unsigned((a.n_q + K::BR - 1) / K::BR), unsigned(a.bh));
    if (!a.grid_head && a.rescale_delayed) return launch_kernel(fl_v2_forward<K>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
    if constexpr (is_variant_tile(K::BR, K::BC, K::W)) return launch_kernel(fl_v2_variant<K>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
    throw ConfigError("br x bc x warps", std::to_string(K::BR) + " x " + std::to_string(K::BC) + " x " + std::to_string(K::W),
                      "64 x 64 x 4 for V2's kernel with --grid head or --rescale step (the one tile its variants "
                      "are compiled for)");
  }
};

}  // namespace

void launch_v2(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v2, V2Launcher>(a, trace, stream);
}

}  // namespace flashlab::gpu
