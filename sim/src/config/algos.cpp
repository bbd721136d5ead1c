// algos.cpp — the three algorithms in report order and one algorithm of a multi-algorithm command
// (config.hpp all_algos, with_algo). Resolving one with the algorithm named in errors:
// schedule/resolve_algo.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab {

const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> algos{Algo::standard, Algo::v1, Algo::v2};
  return algos;
}

Config with_algo(Config c, Algo a, const std::vector<Algo>& algos) {
  c.algo = a;
  if (algos.size() > 1) c = without_untaken_switches(c, Untaken::all);  // the others' switches
  if (a != Algo::v2 && std::find(algos.begin(), algos.end(), Algo::v2) != algos.end())
    c.backward_form = BackwardForm::released;
  return c;
}

}  // namespace flashlab
