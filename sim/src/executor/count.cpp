// count.cpp — the executor with the memory levels asked for attached (count.hpp).
#include "flashlab/executor/count.hpp"

#include <optional>

#include "flashlab/executor/l2_model.hpp"
#include "flashlab/executor/sector_counter.hpp"

namespace flashlab {

Counters count(const Problem& p, bool sectors, bool l2, StepObserver* also) {
  Executor e(p);
  std::optional<SectorCounter> sector_level;
  std::optional<L2Model> l2_level;
  if (sectors) e.add_level(&sector_level.emplace(p, e.schedule()));
  if (l2) e.add_level(&l2_level.emplace(p, e.schedule()));
  if (also) e.add_observer(also);
  e.run();
  return e.counters();
}

}  // namespace flashlab
