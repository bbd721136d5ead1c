// timeline_json.cpp — one SM's timeline as JSON (timeline_json.hpp).
#include "flashlab/report/timeline_json.hpp"

namespace flashlab::report {

nlohmann::json timeline_json(const Timeline& t) {
  nlohmann::json j;
  j["sm"] = t.sm;
  j["v3"] = t.v3;
  j["time_s"] = t.time_s;
  j["analytic_s"] = t.analytic_s;
  j["tiles"] = t.tiles;
  j["stages"] = t.stages;
  j["truncated"] = t.truncated;
  j["note"] = t.note;
  j["lanes"] = nlohmann::json::array();
  for (const TimelineLane& l : t.lanes)
    j["lanes"].push_back({{"name", l.name}, {"kind", l.kind == LaneKind::agent ? "agent" : "unit"}});
  j["units"] = nlohmann::json::array();
  for (const UnitUse& u : t.units) {
    nlohmann::json idle = nlohmann::json::array();
    for (const IdleCause& c : u.idle) idle.push_back({{"cause", c.cause}, {"fraction", c.fraction}});
    j["units"].push_back({{"unit", to_string(u.unit)}, {"busy", u.busy}, {"idle", idle}});
  }
  j["critical_path"] = nlohmann::json::array();
  for (const CriticalPart& c : t.critical_path)
    j["critical_path"].push_back({{"what", c.what}, {"seconds", c.seconds}, {"fraction", c.fraction}});
  j["ring"] = nlohmann::json::array();
  for (const RingSample& r : t.ring) j["ring"].push_back({r.t_s, r.full});
  j["intervals"] = nlohmann::json::array();
  for (const TimelineInterval& iv : t.intervals)
    j["intervals"].push_back({iv.start_s, iv.end_s, iv.lane, to_string(iv.what), iv.i, iv.j, iv.bh, tensor_name(iv)});
  return j;
}

TimelineLaunch timeline_launch(const Schedule& s) {
  std::size_t x = 0;
  while (x + 1 < s.launches.size() && walked_loops(s.launches[x]).empty()) ++x;
  return {x + 1, s.launches.size(), x < s.launches.size() ? s.launches[x].name : std::string()};
}

nlohmann::json timeline_json(const Timeline& t, const TimelineLaunch& launch) {
  nlohmann::json j = timeline_json(t);
  j["launch"] = {{"index", launch.index}, {"count", launch.count}, {"name", launch.name}};
  return j;
}

}  // namespace flashlab::report
