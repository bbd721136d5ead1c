// time_model.cpp — predicted time per launch from the walk's work per step (time_model.hpp).
#include "flashlab/time/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "flashlab/executor/action_cost.hpp"
#include "block_deal.hpp"
#include "launch_blocks.hpp"
#include "round_trips.hpp"
#include "smem_wavefronts.hpp"
#include "v3_work.hpp"
#include "sm_facts.hpp"
#include "flashlab/memory/compiled_registers.hpp"
#include "flashlab/executor/l2_model.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab {
namespace {

using time_detail::BlockSums;
using time_detail::deal_blocks;
using time_detail::loaded_params;
using time_detail::sum_blocks;
using time_detail::kLanes;
using time_detail::kSchedulers;
using time_detail::row_round_trips;
using time_detail::stores;
using time_detail::streamed_load_trips;

constexpr int kStandardBarriers = 2;  // per K/V block of standard attention's kernels: load, compute

// The row launch (standard attention's softmax, kernels/src/standard.cu fl_standard_softmax: one
// thread block of kRowWarps warps per query row, docs/model.md "Time model", "The row launch"):
constexpr int kRowBarriers = 4;              // two block-wide reductions (max, sum), two barriers each
constexpr double kHmmaFlops = 2.0 * 16 * 8 * 16;  // one mma.sync m16n8k16
constexpr double kLdsmBytes = 512;           // one ldmatrix.x4 (a warp's 32 x 16 bytes)

// The matmul rate of p's dtype on its GPU, FLOP/s: the tensor cores' for fp16 and bf16, FP32 FMA
// (2 FLOPs each) for fp32.
double peak_flops(const Problem& p) {
  const GpuSpec& g = p.gpu;
  return p.dtype == Dtype::bf16 ? g.mma_bf16_flops.value()
         : p.dtype == Dtype::fp16 ? g.mma_f16_flops.value() : 2.0 * g.fp32_fma_per_s.value();
}

/// A compiled kernel's tile loop: instructions per warp per iteration (scripts/gpu/sass_loops.py).
struct TileLoop {
  std::string_view kernel;
  Dtype dtype;
  std::int64_t d, b_r, b_c, warps, full, partial;
};
constexpr TileLoop kTileLoops[] = {
#include "sass_loops_table.inc"
};

const TileLoop* tile_loop(const Problem& p, const Launch& l) {
  const std::string_view k = compiled_kernel(p, l);
  if (k.empty()) return nullptr;
  for (const TileLoop& x : kTileLoops)
    if (x.kernel == k && x.dtype == p.dtype && x.d == p.tiling.d && x.b_r == p.tiling.b_r && x.b_c == p.tiling.b_c &&
        x.warps == p.warps)
      return &x;
  return nullptr;
}
bool whole_step(const StepView& s) {
  return std::any_of(s.actions.begin(), s.actions.end(), [](const Action& a) {
    return (a.op == Op::load || a.op == Op::store) && a.region == Region::whole;
  });
}

/// Rows of one of FA2's combine thread blocks (flash_fwd_launch_template.h, the split-KV dispatch:
/// kBlockM = 4 where d is a multiple of 128, 8 where of 64, else 16, over the flattened batch x head x
/// query rows); 0 for any other launch. The schedule's combine steps take a Q block of B_r rows: the
/// time model deals each as ceil(rows / kBlockM) blocks with their share of its work.
std::int64_t fa2_combine_rows(const Problem& p, const Launch& l) {
  if (p.kernel != Kernel::fa2 || l.name != "flash_combine") return 0;
  const std::int64_t d = p.tiling.d;
  return d % 128 == 0 ? 4 : d % 64 == 0 ? 8 : 16;
}

/// Standard attention's S = QK^T kernel issues K_{j+1}'s copy, then stores S_ij: written from the
/// registers into SRAM, a barrier, read back and sent to the L2 (kernels/src/standard.cu
/// fl_standard_scores, store_s_tile). That phase's time for `bytes` of S_ij (one block's pass) by a
/// block of `warps` warps, seconds: the bytes twice at the SM's shared-memory rate, once at its share
/// of the L2 bandwidth, and a barrier.
double s_store_phase_s(const GpuSpec& g, double bytes, int warps) {
  const double sms = double(g.sms);
  return bytes * (2.0 / (g.smem_bytes_per_s.value() / sms) + 1.0 / (g.l2_bytes_per_s.value() / sms)) +
         g.barrier_cycles(warps) / g.clock_hz.value();
}

bool kv_sequential(const Launch& l) {
  return std::any_of(l.loops.begin(), l.loops.end(), [](const Loop& x) { return x.dim == Dim::kv_block && !x.thread_block; });
}




/// Launch x's DRAM bound (0 without the L2 model), its DRAM bytes written into lt: every store costs
/// the DRAM's write bandwidth within the launch, also those the L2 still holds dirty at its end
/// (their write-back queues behind the launch's own traffic).
double dram_bound(const GpuSpec& g, const Counters& k, std::size_t x, LaunchTime& lt) {
  if (!k.l2) return 0;
  lt.dram_read_bytes = total(k.launches[x].dram, Dir::read);
  lt.dram_write_bytes = total(k.launches[x].dram, Dir::write);
  const double stored = double(lt.dram_write_bytes + total(k.launches[x].l2_dirty_at_end, Dir::write));
  return double(lt.dram_read_bytes) / g.dram_read_bytes_per_s.value() + stored / g.dram_write_bytes_per_s();
}

}  // namespace


// Fitted by tools/fit_time_model on the training rows of tests/data/gpu_time/h200.json (its output
// names these five numbers; tests/sim/time/time_dataset_test.cpp checks that one round of the fit's
// search from them moves none).
const TimeParams kFittedTimeParams{.overlap = 0.96, .warp_stream = 0.72, .latency_s = 1.66e-6, .phase_floor = 0.46, .issue_interval = 3.8};

std::string_view to_string(HwUnit u) {
  static constexpr std::string_view names[] = {"tensor", "sfu", "fp32", "smem", "barrier", "l2", "issue", "latency", "dram", "launch"};
  return names[int(u)];
}

BlockTimer::BlockTimer(const Problem& p, const Schedule& s) : p_(p), s_(&s) {
  for (const Launch& l : s.launches) {
    const Occupancy o = launch_occupancy(p, l);
    occ_.push_back(o);
    // a persistent launch runs one thread block per SM (its grid is the GPU's SM count)
    const std::int64_t grid = l.persistent ? std::int64_t(p.gpu.sms) : blocks_per_head(l, p) * p.bh();
    sharing_.push_back(std::max<std::int64_t>(1, std::min(o.blocks_per_sm, (grid + p.gpu.sms - 1) / p.gpu.sms)));
    block_steps_.emplace_back(std::size_t(blocks_per_head(l, p)));
    walks_tiles_.push_back(!walked_loops(l).empty());
    roles_.push_back(has_warp_roles(Schedule{{l}}));
  }
  works_.assign(s.launches.size(), {});
}

StepWork BlockTimer::step_work(const StepView& s, std::size_t k_launch, double fraction) const {
  const Launch& l = s_->launches[k_launch];
  const Tiling& t = p_.tiling;
  const Cost& c = *s.cost;
  const GpuSpec& g = p_.gpu;
  const double sms = double(g.sms);
  const double mma = peak_flops(p_);
  const bool tiles = walks_tiles_[k_launch];
  const bool row = row_launch(l);
  // V3: the steps as its kernel does them (wgmma, the ring, the consumer warpgroups: v3_work.hpp)
  if (roles_[k_launch]) return time_detail::v3_step(p_, l, s, double(sharing_[k_launch]));

  // Work of the step (one block's share of it when fraction < 1).
  double flops = double(c.flops), sfu = 0, fp32 = 0, smem = 0, barriers = 0;
  std::array<std::uint64_t, kOpKindCount> ops = c.ops;
  if (tiles && s.level != Level::prologue) {
    // the warp model: the step's operations as the warps do them, plus split-K's reductions
    const std::vector<WarpWork> ww = step_warp_work(p_, s);
    ops = {};
    for (const WarpWork& w : ww) {
      for (int o = 0; o < kOpKindCount; ++o) ops[std::size_t(o)] += w.ops[std::size_t(o)];
      smem += double(w.smem_write + w.smem_read);
      barriers = std::max(barriers, double(w.barriers));
    }
  } else if (!tiles) {
    barriers = row ? kRowBarriers : kStandardBarriers;
  }
  sfu = double(ops[int(OpKind::exp)] + ops[int(OpKind::log)] + ops[int(OpKind::div)]);
  fp32 = double(ops[int(OpKind::max)] + ops[int(OpKind::add)] + ops[int(OpKind::sub)] + ops[int(OpKind::mul)] +
                ops[int(OpKind::div)]);
  double l2 = 0;
  bool waits_at_start = false;  // a round trip the step cannot overlap with its own work
  StepWork w;
  for (const Action& a : s.actions) {
    if (a.op != Op::load && a.op != Op::store && a.op != Op::atomic) continue;
    if (a.op == Op::load) {
      w.loads = true;
      const bool starts = s.level == Level::prologue || s.level == Level::outer_begin;
      const bool early = !starts && stores(l, a.tensor) && s.level == Level::inner && !time_detail::grad_tiles(l);
      waits_at_start = waits_at_start || starts || (stores(l, a.tensor) && !early);
      w.round_trip = w.round_trip || starts || stores(l, a.tensor);
    }
    const std::uint64_t b = action_cost(p_, a, s.i, s.j).hbm[int(a.tensor)][int(direction(a.op))];
    l2 += double(b);
    if (a.op == Op::load) w.load_s += fraction * double(b) / (g.l2_bytes_per_s.value() / sms);
    if (a.op == Op::store && a.tensor == Tensor::S && !tiles && kv_sequential(l))  // while K_{j+1} is in flight
      w.trip_hidden_s = s_store_phase_s(g, fraction * double(b), int(launch_warps(p_, l)));
  }
  smem = time_detail::step_smem_bytes(p_, l, s, tiles, smem);
  // instruction issue: the compiled tile loop's, or an estimate from the step's work
  double instructions = (double(std::accumulate(ops.begin(), ops.end(), std::uint64_t{0}))) / kLanes + flops / kHmmaFlops +
                        smem / kLdsmBytes;
  if (const TileLoop* loop = tiles && s.level == Level::inner ? tile_loop(p_, l) : nullptr) {
    const bool whole = s.cls == TileClass::full && s.i >= 0 && s.j >= 0 && t.rows(s.i) == t.b_r && t.cols(s.j) == t.b_c;
    instructions = double(p_.warps) * double(whole ? loop->full : loop->partial);
    w.issue_from_sass = true;
  } else if (const TileLoop* kv_loop = !tiles && whole_step(s) && kv_sequential(l) ? tile_loop(p_, l) : nullptr) {
    // standard attention's tile kernels: a block's share of the step is one pass of their K/V loop
    // (fraction = 1 / (blocks x T_c)), its instructions the loop's full tile
    instructions = double(p_.warps) * double(kv_loop->full) / fraction;
    w.issue_from_sass = true;
  }
  auto& u = w.unit;
  u[int(HwUnit::issue)] = fraction * instructions / (kSchedulers * g.clock_hz.value());
  w.warp_issue_s = fraction * instructions / double(launch_warps(p_, l)) / g.clock_hz.value();
  u[int(HwUnit::tensor)] = fraction * flops / (mma / sms);
  u[int(HwUnit::sfu)] = fraction * sfu / (g.ex2_per_s.value() / sms);
  u[int(HwUnit::fp32)] = fraction * fp32 / (g.fp32_fma_per_s.value() / sms);
  u[int(HwUnit::smem)] = fraction * smem / (g.smem_bytes_per_s.value() / sms);
  u[int(HwUnit::l2)] = fraction * l2 / (g.l2_bytes_per_s.value() / sms);
  w.warps = launch_warps(p_, l);
  u[int(HwUnit::barrier)] = barriers * g.barrier_cycles(int(w.warps)) / g.clock_hz.value();
  w.sharing = double(sharing_[k_launch]);
  w.no_overlap = row;
  w.split_k = tiles && s.level == Level::inner && p_.split == WarpSplit::split_k;
  if (row) w.trips = row_round_trips(p_, l), w.round_trip = true;
  else if (const double trips = streamed_load_trips(p_, l, s, fraction); trips > 0) w.trips = trips, w.round_trip = true;
  else w.early_trip = w.round_trip && !waits_at_start;
  return w;
}

StepTime step_time(const StepWork& w, const TimeParams& params) {
  StepTime st;
  double sum = 0, top = 0;
  int top_unit = 0;
  // fp32's time is inside issue's (one warp-instruction per cycle per scheduler either way). Where
  // the units do not overlap, each one's time already holds the issue of its instructions: the step
  // takes their sum, or its issue time when that is longer.
  std::array<double, kHwUnitCount> u = w.unit;
  if (w.no_overlap) {
    double pipes = 0;
    for (int x = 0; x < int(HwUnit::issue); ++x) pipes += u[std::size_t(x)];
    u[int(HwUnit::issue)] = std::max(0.0, u[int(HwUnit::issue)] - pipes);
  } else {
    u[int(HwUnit::issue)] = std::max(u[int(HwUnit::issue)], u[int(HwUnit::fp32)]);
    u[int(HwUnit::fp32)] = 0;
  }
  // prefetched loads (cp.async a step ahead) move through the L2 while the SM computes: their
  // transfer bounds the step (the wait below), it does not queue behind the other units
  const bool prefetched = w.loads && (!w.round_trip || w.early_trip) && !w.no_overlap;
  const double l2 = u[int(HwUnit::l2)];
  if (prefetched) u[int(HwUnit::l2)] = 0;
  for (int x = 0; x <= int(HwUnit::issue); ++x) {
    sum += u[std::size_t(x)];
    if (x != int(HwUnit::barrier) && u[std::size_t(x)] > top) top = u[std::size_t(x)], top_unit = x;
  }
  // what the step reports: each unit alone, where the units do not overlap the time they add up to
  st.unit = w.no_overlap ? u : w.unit;
  const double k = w.sharing;
  const double streams =
      w.groups > 0 ? k * w.group_streams * (w.groups_apart ? w.groups : 1 + params.warp_stream * (w.groups - 1))
                   : k + params.warp_stream * (w.warps / kSchedulers - 1);
  double rho = std::min(1.0, params.overlap / streams);
  if (w.split_k) rho = std::max(rho, params.phase_floor);
  const double alone = top + rho * (sum - top);  // the step of one block with the SM to itself
  // ... unless its warps' own dependences make it longer: the latency floor; where the units do not
  // overlap within a block (phases between barriers), the block's chain is their sum, and only the
  // k blocks sharing the SM overlap one another's
  const double floor = w.no_overlap ? sum : std::max({alone, w.warp_issue_s * params.issue_interval, w.chain_s});
  double time = std::max(k * alone, floor);
  const double wait = w.trips * params.latency_s + w.load_s;
  if (w.early_trip) time = std::max({time, wait, w.trips * params.latency_s + k * l2});  // issued at the step's start
  else if (w.round_trip) time = std::max(time, floor + std::max(0.0, wait - w.trip_hidden_s));
  else if (prefetched) time = std::max(time, w.trips * params.latency_s + k * l2);
  else if (w.loads) time = std::max(time, wait);
  // the units' part of the step (a row launch's: at least its block's chain), the rest the memory
  // latency's
  const double units = w.no_overlap ? std::max(k * alone, floor) : k * alone;
  const double exposed = time - units;
  st.time = time;
  const double stretch = alone > 0 ? units / (k * alone) : 1.0;
  for (int x = 0; x <= int(HwUnit::issue); ++x) st.share[std::size_t(x)] = stretch * k * rho * u[std::size_t(x)];
  st.share[std::size_t(top_unit)] += stretch * k * (1 - rho) * top;
  st.share[int(HwUnit::latency)] = exposed;
  st.unit[int(HwUnit::latency)] = exposed;
  return st;
}

int BlockTimer::work_id(const StepView& s) {
  const Tiling& t = p_.tiling;
  const auto key = std::make_tuple(s.launch, int(s.level), s.i >= 0 ? t.rows(s.i) : -1, s.j >= 0 ? t.cols(s.j) : -1,
                                   int(s.cls), static_cast<const void*>(s.actions.data()));
  if (last_id_ >= 0 && last_key_ == key) return last_id_;  // consecutive steps are mostly alike
  auto it = ids_.find(key);
  if (it == ids_.end()) {
    works_[s.launch].push_back(step_work(s, s.launch, 1.0));
    it = ids_.emplace(key, int(works_[s.launch].size()) - 1).first;
  }
  last_key_ = key;
  last_id_ = it->second;
  return it->second;
}

void BlockTimer::add(std::size_t launch, std::size_t block, int id, double count) {
  auto& steps = block_steps_[launch];
  if (steps.size() <= block) steps.resize(block + 1);
  for (auto& [x, n] : steps[block])
    if (x == id) {
      n += count;
      return;
    }
  steps[block].emplace_back(id, count);
}

void BlockTimer::on_step(const StepView& s) {
  if (s.skip || s.actions.empty()) return;
  const std::size_t k = s.launch;
  const Launch& l = s_->launches[k];
  if (!walks_tiles_[k] && whole_step(s)) {
    // standard attention: the step is every thread block's work; each block takes its share in
    // one step per K/V block (the kernels' loop) or in one step.
    const std::size_t blocks = block_steps_[k].size();
    const double subs = kv_sequential(l) ? double(p_.tiling.t_c()) : 1.0;
    works_[k].push_back(step_work(s, k, 1.0 / (double(blocks) * subs)));
    const int id = int(works_[k].size()) - 1;
    for (std::size_t b = 0; b < blocks; ++b) add(k, b, id, subs);
    return;
  }
  if (const std::int64_t rows = fa2_combine_rows(p_, l); rows > 0 && s.i >= 0) {
    const std::int64_t per_q_block = (p_.tiling.b_r + rows - 1) / rows, m = (p_.tiling.rows(s.i) + rows - 1) / rows;
    works_[k].push_back(step_work(s, k, 1.0 / double(m)));
    const int id = int(works_[k].size()) - 1;
    for (std::int64_t b = 0; b < m; ++b) add(k, s.dispatch * std::size_t(per_q_block) + std::size_t(b), id, 1.0);
    return;
  }
  if (roles_[k]) {  // V3: a tile's steps by its Q block (deal_persistent orders them as the kernel does)
    add(k, s.i >= 0 ? std::size_t(s.i) : s.dispatch, work_id(s), 1.0);
    return;
  }
  int id;
  if (s.level == Level::prologue) {
    works_[k].push_back(step_work(s, k, 1.0));
    id = int(works_[k].size()) - 1;
  } else {
    id = work_id(s);
  }
  add(k, s.dispatch, id, 1.0);
}

TimePrediction predict_time(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k,
                            const TimeParams& params) {
  TimePrediction out;
  const GpuSpec& g = p.gpu;
  out.measured = g.measured();
  out.rates_source = g.rates_source();
  const double bh = double(p.bh()), sms = double(p.gpu.sms);
  double longest = -1;
  for (std::size_t x = 0; x < s.launches.size(); ++x) {
    LaunchTime lt;
    lt.name = s.launches[x].name;
    lt.occupancy = b.occ_[x];
    lt.sharing = b.sharing_[x];
    for (const StepWork& w : b.works_[x]) lt.issue_from_sass = lt.issue_from_sass || w.issue_from_sass;
    // lambda, the queueing of a loaded memory system, in proportion to the launch's load: the share
    // of its time (without lambda) that its L2 traffic keeps the L2 busy, all SMs counted (a grid
    // that leaves SMs idle, or a last wave of few blocks, loads it less)
    const Launch& l = s.launches[x];
    const TimeParams at = loaded_params(p, l, b.works_[x], b.block_steps_[x], b.occ_[x].slots, k, x, params);
    const BlockSums sums = sum_blocks(b.works_[x], b.block_steps_[x], at);
    const std::vector<double>& dur = sums.dur;
    const std::array<double, kHwUnitCount>&unit_sum = sums.unit, &share_sum = sums.share;
    const std::int64_t per_head = std::int64_t(dur.size());
    const std::int64_t grid = l.persistent ? std::int64_t(p.gpu.sms) : per_head * p.bh();
    lt.grid = grid;
    const std::int64_t slots = lt.occupancy.slots;
    lt.waves = (grid + slots - 1) / slots;
    const auto [makespan, busy] = deal_blocks(p, l, b.works_[x], b.block_steps_[x], dur, slots, at);
    // the SMs' time doing work: k blocks share an SM (each block's time holds the sharing), and an
    // SM the grid leaves without a block counts as idle
    lt.sm_busy = makespan > 0 ? busy / (double(p.gpu.sms) * double(lt.sharing) * makespan) : 0;
    lt.blocks_s = makespan;
    for (int u = 0; u < kHwUnitCount; ++u) lt.unit_s[std::size_t(u)] = unit_sum[std::size_t(u)] * bh / sms;
    double total_share = 0;
    for (int u = 0; u < kHwUnitCount; ++u) total_share += share_sum[std::size_t(u)];
    for (int u = 0; u < kHwUnitCount; ++u)
      lt.share[std::size_t(u)] = total_share > 0 ? share_sum[std::size_t(u)] / total_share : 0;
    // The DRAM bound (with the L2 model) and the launch overhead.
    const double dram = dram_bound(g, k, x, lt);
    lt.unit_s[int(HwUnit::dram)] = dram;
    lt.unit_s[int(HwUnit::launch)] = g.launch_s.value();
    lt.time_s = std::max(makespan, dram) + g.launch_s.value();
    int top = 0;
    for (int u = 0; u < kHwUnitCount; ++u)
      if (lt.share[std::size_t(u)] > lt.share[std::size_t(top)]) top = u;
    lt.bound = HwUnit(top);
    if (dram > makespan) lt.bound = HwUnit::dram;
    if (g.launch_s.value() > std::max(makespan, dram)) lt.bound = HwUnit::launch;
    out.time_s += lt.time_s;
    out.dram_read_bytes += lt.dram_read_bytes;
    out.dram_write_bytes += lt.dram_write_bytes;
    if (lt.time_s > longest) longest = lt.time_s, out.bound = lt.bound;
    out.launches.push_back(std::move(lt));
  }
  out.wgmma = has_warp_roles(s);  // V3's GEMMs are wgmma's (v3_work.hpp)
  const double mma = out.wgmma ? g.wgmma_flops.value() : peak_flops(p);
  out.tflops = out.time_s > 0 ? double(k.cost.flops) / out.time_s / 1e12 : 0;
  out.peak_fraction = out.tflops * 1e12 / mma;
  return out;
}

Modelled model(const Problem& p, const Schedule& s, StepObserver* also) {
  Executor e(p, s);
  // the levels the time model reads: the sector bytes and the L2 model's DRAM bytes
  SectorCounter sectors(p, e.schedule());
  L2Model l2(p, e.schedule());
  e.add_level(&sectors);
  e.add_level(&l2);
  BlockTimer timer(p, e.schedule());
  Modelled m;
  e.add_observer(&timer);
  if (also) e.add_observer(also);
  e.run();
  m.counters = e.counters();
  m.time = predict_time(p, e.schedule(), timer, m.counters);
  return m;
}

Modelled model(const Problem& p, StepObserver* also) { return model(p, make_schedule(p), also); }


}  // namespace flashlab
