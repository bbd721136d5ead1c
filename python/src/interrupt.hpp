// interrupt.hpp — long calls that Ctrl-C stops (issue 24: flashlab.sweep ignored SIGINT for a
// minute; in Jupyter "interrupt kernel" did nothing). The work runs with the GIL released; an
// observer of the walk takes the GIL every 50 ms of work and runs Python's signal handlers
// (PyErr_CheckSignals): when one raised (KeyboardInterrupt), the walk stops by throwing
// Interrupted, and without_gil() hands the pending Python exception back to the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include <pybind11/pybind11.h>

#include "flashlab/executor/executor.hpp"

namespace flashlab::python {

/// Thrown out of the work when a Python signal handler raised; the exception is pending.
struct Interrupted {};

/// A walk observer that polls Python's signal handlers: every 1024 steps it looks at the clock,
/// and 50 ms after its last poll it takes the GIL and calls PyErr_CheckSignals; throws
/// Interrupted when a handler raised.
class SignalPoll final : public StepObserver {
 public:
  void on_step(const StepView&) override {
    if (++steps_ % 1024 == 0) poll();
  }
  /// The same between two parts of the work (sweep points, algorithms).
  void poll();

 private:
  std::uint64_t steps_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
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
