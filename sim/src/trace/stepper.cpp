// stepper.cpp — one step at a time for playback (see stepper.hpp).
#include "flashlab/trace/stepper.hpp"

#include <algorithm>
#include <numeric>

namespace flashlab {
namespace {

// Keeps the events of the stepper's level and sums the work of each warp.
class StepSink : public WarpEventSink {
 public:
  StepSink(TraceLevel level, std::vector<Event>& events, std::vector<WarpWork>& work)
      : level_(level), events_(events), work_(work) {}
  void on_event(const Event& e, const WarpWork* w) override {
    if (w) work_[std::size_t(e.warp)] += *w;
    if (!w || level_ == TraceLevel::warp) events_.push_back(e);
  }

 private:
  TraceLevel level_;
  std::vector<Event>& events_;
  std::vector<WarpWork>& work_;
};

}  // namespace

Stepper::Stepper(const Problem& p, TraceLevel level, const Inputs* inputs)
    : p_(p), level_(level), ex_(p), work_(std::size_t(p.warps)) {
  if (!inputs) return;
  NumericsOptions opt;
  opt.trace_blocks.resize(std::size_t(p.tiling.t_r()));
  std::iota(opt.trace_blocks.begin(), opt.trace_blocks.end(), std::int64_t(0));
  snapshots_ = simulate(p, *inputs, opt).traces;
}

bool Stepper::step() {
  if (!ex_.step()) return false;
  const StepView& s = ex_.last();
  events_.clear();
  std::fill(work_.begin(), work_.end(), WarpWork{});
  StepSink sink(level_, events_, work_);
  walk_step_events(p_, s, sink);
  stats_ = nullptr;
  if (s.i >= 0 && std::size_t(s.i) < snapshots_.size()) {
    // the latest snapshot of block i at or before this step
    const auto& snaps = snapshots_[std::size_t(s.i)];
    const auto it = std::upper_bound(snaps.begin(), snaps.end(), s.step,
                                     [](std::uint32_t step, const StatSnapshot& x) { return step < x.step; });
    if (it != snaps.begin()) stats_ = &*std::prev(it);
  }
  return true;
}

}  // namespace flashlab
