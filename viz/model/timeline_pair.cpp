// timeline_pair.cpp — see timeline_pair.hpp.
#include "model/timeline_pair.hpp"

#include <algorithm>
#include <stdexcept>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab::viz {

double TimelinePair::end_s() const {
  double end = 0;
  for (const TimelineSide& s : sides)
    if (s.timeline) end = std::max(end, s.timeline->time_s);
  return end;
}

Algo partner_algo(const Config& c) { return c.algo == Algo::v3 ? Algo::v2 : c.algo; }

TimelinePair compute_timelines(const Config& c, std::int64_t sm) {
  TimelinePair out;
  out.sides[0].algo = Algo::v3;
  out.sides[1].algo = partner_algo(c);
  for (TimelineSide& side : out.sides) {
    Config ci = c;
    ci.algo = side.algo;
    ci.pass = Pass::forward;  // V3 is a forward; the timeline lays out the first launch with tiles
    try {
      const Problem p = resolve(ci);
      side.b_r = p.tiling.b_r;
      side.b_c = p.tiling.b_c;
      side.q_blocks = p.algo == Algo::v3 || (p.algo != Algo::standard && p.grid == GridKind::q_block);
      TimelineOptions o;
      o.sm = sm;
      side.timeline = timeline(p, make_schedule(p), o);
    } catch (const ConfigError& e) {
      side.error = e.what();
    } catch (const std::invalid_argument& e) {
      side.error = e.what();
    }
  }
  return out;
}

}  // namespace flashlab::viz
