// walk_fraction.cpp — the fraction of a walk done (executor/walk_fraction.hpp).
#include "flashlab/executor/walk_fraction.hpp"

#include <algorithm>

#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

WalkFraction::WalkFraction(const Problem& p)
    : tiles_(double(p.tiling.t_r()) * double(p.tiling.t_c())),
      launches_(double(std::max<std::size_t>(make_schedule(p).launches.size(), 1))) {}  // every pass and launch p runs

void WalkFraction::step(const StepView& s) {
  if (s.launch != launch_) {
    launch_ = s.launch;
    walked_ = 0;
  }
  if (s.i >= 0 && s.j >= 0) ++walked_;
}

double WalkFraction::value() const {
  return std::min(1.0, (double(launch_) + std::min(1.0, double(walked_) / tiles_)) / launches_);
}

}  // namespace flashlab
