// api.hpp — the host interface of the CUDA kernels (kernels/src/*.cu): what a launch needs, the
// tile shapes compiled in, and the event/statistics buffers of the instrumented build.
//
// Memory layout (elements, row-major, one contiguous tensor each, as PyTorch's (B, H, N, d)):
//   Q (batch*heads, N_q, d), K and V (batch*H_k, N_k, d), O (batch*heads, N_q, d) at e_in bytes;
//   L, and V1's m and l (batch*heads, N_q) in fp32; standard's S and P (batch*heads, N_q, N_k)
//   at e_in bytes with a row stride of standard_ld(N_k) elements; split-KV's Oacc (splits,
//   batch*heads, N_q, d) and Lacc (splits, batch*heads, N_q) in fp32. Any N_q, N_k >= 1; d in
//   {32, 64, 128}. Grouped-query attention (H_k K/V heads, group = heads / H_k): query head h of
//   batch b, bh = b*heads + h, reads K/V head b*H_k + h/group = bh / group (kv_head).
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "flashlab/contract/algo.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/contract/split_kv.hpp"
#include "flashlab/contract/tiling.hpp"

namespace flashlab::gpu {

/// Input element type of the kernels (accumulation is always fp32 on the tensor cores).
enum class Elem : std::uint8_t { fp16 = 0, bf16 = 1 };

/// Row stride (elements) of standard attention's S and P: N_k rounded up to 16, so that every
/// row starts on a 32-byte sector and is moved in whole 16-byte chunks.
FL_HD std::int64_t standard_ld(std::int64_t n_k) { return (n_k + 15) / 16 * 16; }

/// The largest N_k of standard attention: its softmax kernel holds one row of S in SRAM (fp32).
inline constexpr std::int64_t kStandardMaxNk = 48 * 1024;

/// A tile shape compiled into a kernel: B_r x B_c with `warps` warps per thread block.
struct TileShape {
  int b_r = 0, b_c = 0, warps = 0;
  constexpr bool operator==(const TileShape& o) const { return b_r == o.b_r && b_c == o.b_c && warps == o.warps; }
};

/// The one tile shape of the variants compiled beside a preset's kernel (docs/model.md "Variants"):
/// V2's kernel with --grid head or --rescale step, and V1's row-update family with split-Q warps
/// (split-K warps take every V1 tile with the K/V outer order, row_q_outer_tile with the Q outer one).
inline constexpr TileShape kVariantShape{64, 64, 4};
constexpr bool is_variant_tile(int b_r, int b_c, int warps) { return TileShape{b_r, b_c, warps} == kVariantShape; }
/// The tile of the Q outer order with split-K warps (V1's row-update family with O_i in registers):
/// the largest V1 tile at head dim d, the one the variant grid and the ablation run.
constexpr TileShape row_q_outer_tile(int d) { return d <= 64 ? TileShape{64, 64, 4} : TileShape{32, 64, 4}; }

/// The kernel families of an algorithm, each with its own list of compiled tiles (tiles.hpp): the
/// forward, the backward (launch_backward) and V2's split-KV forward (launch with splits > 1).
enum class Family : std::uint8_t { forward = 0, backward = 1, split = 2 };

/// The tile shapes compiled for family `f` of algorithm `algo` at head dim d (empty for a d not
/// compiled, and for a family the algorithm lacks), in the order of kernels/src/tiles.hpp;
/// launch() and launch_backward() reject any other shape with ConfigError.
std::vector<TileShape> compiled_tiles(Algo algo, int d, Family f = Family::forward);

/// One attention forward launch. Pointers are device pointers; unused ones may be null
/// (L: V2 only; m, l: V1 only; S, P: standard only).
struct Args {
  const void* q = nullptr;  // (bh, N_q, d)
  const void* k = nullptr;  // (bh, N_k, d)
  const void* v = nullptr;  // (bh, N_k, d)
  void* o = nullptr;        // (bh, N_q, d)
  float* lse = nullptr;     // L = m + ln l, (bh, N_q) fp32             (V2)
  float* m = nullptr;       // running row max in HBM, (bh, N_q) fp32   (V1)
  float* l = nullptr;       // running row sum in HBM, (bh, N_q) fp32   (V1)
  void* s = nullptr;        // S = scale Q K^T, (bh, N_q, standard_ld(N_k))   (standard)
  void* p = nullptr;        // P = softmax(S), (bh, N_q, standard_ld(N_k))    (standard)
  // The backward (launch_backward): o, lse (V2) or m, l (V1) as the forward wrote them, and
  const void* d_o = nullptr;  // dO, (bh, N_q, d) at e_in
  void* dq = nullptr;         // dQ, (bh, N_q, d) at e_in
  void* dk = nullptr;         // dK, (bh, N_k, d) at e_in
  void* dv = nullptr;         // dV, (bh, N_k, d) at e_in
  float* d_sum = nullptr;     // D = rowsum(dO o O), (bh, N_q) fp32               (V2)
  float* dq_acc = nullptr;    // dQacc, the fp32 accumulator of dQ, (dq_splits, bh, N_q, d)  (V2)
  // FA2's deterministic backward (V2): dq_splits thread blocks per (batch, head), block s walking
  // K/V blocks s, s + dq_splits, ... and adding into slice s of dq_acc; the convert launch sums the
  // slices in order s = 0, 1, ... (FA2: nsplits = ceil(SMs / (batch x heads)), flash_api.cpp mha_bwd)
  bool deterministic = false;
  int dq_splits = 1;          // slices of dq_acc: 1 unless deterministic
  // Split-KV (V2 with splits > 1): each split's partial O and L, read back by the combine
  float* o_acc = nullptr;     // Oacc, O_s = diag(l)^-1 O of split s, (splits, bh, N_q, d) fp32
  float* lse_acc = nullptr;   // Lacc, L_s = m + ln l of split s (-inf: no key), (splits, bh, N_q) fp32
  int splits = 1;             // K/V splits (1: V2's single launch)
  std::int64_t bh = 1;      // batch * heads
  std::int64_t group = 1;   // query heads per K/V head (GQA; 1: one K/V head per query head)
  std::int64_t n_q = 0, n_k = 0;
  int d = 0;
  Band band;                // the mask as a band on c - r (tiling.hpp)
  float scale = 0;          // softmax scale (1/sqrt(d) by default)
  bool block_skip = true;   // visit only tiles with a visible element
  // The other four switches of the tiled forward (docs/model.md "Variants"; defaults: V2's). The
  // warp split and the order pick the kernel (launch); grid and rescale are run-time switches.
  bool split_k = false;         // --split split-k: warps own key columns of S_ij (V1)
  bool kv_outer = false;        // --order kv-outer: O_i, l_i, m_i through HBM at every step (V1)
  bool grid_head = false;       // --grid head: one thread block per (batch, head) (V1)
  bool rescale_delayed = true;  // --rescale delayed: O_i divided by l_i once, at the end (V2)
  Elem elem = Elem::fp16;
  TileShape tile;
};

/// The K/V head (batch * H_k index) that query head bh reads: bh / group (the layout note above).
FL_HD std::int64_t kv_head(const Args& a, std::int64_t bh) { return bh / a.group; }

/// The most steps a thread block of the split kernel has: step 0, one per K/V block of a split
/// (contract/split_kv.hpp), the final one. Split s's m, l snapshots use slots [s * this, (s + 1) *
/// this) of TraceBuffers::stats.
FL_HD std::int64_t split_block_steps(std::int64_t t_c, std::int64_t splits) {
  return split_kv_blocks_per_split(t_c, splits) + 2;
}

/// Where the instrumented build writes. Only thread blocks of (batch*head) `traced_bh` record,
/// so the stream is the one (batch, head) that the simulator walks. Events are appended with an
/// atomic counter, one recording thread per thread block, in program order; the host sorts them
/// stably by (launch, block, step). m and l snapshots (fp32, after every step the simulator snapshots)
/// go to stats[(slot * 2 + {0: m, 1: l}) * B_r + row] for Q block `stat_block`, and
/// stat_written[slot] = 1 marks the slots written; the slot is the step, and for split-KV, whose
/// every split snapshots Q block `stat_block`, s * split_block_steps + step for split s.
struct TraceBuffers {
  Event* events = nullptr;
  unsigned* count = nullptr;       // events appended (may exceed capacity: then the run failed)
  unsigned capacity = 0;
  float* stats = nullptr;
  int* stat_written = nullptr;
  unsigned stat_steps = 0;         // capacity of stats in steps
  int stat_block = -1;             // Q block whose m, l are recorded (-1: none)
  std::int64_t traced_bh = 0;
  std::uint16_t launch = 0;        // Event::launch of the records: set by the launcher for each kernel launch
};

/// Launches the plain build of `algo` (trace == nullptr) or the instrumented build (events, m,
/// l): standard attention is three CUDA kernels (fl_standard_scores, _softmax, _output); a tiled
/// forward (V1, V2 or a variant between them: `algo` is then only "tiled", the switches of Args say
/// which) one kernel: split-Q warps with the Q outer order fl_v2_forward (v2.cu), every other
/// combination fl_row_forward (v1.cu), plus fl_row_normalize (launch 1) for the K/V outer order
/// with one thread block per head and delayed rescaling. The K/V outer order needs m and l, the Q
/// outer order L. V2 with splits > 1 is split-KV, two launches as the
/// simulator's split schedule numbers them: fl_v2_forward_split (grid (T_r, splits, bh), each
/// split's partial O and L into Oacc, Lacc; launch 0) and fl_v2_combine (grid (T_r, bh), O and L;
/// launch 1). Throws ConfigError (error.hpp) for a d, tile shape or size the kernels do not
/// support, and std::runtime_error with the CUDA error text when a launch fails.
void launch(Algo algo, const Args& a, const TraceBuffers* trace, cudaStream_t stream);

/// Launches the backward of `algo` (docs/model.md "Backward pass"), plain or instrumented, and sets
/// TraceBuffers::launch per kernel as the simulator numbers the launches of `--pass backward`:
/// V2 as FA2 releases it, three kernels — fl_v2_bwd_dot_do_o (D, dQacc = 0; launch 0),
/// fl_v2_bwd_dq_dk_dv (one thread block per K/V block, Q blocks from the last down, dQ_i added to
/// dQacc with atomicAdd; launch 1), fl_v2_bwd_convert_dq (dQ = dQacc; launch 2); V1 (FA1 Alg. 4)
/// one kernel, fl_v1_backward, one thread block per (batch, head), dQ_i read and written at every
/// step. Throws ConfigError for an algorithm without a backward kernel (standard attention), a d or
/// tile shape not compiled, a null buffer the algorithm needs, or grouped K/V heads (group > 1: dK,
/// dV of a K/V head would be sums over its query heads, which the kernels do not form).
void launch_backward(Algo algo, const Args& a, const TraceBuffers* trace, cudaStream_t stream);

}  // namespace flashlab::gpu
