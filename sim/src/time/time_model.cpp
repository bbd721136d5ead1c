// time_model.cpp — predicted time per launch from the walk's work per step (time_model.hpp).
#include "flashlab/time/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/memory/l2_model.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab {
namespace {

constexpr int kStandardBarriers = 2;  // per K/V block of standard attention's kernels: load, compute

// The two constants of the time model (docs/model.md "Time model", derived from the committed
// measurements tests/data/gpu_timing/h200.json, kernels at bef22c9, by the rules given there):
// kOverlapWarps: with w warps resident on an SM its units overlap by 1 - min(1, kOverlapWarps / w);
// the integer from 4 to 8 that gives the V2 rows the smallest median error (4: 9.1%, 5: 8.2%,
// 6: 17.6%, 7: 27.7%, 8: 38.9%).
constexpr double kOverlapWarps = 5;
// kExposedLatency: per step of a block on an SM with fewer than kOverlapWarps warps, the wait for
// the loads it needs at its start; the median over the V1 rows with one block per SM of
// (measured - predicted without it) / steps per block: 359 ns (648 ns on the kernels before bef22c9).
constexpr double kExposedLatency = 0.36e-6;
// kFa2Time: FA2's kernel (--kernel fa2) is PyTorch's code, not this project's, and the two
// constants above come from this project's kernels. The thread blocks' time of a --kernel fa2
// launch that walks tiles (not split-KV's combine) is this fraction of the model's: the median over
// the ten cases of the same-run comparison in tests/data/gpu_ablation/ablation.json ("fa2": fp16
// and bf16, batch 4 x 16 heads, N = 4096, d = 64 and 128, no mask and causal; batch 1, N = 16384,
// d = 128 causal) of PyTorch's measured FA2 time over the model's time for FA2's schedule at
// this fraction 1 (0.72-0.91, median 0.794). Checked on other measurements: the torch rows of
// tests/data/gpu_timing/h200.json and the launches of tests/data/pytorch_fa2/fa2_launches.json.
constexpr double kFa2Time = 0.794;

// The row launch (standard attention's softmax, kernels/src/standard.cu fl_standard_softmax: one
// thread block per query row, docs/model.md "Time model", "The row launch"):
constexpr int kRowWarps = 4;                 // kSoftmaxThreads = 128 threads
constexpr int kRowBarriers = 4;              // two block-wide reductions (max, sum), two barriers each
constexpr double kRowInFlight = 128.0 * 16;  // bytes of loads a row block has in flight: one 16-byte
                                             // load per thread (`#pragma unroll 1` in load_row)
// kRowLatency: the time of one such round trip; the median over the row launches whose SMs hold
// one block (k = 1) of (measured launch_ms - launch overhead - waves x the block's unit times) /
// (waves x round trips per block): 574 ns (the one such launch measured, N = 32768, 1 head).
constexpr double kRowLatency = 0.574e-6;

/// Whether launch l runs one thread block per query row (a q_row grid dimension).
bool row_launch(const Launch& l) {
  return std::any_of(l.loops.begin(), l.loops.end(), [](const Loop& x) { return x.thread_block && x.dim == Dim::q_row; });
}

/// The N_q x N_k tensors a row launch loads (S for the softmax; P and dP for the backward's dS).
std::int64_t row_tensors_loaded(const Launch& l) {
  std::int64_t n = 0;
  for (const std::vector<Action>& step : l.prologue)
    for (const Action& a : step)
      if (a.op == Op::load && a.region == Region::whole &&
          (a.tensor == Tensor::S || a.tensor == Tensor::P || a.tensor == Tensor::dP || a.tensor == Tensor::dS))
        ++n;
  return n;
}

/// Bytes of SRAM one block of a row launch holds: each loaded row as fp32, N_k rounded up to 8
/// (16-byte chunks), and one fp32 per warp for the block reductions (standard.cu's softmax_smem).
std::int64_t row_sram_bytes(const Problem& p, const Launch& l) {
  return row_tensors_loaded(l) * ((p.tiling.n_k + 7) / 8 * 8) * 4 + kRowWarps * 4;
}

/// Round trips of kRowInFlight bytes a row block waits for: its loaded rows at the input type.
double row_round_trips(const Problem& p, const Launch& l) {
  const double row = double(p.tiling.n_k) * double(p.e_in);
  return double(row_tensors_loaded(l)) * std::ceil(row / kRowInFlight);
}

bool whole_step(const StepView& s) {
  return std::any_of(s.actions.begin(), s.actions.end(), [](const Action& a) {
    return (a.op == Op::load || a.op == Op::store) && a.region == Region::whole;
  });
}

bool kv_sequential(const Launch& l) {
  return std::any_of(l.loops.begin(), l.loops.end(), [](const Loop& x) { return x.dim == Dim::kv_block && !x.thread_block; });
}

// Shared-memory bytes the warps read as matmul operands for equation `eq` on an r x c tile:
// split-Q warps each read all of K_j (S = QK^T) and V_j (O += PV) and their own rows of Q_i (and of
// P when P is in SRAM); split-K warps each read all of Q_i, their columns of K_j and V_j, and
// their columns of P (in SRAM).
double operand_bytes(const Problem& p, const Launch& l, Eq eq, double r, double c, bool split_k) {
  const double d = double(p.tiling.d), e = double(p.e_in), w = double(p.warps);
  const bool p_in_sram = placement_of(l, Tensor::P) == Memory::sram || placement_of(l, Tensor::S) == Memory::sram;
  switch (eq) {
    case Eq::scores: return (split_k ? w * r * d + c * d : r * d + w * c * d) * e;
    case Eq::output_v1: case Eq::output_v2: case Eq::output_dense:
      return (split_k ? c * d : w * c * d) * e + (p_in_sram ? r * c * e : 0.0);
    default: return 0;
  }
}

/// Whether launch l walks tiles of the backward (its body computes dK_j += dS_ij^T Q_i): its
/// shared-memory traffic is grad_operand_bytes' and its units do not overlap.
bool grad_tiles(const Launch& l) {
  return std::any_of(l.body.begin(), l.body.end(), [](const Action& a) { return a.op == Op::compute && a.eq == Eq::grad_k; });
}

// Shared-memory bytes the warps move for backward equation `eq` on an r x c tile, as the backward
// kernels compute a tile (kernels/src/common/grad_tile.cuh, V1's and V2's alike): the warps split
// the c keys for S^T = K_w Q_i^T and dP^T = V_w dO_i^T (each reads its keys of K_j or V_j and all
// of Q_i or dO_i), dV_w += P^T dO_i and dK_w += dS^T Q_i (P^T, dS^T in registers; all of dO_i or
// Q_i read by every warp); dS_ij goes through SRAM (grad_s writes it, grad_q reads it back) and
// dQ_i = dS_ij K_j is split by rows (each warp reads its rows of dS_ij and all of K_j).
double grad_operand_bytes(const Problem& p, Eq eq, double r, double c) {
  const double d = double(p.tiling.d), e = double(p.e_in), w = double(p.warps);
  switch (eq) {
    case Eq::scores: case Eq::grad_p: return (c * d + w * r * d) * e;
    case Eq::grad_v: case Eq::grad_k: return w * r * d * e;
    case Eq::grad_s: return r * c * e;
    case Eq::grad_q: return (r * c + w * c * d) * e;
    default: return 0;
  }
}

}  // namespace

std::string_view to_string(Unit u) {
  static constexpr std::string_view names[] = {"tensor", "sfu", "fp32", "smem", "barrier", "l2", "latency", "dram", "launch"};
  return names[int(u)];
}

BlockTimer::BlockTimer(const Problem& p, const Schedule& s) : p_(p), s_(&s), c_(&gpu_ceilings(p.gpu.name)) {
  const Tiling& t = p.tiling;
  Problem row_p = p;
  row_p.warps = kRowWarps;
  for (const Launch& l : s.launches) {
    const Occupancy o = row_launch(l) ? occupancy(row_p, l, row_sram_bytes(p, l))
                                      : occupancy(p, l, sram_bytes(l, std::min(t.b_r, t.n_q), std::min(t.b_c, t.n_k), t.d, p.e_in));
    occ_.push_back(o);
    const std::int64_t grid = blocks_per_head(l, p) * p.bh();
    sharing_.push_back(std::max<std::int64_t>(1, std::min(o.blocks_per_sm, (grid + p.gpu.sms - 1) / p.gpu.sms)));
    block_s_.emplace_back(std::size_t(blocks_per_head(l, p)), 0.0);
    walks_tiles_.push_back(!walked_loops(l).empty());
  }
  unit_s_.assign(s.launches.size(), {});
  share_s_.assign(s.launches.size(), {});
}

BlockTimer::StepTime BlockTimer::step_time(const StepView& s, std::size_t k_launch, double fraction) const {
  const Launch& l = s_->launches[k_launch];
  const Tiling& t = p_.tiling;
  const Cost& c = *s.cost;
  const double sms = double(p_.gpu.sms);
  const double mma = p_.dtype == Dtype::bf16 ? c_->mma_bf16_flops
                     : p_.dtype == Dtype::fp16 ? c_->mma_f16_flops : 2.0 * c_->fp32_fma_per_s;
  const bool tiles = walks_tiles_[k_launch];
  const bool split_k = tiles && p_.split == WarpSplit::split_k;

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
    barriers = row_launch(l) ? kRowBarriers : kStandardBarriers;
  }
  sfu = double(ops[int(OpKind::exp)] + ops[int(OpKind::log)] + ops[int(OpKind::div)]);
  fp32 = double(ops[int(OpKind::max)] + ops[int(OpKind::add)] + ops[int(OpKind::sub)] + ops[int(OpKind::mul)] +
                ops[int(OpKind::div)]);
  double l2 = 0;
  bool has_loads = false;
  for (const Action& a : s.actions) {
    if (a.op == Op::compute) {
      const Extent x = action_extent(p_, a, s.i, s.j);
      if (tiles && grad_tiles(l)) {
        smem += grad_operand_bytes(p_, a.eq, double(x.rows), double(x.cols));
      } else if (tiles || s.i >= 0) {
        smem += operand_bytes(p_, l, a.eq, double(x.rows), double(x.cols), split_k);
      } else {  // a whole-matrix step: its B_r x B_c tiles
        smem += double(t.t_r() * t.t_c()) * operand_bytes(p_, l, a.eq, double(t.b_r), double(t.b_c), false);
      }
      continue;
    }
    if (a.op != Op::load && a.op != Op::store && a.op != Op::atomic) continue;
    has_loads = has_loads || a.op == Op::load;
    const std::uint64_t b = action_cost(p_, a, s.i, s.j).hbm[int(a.tensor)][int(direction(a.op))];
    l2 += double(b);
    if (placement_of(l, a.tensor) == Memory::sram) smem += double(b);
  }
  StepTime st;
  auto& u = st.unit;
  u[int(Unit::tensor)] = fraction * flops / (mma / sms);
  u[int(Unit::sfu)] = fraction * sfu / (c_->ex2_per_s / sms);
  u[int(Unit::fp32)] = fraction * fp32 / (c_->fp32_fma_per_s / sms);
  u[int(Unit::smem)] = fraction * smem / (c_->smem_bytes_per_s / sms);
  u[int(Unit::l2)] = fraction * l2 / (c_->l2_bytes_per_s / sms);
  const bool row = row_launch(l);
  const int warps_per_block = row ? kRowWarps : p_.warps;
  u[int(Unit::barrier)] = barriers * c_->barrier_cycles(warps_per_block) / c_->clock_hz;
  // The units of one SM overlap as far as its resident warps hide each other's latency
  // (docs/model.md "Time model"): with w warps on the SM, a step takes the largest unit time plus
  // a fraction rho = min(1, kOverlapWarps / w) of the others; k blocks sharing the SM each get
  // 1/k of it. Below kOverlapWarps warps the loads a step waits for are exposed as well. A row
  // block's units do not overlap (rho = 1) and it waits for each of its round trips of
  // kRowInFlight bytes (docs/model.md "The row launch"); nor do a backward tile's (rho = 1: its
  // warps exchange dS_ij through SRAM at a barrier inside every tile, docs/model.md "The
  // backward's tile").
  double sum = 0, top = 0;
  int top_unit = 0;
  for (int x = 0; x <= int(Unit::l2); ++x) {
    sum += u[std::size_t(x)];
    if (x != int(Unit::barrier) && u[std::size_t(x)] > top) top = u[std::size_t(x)], top_unit = x;
  }
  const double k = double(sharing_[k_launch]), warps = k * double(warps_per_block);
  const double rho = row || grad_tiles(l) ? 1.0 : std::min(1.0, kOverlapWarps / warps);
  double exposed = 0;
  if (row) exposed = row_round_trips(p_, l) * kRowLatency;
  else if (warps < kOverlapWarps && has_loads) exposed = kExposedLatency;
  st.time = k * (top + rho * (sum - top)) + exposed;
  for (int x = 0; x <= int(Unit::l2); ++x) st.share[std::size_t(x)] = k * rho * u[std::size_t(x)];
  st.share[std::size_t(top_unit)] += k * (1 - rho) * top;
  st.share[int(Unit::latency)] = exposed;
  st.unit[int(Unit::latency)] = exposed;
  return st;
}

const BlockTimer::StepTime& BlockTimer::memo(const StepView& s) {
  const Tiling& t = p_.tiling;
  const auto key = std::make_tuple(s.launch, int(s.level), s.i >= 0 ? t.rows(s.i) : -1, s.j >= 0 ? t.cols(s.j) : -1,
                                   int(s.cls), static_cast<const void*>(s.actions.data()));
  if (last_ && last_key_ == key) return *last_;  // consecutive steps are mostly alike
  auto it = memo_.find(key);
  if (it == memo_.end()) it = memo_.emplace(key, step_time(s, s.launch, 1.0)).first;
  last_key_ = key;
  last_ = &it->second;
  return it->second;
}

void BlockTimer::on_step(const StepView& s) {
  if (s.skip || s.actions.empty()) return;
  const std::size_t k = s.launch;
  const Launch& l = s_->launches[k];
  auto account = [&](const StepTime& st, double times) {
    for (int x = 0; x < kUnitCount; ++x) {
      unit_s_[k][std::size_t(x)] += times * st.unit[std::size_t(x)];
      share_s_[k][std::size_t(x)] += times * st.share[std::size_t(x)];
    }
  };
  if (!walks_tiles_[k] && whole_step(s)) {
    // standard attention: the step is every thread block's work; each block takes its share in
    // one step per K/V block (the kernels' loop) or in one step.
    auto& blocks = block_s_[k];
    const double subs = kv_sequential(l) ? double(p_.tiling.t_c()) : 1.0;
    const StepTime st = step_time(s, k, 1.0 / (double(blocks.size()) * subs));
    for (double& b : blocks) b += subs * st.time;
    account(st, subs * double(blocks.size()));
    return;
  }
  const StepTime& st = s.level == Level::prologue ? step_time(s, k, 1.0) : memo(s);
  auto& blocks = block_s_[k];
  if (blocks.size() <= s.block) blocks.resize(std::size_t(s.block) + 1, 0.0);
  blocks[s.block] += st.time;
  account(st, 1.0);
}

TimePrediction predict_time(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k) {
  TimePrediction out;
  const Ceilings& c = *b.c_;
  out.ceilings = &c;
  const double bh = double(p.bh()), sms = double(p.gpu.sms);
  double longest = -1;
  for (std::size_t x = 0; x < s.launches.size(); ++x) {
    LaunchTime lt;
    lt.name = s.launches[x].name;
    lt.occupancy = b.occ_[x];
    lt.sharing = b.sharing_[x];
    const std::vector<double>& dur = b.block_s_[x];
    const std::int64_t per_head = std::int64_t(dur.size()), grid = per_head * p.bh();
    lt.grid = grid;
    const std::int64_t slots = lt.occupancy.slots;
    lt.waves = (grid + slots - 1) / slots;
    // Deal the blocks, in dispatch order, to the first free slot.
    double makespan = 0, busy = 0;
    if (grid <= slots) {
      for (double d : dur) makespan = std::max(makespan, d);
      busy = bh * [&] { double s2 = 0; for (double d : dur) s2 += d; return s2; }();
    } else {
      std::priority_queue<double, std::vector<double>, std::greater<double>> free;
      for (std::int64_t q = 0; q < slots; ++q) free.push(0.0);
      for (std::int64_t g = 0; g < grid; ++g) {
        const double start = free.top();
        free.pop();
        const double end = start + dur[std::size_t(g % per_head)];
        busy += dur[std::size_t(g % per_head)];
        makespan = std::max(makespan, end);
        free.push(end);
      }
    }
    lt.sm_busy = makespan > 0 ? busy / (double(std::min(slots, grid)) * makespan) : 0;
    // FA2's main kernels (the tile walks, from which kFa2Time was measured): their measured pace
    const double kernel_time = p.kernel == Kernel::fa2 && b.walks_tiles_[x] ? kFa2Time : 1.0;
    makespan *= kernel_time;
    lt.blocks_s = makespan;
    for (int u = 0; u < kUnitCount; ++u) lt.unit_s[std::size_t(u)] = kernel_time * b.unit_s_[x][std::size_t(u)] * bh / sms;
    double total_share = 0;
    for (int u = 0; u < kUnitCount; ++u) total_share += b.share_s_[x][std::size_t(u)];
    for (int u = 0; u < kUnitCount; ++u)
      lt.share[std::size_t(u)] = total_share > 0 ? b.share_s_[x][std::size_t(u)] / total_share : 0;
    // The DRAM bound (with the L2 model) and the launch overhead.
    double dram = 0;
    if (k.l2) {
      lt.dram_read_bytes = total(k.launches[x].dram, Dir::read);
      lt.dram_write_bytes = total(k.launches[x].dram, Dir::write);
      dram = double(lt.dram_read_bytes) / c.dram_read_bytes_per_s + double(lt.dram_write_bytes) / c.dram_write_bytes_per_s();
    }
    lt.unit_s[int(Unit::dram)] = dram;
    lt.unit_s[int(Unit::launch)] = c.launch_s;
    lt.time_s = std::max(makespan, dram) + c.launch_s;
    int top = 0;
    for (int u = 0; u < kUnitCount; ++u)
      if (lt.share[std::size_t(u)] > lt.share[std::size_t(top)]) top = u;
    lt.bound = Unit(top);
    if (dram > makespan) lt.bound = Unit::dram;
    if (c.launch_s > std::max(makespan, dram)) lt.bound = Unit::launch;
    out.time_s += lt.time_s;
    out.dram_read_bytes += lt.dram_read_bytes;
    out.dram_write_bytes += lt.dram_write_bytes;
    if (lt.time_s > longest) longest = lt.time_s, out.bound = lt.bound;
    out.launches.push_back(std::move(lt));
  }
  const double mma = p.dtype == Dtype::bf16 ? c.mma_bf16_flops : p.dtype == Dtype::fp16 ? c.mma_f16_flops : 2.0 * c.fp32_fma_per_s;
  out.tflops = out.time_s > 0 ? double(k.cost.flops) / out.time_s / 1e12 : 0;
  out.peak_fraction = out.tflops * 1e12 / mma;
  return out;
}

Modelled model(const Problem& p, const Schedule& s, StepObserver* also) {
  Executor e(p, s, ExecOptions{.tile_stats = false, .sectors = true, .l2 = true});
  BlockTimer timer(p, e.schedule());
  e.add_observer(&timer);
  if (also) e.add_observer(also);
  e.run();
  Modelled m;
  m.counters = e.counters();
  m.time = predict_time(p, e.schedule(), timer, m.counters);
  return m;
}

Modelled model(const Problem& p, StepObserver* also) { return model(p, make_schedule(p), also); }

}  // namespace flashlab
