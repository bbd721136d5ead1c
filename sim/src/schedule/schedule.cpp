// schedule.cpp — the forward schedules as data (the backward's: backward.cpp): standard attention, and V1, V2 and the variants
// between them from one builder (docs/model.md cites each line).
#include "flashlab/schedule/schedule.hpp"

#include <algorithm>

#include "flashlab/schedule/tensor_shape.hpp"

#include "actions.hpp"

namespace flashlab {
namespace {

using namespace schedule_words;

// FA1 paper, Algorithm 0 (standard attention): three launches, one step each per (batch, head)
// over whole tensors, as the algorithm writes its lines. The loops are the project's kernels'
// (kernels/src/standard.cu): S = QK^T and O = PV run one thread block per Q block streaming the
// K/V blocks, the softmax one thread block per row; batch * heads is gridDim.y.
Schedule standard_schedule() {
  Launch scores = launch("standard_scores", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 1: load Q, K, compute S = QK^T, write S
  scores.prologue = {{load(Tensor::Q, Region::whole), load(Tensor::K, Region::whole), compute(Eq::scores),
                      store(Tensor::S, Region::whole)}};
  scores.placement = {{Tensor::Q, Memory::sram}, {Tensor::K, Memory::sram}, {Tensor::S, Memory::sram}};

  Launch softmax = launch("standard_softmax", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_row)});
  // line 2: read S, compute P = softmax(S), write P
  softmax.prologue = {{load(Tensor::S, Region::whole), compute(Eq::softmax_dense), store(Tensor::P, Region::whole)}};
  softmax.placement = {{Tensor::S, Memory::sram}, {Tensor::P, Memory::sram}};

  Launch output = launch("standard_output", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 3: load P and V, compute O = PV, write O
  output.prologue = {{load(Tensor::P, Region::whole), load(Tensor::V, Region::whole), compute(Eq::output_dense),
                      store(Tensor::O, Region::whole)}};
  output.placement = {{Tensor::P, Memory::sram}, {Tensor::V, Memory::sram}, {Tensor::O, Memory::registers}};
  return {{scores, softmax, output}};
}

// The tiled forward as one builder from three switches (docs/model.md "Variants"); the warp split
// and block skip are not schedule data (the warp model and the executor read them off Problem).
//   order kv-outer (FA1 Alg. 1): O, l, m initialised in HBM (line 2) and O_i, l_i, m_i read and
//     written there at every step (lines 8, 12-13); S_ij in SRAM as the paper writes it.
//   order q-outer (FA2 Alg. 1): O_i, l_i, m_i initialised and kept on chip (line 4), O_i and L_i
//     written once (lines 12-15); S_ij/P_ij and O_i in registers as FA2's kernel keeps them.
//   grid head: one thread block per (batch, head) walks every tile, the outer loop the order's;
//   grid qblock: one per (batch, head, Q block) walks its own row of tiles (blockIdx.x = i). With
//     the K/V outer order this is FA1's released code: each thread block initialises its own
//     O_i, l_i, m_i in HBM (line 2 for its rows), loads Q_i once, K_j and V_j at every step, and
//     O_i, l_i, m_i still go through HBM at every step — with the Q block in the grid the two
//     orders differ only in where O_i lives between steps.
//   rescale step (FA1 Alg. 1 lines 10-12): every step normalises O_i by l_new; the Q outer
//     order then only computes L_i = m_i + log(l_i) at the end (Eq::logsumexp).
//   rescale delayed (FA2 Alg. 1 lines 9-10, 12): O_i unnormalised until one division at the end:
//     finalize_v2 with the Q outer order; with the K/V outer order Eq::normalize, on chip at the end
//     of each Q block's thread block (grid qblock), or for grid head a second pass over the Q
//     blocks that reads O_i and l_i back from HBM (FA1 Alg. 1 leaves O_i in HBM after the loop).
Schedule flash_schedule(const Switches& v) {
  const bool kv_outer = v.order == LoopOrder::kv_outer;
  const bool per_q_block = v.grid == GridKind::q_block;
  const bool step = v.rescale == Rescale::step;
  const Eq softmax = step ? Eq::softmax_v1 : Eq::softmax_v2;  // FA1 lines 10-11 | FA2 line 9
  const Eq output = step ? Eq::output_v1 : Eq::output_v2;     // FA1 line 12 | FA2 line 10

  std::string name = "flash_forward";
  const Switches v1 = preset_switches(Algo::v1), v2 = preset_switches(Algo::v2);
  if (v.order == v1.order && v.grid == v1.grid && v.rescale == v1.rescale) name = "v1_forward";
  if (v.order == v2.order && v.grid == v2.grid && v.rescale == v2.rescale) name = "v2_forward";

  std::vector<Loop> loops{grid(Dim::batch), grid(Dim::head)};
  if (per_q_block) loops.insert(loops.end(), {grid(Dim::q_block), seq(Dim::kv_block)});
  else if (kv_outer) loops.insert(loops.end(), {seq(Dim::kv_block), seq(Dim::q_block)});
  else loops.insert(loops.end(), {seq(Dim::q_block), seq(Dim::kv_block)});
  Launch l = launch(name, std::move(loops));
  const bool outer_is_q = per_q_block || !kv_outer;

  std::vector<Launch> more;
  if (kv_outer) {
    const std::vector<Action> kv = {load(Tensor::K, Region::kv_block, !outer_is_q),
                                    load(Tensor::V, Region::kv_block, !outer_is_q)};  // line 6
    const std::vector<Action> stats = {load(Tensor::O, Region::q_block), load(Tensor::l, Region::q_block),
                                       load(Tensor::m, Region::q_block)};              // line 8
    if (outer_is_q) {
      // Q_i held by its thread block; line 2 for the thread block's own rows: O_i = 0, l_i = 0,
      // m_i = -inf written to HBM (no thread block waits for another's initialisation)
      l.outer_begin = {load(Tensor::Q, Region::q_block, true), compute(Eq::init_stats),
                       store(Tensor::O, Region::q_block), store(Tensor::l, Region::q_block),
                       store(Tensor::m, Region::q_block)};
      l.body = kv;
    } else {
      // line 2: initialise O = 0, l = 0, m = -inf in HBM
      l.prologue = {{compute(Eq::init_stats), store(Tensor::O, Region::whole), store(Tensor::l, Region::whole),
                     store(Tensor::m, Region::whole)}};
      l.outer_begin = kv;
      l.body = {load(Tensor::Q, Region::q_block)};
    }
    l.body.insert(l.body.end(), stats.begin(), stats.end());
    l.body.insert(l.body.end(), {compute(Eq::scores), compute(softmax), compute(output),  // lines 9-12
                                 store(Tensor::O, Region::q_block), store(Tensor::l, Region::q_block),
                                 store(Tensor::m, Region::q_block)});  // lines 12-13
    l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                   {Tensor::S, Memory::sram},       {Tensor::P, Memory::sram},       {Tensor::O, Memory::registers},
                   {Tensor::l, Memory::registers}, {Tensor::m, Memory::registers}};
    if (!step && outer_is_q) {
      // the Q block's thread block still holds O_i and l_i of its last step: O_i = diag(l_i)^-1 O_i
      l.outer_end = {compute(Eq::normalize, true), store(Tensor::O, Region::q_block, true)};
    } else if (!step) {
      // after the K/V loop every O_i is unnormalised in HBM: one more pass over the Q blocks
      Launch n = launch("flash_normalize", {grid(Dim::batch), grid(Dim::head), seq(Dim::q_block)});
      n.outer_begin = {load(Tensor::O, Region::q_block, true), load(Tensor::l, Region::q_block, true),
                       compute(Eq::normalize, true), store(Tensor::O, Region::q_block, true)};
      n.placement = {{Tensor::O, Memory::registers}, {Tensor::l, Memory::registers}};
      more.push_back(std::move(n));
    }
  } else {
    // lines 4-5: load Q_i; initialise O_i = 0, l_i = 0, m_i = -inf on chip
    l.outer_begin = {load(Tensor::Q, Region::q_block, true), compute(Eq::init_stats, true)};
    l.body = {
        load(Tensor::K, Region::kv_block), load(Tensor::V, Region::kv_block),  // line 7
        compute(Eq::scores),                                                    // line 8
        compute(softmax),                                                       // line 9
        compute(output),                                                        // line 10
    };
    // lines 12-15: O_i = diag(l_i)^-1 O_i (delayed; step has normalised it already), L_i = m_i +
    // log(l_i), write O_i and L_i. A Q block that visits no tile still writes O_i = 0, L_i = +inf.
    l.outer_end = {compute(step ? Eq::logsumexp : Eq::finalize_v2, true), store(Tensor::O, Region::q_block),
                   store(Tensor::L, Region::q_block)};
    l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                   {Tensor::S, Memory::registers}, {Tensor::P, Memory::registers}, {Tensor::O, Memory::registers},
                   {Tensor::l, Memory::registers}, {Tensor::m, Memory::registers}, {Tensor::L, Memory::registers}};
  }
  Schedule s{{std::move(l)}};
  for (Launch& x : more) s.launches.push_back(std::move(x));
  return s;
}

}  // namespace

namespace detail {

// Split-KV (docs/model.md "Split-KV"): FA2's compute_attn_1rowblock_splitkv and
// combine_attn_seqk_parallel, as the project's kernels run them.
Schedule make_split_schedule() {
  Launch split = launch("v2_forward_split",
                        {grid(Dim::batch), grid(Dim::head), grid(Dim::kv_split), grid(Dim::q_block), seq(Dim::kv_block)});
  // FA2 Alg. 1 lines 4-5 for the split's thread block; a split with no visible tile exits before
  // loading Q_i
  split.outer_begin = {load(Tensor::Q, Region::q_block, true), compute(Eq::init_stats, true)};
  split.body = {load(Tensor::K, Region::kv_block), load(Tensor::V, Region::kv_block),  // line 7
                compute(Eq::scores), compute(Eq::softmax_v2), compute(Eq::output_v2)};  // lines 8-10
  // lines 12-13 on the split's keys, kept in fp32 for the combine: O_s,i = diag(l)^-1 O_i,
  // L_s,i = m_i + log(l_i); every split writes its slot (0 and -inf when it saw no key)
  split.outer_end = {compute(Eq::finalize_split, true), store(Tensor::Oacc, Region::q_block),
                     store(Tensor::Lacc, Region::q_block)};
  split.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                     {Tensor::S, Memory::registers}, {Tensor::P, Memory::registers}, {Tensor::O, Memory::registers},
                     {Tensor::l, Memory::registers}, {Tensor::m, Memory::registers}, {Tensor::Oacc, Memory::registers},
                     {Tensor::Lacc, Memory::registers}};

  Launch combine = launch("flash_combine", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block)});
  // every split's L_s,i, then O_s,i: L_i = log sum_s exp(L_s,i), O_i = sum_s exp(L_s,i - L_i) O_s,i
  combine.outer_begin = {load(Tensor::Lacc, Region::q_block_splits), load(Tensor::Oacc, Region::q_block_splits),
                         compute(Eq::combine), store(Tensor::O, Region::q_block), store(Tensor::L, Region::q_block)};
  combine.placement = {{Tensor::Lacc, Memory::registers}, {Tensor::Oacc, Memory::registers},
                       {Tensor::O, Memory::registers}, {Tensor::L, Memory::registers}};
  return {{std::move(split), std::move(combine)}};
}

Schedule make_schedule(Algo a, const Switches& v) {
  if (a == Algo::v3) {  // V3's schedule reads its switches, tile and mask off the problem
    Problem p;  // FA3's defaults at d = 128 (fa3_switches, fa3_forward_tile)
    p.algo = a;
    p.set_switches(v);
    p.tiling = Tiling{128, 128, 128, 128, 176};
    p.hopper = fa3_switches(128, 128);
    return make_v3_schedule(p);
  }
  return a == Algo::standard ? standard_schedule() : flash_schedule(v);
}

Schedule make_schedule(Algo a) { return make_schedule(a, preset_switches(a)); }

Schedule make_forward_schedule(const Problem& p) {
  if (p.splits > 1) return make_split_schedule();
  return p.algo == Algo::v3 ? make_v3_schedule(p) : make_schedule(p.algo, p.switches());
}

}  // namespace detail

Schedule make_schedule(const Problem& p) {
  Schedule s;
  if (p.forward()) s = detail::make_forward_schedule(p);
  if (p.backward()) {
    Schedule b = p.kernel == Kernel::fa2 ? detail::make_fa2_backward_schedule(p)
                                         : detail::make_backward_schedule(p.algo, p.backward_form);
    for (Launch& l : b.launches) s.launches.push_back(std::move(l));
  }
  return s;
}

SplitRange split_range(const Problem& p, std::int64_t s) { return split_kv_range(p.tiling.t_c(), p.splits, s); }

std::int64_t split_of(const Problem& p, std::int64_t j) {
  return j / split_kv_blocks_per_split(p.tiling.t_c(), p.splits);
}

StridedRange dq_slice_range(const Problem& p, std::int64_t s) { return {s, p.tiling.t_c(), p.dq_splits}; }

bool partitions_kv_blocks(Dim d) { return d == Dim::kv_split || d == Dim::dq_slice; }

StridedRange partition_range(const Problem& p, Dim d, std::int64_t s) {
  if (d == Dim::dq_slice) return dq_slice_range(p, s);
  const SplitRange r = d == Dim::kv_split ? split_range(p, s) : SplitRange{0, p.tiling.t_c()};
  return {r.first, r.end, 1};
}

std::int64_t partition_of(const Problem& p, Dim d, std::int64_t j) {
  return d == Dim::dq_slice ? j % p.dq_splits : d == Dim::kv_split ? split_of(p, j) : 0;
}

std::int64_t copies(const Problem& p, Tensor t) {
  if (t == Tensor::dQacc) return p.dq_splits;
  return per_split(t) ? p.splits : 1;
}

}  // namespace flashlab
