// trace_view.cpp — see trace_view.hpp.
#include "model/trace_view.hpp"

#include <algorithm>

#include "flashlab/executor/counters.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab::viz {

TraceView::TraceView(const std::string& path) : TraceView(read_trace(path), path) {}

TraceView::TraceView(Trace t, std::string name)
    : trace_(std::move(t)), name_(std::move(name)), problem_(trace_problem(trace_.header)) {
  const auto& ev = trace_.events;
  for (std::size_t k = 0; k < ev.size(); ++k)
    if (k == 0 || ev[k].launch != ev[k - 1].launch || ev[k].block != ev[k - 1].block || ev[k].step != ev[k - 1].step)
      starts_.push_back(k);
  starts_.push_back(ev.size());
}

std::span<const Event> TraceView::step_events(std::size_t k) const {
  return std::span<const Event>(trace_.events).subspan(starts_[k], starts_[k + 1] - starts_[k]);
}

std::size_t TraceView::find_step(std::uint16_t launch, std::uint32_t block, std::uint32_t step) const {
  for (std::size_t k = 0; k < steps(); ++k) {
    const Event& e = trace_.events[starts_[k]];
    if (e.launch == launch && e.block == block && e.step == step) return k;
  }
  return steps();
}

const TensorBytes& TraceView::bytes_before(std::size_t k) {
  k = std::min(k, steps());
  if (k < sum_steps_) {
    bytes_ = {};
    sum_steps_ = 0;
  }
  for (std::size_t n = starts_[sum_steps_]; n < starts_[k]; ++n) {
    const Event& e = trace_.events[n];
    if ((e.op == Op::load || e.op == Op::store) && e.tensor != Tensor::none)
      bytes_[std::size_t(e.tensor)][e.op == Op::load ? 0 : 1] += e.bytes;
  }
  sum_steps_ = k;
  return bytes_;
}

std::string header_summary(const TraceHeader& h) {
  const Config& c = h.config;
  std::string s = std::string(to_string(h.source)) + " trace, " + std::string(to_string(h.level)) + " level: " +
                  std::string(to_string(c.algo)) + ", N_q = " + std::to_string(c.n_q) + ", N_k = " +
                  std::to_string(c.n_k) + ", d = " + std::to_string(c.d) + ", B_r x B_c = " +
                  std::to_string(c.b_r.value_or(0)) + " x " + std::to_string(c.b_c.value_or(0)) + ", mask " +
                  to_string(c.mask) + ", " + std::string(to_string(c.dtype)) + ", " + (c.warps ? std::to_string(*c.warps) : std::string("default")) +
                  " warps";
  if (h.source == TraceSource::gpu) s += "; " + h.gpu.device + ", driver " + h.gpu.driver + ", commit " + h.gpu.commit;
  return s;
}

}  // namespace flashlab::viz
