// interrupt.cpp — polling Python's signal handlers from a walk without the GIL (interrupt.hpp).
#include "interrupt.hpp"

namespace flashlab::python {

void SignalPoll::poll() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(50)) return;
  last_ = now;
  pybind11::gil_scoped_acquire hold;
  if (PyErr_CheckSignals() != 0) throw Interrupted{};
}

}  // namespace flashlab::python
