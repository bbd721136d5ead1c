// time_walk.cpp — see time_walk.hpp.
#include "model/time_walk.hpp"

#include "flashlab/contract/error.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::viz {

std::vector<WalkBar> time_walk(const Config& c) {
  std::vector<WalkBar> bars;
  for (const WalkStep& step : v1_to_v2_walk()) {
    WalkBar bar{step, std::nullopt, {}};
    try {
      const Problem p = resolve(with_switches(c, step.switches));
      const std::int64_t tiles = p.tiling.t_r() * p.tiling.t_c();
      if (tiles > kWalkTileLimit)
        bar.why = "T_r x T_c = " + report::group_digits(std::uint64_t(tiles)) + " tiles: more than " +
                  report::group_digits(std::uint64_t(kWalkTileLimit)) + ", left out to stay interactive (flashlab explain "
                  "times it)";
      else
        bar.figures = report::measure(p);
    } catch (const ConfigError& e) {
      bar.why = e.what();
    }
    bars.push_back(std::move(bar));
  }
  return bars;
}

}  // namespace flashlab::viz
