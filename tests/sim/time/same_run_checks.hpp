// same_run_checks.hpp — the time data sets' validation step, re-judged here from its raw figures
// (scripts/gpu/time_dataset.py step 1): every timed kernel instance was checked in the same run.
#pragma once

#include <nlohmann/json.hpp>

namespace flashlab::test {

/// For each row of `d` (a time_dataset.py JSON: "ours" and "checks", one check per row, in order):
/// the instrumented kernel's events equal the simulator's, as the simulator counts them now; O
/// against float64 within its dtype's tolerance, dQ, dK, dV within theirs, every value finite; the
/// canary past the outputs intact. doctest CHECKs; nothing is read from the run's own verdict.
void check_same_run_checks(const nlohmann::json& d);

}  // namespace flashlab::test
