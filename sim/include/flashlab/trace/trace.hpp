// trace.hpp — a trace: a versioned header (source, full config, GPU run facts), the event stream
// of one (batch, head) at block or warp level, and, with numerics on, m and l of chosen Q blocks
// after every step. The file forms are in trace_io.hpp; the format is docs/events.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// The format version this build writes and reads (docs/events.md "Versions").
inline constexpr std::uint32_t kTraceVersion = 6;

/// block: the events of executor/event_recorder.hpp only (warp = -1), what the CUDA kernels record;
/// warp: the same stream with the warp-level events of warps.hpp inserted (docs/events.md).
enum class TraceLevel : std::uint8_t { block = 0, warp = 1 };
/// Who recorded the trace: the simulator or an instrumented kernel on a GPU.
enum class TraceSource : std::uint8_t { sim = 0, gpu = 1 };

std::string_view to_string(TraceLevel l);
std::string_view to_string(TraceSource s);
/// Throw ConfigError(field, text, allowed) for an unknown name.
TraceLevel parse_trace_level(std::string_view text);
TraceSource parse_trace_source(std::string_view text);

/// Throws ConfigError("level", "warp", ...) for a warp-level trace of a schedule with warp roles
/// (schedule.hpp has_warp_roles: V3's producer and consumer warpgroups), which the warp model
/// (warps.hpp) has no rules for; any other level and schedule pass. `algo` names the schedule's
/// algorithm in the message. `flashlab trace` and Python's trace() both ask it.
void check_trace_level(TraceLevel level, const Schedule& s, Algo algo);

/// Facts of a GPU run; all required (non-empty) when the source is gpu.
struct GpuRunInfo {
  std::string device;  // e.g. "NVIDIA H200"
  std::string driver;  // e.g. "580.65.06"
  std::string commit;  // the flashlab commit the kernels were built from
  bool operator==(const GpuRunInfo&) const = default;
};

/// How the numerics' inputs were made (numerics.hpp Fill texts and the seed), so that a run can
/// be repeated; present when the trace holds m and l statistics.
struct InputSpec {
  std::string q = "random", k = "random", v = "random";  // parse_fill texts
  std::uint64_t seed = 0;
  bool operator==(const InputSpec&) const = default;
};

struct TraceHeader {
  TraceSource source = TraceSource::sim;
  TraceLevel level = TraceLevel::block;
  Config config;                 // fully resolved: every optional set but the switches the algorithm does not take (resolved_config)
  std::string model;             // the model preset the config came from ("" when none)
  GpuRunInfo gpu;                // source == gpu only
  std::string command;           // the command line that recorded it (required for gpu)
  std::optional<InputSpec> inputs;  // present exactly when stats are
};

/// m and l of Q block i after each step (numerics.hpp StatSnapshot: rows(i) values each).
struct BlockStats {
  std::int64_t i = 0;
  std::vector<StatSnapshot> snapshots;
};

struct Trace {
  TraceHeader header;
  std::vector<Event> events;     // stream order: by block, by step, then order within the step
  std::vector<BlockStats> stats; // by increasing i
};

/// The Config that resolves to exactly p (every optional filled in from p, except the switches
/// p.algo does not take: resolve.hpp without_untaken_switches): what a header holds.
Config resolved_config(const Problem& p);
/// A header's config, validated: resolve(h.config), which throws ConfigError for a bad value.
Problem trace_problem(const TraceHeader& h);

/// Appends the events of step s at `level`: block = append_block_events; warp = the same with
/// the warp-level events of warps.hpp inserted.
void append_step_events(const Problem& p, const StepView& s, TraceLevel level, std::vector<Event>& out);

/// append_step_events for a whole run, fast: at block level the events of a step depend only on
/// its actions, whether it skips, and whether its i and j are absent, the last (ragged) block or
/// another, so they are made once per kind of step and copied with block, step, i and j set.
class StepEventSource {
 public:
  StepEventSource(const Problem& p, TraceLevel level);
  void append(const StepView& s, std::vector<Event>& out);

 private:
  struct Kind {
    std::vector<Action> actions;
    bool skip = false;
    int edge_i = 0, edge_j = 0;  // 0: absent (-1), 1: the last block, 2: another block
    std::vector<Event> events;
  };
  const Kind& kind_of(const StepView& s);

  Problem p_;
  TraceLevel level_;
  std::int64_t t_r_, t_c_;
  std::vector<Kind> kinds_;
  std::array<std::int16_t, 4096> slot_;  // the kind last seen for (level, skip, edges, size mod 16)
};

/// An observer that keeps the events of a run at one level.
class TraceRecorder : public StepObserver {
 public:
  TraceRecorder(const Problem& p, TraceLevel level) : source_(p, level) {}
  void on_step(const StepView& s) override { source_.append(s, events_); }
  std::vector<Event>& events() { return events_; }

 private:
  StepEventSource source_;
  std::vector<Event> events_;
};

/// A simulator trace of p at `level` (no statistics): header + every event of one (batch, head).
Trace record_trace(const Problem& p, TraceLevel level);
/// The same for schedule `s` instead of p's own (schedule_json.hpp).
Trace record_trace(const Problem& p, const Schedule& s, TraceLevel level);

/// Adds m and l of Q blocks `blocks` after every step, computed by numerics.hpp's simulate() on
/// inputs made from `inputs`. Throws ConfigError("stats-blocks", ...) for a block outside
/// [0, T_r) or a repeated one; an empty list adds nothing.
void add_stats(Trace& t, const Problem& p, std::vector<std::int64_t> blocks, const InputSpec& inputs);

}  // namespace flashlab
