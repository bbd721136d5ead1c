// walk_fraction.hpp — how far a walk has come, for progress reports (the `flashlab` command's
// bar and lines, the Python module's lines): launch k of n with w of its T_r * T_c tile steps
// walked (visited or skipped) is at (k + w / (T_r T_c)) / n.
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab {

class WalkFraction {
 public:
  explicit WalkFraction(const Problem& p);
  /// Counts step s of the walk.
  void step(const StepView& s);
  /// The fraction walked, in [0, 1].
  double value() const;

 private:
  double tiles_, launches_;
  std::uint16_t launch_ = 0;
  std::uint64_t walked_ = 0;
};

}  // namespace flashlab
