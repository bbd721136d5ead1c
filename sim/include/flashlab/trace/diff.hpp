// diff.hpp — compares two traces of one config launch by launch, block by block and step by step (sim against GPU,
// or two simulator runs): the first divergence with its context, counts of differing events, and
// m and l within a tolerance that depends on the dtype. docs/events.md "Comparing traces".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/trace/trace.hpp"

namespace flashlab {

/// Default relative tolerance on m and l by dtype: fp32 1e-5, fp16 1e-3, bf16 8e-3 (about two
/// units of the input type's rounding, 2^-11 and 2^-8, for kernels that round S to the input
/// type; fp32 allows for a different summation order). docs/events.md gives the reasoning.
double ml_tolerance(Dtype t);

/// "key: value in A, value in B" for each key of the config schema (config_json.hpp, the model
/// name aside) whose resolved values differ (empty: same config). Throws ConfigError for a config
/// that does not resolve.
std::vector<std::string> config_differences(const Config& a, const Config& b);
/// Names of the Event fields that differ ("launch", "block", "step", "op", "tensor", "i", "j",
/// "rows", "cols", "bytes", "warp", "eq").
std::vector<std::string> event_field_differences(const Event& a, const Event& b);

struct DiffOptions {
  std::optional<double> tol_ml;  // relative tolerance on m and l; default ml_tolerance(dtype)
  std::size_t context = 3;       // events shown before the first divergence
};

/// The first position where the traces differ.
struct EventDivergence {
  std::uint16_t launch = 0;           // the (launch, block, step) group where it is
  std::uint32_t block = 0, step = 0;
  std::size_t index = 0;              // position within that step's events
  std::optional<Event> a, b;          // empty: that trace has no event there
  std::vector<Event> context;         // the events before it in the step, equal in both
  std::vector<std::string> fields;    // fields that differ (when both are present)
};

/// The first m or l value outside the tolerance (or a snapshot whose step or j differ).
struct StatDivergence {
  std::int64_t i = 0;             // Q block
  std::size_t snapshot = 0;       // index in the block's snapshots
  std::uint32_t step = 0;
  char which = 'm';               // 'm', 'l', or 's' for the snapshot's step/j/count
  std::size_t row = 0;            // row within the block
  double a = 0, b = 0;
};

struct DiffResult {
  TraceLevel level = TraceLevel::block;  // the level compared (the lower of the two)
  bool dropped_warp_events = false;      // warp-level events of one trace left out to compare
  std::uint64_t events_a = 0, events_b = 0;  // events compared
  std::uint64_t differing_events = 0;    // positions that differ, plus events only one trace has
  std::uint64_t differing_steps = 0;     // (launch, block, step) groups with any difference
  std::optional<EventDivergence> first;
  double tol_ml = 0;
  std::uint64_t values_compared = 0;     // m and l values compared
  std::uint64_t values_differing = 0;    // outside the tolerance (and mismatched snapshots)
  std::optional<StatDivergence> first_stat;
  std::vector<std::string> notes;        // e.g. statistics blocks in one trace only

  bool agree() const { return differing_events == 0 && values_differing == 0; }
};

/// Compares a and b. Throws ConfigError("traces", ...) naming every differing config field when
/// they are traces of different configs. A warp-level trace compared with a block-level one is
/// compared at block level (its warp events left out, noted in the result).
DiffResult diff_traces(const Trace& a, const Trace& b, const DiffOptions& opt = {});

/// The report `flashlab diff` prints: agreement, or the first divergence with its context, the
/// counts, and the first m/l value out of tolerance.
std::string format_diff(const DiffResult& r, const std::string& name_a = "A", const std::string& name_b = "B");

}  // namespace flashlab
