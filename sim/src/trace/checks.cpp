// checks.cpp — what both readers verify beyond the bytes (docs/events.md "Validity").
#include <cstring>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/event_recorder.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab::trace_form {

std::string readable_versions() {
  std::string s = "version";
  for (std::uint32_t v = kOldestTraceVersion; v <= kTraceVersion; ++v) {
    s += v == kOldestTraceVersion ? " " : v == kTraceVersion ? " or " : ", ";
    s += std::to_string(v);
  }
  s += " (this build writes ";
  s += std::to_string(kTraceVersion);
  s += ")";
  return s;
}

void check_event(const Event& e, std::uint64_t index, std::uint32_t version) {
  const auto where = [&](const char* field) { return "trace event " + std::to_string(index) + " " + field; };
  // what each version's writers could write (docs/events.md "Versions"): version 3 added the
  // backward's tensors, the atomic op and the backward's equations, version 4 split-KV's tensors
  // and equations
  const bool v3 = version >= 3, v4 = version >= 4, v6 = version >= 6;
  const int ops = v6 ? kOpCount : v3 ? int(Op::atomic) + 1 : int(Op::reduce) + 1;
  const int eqs = v6 ? kEqCount : v4 ? int(Eq::combine) + 1 : v3 ? int(Eq::grad_k_dense) + 1 : int(Eq::logsumexp) + 1;
  if (std::uint8_t(e.op) >= ops)
    throw ConfigError(where("op"), std::to_string(unsigned(e.op)),
                      v6   ? "0 to 9 (load store compute skip barrier reduce atomic arrive wait commit)"
                      : v3 ? "0 to 6 (load store compute skip barrier reduce atomic) in format version " + std::to_string(version)
                           : "0 to 5 (load store compute skip barrier reduce) in format version " + std::to_string(version));
  const Tensor last = v4 ? Tensor::Lacc : v3 ? Tensor::dS : Tensor::P;
  const bool tensor_ok = e.tensor == Tensor::none || e.tensor <= last;
  if (!tensor_ok)
    throw ConfigError(where("tensor"), std::to_string(unsigned(e.tensor)),
                      v4   ? "0 to 19 (Q K V O l m L S P dO dQ dK dV D dQacc dP dS Oacc Lacc none)"
                      : v3 ? "Q K V O l m L S P dO dQ dK dV D dQacc dP dS or none in format version 3"
                           : "Q K V O l m L S P or none in format version " + std::to_string(version));
  if (int(e.eq) >= eqs)
    throw ConfigError(where("eq"), std::to_string(unsigned(e.eq)),
                      "0 to " + std::to_string(eqs - 1) + " (docs/events.md \"Fields\")");
  if (e.warp < -1) throw ConfigError(where("warp"), std::to_string(e.warp), "-1 (whole block) or a warp index >= 0");
  if (version == 1 && (e.agent != 0 || e.launch != 0))
    throw ConfigError(where("pad"), "non-zero", "three zero bytes at offsets 37-39 (format version 1)");
  if (!v6 && e.agent != 0)
    throw ConfigError(where("pad"), std::to_string(unsigned(e.agent)),
                      "a zero byte at offset 37 in format version " + std::to_string(version) + " (the agent byte is version 6's)");
}

void launches_from_v1(Trace& t) {
  const bool standard = t.header.config.algo == Algo::standard;
  for (Event& e : t.events) e.launch = standard ? standard_launch_of_step(e.step) : 0;
}

void check_trace(const Trace& t) {
  const TraceHeader& h = t.header;
  const Problem p = trace_problem(h);
  const std::int64_t t_r = p.tiling.t_r(), t_c = p.tiling.t_c();
  // agents (format 6): the producer and consumer warpgroups of a schedule with warp roles, else 0
  const Schedule s = make_schedule(p);
  const bool roles = has_warp_roles(s);
  // where an event is (docs/events.md "Fields"): a launch of the config's schedule, one of its thread
  // blocks of a (batch, head), a step below the run's step count
  const std::uint64_t steps = trace_size_bound(p, s, h, TraceFormat::binary).steps;
  const int last_agent = roles ? kAgentConsumer + int(p.consumer_groups()) - 1 : kAgentBlock;
  for (std::size_t k = 0; k < t.events.size(); ++k) {
    const Event& e = t.events[k];
    const auto where = [&](const char* field) { return "trace event " + std::to_string(k) + " " + field; };
    if (h.level == TraceLevel::block && e.warp != -1)
      throw ConfigError(where("warp"), std::to_string(e.warp), "-1 in a block-level trace");
    if (e.launch >= s.launches.size())
      throw ConfigError(where("launch"), std::to_string(e.launch),
                        "a launch of algo " + std::string(to_string(p.algo)) + "'s schedule, 0 to " +
                            std::to_string(s.launches.size() - 1));
    const std::int64_t blocks = blocks_per_head(s.launches[e.launch], p);
    if (std::int64_t(e.block) >= blocks)
      throw ConfigError(where("block"), std::to_string(e.block),
                        "a thread block of launch " + std::to_string(e.launch) + " (" + s.launches[e.launch].name +
                            ") within a (batch, head), 0 to " + std::to_string(blocks - 1));
    if (e.step >= steps)
      throw ConfigError(where("step"), std::to_string(e.step),
                        "0 to " + std::to_string(steps - 1) + " (the steps of one (batch, head) of this config)");
    // tiles of the header's config (docs/events.md "Fields"): a corrupted index is not a difference
    if (e.i < -1 || e.i >= t_r)
      throw ConfigError(where("i"), std::to_string(e.i), "-1 or a Q block index from 0 to T_r - 1 = " + std::to_string(t_r - 1));
    if (e.j < -1 || e.j >= t_c)
      throw ConfigError(where("j"), std::to_string(e.j), "-1 or a K/V block index from 0 to T_c - 1 = " + std::to_string(t_c - 1));
    if (!roles && e.agent != kAgentBlock)
      throw ConfigError(where("pad"), std::to_string(unsigned(e.agent)),
                        "a zero byte at offset 37 (the agent byte: algo " + std::string(to_string(p.algo)) +
                            " has no warp roles)");
    if (roles && e.agent > last_agent)
      throw ConfigError(where("agent"), std::to_string(unsigned(e.agent)),
                        "1 (producer) to " + std::to_string(last_agent) +
                            (p.consumer_groups() == 1 ? std::string(" (consumer warpgroup 0)")
                                                      : " (consumer warpgroups 0 to " +
                                                            std::to_string(p.consumer_groups() - 1) + ")"));
    if (e.op == Op::skip && e.bytes != 0)
      throw ConfigError(where("bytes"), std::to_string(e.bytes), "0 for a skip event (a skipped tile moves nothing)");
  }
  const std::vector<BlockStats>& stats = t.stats;
  if (stats.empty() != !h.inputs.has_value())
    throw ConfigError("trace stats", stats.empty() ? "none" : std::to_string(stats.size()) + " blocks",
                      "statistics exactly when the header names their inputs");
  if (stats.empty()) return;
  std::int64_t prev = -1;
  for (const BlockStats& b : stats) {
    if (b.i <= prev || b.i >= p.tiling.t_r())
      throw ConfigError("trace stats block", std::to_string(b.i),
                        "increasing Q block indices from 0 to T_r - 1 = " + std::to_string(p.tiling.t_r() - 1));
    prev = b.i;
    const auto rows = std::size_t(p.tiling.rows(b.i));
    for (const StatSnapshot& s : b.snapshots)
      if (s.m.size() != rows || s.l.size() != rows)
        throw ConfigError("trace stats block " + std::to_string(b.i) + " step " + std::to_string(s.step),
                          std::to_string(s.m.size()) + " values",
                          "rows(i) = " + std::to_string(rows) + " values of m and of l");
  }
}

}  // namespace flashlab::trace_form
