// timeline_json.hpp — the JSON object of one SM's timeline (flashlab/time/timeline.hpp), built once
// here for every program that writes it: `flashlab timeline --json` (apps/flashlab/cmd_timeline.cpp)
// and the Python module's timeline(), which returns the same object as a dict.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/time/timeline.hpp"

namespace flashlab::report {

/// t as JSON: sm, v3, time_s and analytic_s (seconds), tiles, stages, truncated, note; lanes[] (name,
/// kind "agent" or "unit"); units[] (unit, busy and idle[] of {cause, fraction}: fractions of
/// time_s); critical_path[] (what, seconds, fraction); ring[] of [t_s, full] (stages holding an
/// unreleased K_j or V_j from t_s on); intervals[] of [start_s, end_s, lane (index into lanes),
/// what (to_string(Phase)), i, j, bh (-1 where none), tensor ("Q", "K", "V" or "O" for V3's loads,
/// stores and waits; "" where none)].
nlohmann::json timeline_json(const Timeline& t);

/// Which launch of schedule s timeline() lays out: the first whose steps walk tiles, the last when
/// none does (timeline.hpp; the rule of sim/src/time/timeline.cpp: launches whose steps are their
/// prologue alone are passed over),
/// `index` 1-based, of `count`, named as the schedule names it ("flash_bwd_dot_do_o").
struct TimelineLaunch {
  std::size_t index = 1, count = 1;
  std::string name;
};
TimelineLaunch timeline_launch(const Schedule& s);

/// timeline_json(t) and "launch": {index, count, name}: which launch of several it shows.
nlohmann::json timeline_json(const Timeline& t, const TimelineLaunch& launch);

}  // namespace flashlab::report
