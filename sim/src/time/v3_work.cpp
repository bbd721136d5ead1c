// v3_work.cpp — V3's step work as its kernel does it (v3_work.hpp).
#include "v3_work.hpp"

#include <algorithm>
#include <numeric>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/memory/occupancy.hpp"
#include "round_trips.hpp"
#include "sm_facts.hpp"
#include "v3_pace.hpp"

namespace flashlab::time_detail {
namespace {

constexpr double kWarpsPerGroup = 4;    // warps of one warpgroup
constexpr double kMaskLaneOps = 4;      // a masked score element: column and row index, compare, select
constexpr double kWarpOverhead = 24;    // per warp per tile: shuffles, row statistics, fences, waits
constexpr double kCorrEx2PerRow = 4;    // each of a row's 4 threads computes its correction

std::int64_t consumer_groups(const Problem& p) { return p.tiling.b_r / 64; }

// The consumer warpgroups that have a phase of their own, as the overlap rule counts them
// (StepWork::groups). With warp specialization all B_r / 64: the producer warp issues the ring's loads
// the moment a stage's empty mbarrier completes, and no consumer waits for another.
// Without it (scripts/gpu/v3_kernel/v3_forward.cuh, Consumer::tile with `inline_ld`, forward_body:
// thread 0 of consumer warpgroup 0) warpgroup 0 issues the loads in line. Twice a step it arrives on a
// stage's empty mbarrier and then waits there (Loader::load_kv's mbar_wait) until every consumer warp
// of every warpgroup has arrived — after GEMM0 for K_j's stage, before its softmax; after GEMM1 for
// V's, before it goes on (the rescale with intra-warpgroup overlap, the next block without) — and only
// then issues the load into that stage. So warpgroup 0 resumes
// each step behind the last of the others and has no phase of its own (the others run ahead of it
// only as far as the ring lets them: their K_j, V_j are loaded from warpgroup 0's place in its loop).
// The step's streams are those of the other B_r / 64 - 1 warpgroups, joined at the ring's barriers as
// without ping-pong (1 + beta (B_r / 64 - 2)), at least one. No constant of its own; checked, not
// fitted, against the kernel's measured ablation (tests/sim/time/v3_ablation_test.cpp). (FA3 §3.1:
// warp specialization, the producer's own warps, is what frees the consumers' schedule from the
// loads.) Not counted: the load instructions and the empty barrier's polls in warpgroup 0's stream
// (their issue slots).
double phased_groups(const Problem& p) {
  const double groups = double(consumer_groups(p));
  return p.hopper.warp_specialize ? groups : std::max(1.0, groups - 1);
}

// One consumer warpgroup's round of an inner step (seconds): the wait for its GEMMs at the SM's tensor
// rate, then one warp's compiled instructions at the pace the PC samples measured (v3_pace.hpp pace_s:
// kPaceBase + kPacePerOther k cycles each at the clock under wgmma's load, k the other warpgroups
// executing beside it). The wait is GEMM0's and GEMM1's with or without intra-warpgroup overlap: with
// it the compiled loop waits for GEMM1_(j+1) right after GEMM0_j, before block j's softmax (the SASS
// order of Nsight's source page, tests/data/gpu_v3/ncu_stalls_pages_h100.tar.gz: WARPGROUP.DEPBAR.LE 1,
// DEPBAR.LE 0, then the MUFU.EX2s; docs/model.md "The compiled order"); without it GEMM1 is issued after
// the softmax and waited for at once. k: with warp specialization each warpgroup keeps a phase of its
// own and has each other one beside it the share of the round it executes (solved by iteration);
// without it the warpgroups run in phase, all the others beside it.
// Ping-pong (FA3 §3.1) is what gives a warpgroup's GEMMs the pipe to themselves: its named barriers
// order the warpgroups' wgmma issues one after another. Without it nothing keeps them apart, and each
// other warpgroup's GEMMs (`wait` of the pipe each) are in the pipe beside a warpgroup's own for their
// share of its round: its wait is shared = wait (1 + (G - 1) wait / (shared + run)), G the consumer
// warpgroups (solved in the same iteration; the others beside it executing fall as its wait grows).
// No constant of its own. Against the H100's PC samples at d 64 N 16384 (stalls_table.py, no ping-pong
// against FA3's defaults): the rule's wait grows 571 -> 776 cycles a step at the preset's clock (+184
// at the 1.78 GHz the SM kept), the measured wgmma wait 71 -> 258 (+187); the others beside it
// 1.62 -> 1.51, measured 1.73 -> 1.51. (Without warp specialization, whose variant also turns
// ping-pong off, the samples put the queueing in the HGMMA issue stalls instead: d 128 753 against
// 220, the wgmma wait 264 against 755.)
// One stage does the same to the warpgroups with ping-pong on (`together`): each K/V block's landing is
// what every warpgroup waits for, so their turns start together and their GEMMs go into the pipe
// together instead of one warpgroup's under another's softmax. Shown apart from the kernel by
// scripts/gpu/ring_per_sm.cu (tests/data/gpu_ceilings/h100_ring_per_sm.json; docs/model.md "The
// one-stage ring alone, measured"): the kernel's ring and turns with the softmax spun cost FA3's d 64
// step 0.5% with one stage when the GEMMs are a pipe serving one warpgroup at a time, 7.9% when they are
// real wgmmas; the PC samples of one stage at d 64 causal grow in wgmma issue (74 -> 160 cycles a step)
// as no ping-pong's do. The form (no ping-pong's queueing, no constant) was chosen after those runs;
// checked on the H100 probes (v3_one_stage_test.cpp: 14 of 14 within 10%, the 4 causal ones it was not
// written from 3.7-6.3%) and the H200 ablation (v3_ablation_test.cpp).
double consumer_round(const Problem& p, const V3StepWork& v) {
  const double groups = double(consumer_groups(p));
  const double tensor = p.gpu.wgmma_flops.value() / double(p.gpu.sms);
  const double wait = v.flops / groups / tensor;  // GEMM0 and GEMM1 of its 64 rows
  const bool together = !p.hopper.pingpong || p.hopper.stages == 1;  // the GEMMs share the pipe
  double others = groups - 1, run = 0, shared = wait;
  for (int round = 0; round < 20; ++round) {
    run = v.warp_instructions * pace_s(p, others);
    others = p.hopper.warp_specialize ? (groups - 1) * run / (shared + run) : groups - 1;
    if (together) shared = wait * (1 + (groups - 1) * wait / (shared + run));
  }
  return shared + run;
}

// The one-stage ring's cycle (seconds a step; 0 with two or more stages or without warp
// specialization). The producer loads in order K_0, V_0, K_1, V_1, ... (v3_forward.cuh load_block), and
// each load into the one stage waits at its empty mbarrier until every consumer warpgroup has released
// the block before it. With intra-warpgroup overlap the compiled loop waits for GEMM1_(n-1) right after
// GEMM0_n and releases V_(n-1) before block n's softmax (the SASS order of Nsight's source page,
// tests/data/gpu_v3/ncu_stalls_pages_h100.tar.gz: WARPGROUP.DEPBAR.LE 1, K's SYNCS.ARRIVE, DEPBAR.LE 0,
// V's SYNCS.ARRIVE, then the MUFU.EX2s): V_n's load, and K_(n+1)'s behind it, start when the last
// warpgroup's GEMMs of block n have run, 2 G GEMMs after K_n landed (each warpgroup's GEMM0_n and
// GEMM1_(n-1) in turn), and K_(n+1) lands one bulk copy's round trip (tma_round_trip_s) and both
// transfers (V_n, K_(n+1) at one SM's bulk-copy intake, tma_sm_bytes_per_s) later. Without intra-warpgroup
// overlap a warpgroup releases K_n after GEMM0_n, and V_n's load (issued before K_(n+1)'s) waits only for
// the end of iteration n - 1: the cycle is K_(n+1)'s round trip and transfer after the last warpgroup's
// GEMM0_n, then every warpgroup's GEMM0_(n+1). The round trip with the ring's measured turnaround beyond
// a lone copy's (round_trips.hpp ring_wake_s: the warps' wakes at the mbarriers), as the timeline has it.
double one_stage_cycle(const Problem& p, const V3StepWork& v, double k_bytes, double v_bytes) {
  if (p.hopper.stages != 1 || !p.hopper.warp_specialize) return 0;
  const GpuSpec& g = p.gpu;
  const double groups = double(consumer_groups(p));
  const double gemm = v.gemm0_flops / groups / (g.wgmma_flops.value() / double(g.sms));  // one warpgroup's GEMM0
  const double trip = g.tma_round_trip_s.value() + ring_wake_s(g, k_bytes + v_bytes), intake = g.tma_sm_bytes_per_s.value();
  if (!p.hopper.intra_overlap) return trip + k_bytes / intake + groups * gemm;
  return trip + (v_bytes + k_bytes) / intake + 2 * groups * gemm;
}

}  // namespace

// The lockstep fill of a one-stage ring (seconds a step, averaged over the launch's (batch, head)s; 0
// with two or more stages, without warp specialization or outside the static persistent deal). The
// static deal (no mask) hands tile t = bh T_r + i to thread block t mod SMs, round t / SMs. A (batch,
// head) whose T_r tiles all fall in one round is read by T_r SMs that start together and walk its K/V
// blocks in the same order, each block's first reads: with one stage every consumer waits for each
// block's landing, so those SMs leave each wait together and ask for the next block together, and the
// block's load waits for its DRAM fill — DRAM's latency in place of the L2's (GpuSpec dram_latency_s -
// l2_hit_latency_s, pointer-chase measurements) on the step's path. With two stages the loads run a
// step ahead and the SMs drift apart. No constant of its own. Found and checked on an H100
// (scripts/gpu/v3_kernel/one_stage_probe.py, tests/data/gpu_v3/v3_one_stage*_h100.json; docs/model.md
// "One stage at d 64: the SMs of a head in step"): one stage's speed at d 64 without a mask within
// 4.8% on all 10 probed shapes (the H100 preset, v3_one_stage_test.cpp; without the term 5 of 10
// outside 10%, up to +17%); the form (added to the step) was chosen after those runs, its figures come
// from the latency and the deal alone. Whether T_r's tiles share a round depends on bh T_r mod SMs
// only: counted over one period of SMs / gcd(T_r, SMs) (batch, head)s.
double lockstep_fill_s(const Problem& p, const Launch& l) {
  if (p.hopper.stages != 1 || !p.hopper.warp_specialize || !l.persistent || p.mask.kind != MaskKind::none) return 0;
  const std::int64_t t_r = p.tiling.t_r(), sms = std::int64_t(p.gpu.sms), bh = p.bh();
  if (t_r > sms || bh <= 0) return 0;
  const std::int64_t period = sms / std::gcd(t_r, sms);
  const auto together = [&](std::int64_t h) { return (h * t_r) % sms + t_r <= sms; };
  std::int64_t in_period = 0, in_rest = 0;
  for (std::int64_t h = 0; h < period; ++h) {
    in_period += together(h);
    if (h < bh % period) in_rest += together(h);
  }
  const double share = double((bh / period) * in_period + in_rest) / double(bh);
  return share * (p.gpu.dram_latency_s.value() - p.gpu.l2_hit_latency_s.value());
}

V3StepWork v3_step_work(const Problem& p, const Launch& l, const StepView& s) {
  const Tiling& t = p.tiling;
  V3StepWork w;
  const double groups = double(consumer_groups(p));
  const double consumer_warps = kWarpsPerGroup * groups;
  if (s.level == Level::inner) {
    const double br = double(t.b_r), bc = double(t.b_c), d = double(t.d), e = double(p.e_in);
    const double scores = br * bc, o_elems = br * d;
    w.flops = 2 * 2 * br * bc * d;  // GEMM0 S = Q K_j^T and GEMM1 O += P V_j, the whole tile
    w.ex2 = scores + kCorrEx2PerRow * br;
    const bool masked = s.cls != TileClass::full || (s.j >= 0 && t.cols(s.j) < t.b_c);
    w.fp32 = 3.5 * scores + o_elems;  // FMNMX, FFMA, FADD, F2FP / 2 per score; FMUL per O element
    const double lanes = w.fp32 + w.ex2 + (masked ? kMaskLaneOps * scores : 0.0);
    const double wgmmas = groups * kWarpsPerGroup * (d / kWgmmaK + bc / kWgmmaK);
    w.instructions = lanes / kLanes + wgmmas + consumer_warps * kWarpOverhead;
    // SS GEMM0 reads each warpgroup's 64 rows of Q_i and all of K_j; GEMM1 reads V_j (P from
    // registers, RS), or P's rows too from SRAM where P lives there, after the warpgroup stores them
    const bool p_sram = placement_of(l, Tensor::P) == Memory::sram;
    w.gemm0_flops = w.flops / 2;
    w.gemm0_smem_bytes = groups * (64 * d + bc * d) * e;
    w.smem_bytes = w.gemm0_smem_bytes + groups * bc * d * e + (p_sram ? 2 * scores * e : 0.0);
    w.barriers = p.hopper.pingpong && groups >= 2 ? 1 : 0;
  } else {
    const auto& ops = s.cost->ops;
    w.flops = double(s.cost->flops);
    w.ex2 = double(ops[int(OpKind::exp)] + ops[int(OpKind::log)] + ops[int(OpKind::div)]);
    const double all = double(std::accumulate(ops.begin(), ops.end(), std::uint64_t{0}));
    w.fp32 = all - w.ex2;
    w.instructions = all / kLanes;
  }
  w.warp_instructions = w.instructions / consumer_warps;
  return w;
}

StepWork v3_step(const Problem& p, const Launch& l, const StepView& s, double sharing) {
  const GpuSpec& g = p.gpu;
  const double sms = double(g.sms), clock = g.clock_hz.value();
  const V3StepWork v = v3_step_work(p, l, s);
  StepWork w;
  double l2 = 0, k_bytes = 0, v_bytes = 0;
  const bool persistent_producer = l.persistent && p.hopper.warp_specialize;
  for (const Action& a : s.actions) {
    if (a.op != Op::load && a.op != Op::store && a.op != Op::atomic) continue;
    const double b = double(action_cost(p, a, s.i, s.j).hbm[int(a.tensor)][int(direction(a.op))]);
    l2 += b;
    if (a.op != Op::load) continue;
    w.loads = true;
    if (a.tensor == Tensor::K) k_bytes += b;
    if (a.tensor == Tensor::V) v_bytes += b;
    w.load_s += b / (g.l2_bytes_per_s.value() / sms);
    if (s.level == Level::outer_begin && !persistent_producer) w.round_trip = true;  // Q_i starts the tile
  }
  if (s.level == Level::inner && w.loads) w.trips = 1.0 / double(p.hopper.stages);  // the ring's loads in flight
  auto& u = w.unit;
  u[int(HwUnit::tensor)] = v.flops / (g.wgmma_flops.value() / sms);
  u[int(HwUnit::sfu)] = v.ex2 / (g.ex2_per_s.value() / sms);
  u[int(HwUnit::fp32)] = v.fp32 / (g.fp32_fma_per_s.value() / sms);
  u[int(HwUnit::smem)] = v.smem_bytes / (g.smem_bytes_per_s.value() / sms);
  u[int(HwUnit::l2)] = l2 / (g.l2_bytes_per_s.value() / sms);
  u[int(HwUnit::issue)] = v.instructions / (kSchedulers * clock);
  w.warps = double(launch_warps(p, l));
  // ping-pong's named barrier joins two consumer warpgroups (8 warps)
  u[int(HwUnit::barrier)] = v.barriers * g.barrier_cycles(8) / clock;
  w.warp_issue_s = v.warp_instructions / clock;
  w.sharing = sharing;
  // the consumer warpgroups as the overlap rule's streams (StepWork::groups; v3_work.hpp)
  const double groups = double(consumer_groups(p));
  w.groups = phased_groups(p);
  w.groups_apart = p.hopper.pingpong && groups >= 2;
  w.group_streams = p.hopper.intra_overlap ? 1.0 + 0.5 : 1.0;  // GEMM1: half the tile's wgmma FLOPs
  if (s.level == Level::inner) w.chain_s = std::max(consumer_round(p, v), one_stage_cycle(p, v, k_bytes, v_bytes));
  if (s.level == Level::inner && w.loads) w.chain_s += lockstep_fill_s(p, l);
  return w;
}

}  // namespace flashlab::time_detail
