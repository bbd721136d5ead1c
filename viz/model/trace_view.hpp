// trace_view.hpp — a trace file opened in the viewer (trace_io.hpp read_trace): its events grouped
// by (launch, block, step), so it can be played like a schedule, with the HBM bytes its load and store
// events carried up to any step. Two traces are compared with diff.hpp diff_traces.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/trace/trace.hpp"

namespace flashlab::viz {

/// HBM bytes by tensor and direction (read = load events, write = store events).
using TensorBytes = std::array<std::array<std::uint64_t, 2>, kTensorCount>;

class TraceView {
 public:
  /// Reads and validates `path`. Throws ConfigError for a file that cannot be read, is not a valid
  /// trace, or holds an invalid config.
  explicit TraceView(const std::string& path);
  /// A trace already in memory; `name` is how the panel calls it.
  TraceView(Trace t, std::string name);

  const Trace& trace() const { return trace_; }
  const std::string& name() const { return name_; }
  const Problem& problem() const { return problem_; }

  /// (launch, block, step) groups in stream order.
  std::size_t steps() const { return starts_.size() - 1; }
  /// The events of group k (k < steps()).
  std::span<const Event> step_events(std::size_t k) const;
  /// The group holding (launch, block, step); steps() when there is none.
  std::size_t find_step(std::uint16_t launch, std::uint32_t block, std::uint32_t step) const;
  /// Bytes of the load and store events of groups [0, k) (one (batch, head)).
  const TensorBytes& bytes_before(std::size_t k);

 private:
  Trace trace_;
  std::string name_;
  Problem problem_;
  std::vector<std::size_t> starts_;  // index of each group's first event, then events.size()
  std::size_t sum_steps_ = 0;        // bytes_ holds groups [0, sum_steps_)
  TensorBytes bytes_{};
};

/// One line about a trace's header: source, level, the config's main fields, and for a GPU trace
/// the device, driver and commit.
std::string header_summary(const TraceHeader& h);

}  // namespace flashlab::viz
