// trace.cpp — recording a simulator trace (see trace.hpp).
#include "flashlab/trace/trace.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/event_recorder.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab {

std::string_view to_string(TraceLevel l) { return l == TraceLevel::block ? "block" : "warp"; }
std::string_view to_string(TraceSource s) { return s == TraceSource::sim ? "sim" : "gpu"; }

TraceLevel parse_trace_level(std::string_view t) {
  if (t == "block") return TraceLevel::block;
  if (t == "warp") return TraceLevel::warp;
  throw ConfigError("level", std::string(t), "one of block, warp");
}

void check_trace_level(TraceLevel level, const Schedule& s, Algo algo) {
  if (level == TraceLevel::warp && has_warp_roles(s))
    throw ConfigError("level", "warp",
                      "block with --algo " + std::string(to_string(algo)) +
                          ": the warp model is not modelled for its warp roles (each event names its producer or "
                          "consumer warpgroup in the agent field, docs/events.md \"V3\")");
}

TraceSource parse_trace_source(std::string_view t) {
  if (t == "sim") return TraceSource::sim;
  if (t == "gpu") return TraceSource::gpu;
  throw ConfigError("source", std::string(t), "one of sim, gpu");
}

Config resolved_config(const Problem& p) {
  const Tiling& t = p.tiling;
  // Config's fields in their order, each as resolve() left it (the tile given, not auto)
  Config c{.algo = p.algo, .n_q = t.n_q, .n_k = t.n_k, .d = t.d, .b_r = t.b_r, .b_c = t.b_c,
           .auto_blocks = false, .sram_bytes = p.sram_capacity,
           .batch = p.batch, .heads = p.heads, .kv_heads = p.kv_heads,
           .dtype = p.dtype, .mask = p.mask, .block_skip = p.block_skip, .scale = p.scale, .warps = p.warps,
           .split = p.split, .order = p.order, .grid = p.grid, .rescale = p.rescale,
           .warp_specialize = {}, .stages = {}, .pingpong = {}, .intra_overlap = {}, .scheduler = {},
           .pass = p.pass, .backward_form = p.backward_form, .splits = p.splits, .kernel = p.kernel,
           .gpu = p.gpu.name};
  if (p.algo == Algo::v3) {  // V3's switches (refused with any other algorithm)
    c.warp_specialize = p.hopper.warp_specialize;
    c.stages = p.hopper.stages;
    c.pingpong = p.hopper.pingpong;
    c.intra_overlap = p.hopper.intra_overlap;
    c.scheduler = p.hopper.scheduler;
  }
  return without_untaken_switches(c, Untaken::all);  // resolve() refuses a switch the algorithm does not take
}

Problem trace_problem(const TraceHeader& h) { return resolve(h.config); }

namespace {

class VectorSink : public WarpEventSink {
 public:
  explicit VectorSink(std::vector<Event>& out) : out_(out) {}
  void on_event(const Event& e, const WarpWork*) override { out_.push_back(e); }

 private:
  std::vector<Event>& out_;
};

}  // namespace

void append_step_events(const Problem& p, const StepView& s, TraceLevel level, std::vector<Event>& out) {
  if (level == TraceLevel::block) return append_block_events(p, s, out);
  VectorSink sink(out);
  walk_step_events(p, s, sink);
}

namespace {

int edge(std::int64_t index, std::int64_t count) { return index < 0 ? 0 : index == count - 1 ? 1 : 2; }

// Action is thirteen one-byte fields, no padding: equal bytes are equal actions.
static_assert(sizeof(Action) == 13 && std::is_trivially_copyable_v<Action>);

// Whether a step's events depend on where it is in its thread block's walk, not only on its kind:
// a stage ring's stage and phase (StepView::ring), a deferred action's previous tile (prev_j), an
// outer end's deferred actions (V3).
bool walk_position_matters(const StepView& s) {
  return !s.deferred.empty() ||
         std::any_of(s.actions.begin(), s.actions.end(), [](const Action& a) { return a.ring > 0 || a.deferred; });
}
bool same_actions(std::span<const Action> a, const std::vector<Action>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

}  // namespace

StepEventSource::StepEventSource(const Problem& p, TraceLevel level)
    : p_(p), level_(level), t_r_(p.tiling.t_r()), t_c_(p.tiling.t_c()) {
  slot_.fill(-1);
}

const StepEventSource::Kind& StepEventSource::kind_of(const StepView& s) {
  const int ei = edge(s.i, t_r_), ej = edge(s.j, t_c_);
  auto matches = [&](const Kind& k) {
    return k.skip == s.skip && k.edge_i == ei && k.edge_j == ej && same_actions(s.actions, k.actions);
  };
  const std::size_t h = (std::size_t(s.level) << 9) | (std::size_t(s.skip) << 8) | (std::size_t(ei) << 6) |
                        (std::size_t(ej) << 4) | (s.actions.size() & 15);
  if (slot_[h] >= 0 && matches(kinds_[std::size_t(slot_[h])])) return kinds_[std::size_t(slot_[h])];
  std::size_t k = 0;
  while (k < kinds_.size() && !matches(kinds_[k])) ++k;
  if (k == kinds_.size()) {
    kinds_.push_back(Kind{std::vector<Action>(s.actions.begin(), s.actions.end()), s.skip, ei, ej, {}});
    append_block_events(p_, s, kinds_.back().events);
  }
  slot_[h] = std::int16_t(k);
  return kinds_[k];
}

void StepEventSource::append(const StepView& s, std::vector<Event>& out) {
  if (level_ != TraceLevel::block || walk_position_matters(s)) return append_step_events(p_, s, level_, out);
  const std::vector<Event>& events = kind_of(s).events;
  const std::size_t at = out.size();
  out.insert(out.end(), events.begin(), events.end());
  const std::uint16_t launch = s.launch;
  for (std::size_t n = at; n < out.size(); ++n) {
    Event& e = out[n];
    e.launch = launch;
    e.block = s.block;
    e.step = s.step;
    e.i = std::int32_t(s.i);
    e.j = std::int32_t(s.j);
  }
}

Trace record_trace(const Problem& p, TraceLevel level) { return record_trace(p, make_schedule(p), level); }

Trace record_trace(const Problem& p, const Schedule& s, TraceLevel level) {
  Trace t;
  t.header.source = TraceSource::sim;
  t.header.level = level;
  t.header.config = resolved_config(p);
  Executor ex(p, s);
  TraceRecorder rec(p, level);
  ex.add_observer(&rec);
  ex.run();
  t.events = std::move(rec.events());
  return t;
}

void add_stats(Trace& t, const Problem& p, std::vector<std::int64_t> blocks, const InputSpec& spec) {
  if (blocks.empty()) return;
  std::sort(blocks.begin(), blocks.end());
  const std::int64_t t_r = p.tiling.t_r();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    if (blocks[k] < 0 || blocks[k] >= t_r)
      throw ConfigError("stats-blocks", std::to_string(blocks[k]),
                        "Q block indices from 0 to T_r - 1 = " + std::to_string(t_r - 1));
    if (k > 0 && blocks[k] == blocks[k - 1])
      throw ConfigError("stats-blocks", std::to_string(blocks[k]), "each Q block at most once");
  }
  const Inputs in = make_inputs(p, parse_fill("q", spec.q, p.dtype), parse_fill("k", spec.k, p.dtype),
                                parse_fill("v", spec.v, p.dtype), spec.seed);
  NumericsOptions opt;
  opt.trace_blocks = blocks;
  NumericResult r = simulate(p, in, opt);
  t.stats.clear();
  for (std::size_t k = 0; k < blocks.size() && k < r.traces.size(); ++k)
    t.stats.push_back(BlockStats{blocks[k], std::move(r.traces[k])});
  t.header.inputs = spec;
}

}  // namespace flashlab
