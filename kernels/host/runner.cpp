// runner.cpp — one configuration on the GPU (runner.hpp).
#include "runner.hpp"

#include "host_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "flashlab/trace/diff.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/kernels/api.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab::gpu {
namespace {

constexpr std::size_t kCanary = 256;  // elements after each output that no kernel may write

// The switches the kernels run (docs/model.md "Variants"): every combination of the forward's
// five. The backward runs after its algorithm's own forward (the preset), so a switch given with
// --pass backward is refused. (Split-KV's rule, V2's forward only, is the simulator's: the Problem
// comes resolved, contract/split_kv.hpp.)
void require_compiled_variant(const Problem& p) {
  if (p.algo == Algo::standard || !p.backward()) return;  // standard attention walks no tiles
  const std::string why = " with --pass backward (the backward kernels run after their algorithm's own "
                          "forward; the simulator counts the forward's variants)";
  const Switches need = preset_switches(p.algo);
  if (p.order != need.order) throw ConfigError("order", std::string(to_string(p.order)), std::string(to_string(need.order)) + why);
  if (p.grid != need.grid) throw ConfigError("grid", std::string(to_string(p.grid)), std::string(to_string(need.grid)) + why);
  if (p.rescale != need.rescale)
    throw ConfigError("rescale", std::string(to_string(p.rescale)), std::string(to_string(need.rescale)) + why);
  if (p.split != need.split) throw ConfigError("split", std::string(to_string(p.split)), std::string(to_string(need.split)) + why);
}

// The kernel of a tiled forward, by its tile list (tiles.hpp): split-Q warps with the Q outer order
// run V2's kernel, every other combination V1's row-update family (v1.cu).
// The tile of the forward that writes O and L before p's backward: the backward's own shape where
// the forward compiles it, else the same B_r x B_c with 4 warps (FA2's d = 128 backward tile,
// 64 x 128 x 8, gives each warp 8 rows: split-Q's warps need 16). O and L do not depend on it beyond
// rounding, and the backward's events and byte counts not at all.
TileShape backward_forward_tile(const Problem& p) {
  const TileShape own{int(p.tiling.b_r), int(p.tiling.b_c), p.warps};
  const auto forward = compiled_tiles(p.algo, int(p.tiling.d));
  if (std::find(forward.begin(), forward.end(), own) != forward.end()) return own;
  return TileShape{own.b_r, own.b_c, 4};
}

Algo kernel_family(const Problem& p) {
  if (p.algo == Algo::standard || p.backward()) return p.algo;
  return p.split == WarpSplit::split_q && p.order == LoopOrder::q_outer ? Algo::v2 : Algo::v1;
}

void require_supported(const Problem& p) {
  if (p.dtype == Dtype::fp32)
    throw ConfigError("dtype", "fp32", "fp16 or bf16 (the kernels run on fp16/bf16 tensor cores)");
  require_compiled_variant(p);
  if (p.backward() && p.kv_heads != p.heads)
    throw ConfigError("kv-heads", std::to_string(p.kv_heads),
                      std::to_string(p.heads) + " (= heads) with --pass backward: the backward kernels read one K/V "
                                                 "head per query head (dK, dV of a shared K/V head would sum over its "
                                                 "query heads); the forward kernels and the simulator take grouped K/V "
                                                 "heads");
  if (p.pass == Pass::both)
    throw ConfigError("pass", "both", "forward or backward (flashlab-gpu runs one pass at a time; the simulator "
                                      "counts both together)");
  if (p.backward() && p.algo == Algo::standard)
    throw ConfigError("algo", "standard", "v1 or v2 with --pass backward (no CUDA kernel runs standard attention's "
                                          "backward; the simulator counts it)");
  if (p.backward() && p.algo == Algo::v2 && p.backward_form == BackwardForm::paper)
    throw ConfigError("backward-form", "paper", "released or deterministic (the CUDA kernels run FA2's backward "
                                                "kernels; the simulator counts the paper's form)");
  const TileShape shape{int(p.tiling.b_r), int(p.tiling.b_c), p.warps};
  const Family family = p.backward() ? Family::backward : p.splits > 1 ? Family::split : Family::forward;
  const Algo kernel = kernel_family(p);
  auto tiles = compiled_tiles(kernel, int(p.tiling.d), family);
  // the variants compiled beside a preset's kernel: one tile (api.hpp kVariantShape)
  const bool v2_variant = kernel == Algo::v2 && !p.backward() && (p.grid == GridKind::head || p.rescale == Rescale::step);
  if ((kernel == Algo::v1 && p.split == WarpSplit::split_q) || v2_variant)
    std::erase_if(tiles, [](const TileShape& s) { return !(s == kVariantShape); });
  if (kernel == Algo::v1 && p.split == WarpSplit::split_k && p.order == LoopOrder::q_outer)
    std::erase_if(tiles, [&](const TileShape& s) { return !(s == row_q_outer_tile(int(p.tiling.d))); });
  if (p.backward()) {  // the forward that writes O and L runs on backward_forward_tile
    const auto forward = compiled_tiles(p.algo, int(p.tiling.d));
    std::erase_if(tiles, [&](const TileShape& s) {
      const TileShape f = std::find(forward.begin(), forward.end(), s) != forward.end() ? s : TileShape{s.b_r, s.b_c, 4};
      return std::find(forward.begin(), forward.end(), f) == forward.end();
    });
  }
  if (std::find(tiles.begin(), tiles.end(), shape) == tiles.end()) {
    std::string list;
    for (const TileShape& s : tiles)
      list += (list.empty() ? "" : ", ") + std::to_string(s.b_r) + "x" + std::to_string(s.b_c) + "x" + std::to_string(s.warps);
    throw ConfigError("br x bc x warps",
                      std::to_string(shape.b_r) + "x" + std::to_string(shape.b_c) + "x" + std::to_string(shape.warps),
                      "one of the shapes compiled for " +
                          (kernel == p.algo && p.is_preset() ? std::string(to_string(p.algo))
                                            : std::string(to_string(p.split)) + " warps with the " + std::string(to_string(p.order)) + " order") +
                          " at d = " +
                          std::to_string(p.tiling.d) +
                          (p.backward() ? " (backward)" : p.splits > 1 ? " (split-KV, --splits > 1)" : "") + ": " +
                          (list.empty() ? (p.backward()      ? "none (the backward runs on a tile that both its kernels and "
                                                               "the forward's, which writes O first, compile at this d)"
                                           : p.splits > 1 ? "none (split-KV's kernels are built for d = 64 and 128)"
                                                          : "none (d must be 32, 64 or 128)")
                                        : list));
  }
}

struct DeviceTensors {
  DeviceBuffer<std::uint16_t> q, k, v, o, s, p;
  DeviceBuffer<float> lse, m, l;
  DeviceBuffer<float> o_acc, lse_acc;           // split-KV's partial results
  DeviceBuffer<std::uint16_t> d_o, dq, dk, dv;  // the backward
  DeviceBuffer<float> d_sum, dq_acc;
};

DeviceTensors upload(const Problem& p, const HostInputs& h) {
  const Tiling& t = p.tiling;
  const std::size_t rows = std::size_t(p.bh() * t.n_q);
  DeviceTensors d;
  d.q = DeviceBuffer<std::uint16_t>(h.q.size());
  d.k = DeviceBuffer<std::uint16_t>(h.k.size());
  d.v = DeviceBuffer<std::uint16_t>(h.v.size());
  d.q.upload(h.q);
  d.k.upload(h.k);
  d.v.upload(h.v);
  // The outputs and intermediates the schedule writes to HBM.
  const Schedule s = make_schedule(p);
  d.o = DeviceBuffer<std::uint16_t>(rows * std::size_t(t.d) + kCanary);
  if (moves(s, Tensor::L)) d.lse = DeviceBuffer<float>(rows + kCanary);
  if (moves(s, Tensor::m)) {
    d.m = DeviceBuffer<float>(rows + kCanary);
    d.l = DeviceBuffer<float>(rows + kCanary);
  }
  if (moves(s, Tensor::S)) {
    d.s = DeviceBuffer<std::uint16_t>(rows * std::size_t(standard_ld(t.n_k)));
    d.p = DeviceBuffer<std::uint16_t>(rows * std::size_t(standard_ld(t.n_k)));
  }
  if (p.splits > 1) {  // (splits, bh, N_q, d) and (splits, bh, N_q)
    d.o_acc = DeviceBuffer<float>(std::size_t(p.splits) * rows * std::size_t(t.d) + kCanary);
    d.lse_acc = DeviceBuffer<float>(std::size_t(p.splits) * rows + kCanary);
  }
  if (p.backward()) {
    const std::size_t keys = std::size_t(p.bh() * t.n_k) * std::size_t(t.d);
    d.d_o = DeviceBuffer<std::uint16_t>(h.d_o.size());
    d.d_o.upload(h.d_o);
    d.dq = DeviceBuffer<std::uint16_t>(rows * std::size_t(t.d) + kCanary);
    d.dk = DeviceBuffer<std::uint16_t>(keys + kCanary);
    d.dv = DeviceBuffer<std::uint16_t>(keys + kCanary);
    if (moves(s, Tensor::D)) d.d_sum = DeviceBuffer<float>(rows + kCanary);
    if (moves(s, Tensor::dQacc))  // (dq_splits, bh, N_q, d): one slice unless deterministic
      d.dq_acc = DeviceBuffer<float>(std::size_t(p.dq_splits) * rows * std::size_t(t.d) + kCanary);
  }
  return d;
}

Args make_args(const Problem& p, const DeviceTensors& d) {
  Args a;
  a.q = d.q.get(), a.k = d.k.get(), a.v = d.v.get(), a.o = d.o.get();
  a.lse = d.lse.get(), a.m = d.m.get(), a.l = d.l.get(), a.s = d.s.get(), a.p = d.p.get();
  a.d_o = d.d_o.get(), a.dq = d.dq.get(), a.dk = d.dk.get(), a.dv = d.dv.get();
  a.d_sum = d.d_sum.get(), a.dq_acc = d.dq_acc.get();
  a.o_acc = d.o_acc.get(), a.lse_acc = d.lse_acc.get();
  a.splits = int(p.splits);
  a.deterministic = p.backward_form == BackwardForm::deterministic && p.backward();
  a.dq_splits = int(p.dq_splits);
  a.bh = p.bh();
  a.group = p.group();
  a.n_q = p.tiling.n_q, a.n_k = p.tiling.n_k, a.d = int(p.tiling.d);
  a.band = p.band;
  a.scale = float(p.scale);
  a.block_skip = p.block_skip;
  const Switches v = p.backward() ? preset_switches(p.algo) : p.switches();  // the backward's forward: its preset
  a.split_k = v.split == WarpSplit::split_k;
  a.kv_outer = v.order == LoopOrder::kv_outer;
  a.grid_head = v.grid == GridKind::head;
  a.rescale_delayed = v.rescale == Rescale::delayed;
  a.elem = p.dtype == Dtype::bf16 ? Elem::bf16 : Elem::fp16;
  a.tile = TileShape{int(p.tiling.b_r), int(p.tiling.b_c), p.warps};
  return a;
}

// The thread block whose statistics are traced: the one that runs Q block i's tiles in the
// schedule (V2: its own, block i; V1 and standard attention: block 0).
std::uint32_t stats_thread_block(const Problem& p, std::int64_t i) {
  const Executor e(p);
  return has_tiles(e.schedule()) ? e.tile_step(i, 0).block : 0;
}

// A thread block whose m, l snapshots of the traced Q block are compared: its number, and the
// `steps` slots from slot0 on that hold them.
struct StatBlock {
  std::uint32_t slot0, block, steps;
};

// The launches of p's pass (the backward's after its forward has left O and its statistics).
void launch_pass(const Problem& p, const Args& args, const TraceBuffers* trace) {
  if (p.backward()) launch_backward(p.algo, args, trace, nullptr);
  else launch(p.algo, args, trace, nullptr);  // a tiled forward: the switches of args pick the kernel
}

// The thread blocks that snapshot Q block `block` (none unless stats_on), each with its slots
// (api.hpp TraceBuffers): the one that runs its tiles, or under split-KV each split's, split s's
// from slot s * split_block_steps. `sim`: the simulator's trace of p (the steps of each block).
std::vector<StatBlock> stat_blocks_of(const Problem& p, std::int64_t block, bool stats_on, const flashlab::Trace& sim) {
  std::vector<StatBlock> stat_blocks;
  if (stats_on && p.splits > 1) {
    const auto per = std::uint32_t(split_block_steps(p.tiling.t_c(), p.splits));
    for (std::int64_t s = 0; s < p.splits; ++s)
      stat_blocks.push_back({std::uint32_t(s) * per, std::uint32_t(s * p.tiling.t_r() + block), per});
  } else if (stats_on) {
    StatBlock sb{0, stats_thread_block(p, block), 0};
    for (const Event& e : sim.events)
      if (e.block == sb.block) sb.steps = std::max(sb.steps, e.step + 1);
    stat_blocks.push_back(sb);
  }
  return stat_blocks;
}

// The event and m, l comparison of one instrumented run into r (Q block `block`'s statistics).
void record_diff(const DiffResult& d, std::int64_t block, RunResult& r) {
  r.events_run = true;
  r.events_agree = d.agree();
  r.gpu_events = d.events_b;
  r.sim_events = d.events_a;
  r.stat_values = d.values_compared;
  r.stat_differing = d.values_differing;
  r.stats_block = block;
  r.diff_report = format_diff(d, "sim", "gpu");
}

void run_events(const Problem& p, const RunOptions& opt, const Args& args, RunResult& r) {
  // m and l are compared for the forward; the backward's events only (its numbers: check_grads)
  const bool stats_on = !p.backward();
  const std::int64_t block = opt.stats_block.value_or(p.tiling.t_r() - 1);
  flashlab::Trace sim = record_trace(p, TraceLevel::block);
  if (stats_on) add_stats(sim, p, {block}, opt.inputs);
  const std::vector<StatBlock> stat_blocks = stat_blocks_of(p, block, stats_on, sim);
  std::uint32_t slots = 0;
  for (const StatBlock& sb : stat_blocks) slots = std::max(slots, sb.slot0 + sb.steps);

  DeviceBuffer<Event> events(sim.events.size() + kTraceEventSlack);
  DeviceBuffer<unsigned> count(1);
  DeviceBuffer<float> stats(std::size_t(slots) * 2 * std::size_t(p.tiling.b_r));
  DeviceBuffer<int> written(slots);
  count.fill_bytes(0);
  stats.fill_bytes(0xFF);
  written.fill_bytes(0);
  TraceBuffers tr;
  tr.events = events.get(), tr.count = count.get(), tr.capacity = unsigned(events.size());
  tr.stats = stats.get(), tr.stat_written = written.get(), tr.stat_steps = slots;
  tr.stat_block = stats_on ? int(block) : -1;
  tr.traced_bh = 0;
  launch_pass(p, args, &tr);
  check(cudaDeviceSynchronize(), "instrumented run");

  flashlab::Trace gpu;
  gpu.header.source = TraceSource::gpu;
  gpu.header.level = TraceLevel::block;
  gpu.header.config = resolved_config(p);
  gpu.header.gpu = GpuRunInfo{r.device.name, opt.driver.empty() ? r.device.driver : opt.driver,
                              opt.commit.empty() ? "unknown" : opt.commit};
  gpu.header.command = opt.command;
  gpu.header.model = opt.model;
  if (stats_on) gpu.header.inputs = opt.inputs;
  const unsigned n = std::min<unsigned>(count.download()[0], unsigned(events.size()));
  std::vector<Event> all = events.download();
  gpu.events.assign(all.begin(), all.begin() + n);
  std::stable_sort(gpu.events.begin(), gpu.events.end(), [](const Event& a, const Event& b) {
    return a.launch != b.launch ? a.launch < b.launch : a.block != b.block ? a.block < b.block : a.step < b.step;
  });

  const std::vector<float> m_l = stats.download();
  const std::vector<int> w = written.download();
  BlockStats bs{block, {}};
  const std::size_t rows = std::size_t(p.tiling.rows(block)), b_r = std::size_t(p.tiling.b_r);
  for (const StatBlock& sb : stat_blocks)
    for (std::uint32_t step = 0; step < sb.steps; ++step) {
      const std::size_t slot = sb.slot0 + step;
      if (!w[slot]) continue;
      StatSnapshot s{step, -1, false, {}, {}};
      for (const Event& e : gpu.events)  // the K/V block of the step (launch 0's: split-KV's combine continues block i)
        if (e.block == sb.block && e.step == step && (p.splits == 1 || e.launch == 0)) {
          s.j = e.j;
          break;
        }
      s.m.assign(m_l.begin() + std::ptrdiff_t((slot * 2 + 0) * b_r), m_l.begin() + std::ptrdiff_t((slot * 2 + 0) * b_r + rows));
      s.l.assign(m_l.begin() + std::ptrdiff_t((slot * 2 + 1) * b_r), m_l.begin() + std::ptrdiff_t((slot * 2 + 1) * b_r + rows));
      bs.snapshots.push_back(std::move(s));
    }
  if (stats_on) gpu.stats.push_back(std::move(bs));

  record_diff(diff_traces(sim, gpu), block, r);
  if (!opt.trace_path.empty()) write_trace(opt.trace_path, gpu, opt.trace_format);
}

bool canary_intact(const std::vector<std::uint16_t>& o, std::size_t used) {
  return std::all_of(o.begin() + std::ptrdiff_t(used), o.end(), [](std::uint16_t x) { return x == 0xFFFF; });
}
bool canary_intact(const std::vector<float>& x, std::size_t used) {
  return std::all_of(x.begin() + std::ptrdiff_t(used), x.end(),
                     [](float v) { return Eigen::numext::bit_cast<std::uint32_t>(v) == 0xFFFFFFFFu; });
}

void check_numbers(const Problem& p, const HostInputs& h, const DeviceTensors& d, RunResult& r) {
  const Tiling& t = p.tiling;
  const std::size_t rows = std::size_t(p.bh() * t.n_q), per_head = std::size_t(t.n_q * t.d);
  const std::vector<std::uint16_t> o = d.o.download();
  std::vector<float> lse, m, l;
  r.canary_intact = canary_intact(o, rows * std::size_t(t.d));
  const Schedule s = make_schedule(p);
  const bool has_lse = moves(s, Tensor::L), has_ml = moves(s, Tensor::m);
  if (has_lse) {
    lse = d.lse.download();
    r.canary_intact = r.canary_intact && canary_intact(lse, rows);
  }
  if (has_ml) {
    m = d.m.download();
    l = d.l.download();
    r.canary_intact = r.canary_intact && canary_intact(m, rows) && canary_intact(l, rows);
  }
  if (p.splits > 1)  // split-KV's partial results: every split wrote exactly its (bh, N_q) slice
    r.canary_intact = r.canary_intact && canary_intact(d.o_acc.download(), std::size_t(p.splits) * rows * std::size_t(t.d)) &&
                      canary_intact(d.lse_acc.download(), std::size_t(p.splits) * rows);
  for (const auto& [bh, in] : h.kept) {
    const Reference ref = reference(p, in);
    NumericResult got;
    got.O.resize(t.n_q, t.d);
    for (std::size_t k = 0; k < per_head; ++k) got.O.data()[k] = from_bits(o[std::size_t(bh) * per_head + k], p.dtype);
    got.L.resize(t.n_q);
    for (std::int64_t row = 0; row < t.n_q; ++row) {
      const std::size_t x = std::size_t(bh * t.n_q + row);
      if (has_lse) got.L[row] = lse[x];  // V2 writes L
      else if (has_ml)  // V1 keeps m and l in HBM; L = m + ln l, +inf for a row with no visible key
        got.L[row] = l[x] > 0 ? m[x] + std::log(l[x]) : std::numeric_limits<float>::infinity();
      else  // Algorithm 0 produces no L: its O alone is compared
        got.L[row] = float(ref.L[row]);
    }
    const NumericError e = compare(got, ref, p);  // the simulator's tolerances (numerics.hpp)
    r.numbers.push_back({bh, e});
    r.numbers_within = r.numbers_within && e.within;
  }
}

// The backward's dQ, dK, dV (and D) of the checked heads against the float64 chain rule, with the
// simulator's tolerance (numerics.hpp compare_grads).
void check_grads(const Problem& p, const HostInputs& h, const DeviceTensors& d, RunResult& r) {
  const Tiling& t = p.tiling;
  const std::size_t q_elems = std::size_t(p.bh() * t.n_q * t.d), k_elems = std::size_t(p.bh() * t.n_k * t.d);
  const std::vector<std::uint16_t> dq = d.dq.download(), dk = d.dk.download(), dv = d.dv.download(),
                                   o = d.o.download();
  r.canary_intact = r.canary_intact && canary_intact(dq, q_elems) && canary_intact(dk, k_elems) &&
                    canary_intact(dv, k_elems);
  std::vector<float> d_sum;
  if (d.d_sum.size()) {
    d_sum = d.d_sum.download();
    r.canary_intact = r.canary_intact && canary_intact(d_sum, std::size_t(p.bh() * t.n_q));
  }
  const auto matrix = [&](const std::vector<std::uint16_t>& x, std::int64_t bh, std::int64_t rows) {
    MatrixF m(rows, t.d);
    const std::size_t base = std::size_t(bh * rows * t.d);
    for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = from_bits(x[base + std::size_t(k)], p.dtype);
    return m;
  };
  for (const auto& [bh, in] : h.kept) {
    NumericResult got;
    got.dQ = matrix(dq, bh, t.n_q);
    got.dK = matrix(dk, bh, t.n_k);
    got.dV = matrix(dv, bh, t.n_k);
    if (!d_sum.empty()) {  // V2 writes D
      got.D = Eigen::Map<const Eigen::VectorXf>(d_sum.data() + bh * t.n_q, t.n_q);
    } else {  // V1 keeps D on chip: rowsum(dO o O) of the O its forward stored
      got.D = in.dO.cwiseProduct(matrix(o, bh, t.n_q)).rowwise().sum();
    }
    const GradError e = compare_grads(got, grad_reference(p, in), p);
    r.grads.push_back({bh, e});
    r.grads_within = r.grads_within && e.within;
  }
}

void dump(const std::string& dir, const Problem& p, const HostInputs& h, const DeviceTensors& d) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const void* data, std::size_t bytes) {
    const std::string path = dir + "/" + name, tmp = path + ".tmp";
    std::ofstream f(tmp, std::ios::binary);
    f.write(static_cast<const char*>(data), std::streamsize(bytes));
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f.close();
    fs::rename(tmp, path);
  };
  const std::size_t rows = std::size_t(p.bh() * p.tiling.n_q);
  write("q.bin", h.q.data(), h.q.size() * 2);
  write("k.bin", h.k.data(), h.k.size() * 2);
  write("v.bin", h.v.data(), h.v.size() * 2);
  const std::vector<std::uint16_t> o = d.o.download();
  write("o.bin", o.data(), rows * std::size_t(p.tiling.d) * 2);
  if (moves(make_schedule(p), Tensor::L)) write("lse.bin", d.lse.download().data(), rows * 4);
  if (p.backward()) {  // dO and the gradients, (bh, N, d) bits of the input type
    const std::size_t keys = std::size_t(p.bh() * p.tiling.n_k * p.tiling.d);
    write("do.bin", h.d_o.data(), h.d_o.size() * 2);
    write("dq.bin", d.dq.download().data(), rows * std::size_t(p.tiling.d) * 2);
    write("dk.bin", d.dk.download().data(), keys * 2);
    write("dv.bin", d.dv.download().data(), keys * 2);
  }
  nlohmann::json meta = {{"batch", p.batch}, {"heads", p.heads}, {"kv_heads", p.kv_heads}, {"n_q", p.tiling.n_q}, {"n_k", p.tiling.n_k},
                         {"d", p.tiling.d}, {"dtype", to_string(p.dtype)}, {"mask", to_string(p.mask)},
                         {"band_lo", p.band.lo}, {"band_hi", p.band.hi}, {"scale", p.scale},
                         {"algo", to_string(p.algo)}, {"pass", to_string(p.pass)}};
  const std::string text = meta.dump(2);
  write("meta.json", text.data(), text.size());
}

}  // namespace

double attention_flops(const Problem& p) {
  double pairs = 0;
  for (std::int64_t row = 0; row < p.tiling.n_q; ++row) pairs += double(row_keys(p.band, p.tiling.n_k, row).count());
  return 4.0 * double(p.tiling.d) * pairs * double(p.bh());
}

RunResult run_config(const Problem& p, const RunOptions& opt) {
  require_supported(p);
  RunResult r;
  r.problem = p;
  r.device = device_info();
  const std::vector<std::int64_t> heads = opt.check && !opt.profile ? checked_heads(p, opt.check_heads) : std::vector<std::int64_t>{};
  const HostInputs& h = cached_host_inputs(p, opt.inputs, heads);
  DeviceTensors d = upload(p, h);
  const Args args = make_args(p, d);
  r.sim = report::measure(p);  // sectors counted too: the kernels' byte model
  r.sim_bytes = r.sim.counters.levels[int(Memory::hbm)];
  r.kernel_bytes = r.sim.counters.levels[int(Memory::sector)];

  for (auto* b : {&d.o}) b->fill_bytes(0xFF);  // poison: an element the kernel misses stays NaN
  for (auto* b : {&d.lse, &d.m, &d.l, &d.o_acc, &d.lse_acc}) b->fill_bytes(0xFF);
  if (p.backward()) {  // the forward leaves O and its statistics for the backward (not checked here)
    Args forward = args;
    forward.tile = backward_forward_tile(p);
    launch(p.algo, forward, nullptr, nullptr);
    check(cudaDeviceSynchronize(), "forward run");
  }
  if (opt.events && !opt.profile) run_events(p, opt, args, r);

  for (auto* b : {&d.dq, &d.dk, &d.dv}) b->fill_bytes(0xFF);
  for (auto* b : {&d.d_sum, &d.dq_acc}) b->fill_bytes(0xFF);
  launch_pass(p, args, nullptr);
  check(cudaDeviceSynchronize(), "plain run");
  if (opt.profile) return r;
  if (opt.check && p.backward()) check_grads(p, h, d, r);
  else if (opt.check) check_numbers(p, h, d, r);
  if (!opt.dump_dir.empty()) dump(opt.dump_dir, p, h, d);

  if (opt.time) {
    r.ms = time_launches([&] { launch_pass(p, args, nullptr); }, opt.warmup, opt.reps);
    std::vector<float> sorted = r.ms;
    std::sort(sorted.begin(), sorted.end());
    r.median_ms = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                    : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    r.flops = attention_flops(p) * (p.backward() ? 2.5 : 1.0);  // five matmuls per tile instead of two
    r.tflops = r.median_ms > 0 ? r.flops / (r.median_ms * 1e-3) / 1e12 : 0;
  }
  return r;
}

}  // namespace flashlab::gpu
