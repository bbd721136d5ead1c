// timeline_json.hpp — the JSON object of one SM's timeline (flashlab/time/timeline.hpp), built once
// here for every program that writes it: `flashlab timeline --json` (apps/flashlab/cmd_timeline.cpp)
// and the Python module's timeline(), which returns the same object as a dict.
#pragma once

#include <nlohmann/json.hpp>

#include "flashlab/time/timeline.hpp"

namespace flashlab::report {

/// t as JSON: sm, v3, time_s and analytic_s (seconds), tiles, stages, truncated, note; lanes[] (name,
/// kind "agent" or "unit"); units[] (unit, busy and idle[] of {cause, fraction}: fractions of
/// time_s); critical_path[] (what, seconds, fraction); ring[] of [t_s, full] (stages holding an
/// unreleased K_j or V_j from t_s on); intervals[] of [start_s, end_s, lane (index into lanes),
/// what (to_string(Phase)), i, j, bh] (-1 where none).
nlohmann::json timeline_json(const Timeline& t);

}  // namespace flashlab::report
