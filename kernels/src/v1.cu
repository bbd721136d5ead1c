// v1.cu — FlashAttention forward as the V1 paper writes it (FA1 paper, Algorithm 1), and every
// variant between it and V2 (docs/model.md "Variants") that does not keep O_i in split-Q warps'
// registers (that one is v2.cu): the kernels of the row-update family.
//
// What the family shares is how a step updates O_i: the warps leave the tile's row max m~_ij, row
// sum l~_ij and product P~_ij V_j in SRAM (fp32), and then each thread updates whole 16-byte
// chunks of O_i's rows, O_i = c_old O_i + c_new (P~_ij V_j), with the weights of the row's
// softmax update (FA1 Alg. 1 lines 11-12; FA2 Alg. 1 lines 9-10 with --rescale delayed). The
// switches pick, at compile time:
//   split-K (--split split-k, V1's): warp w owns key columns [w B_c/W, (w+1) B_c/W) of S_ij; the
//     row max, row sum and P~ V of the W warps are combined through SRAM (W partial results);
//   split-Q (--split split-q): warp w owns rows [w B_r/W, (w+1) B_r/W); one partial result;
//   O in HBM (--order kv-outer, V1's): O_i, l_i, m_i read from HBM at every step and written back
//     (lines 8, 12-13);
//   O on chip (--order q-outer, split-K only): O_i in fp32 registers, l_i, m_i too, O_i and
//     L_i = m_i + ln l_i written once (FA2 Alg. 1 lines 12-15);
// and at run time:
//   --grid head (V1's): one thread block per (batch, head); kv-outer walks K/V blocks j outside and
//     Q blocks i inside (lines 5, 7), q-outer the other way round;
//   --grid qblock: one thread block per (batch, head, Q block) walking its row of tiles;
//   --rescale step (V1's): O_i normalised by l_new at every step; delayed: O_i normalised once, at
//     the end of the Q block's thread block (grid qblock), or for kv-outer with grid head by a
//     second launch over the Q blocks (fl_normalize: O_i and l_i read back from HBM);
//   --block-skip on: tiles without a visible element are skipped; a K/V block (or Q block) with
//     none is not loaded.
// Events are the simulator's steps (sim/src/schedule/schedule.cpp flash_schedule), one per
// loaded K/V block, tile visited or skipped, and Q block begun or finished, in its action order.
//
// What the algorithm does not force is done as V2 does it: tensor cores for Q K^T and P V,
// cp.async copies, no load waited for where it can be issued earlier (K_{j+1}, V_{j+1} and Q_{i+1}
// are fetched while the step that last reads the buffer finishes; O_i, l_i, m_i are read into
// registers at the step's start so that their latency overlaps S_ij). Bytes and requests are those
// of a load at the point of use: only their time moves.
//
// Read beside Algorithm 1 (one visited tile's lines 9-12 are common/row_tile.cuh's tile_step):
//   init_hbm          line 2        O = 0, l = 0, m = -inf written to HBM for the whole head
//   kv_outer_head     lines 5-15    K/V blocks j outside, Q blocks i inside (one thread block per head)
//   q_block_walk      line 2 or     one Q block's row of tiles, O_i in HBM (kv-outer: line 2 for its
//                     FA2 lines 4-15  rows, lines 8, 12-13 per tile) or on chip (q-outer: FA2 12-15 at the end)
//   fl_row_normalize  (FA2 line 12) kv-outer, head, delayed: O_i = diag(l_i)^-1 O_i, a second launch
#include "common/launch.cuh"
#include "common/recorder.cuh"
#include "common/row_tile.cuh"
#include "launchers.hpp"

namespace flashlab::gpu {
namespace {

/// Line 2 for the whole head: O = 0 (N_q, d), l = 0 (N_q), m = -inf (N_q), in HBM.
template <class Sh>
__device__ __forceinline__ void init_hbm(const Args& a, const RowHbm<typename Sh::T>& hbm) {
  constexpr int D = Sh::D, kThreads = Sh::kThreads;
  // One warp request per iteration over HBM rows (here and below): when the compiler unrolled
  // these loops, it split a warp's 32 rows between the unrolled body and the remainder, and the
  // sector shared by the two requests was counted twice by the profiler (seen on the H200).
#pragma unroll 1
  for (std::int64_t c = threadIdx.x; c < a.n_q * D / 8; c += kThreads)
    reinterpret_cast<uint4*>(hbm.O)[c] = make_uint4(0, 0, 0, 0);
#pragma unroll 1
  for (std::int64_t r = threadIdx.x; r < a.n_q; r += kThreads) {
    hbm.l[r] = 0.f;
    hbm.m[r] = -INFINITY;
  }
}

/// The K/V outer order with one thread block per (batch, head) (V1): lines 2, 5-15. Steps: 0 =
/// line 2; per K/V block j one to load K_j, V_j (when a tile of it is visited), then one per tile
/// (i, j), visited or skipped.
template <class Sh>
__device__ void kv_outer_head(const Args& a, const TraceBuffers& trace, const Tiling& t,
                              const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm,
                              const RowThread& th, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  rec.compute(0, Eq::init_stats, -1, -1, a.n_q, D);  // line 2
  rec.store(0, Tensor::O, -1, -1, a.n_q, D, e);
  rec.store(0, Tensor::l, -1, -1, a.n_q, 1, 4);
  rec.store(0, Tensor::m, -1, -1, a.n_q, 1, 4);
  init_hbm<Sh>(a, hbm);
  if (rec.stats_for(trace.stat_block))
    for (int r = threadIdx.x; r < int(t.rows(trace.stat_block)); r += Sh::kThreads) rec.stat(0, r, BR, -INFINITY, 0.f);
  __syncthreads();  // line 2's writes are visible to the whole block

  const bool delayed = a.rescale_delayed;
  const Eq softmax = delayed ? Eq::softmax_v2 : Eq::softmax_v1, output = delayed ? Eq::output_v2 : Eq::output_v1;
  std::uint32_t step = 1;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {  // line 5: for each K/V block j
    const int cols_j = int(t.cols(j));
    const BlockRange range = a.block_skip ? visible_row_blocks(t, a.band, j) : BlockRange{0, t.t_r() - 1};
    if (!range.empty()) {  // line 6: load K_j, V_j
      rec.load(step, Tensor::K, -1, int(j), cols_j, D, e);
      rec.load(step, Tensor::V, -1, int(j), cols_j, D, e);
      ++step;
      load_k<Sh>(sram, hbm, j, cols_j);
      load_v<Sh>(sram, hbm, j, cols_j);
    }
    bool q_in_flight = false;  // Q_i already copying (issued during the previous step)
    for (std::int64_t i = 0; i < t.t_r(); ++i, ++step) {  // line 7: for each Q block i
      const int rows_i = int(t.rows(i));
      if (i < range.first || i > range.last) {
        rec.skip(step, int(i), int(j), rows_i, cols_j);
        if (rec.stats_for(int(i)))  // m_i, l_i in HBM, unchanged by a skipped tile
          for (int r = threadIdx.x; r < rows_i; r += Sh::kThreads)
            rec.stat(step, r, BR, hbm.m[i * BR + r], hbm.l[i * BR + r]);
        continue;
      }
      // Line 8: load Q_i, O_i, l_i, m_i.
      rec.load(step, Tensor::Q, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.load(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      OChunks<Sh> o;
      RowStat row;
      read_rows<Sh>(hbm, i, rows_i, o, row);
      if (!q_in_flight) load_q<Sh>(sram, hbm, i, rows_i);
      rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
      tile_step<Sh>(
          a, t, sram, th, i, j, delayed, o, row,
          [&] {  // every warp is past S_ij: Q_{i+1} can replace Q_i in SRAM
            q_in_flight = i + 1 <= range.last;
            if (q_in_flight) load_q<Sh>(sram, hbm, i + 1, int(t.rows(i + 1)));
          },
          [] {},
          [&] {  // lines 11 and 13: m_new, l_new
            if (int(threadIdx.x) < rows_i) {
              hbm.m[i * BR + threadIdx.x] = row.m;
              hbm.l[i * BR + threadIdx.x] = row.l;
              if (rec.stats_for(int(i))) rec.stat(step, threadIdx.x, BR, row.m, row.l);
            }
          });
      rec.compute(step, softmax, int(i), int(j), rows_i, cols_j);
      rec.compute(step, output, int(i), int(j), rows_i, cols_j);
      // Line 12: O_i written back.
      T* hbm_Oi = hbm.O + i * BR * D;
      for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) { *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = o.o[k]; });
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      __syncthreads();  // SRAM tiles and HBM rows of this step are done before the next one
    }
  }
}

/// Writes the snapshot of row threadIdx.x of the traced Q block i after `step`.
template <class Sh>
__device__ __forceinline__ void snapshot(Recorder<Sh::kRecord>& rec, std::int64_t i, int rows_i, std::uint32_t step,
                                         const RowStat& row) {
  if (rec.stats_for(int(i)) && int(threadIdx.x) < rows_i) rec.stat(step, threadIdx.x, Sh::BR, row.m, row.l);
}

/// The end step's writes of Q block i (rows_i rows): O_i, divided by l_i when the rescale is
/// delayed (0 for a row with no visible key), and with O_i on chip L_i = m_i + ln l_i; then the
/// step's m, l snapshot.
template <class Sh>
__device__ __forceinline__ void write_output(const RowSram<typename Sh::T>& sram, const RowHbm<typename Sh::T>& hbm, std::int64_t i,
                             int rows_i, bool delayed, const OChunks<Sh>& o, const RowStat& row, std::uint32_t step,
                             Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  if (int(threadIdx.x) < rows_i) {  // 1 / l_i (0 for a row with no visible key: its O is 0) and L_i
    sram.c_old[threadIdx.x] = !delayed ? 1.f : row.l > 0.f ? 1.f / row.l : 0.f;
    sram.c_new[threadIdx.x] = row.l > 0.f ? row.m + logf(row.l) : INFINITY;
  }
  __syncthreads();
  T* hbm_Oi = hbm.O + i * BR * D;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) {
    const float inv_l = sram.c_old[r];
    const uint4 out{ElemTraits<T>::pack(o.get(k, 0) * inv_l, o.get(k, 1) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 2) * inv_l, o.get(k, 3) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 4) * inv_l, o.get(k, 5) * inv_l),
                    ElemTraits<T>::pack(o.get(k, 6) * inv_l, o.get(k, 7) * inv_l)};
    store_global_v4(hbm_Oi + r * D + col, out);
  });
  rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
  if constexpr (Sh::kOnChip) {
    if (int(threadIdx.x) < rows_i) hbm.L[i * BR + threadIdx.x] = sram.c_new[threadIdx.x];
    rec.store(step, Tensor::L, int(i), -1, rows_i, 1, 4);
  }
  snapshot<Sh>(rec, i, rows_i, step, row);
}

/// One Q block i walked by its thread block (grid qblock, or each Q block in turn of a q-outer
/// thread block per head), from step `step0`: its begin step, one per K/V block (visited or
/// skipped), and its end step. Returns the step after its last. O_i lives where Sh says:
///   HBM (kv-outer, FA1's released code): line 2 for the block's rows at the begin step (Q_i loaded
///     there too when a tile is visited); per visited tile K_j, V_j and O_i, l_i, m_i loaded and
///     O_i, l_i, m_i stored; delayed rescale: O_i = diag(l_i)^-1 O_i and stored at the end step.
///   on chip (q-outer, FA2 Alg. 1 lines 4-15): Q_i loaded and O_i, l_i, m_i set on chip at the
///     begin step (only when a tile is visited); per visited tile K_j, V_j loaded; at the end step
///     O_i (divided by l_i when delayed) and L_i = m_i + ln l_i written.
template <class Sh>
__device__ std::uint32_t q_block_walk(const Args& a, const Tiling& t, const RowSram<typename Sh::T>& sram,
                                      const RowHbm<typename Sh::T>& hbm, const RowThread& th, std::int64_t i,
                                      std::uint32_t step0, Recorder<Sh::kRecord>& rec) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, e = sizeof(T);
  const int rows_i = int(t.rows(i));
  const BlockRange range = a.block_skip ? visible_col_blocks(t, a.band, i) : BlockRange{0, t.t_c() - 1};
  const bool visits = !range.empty(), delayed = a.rescale_delayed;
  const Eq softmax = delayed ? Eq::softmax_v2 : Eq::softmax_v1, output = delayed ? Eq::output_v2 : Eq::output_v1;
  OChunks<Sh> o;
  RowStat row;
  for_each_o_chunk<Sh>(rows_i, [&](int k, int, int) {
    for (int x = 0; x < 8; ++x) o.set(k, x, 0.f);
  });

  // The begin step.
  std::uint32_t step = step0;
  if (visits) {
    rec.load(step, Tensor::Q, int(i), -1, rows_i, D, e);
    load_q<Sh>(sram, hbm, i, rows_i);
    load_k<Sh>(sram, hbm, range.first, int(t.cols(range.first)));
    load_v<Sh>(sram, hbm, range.first, int(t.cols(range.first)));
  }
  if (!Sh::kOnChip || visits) rec.compute(step, Eq::init_stats, int(i), -1, rows_i, D);
  if constexpr (!Sh::kOnChip) {  // line 2 for the block's own rows
    rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
    rec.store(step, Tensor::l, int(i), -1, rows_i, 1, 4);
    rec.store(step, Tensor::m, int(i), -1, rows_i, 1, 4);
    write_rows<Sh>(hbm, i, rows_i, o, row);
    __syncthreads();  // the block's own rows are initialised before its steps read them
  }
  if (!Sh::kOnChip || visits) snapshot<Sh>(rec, i, rows_i, step++, row);

  // One step per K/V block j.
  for (std::int64_t j = 0; j < t.t_c(); ++j, ++step) {
    const int cols_j = int(t.cols(j));
    if (j < range.first || j > range.last) {
      rec.skip(step, int(i), int(j), rows_i, cols_j);
      snapshot<Sh>(rec, i, rows_i, step, row);
      continue;
    }
    rec.load(step, Tensor::K, int(i), int(j), cols_j, D, e);
    rec.load(step, Tensor::V, int(i), int(j), cols_j, D, e);
    if constexpr (!Sh::kOnChip) {  // line 8: O_i, l_i, m_i
      rec.load(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.load(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.load(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
      read_rows<Sh>(hbm, i, rows_i, o, row);
    }
    rec.compute(step, Eq::scores, int(i), int(j), rows_i, cols_j);
    rec.compute(step, softmax, int(i), int(j), rows_i, cols_j);
    rec.compute(step, output, int(i), int(j), rows_i, cols_j);
    const bool next = j < range.last;
    tile_step<Sh>(
        a, t, sram, th, i, j, delayed, o, row,
        [&] { if (next) load_k<Sh>(sram, hbm, j + 1, int(t.cols(j + 1))); },
        [&] { if (next) load_v<Sh>(sram, hbm, j + 1, int(t.cols(j + 1))); }, [] {});
    if constexpr (!Sh::kOnChip) {  // lines 12-13
      write_rows<Sh>(hbm, i, rows_i, o, row);
      rec.store(step, Tensor::O, int(i), int(j), rows_i, D, e);
      rec.store(step, Tensor::l, int(i), int(j), rows_i, 1, 4);
      rec.store(step, Tensor::m, int(i), int(j), rows_i, 1, 4);
    }
    snapshot<Sh>(rec, i, rows_i, step, row);
    __syncthreads();  // SRAM weights and partials of this step are read before the next one's
  }

  // The end step.
  const bool ends = Sh::kOnChip || (delayed && visits);
  if (!ends) return step;
  if (visits) {  // logsumexp (L_i only) is a rows x 1 equation, the others rows x d
    const Eq eq = Sh::kOnChip ? (delayed ? Eq::finalize_v2 : Eq::logsumexp) : Eq::normalize;
    rec.compute(step, eq, int(i), -1, rows_i, eq == Eq::logsumexp ? 1 : D);
  }
  write_output<Sh>(sram, hbm, i, rows_i, delayed, o, row, step, rec);
  __syncthreads();  // SRAM is free for the next Q block
  return step + 1;
}

/// The family's kernel for (batch, head) blockIdx.y; blockIdx.x is the Q block with grid qblock.
template <class Sh>
__global__ void __launch_bounds__(Sh::kThreads) fl_row_forward(const Args a, const TraceBuffers trace) {
  const std::int64_t bh = blockIdx.y;
  const Tiling t{a.n_q, a.n_k, Sh::D, Sh::BR, Sh::BC};
  extern __shared__ __align__(16) unsigned char smem[];
  const RowSram<typename Sh::T> sram = row_sram<Sh>(smem);
  const RowHbm<typename Sh::T> hbm = row_hbm<Sh>(a, bh);
  const RowThread th = row_thread<Sh>();
  if (a.grid_head) {
    Recorder<Sh::kRecord> rec(trace, bh, 0);
    if constexpr (Sh::kOnChip) {  // Q outer: each Q block in turn
      std::uint32_t step = 0;
      for (std::int64_t i = 0; i < t.t_r(); ++i) step = q_block_walk<Sh>(a, t, sram, hbm, th, i, step, rec);
    } else {
      kv_outer_head<Sh>(a, trace, t, sram, hbm, th, rec);
    }
  } else {
    Recorder<Sh::kRecord> rec(trace, bh, blockIdx.x);
    q_block_walk<Sh>(a, t, sram, hbm, th, blockIdx.x, 0, rec);
  }
}

/// The second launch of the K/V outer order with one thread block per head and delayed rescaling:
/// after the K/V loop every O_i in HBM is unnormalised; per Q block with a visited tile, O_i and l_i
/// read back, O_i = diag(l_i)^-1 O_i, O_i written. Its steps continue the first launch's.
template <class Sh>
__global__ void __launch_bounds__(Sh::kThreads) fl_row_normalize(const Args a, const TraceBuffers trace) {
  using T = typename Sh::T;
  constexpr int D = Sh::D, BR = Sh::BR, e = sizeof(T);
  const std::int64_t bh = blockIdx.y;
  const Tiling t{a.n_q, a.n_k, D, BR, Sh::BC};
  extern __shared__ __align__(16) unsigned char smem[];
  float* inv_l = reinterpret_cast<float*>(smem);  // (B_r)
  const RowHbm<T> hbm = row_hbm<Sh>(a, bh);
  Recorder<Sh::kRecord> rec(trace, bh, 0);
  // the first launch's steps: line 2, one per K/V block with a visited tile, one per tile
  std::uint32_t step = 1 + std::uint32_t(t.t_r() * t.t_c());
  for (std::int64_t j = 0; j < t.t_c(); ++j) step += !a.block_skip || !visible_row_blocks(t, a.band, j).empty();
  for (std::int64_t i = 0; i < t.t_r(); ++i) {
    if (a.block_skip && visible_col_blocks(t, a.band, i).empty()) continue;  // O_i = 0 as line 2 left it
    const int rows_i = int(t.rows(i));
    rec.load(step, Tensor::O, int(i), -1, rows_i, D, e);
    rec.load(step, Tensor::l, int(i), -1, rows_i, 1, 4);
    rec.compute(step, Eq::normalize, int(i), -1, rows_i, D);
    rec.store(step, Tensor::O, int(i), -1, rows_i, D, e);
    OChunks<Sh, false> o;
    T* hbm_Oi = hbm.O + i * BR * D;
    for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) { o.o[k] = *reinterpret_cast<const uint4*>(hbm_Oi + r * D + col); });
    if (int(threadIdx.x) < rows_i) {
      const float l = hbm.l[i * BR + threadIdx.x];
      inv_l[threadIdx.x] = l > 0.f ? 1.f / l : 0.f;
      if (rec.stats_for(int(i))) rec.stat(step, threadIdx.x, BR, hbm.m[i * BR + threadIdx.x], l);
    }
    __syncthreads();
    for_each_o_chunk<Sh>(rows_i, [&](int k, int r, int col) {
      for (int x = 0; x < 8; ++x) o.set(k, x, o.get(k, x) * inv_l[r]);
      *reinterpret_cast<uint4*>(hbm_Oi + r * D + col) = o.o[k];
    });
    __syncthreads();
    ++step;
  }
}

struct RowLauncher {
  template <class K>
  static void run(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    if (a.split_k) {
      if (a.kv_outer) return launch_family<RowShape<K, true, false>>(a, trace, stream);
      // the Q outer order with split-K warps (O_i in registers): one tile per d (compile time)
      if constexpr (TileShape{K::BR, K::BC, K::W} == row_q_outer_tile(K::D))
        return launch_family<RowShape<K, true, true>>(a, trace, stream);
      throw ConfigError("br x bc x warps",
                        std::to_string(K::BR) + " x " + std::to_string(K::BC) + " x " + std::to_string(K::W),
                        std::string("64 x 64 x 4 at d <= 64, 32 x 64 x 4 at d = 128, with --split split-k and --order "
                                    "q-outer (the tiles compiled for them)"));
    }
    if (!a.kv_outer)
      throw ConfigError("order", "q-outer", "kv-outer with split-Q warps in this kernel (v2.cu runs split-Q with the Q outer order)");
    if constexpr (is_variant_tile(K::BR, K::BC, K::W)) return launch_family<RowShape<K, false, false>>(a, trace, stream);
    throw ConfigError("br x bc x warps",
                      std::to_string(K::BR) + " x " + std::to_string(K::BC) + " x " + std::to_string(K::W),
                      "64 x 64 x 4 with --split split-q and --order kv-outer (the one tile compiled for them)");
  }

  template <class Sh>
  static void launch_family(const Args& a, const TraceBuffers& trace, cudaStream_t stream) {
    const dim3 grid(a.grid_head ? 1u : unsigned((a.n_q + Sh::BR - 1) / Sh::BR), unsigned(a.bh));
    launch_kernel(fl_row_forward<Sh>, grid, Sh::kThreads, Sh::kSmemBytes, stream, a, trace);
    if (!Sh::kOnChip && a.grid_head && a.rescale_delayed) {
      TraceBuffers second = trace;
      second.launch = 1;
      launch_kernel(fl_row_normalize<Sh>, dim3(1u, unsigned(a.bh)), Sh::kThreads, Sh::BR * sizeof(float), stream, a, second);
    }
  }
};

}  // namespace

void launch_v1(const Args& a, const TraceBuffers* trace, cudaStream_t stream) {
  dispatch<Algo::v1, RowLauncher>(a, trace, stream);
}

}  // namespace flashlab::gpu
