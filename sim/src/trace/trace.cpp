// trace.cpp — recording a simulator trace (see trace.hpp).
#include "flashlab/trace.hpp"

#include <algorithm>

#include "flashlab/error.hpp"
#include "flashlab/events.hpp"
#include "flashlab/warps.hpp"

namespace flashlab {

std::string_view to_string(TraceLevel l) { return l == TraceLevel::block ? "block" : "warp"; }
std::string_view to_string(TraceSource s) { return s == TraceSource::sim ? "sim" : "gpu"; }

TraceLevel parse_trace_level(std::string_view t) {
  if (t == "block") return TraceLevel::block;
  if (t == "warp") return TraceLevel::warp;
  throw ConfigError("level", std::string(t), "one of block, warp");
}

TraceSource parse_trace_source(std::string_view t) {
  if (t == "sim") return TraceSource::sim;
  if (t == "gpu") return TraceSource::gpu;
  throw ConfigError("source", std::string(t), "one of sim, gpu");
}

Config resolved_config(const Problem& p) {
  Config c;
  c.algo = p.algo;
  c.n_q = p.tiling.n_q;
  c.n_k = p.tiling.n_k;
  c.d = p.tiling.d;
  c.b_r = p.tiling.b_r;
  c.b_c = p.tiling.b_c;
  c.auto_blocks = false;
  c.sram_bytes = p.sram_capacity;
  c.batch = p.batch;
  c.heads = p.heads;
  c.dtype = p.dtype;
  c.mask = p.mask;
  c.block_skip = p.block_skip;
  c.scale = p.scale;
  c.warps = p.warps;
  c.split = p.split;
  c.gpu = p.gpu.name;
  return c;
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

Trace record_trace(const Problem& p, TraceLevel level) {
  Trace t;
  t.header.source = TraceSource::sim;
  t.header.level = level;
  t.header.config = resolved_config(p);
  Executor ex(p);
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
  const Inputs in = make_inputs(p, parse_fill("q", spec.q), parse_fill("k", spec.k), parse_fill("v", spec.v),
                                spec.seed);
  NumericsOptions opt;
  opt.trace_blocks = blocks;
  NumericResult r = simulate(p, in, opt);
  t.stats.clear();
  for (std::size_t k = 0; k < blocks.size() && k < r.traces.size(); ++k)
    t.stats.push_back(BlockStats{blocks[k], std::move(r.traces[k])});
  t.header.inputs = spec;
}

}  // namespace flashlab
