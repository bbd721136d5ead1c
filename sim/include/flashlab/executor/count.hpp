// count.hpp — counting a whole configuration: the executor walked to its end with the memory
// levels asked for attached (the count path of `flashlab count`, the Python module and the tests).
#pragma once

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab {

/// Counts p's schedule (make_schedule(p)) walked to its end, all batch * heads. `sectors`: a
/// SectorCounter attached, Counters::levels[sector] filled (sector_counter.hpp); `l2`: an L2Model
/// attached, levels[l2] and levels[dram] and each launch's L2 figures filled (l2_model.hpp);
/// `also`, when given, sees every step after them (a progress bar).
Counters count(const Problem& p, bool sectors = false, bool l2 = false, StepObserver* also = nullptr);

}  // namespace flashlab
