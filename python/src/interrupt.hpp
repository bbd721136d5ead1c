// interrupt.hpp — long calls that Ctrl-C stops and that say how far they are (issue 24:
// flashlab.sweep ignored SIGINT for a minute, in Jupyter "interrupt kernel" did nothing, and a
// long count printed nothing until its end). The work runs with the GIL released; an observer of
// the walk takes the GIL every 50 ms of work and runs Python's signal handlers
// (PyErr_CheckSignals): when one raised (KeyboardInterrupt), the walk stops by throwing
// Interrupted, and without_gil() hands the pending Python exception back to the caller. Work past
// 10 seconds writes the command's plain progress line to sys.stderr every 10 seconds
// (report/progress_line.hpp), which a notebook shows under the cell.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/walk_fraction.hpp"

namespace flashlab::python {

/// Thrown out of the work when a Python signal handler raised; the exception is pending.
struct Interrupted {};

/// A walk observer that polls Python's signal handlers: every 1024 steps it looks at the clock,
/// and 50 ms after its last poll it takes the GIL and calls PyErr_CheckSignals; throws
/// Interrupted when a handler raised. It also writes the progress lines.
class SignalPoll final : public StepObserver {
 public:
  /// `what` names the call in the progress lines ("count"); `parts` how many walks it makes (the
  /// points of a sweep, the algorithms of compare), each begun by start().
  explicit SignalPoll(std::string what, std::size_t parts = 1);
  /// The next walk, of p: part k + 1 of parts after k calls.
  void start(const Problem& p);
  void on_step(const StepView& s) override {
    if (walk_) walk_->step(s);
    if (++steps_ % 1024 == 0) poll();
  }
  /// The same between two parts of the work (sweep points, algorithms).
  void poll();

 private:
  void report(double elapsed);

  std::string what_;
  std::size_t parts_, started_ = 0;
  std::optional<WalkFraction> walk_;
  std::uint64_t steps_ = 0;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), last_poll_ = begin_;
  double every_, next_line_;
};

/// f() with the GIL released; Interrupted becomes the pending Python exception.
template <class F>
auto without_gil(F&& f) {
  try {
    pybind11::gil_scoped_release free;
    return std::forward<F>(f)();
  } catch (const Interrupted&) {
    throw pybind11::error_already_set();
  }
}

}  // namespace flashlab::python
