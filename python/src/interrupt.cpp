// interrupt.cpp — polling Python's signal handlers from a walk without the GIL, and the progress
// lines (interrupt.hpp).
#include "interrupt.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "flashlab/report/progress_line.hpp"

namespace flashlab::python {

SignalPoll::SignalPoll(std::string what, std::size_t parts)
    : what_(std::move(what)), parts_(std::max<std::size_t>(parts, 1)), every_(report::progress_every()),
      next_line_(every_) {}

void SignalPoll::start(const Problem& p) {
  walk_.emplace(p);
  ++started_;
}

void SignalPoll::poll() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ < std::chrono::milliseconds(50)) return;
  last_poll_ = now;
  pybind11::gil_scoped_acquire hold;
  if (PyErr_CheckSignals() != 0) throw Interrupted{};
  const double elapsed = std::chrono::duration<double>(now - begin_).count();
  if (elapsed >= next_line_) report(elapsed);
}

void SignalPoll::report(double elapsed) {
  next_line_ = elapsed + every_;
  const std::size_t done = started_ > 0 ? started_ - 1 : 0;
  const double fraction = (double(done) + (walk_ ? walk_->value() : 0.0)) / double(parts_);
  const std::string part = parts_ > 1 ? fmt::format("{}/{}", std::min(started_, parts_), parts_) : "";
  const std::string line = report::progress_line(what_, fraction, part, elapsed) + "\n";
  PySys_WriteStderr("%s", line.c_str());
}

}  // namespace flashlab::python
