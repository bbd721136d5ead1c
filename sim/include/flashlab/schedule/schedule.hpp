// schedule.hpp — an algorithm as data: a list of launches (kernels), each a loop nest walked by
// one executor (executor.hpp). Standard attention, V1 and V2 are three values of `Schedule`; a
// backward pass or a split-KV forward is another value, not another branch in the executor.
//
// A launch, for one (batch, head):
//   prologue steps                         (V1 line 2: O, l, m initialised in HBM; standard
//                                           attention: each line of Algorithm 0, whole tensors)
//   for the outer tile loop (Q blocks i or K/V blocks j, ascending or descending):
//     outer.begin                          (V2: load Q_i; V1: load K_j, V_j)
//     for the inner tile loop:
//       body, on a visited tile (i, j) — or one `skip` event on a skipped one
//     outer.end                            (V2: O_i = O_i / l_i, store O_i and L_i)
// A second launch, walking one tile loop with outer actions only, is a pass over the Q blocks
// (the K/V outer order with delayed rescaling and one thread block per head: O_i = O_i / l_i).
// Actions flagged `if_visited` run only when the outer block has at least one visited tile.
//
// The loops also say which of them are thread blocks and in what order the GPU dispatches them:
// thread-block loops come first in `loops`, and the last of them is blockIdx.x, the fastest. The
// executor derives from this the thread-block id of each step, the grid of each launch, step
// counts and the trace size bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/algo.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/contract/split_kv.hpp"
#include "flashlab/schedule/memory.hpp"

namespace flashlab {

/// What part of a tensor an action touches, for one (batch, head).
enum class Region : std::uint8_t {
  none,      // compute actions on the current tile
  whole,     // the whole tensor: N_q rows (Q O l m L dO dQ D dQacc), N_k rows (K V dK dV),
             // N_q x N_k (S P dP dS) — tensor_shape.hpp
  q_block,   // rows(i) rows of a per-query tensor (of a per-split tensor: split s's copy, in a
             // launch that loops over the splits)
  kv_block,  // cols(j) rows of a per-key tensor
  q_block_splits,  // rows(i) rows of every split's copy of a per-split tensor (Oacc, Lacc: the
                   // combine reads all the splits' partial results of Q block i)
};

/// Who issues an action (docs/model.md "V3"; its events' agent, contract/event.hpp). Standard
/// attention, V1 and V2 are the whole thread block's; FA3's thread block has warp roles.
enum class Role : std::uint8_t {
  block,      // the whole thread block (agent kAgentBlock)
  producer,   // the producer warp: TMA loads and the stage ring's producer side (kAgentProducer)
  consumers,  // each consumer warpgroup k on its own rows [64 k, 64 k + 64) of the Q block: one event
              // per warpgroup (kAgentConsumer + k); the action's bytes and work are the whole block's
  consumer0,  // consumer warpgroup 0 alone (kAgentConsumer): the loads without warp specialization
};

/// One load, store, atomic (read-modify-write of HBM), compute, or asynchronous step (arrive, wait,
/// commit: FA3's barriers and WGMMA groups, which cost nothing and move nothing) of a step.
struct Action {
  Op op = Op::compute;
  Tensor tensor = Tensor::none;  // load / store / atomic
  Region region = Region::none;
  Eq eq = Eq::none;              // compute
  bool if_visited = false;       // outer-level actions: only when the outer block visits a tile
  // Times the region's bytes count as requests in one step (load / store / atomic): 1, or more
  // where the thread block moves the same rows several times or in pieces smaller than a sector.
  // FA2's main backward kernel: every warp column of its S = Q K^T tile loads L_i and D_i of its
  // rows itself. FA2's dot_do_o: one thread per row stores D_i, a warp 32 / kGmemThreadsPerRow rows
  // (16 bytes at 8 threads per row), and each warp's store counts a whole 32-byte sector. Each
  // request counts at the hbm and sector levels; the L2 model sees the region once (the repeats
  // are L1 hits, or the same sector's other half).
  std::uint8_t requests = 1;
  // Rows of an fp32 statistic (L, D) per warp request where the kernel gathers them from its
  // accumulator layout rather than one row a thread: 0 for one row a thread (32 rows a request, the
  // project's kernels), 8 in FA2's main backward kernel (`lse(mi) = gLSE(row)`: the 32 lanes hold 8
  // rows, lane / 4, per mi). Only the sector level sees it: a request of 8 rows is 32 bytes, two
  // sectors where the (batch, head)'s rows do not start on one (N_q not a multiple of 8).
  std::uint8_t request_rows = 0;
  // q_block regions: B_r rows for every Q block, the last one too (T_r B_r in all), where the
  // tensor is allocated with N_q rounded up to a multiple of B_r and the kernel moves the pad rows
  // unpredicated (FA2's dQaccum and dsoftmax_sum: seqlen_q_rounded rows). Every level sees the
  // padded block: the hbm and sector levels count it, the L2 model keys it as Q block i.
  bool padded = false;
  // The region exists once per (batch, K/V head), not per query head (GQA: PyTorch's at::sum writes
  // dK, dV of each K/V head once): each query head's walk counts 1 / group of its bytes, so the
  // batch x heads walks count batch x kv_heads regions (resolve() refuses a group that does not
  // divide the region's bytes).
  bool per_kv_head = false;
  // V3 (docs/events.md "V3"): who issues the action; for arrive/wait on K or V, the depth of the
  // stage ring whose barrier it names (1-3; the event gives the stage and phase of the thread
  // block's ring position, StepView::ring); deferred: a body action whose work is its tile's (the
  // executor counts it there, numerics runs it after the step's other actions) but which is issued
  // in the next visited step of the outer block, or in the outer end after the last one (FA3's
  // intra-warpgroup overlap: GEMM1 of block j issued after GEMM0 of block j + 1).
  Role role = Role::block;
  std::uint8_t ring = 0;
  bool deferred = false;
  // V3: a bulk tensor copy (TMA) of a q_block or kv_block region, whose box is the whole block: the
  // copy engine fetches B_r (B_c) rows for the last, partial block too and fills the rows past N_q
  // (N_k) with zeros. The sector level counts the whole box — the SMs' requests, every byte across
  // the XBAR (tests/data/gpu_v3/v3_bytes.json: the rows past N, to the kilobyte); the hbm level and
  // the L2 model count the rows in the tensor, rows(i) (cols(j)): DRAM never sees the others.
  bool tma_box = false;
};

/// What a loop runs over. Extents (loop_extent): batch, heads, T_r, T_c, N_q, splits.
enum class Dim : std::uint8_t {
  batch,
  head,
  q_block,   // Q blocks i
  kv_block,  // K/V blocks j
  q_row,     // single query rows (standard attention's softmax: one thread block per row)
  kv_split,  // splits s of the K/V blocks (split-KV): split s walks K/V blocks split_range(p, s)
  dq_slice,  // the deterministic backward's dQ slices s of a (batch, head), a thread block each: s
             // walks the K/V blocks s, s + p.dq_splits, ... (dq_slice_range) and adds into slice s
             // of dQacc
};
inline constexpr int kDimCount = 7;

enum class Order : std::uint8_t { ascending, descending };

/// One level of a launch's loop nest.
struct Loop {
  Dim dim = Dim::q_block;
  bool thread_block = false;      // a grid dimension: one thread block per index
  // A sequential loop: the order a thread block walks it. A thread-block loop: which index the
  // first dispatched block (blockIdx 0) takes — descending gives it the last, as FA2's causal
  // kernels dispatch the longest Q blocks first.
  Order order = Order::ascending;
};

/// Where a launch keeps a tile of `tensor` while it works on it (docs/model.md "SRAM").
struct Placement {
  Tensor tensor = Tensor::none;
  Memory memory = Memory::sram;  // sram or registers
  std::int64_t copies = 1;       // buffers of the tile held at once (a K/V stage ring's stages)
};

/// One kernel launch.
struct Launch {
  std::string name;         // the kernel's name, e.g. "v2_forward"
  std::vector<Loop> loops;  // outermost first: thread-block loops (dispatch order, blockIdx.x
                            // last), then the sequential loops of one thread block
  std::vector<std::vector<Action>> prologue;  // steps once per (batch, head), before the tile
                                              // loops, by the thread block numbered 0
  std::vector<Action> outer_begin, outer_end;  // around each index of the outer tile loop
  std::vector<Action> body;                    // on each visited tile (i, j)
  std::vector<Placement> placement;            // every tensor the launch loads or stores
  // One thread block per SM walks the launch's thread-block tiles blockIdx.x, blockIdx.x + SMs, ...
  // in dispatch order (FA3's StaticPersistentTileScheduler): the grid is the GPU's SM count. The
  // executor names each step by that thread block (StepView::block) and carries its step, ring
  // position and tile count (StepView::ring, work) from one of its tiles to the next.
  bool persistent = false;
  // The L2 writes the launch's dirty tiles back early, by l2_model.hpp's set-associative rule (its
  // A and c fitted on the V3 kernel's launches). Off, a dirty tile leaves the L2 during the launch
  // only when the LRU evicts it: the project's V2 kernel writes less than the rule at the same
  // bytes held, PyTorch's FA2 more (docs/validation/v3_h200.md "O's write-back").
  bool early_write_back = false;
};

struct Schedule {
  std::vector<Launch> launches;  // in launch order
};

/// The schedule problem p runs — the one entry point: its forward's launches when p.forward(), then
/// its backward's when p.backward(). The forward: split-KV V2 (detail::make_split_schedule) when
/// p.splits > 1, else the schedule of p.algo with p's switches (detail::make_forward_schedule). The
/// backward: detail::make_backward_schedule(p.algo, p.backward_form), or with --kernel fa2
/// detail::make_fa2_backward_schedule(p). For the forward's launches of a problem alone:
/// make_schedule(p.forward_only()).
Schedule make_schedule(const Problem& p);

/// The builders make_schedule(const Problem&) composes, for schedule/ and its tests: callers
/// elsewhere go through the Problem.
namespace detail {

/// The schedule of `a` with switches `v` (config.hpp Switches; docs/model.md "Variants"), line by
/// line from FA1 Alg. 0 / FA1 Alg. 1 / FA2 Alg. 1. Standard attention ignores `v`; for v1 and v2
/// the schedule depends only on v.order, v.grid and v.rescale (the warp split and block skip are
/// read off the Problem by the warp model and the executor), so `--algo v1` with v2's switches
/// is V2's schedule. Launches: one, plus for kv-outer + head + delayed a second,
/// "flash_normalize", that divides each O_i by l_i after the K/V loop. V3's schedule depends on its
/// problem (make_v3_schedule): here, FA3's switches and tile at d = 128 without a mask.
Schedule make_schedule(Algo a, const Switches& v);

/// The preset: make_schedule(a, preset_switches(a)) — V1 is "v1_forward", V2 "v2_forward".
Schedule make_schedule(Algo a);

/// The backward pass of `a` as data (docs/model.md "Backward pass"), line by line from FA1 Alg. 3
/// (standard: five launches over whole tensors, P read back from HBM, dP and dS written and read),
/// FA1 Alg. 4 (v1: "v1_backward", one thread block per (batch, head), K/V blocks outer; dQ, dK, dV
/// initialised in HBM, dQ_i read and written at every step) and FA2 Alg. 2 for v2 in `form`:
/// paper — "v2_backward_dot_do_o" (lines 3-4: D = rowsum(dO o O) and dQ = 0 written) then
/// "v2_backward" (one thread block per K/V block j; Q_i, O_i, dO_i, dQ_i, L_i, D_i loaded and dQ_i
/// written at every step); released — FA2's three kernels: "flash_bwd_dot_do_o" (D and the zeroed
/// fp32 accumulator dQacc, one thread block per Q block), "flash_bwd_dq_dk_dv" (one per K/V block,
/// Q blocks walked from the last down, Q_i, dO_i, L_i, D_i loaded, dQ_i added to dQacc with
/// atomics), "flash_bwd_convert_dq" (dQ = dQacc); deterministic — the same three launches with
/// n = p.dq_splits (FA2's nsplits) dQ slices of dQacc: "flash_bwd_dot_do_o" zeroes every slice of
/// dQacc_i, "flash_bwd_dq_dk_dv" has grid (slice s, batch, head) and thread block s walks the K/V
/// blocks s, s + n, ... (each as released does) adding dQ_i into slice s with atomics,
/// "flash_bwd_convert_dq" reads the n slices of dQacc_i and sums them in order s = 0, 1, ...
/// The backward depends on the algorithm only:
/// a variant of `--algo v1` runs V1's backward.
Schedule make_backward_schedule(Algo a, BackwardForm form);

/// What PyTorch's FA2 backward (mha_bwd, flash_bwd_launch_template.h run_flash_bwd_seqk_parallel)
/// launches for problem p (p.kernel = fa2, on FA2's backward tile: fa2_backward_traits): V2's
/// released backward (make_backward_schedule(v2, released)) under FA2's kernel names —
/// "flash_bwd_dot_do_o_kernel" (grid T_r x batch x heads), "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"
/// (T_c x batch x heads; flash_bwd_kernel.h compute_dq_dk_dv_1colblock), "flash_bwd_convert_dq_kernel"
/// (T_r x batch x heads) — with one difference in what the main kernel reads: each of the
/// warp_columns() warps along the keys of S_ij loads L_i and D_i of its rows itself (`lse(mi) =
/// gLSE(row)`, `dP_sum(mi) = gdPsum(row)` per thread), so L_i and D_i are requested that many
/// times per tile (Action::requests). Where FA2's kernels move more than V2's schedule does:
/// dot_do_o stores D_i from one thread per row, so a warp's store covers 32 / kGmemThreadsPerRow
/// rows (kGmemThreadsPerRow = kBlockKSmem / 8, kBlockKSmem = 64 when 64 divides d, else 32) and
/// counts a whole sector: 2 requests at 8 threads per row, 1 at 4; dQaccum and D are allocated
/// with N_q rounded up (flash_api.cpp seqlen_q_rounded), and dot_do_o zeroes dQacc_i and writes D_i,
/// the main kernel reads D_i and adds into dQacc_i, convert_dq reads dQacc_i on whole B_r-row
/// blocks, unpredicated (Action::padded; L_i, dO_i, O_i, Q_i and dQ_i are predicated on N_q).
/// With grouped K/V heads (kv_heads < heads) the main kernel writes dK_j, dV_j per query head
/// (mha_bwd's dk_expanded, dv_expanded: (batch, N_k, heads, d) in the input type) and two launches
/// follow, "at::sum dK" and "at::sum dV" (at::sum_out over each group): each reads the expanded
/// gradient of every query head and writes the K/V head's (Action::per_kv_head), one step per
/// (batch, head) — their grids are this model's, not measured.
Schedule make_fa2_backward_schedule(const Problem& p);

/// Split-KV V2 (FA2's flash_fwd_splitkv kernel and its combine kernel; Flash-Decoding), two
/// launches. "v2_forward_split": grid (Q block i fastest, split s, batch x head), each thread block
/// walks the K/V blocks of its split (split_range) as V2 does (FA2 Alg. 1 lines 4-11) and ends
/// with its partial result: O_s,i = diag(l)^-1 O_i and L_s,i = m_i + log(l_i) stored in fp32 as
/// Oacc and Lacc (a split with no visible tile stores O_s,i = 0, L_s,i = -inf without loading Q_i).
/// "flash_combine": one thread block per (batch, head, Q block) reads Lacc_i and Oacc_i of every
/// split and writes L_i = log sum_s exp(L_s,i) and O_i = sum_s exp(L_s,i - L_i) O_s,i.
Schedule make_split_schedule();

/// V3, FA3's Hopper forward (docs/model.md "V3"; FA3 paper Algorithm 1, hopper/
/// mainloop_fwd_sm90_tma_gmma_ws.hpp), one launch "v3_forward" with V2's loops and bytes (Q blocks
/// outer, block skip, O_i and L_i written once) and p.hopper's switches: warp roles (Role), K and V
/// in a stage ring of p.hopper.stages buffers with full/empty mbarriers, WGMMA issue/commit/wait,
/// ping-pong named barriers, GEMM1 deferred by one K/V block (intra-warpgroup overlap), the
/// persistent grid; P_ij in registers or shared memory as fa3_p_in_registers(d, B_c) says.
Schedule make_v3_schedule(const Problem& p);

/// The forward launches problem p runs: make_split_schedule() when p.splits > 1, make_v3_schedule(p)
/// for V3, else make_schedule(p.algo, p.switches()) (whatever p.pass says).
Schedule make_forward_schedule(const Problem& p);

}  // namespace detail

/// The K/V blocks split s walks (contract/split_kv.hpp split_kv_range with T_c and p.splits): all
/// of [0, T_c) without splits.
SplitRange split_range(const Problem& p, std::int64_t s);

/// The split whose K/V blocks hold block j: j / n (split_range's n).
std::int64_t split_of(const Problem& p, std::int64_t j);

/// The K/V blocks the thread block of dQ slice s of the deterministic backward walks: s, s + n, ...
/// below T_c (FA2's `for (n_block = blockIdx.x; n_block < num_n_block; n_block += gridDim.x)`),
/// n = p.dq_splits (FA2's nsplits) slices; none when s >= T_c.
struct StridedRange {
  std::int64_t first = 0, end = 0, stride = 1;  // first, first + stride, ... < end
  std::int64_t count() const { return first >= end ? 0 : (end - first + stride - 1) / stride; }
  std::int64_t at(std::int64_t k) const { return first + k * stride; }
};
StridedRange dq_slice_range(const Problem& p, std::int64_t s);

/// Whether a thread-block loop over dimension d partitions the K/V blocks among its thread blocks:
/// split-KV's splits (Dim::kv_split, contiguous ranges) and the deterministic backward's dQ slices
/// (Dim::dq_slice, strided). The executor walks such a loop as data: partition_range and
/// partition_of say which K/V blocks each copy walks.
bool partitions_kv_blocks(Dim d);
/// The K/V blocks copy s of partitioning dimension d walks: split_range(p, s) as a stride-1 range
/// for Dim::kv_split, dq_slice_range(p, s) for Dim::dq_slice; all of [0, T_c) for any other d.
StridedRange partition_range(const Problem& p, Dim d, std::int64_t s);
/// The copy of partitioning dimension d whose K/V blocks hold block j (split_of; j mod
/// p.dq_splits for the dQ slices); 0 for any other d.
std::int64_t partition_of(const Problem& p, Dim d, std::int64_t j);

/// Copies of tensor t in HBM per (batch, head): p.splits for Oacc and Lacc (one per split-KV
/// split), p.dq_splits for dQacc (the deterministic backward's slices; 1 in the other forms), 1
/// for every other tensor.
std::int64_t copies(const Problem& p, Tensor t);

/// Throws std::logic_error naming the launch and the rule when `s` cannot be walked: a dimension
/// twice in one launch; a thread-block loop after a sequential one; tile loops other than one or
/// two of q_block, kv_block where the launch has loop actions; a body without two tile loops;
/// outer actions where the inner tile loop is a thread-block loop; a region whose block index is unknown at its level; a loaded or stored tensor without a
/// placement; a placement other than sram or registers; a padded action outside a Q-block region;
/// a K/V head's region (Action::per_kv_head) other than a whole per-key tensor in a launch without tiles.
void check_schedule(const Schedule& s);

/// The extent of dimension `d` for problem p: batch, heads, T_r, T_c, N_q, p.splits or p.dq_splits.
std::int64_t loop_extent(Dim d, const Problem& p);

/// The tile loops the executor walks, outer first: the launch's q_block and kv_block loops when
/// it has outer or body actions, else none (its steps are its prologue).
std::vector<Loop> walked_loops(const Launch& l);

/// Thread blocks the launch runs per (batch, head): the product of its thread-block loops'
/// extents, batch and head excluded. Times batch * heads: the launch's grid.
std::int64_t blocks_per_head(const Launch& l, const Problem& p);

/// Where launch l keeps tensor t (memory.hpp), or Memory::hbm when the launch has no placement
/// for it (it does not move t).
Memory placement_of(const Launch& l, Tensor t);

/// Whether any launch of s loads or stores tensor t.
bool moves(const Schedule& s, Tensor t);

/// Whether any launch of s walks tiles (i, j) (has a body).
bool has_tiles(const Schedule& s);

/// Whether any action of s is issued by a warp role (Role other than block): FA3's warp-specialized
/// thread blocks, which the warp model (warps.hpp) and the time model do not describe.
bool has_warp_roles(const Schedule& s);

/// Bytes of tensor t's tile with `rows` query rows and `cols` keys (tensor_shape.hpp): Q_i, O_i,
/// dO_i, dQ_i rows x d; K_j, V_j, dK_j, dV_j cols x d; S_ij, P_ij, dP_ij, dS_ij rows x cols, all at
/// e_in bytes; l_i, m_i, L_i, D_i rows x 4 bytes; dQacc_i rows x d x 4 bytes.
std::int64_t tile_bytes(Tensor t, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in);

/// Shared memory one thread block of launch l holds with tiles of rows x cols: the tiles its
/// placement keeps in SRAM, each times its copies (S_ij and P_ij share one buffer: P overwrites S;
/// so do dP_ij and dS_ij).
/// rows = 0 or cols = 0
/// leaves out the tiles that need them (V2 before its first K/V block holds only Q_i).
std::int64_t sram_bytes(const Launch& l, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in);

/// The largest sram_bytes over the launches of s: what a B_r x B_c tiling needs of SRAM. V1
/// (S_ij in SRAM): (B_r d + 2 B_c d + B_r B_c) e_in; V2 (S_ij/P_ij and O_i in registers):
/// (B_r d + 2 B_c d) e_in; standard attention, its S = QK^T launch: (B_r d + B_c d + B_r B_c) e_in.
std::int64_t sram_bytes(const Schedule& s, std::int64_t rows, std::int64_t cols, std::int64_t d, int e_in);

}  // namespace flashlab
