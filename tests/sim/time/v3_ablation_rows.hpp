// v3_ablation_rows.hpp — the staged V3 kernel's Nsight ablation on the H200 (issue 27 item 5) as the
// tests read it: tests/data/gpu_v3/v3_ablation.json, each row beside the same shape's FA3 row of
// v3_ncu.json, the measured speed relative to FA3 from the medians of the rows' kernel time_ns, and the
// simulator Config of each (the kernel's tile, its switches). Used by timeline_h200_test.cpp (the
// timeline's speed) and v3_ablation_test.cpp (the analytic time model's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"

namespace flashlab::test {

/// tests/data/gpu_v3/<name> as JSON; a doctest REQUIRE fails when it cannot be read.
nlohmann::json v3_data(const std::string& name);

/// The median of a measured row's kernel durations (time_ns, nanoseconds); REQUIREs one or more.
double median_time_ns(const nlohmann::json& row);

/// FA3's configuration of a measured row (its tile as the kernel ran it, fp16, the H200), with the
/// ablation's switch set: stages1 -> 1 stage, no_pingpong, no_overlap, grid; no_ws -> warp
/// specialization off, which the kernel's variant also takes with ping-pong off and the grid scheduler
/// (scripts/gpu/v3_kernel/variants.cuh). Other variants (static, dynamic: persistent schedulers the
/// simulator does not tell apart) give nullopt.
std::optional<Config> config_of(const nlohmann::json& row, const std::string& variant);

/// One ablation row the simulator can configure: its variant, the Configs of the variant and of FA3 at
/// the same shape, the measured speed relative to FA3 (FA3's median time over the variant's: < 1 slower)
/// and a name ("no_ws d 128 none N 16384").
struct AblationRow {
  std::string variant, name;
  Config config, fa3;
  double measured = 0;
};

/// Every row of v3_ablation.json that ran (exit 0) and config_of maps, in the file's order (40 at run 5:
/// 8 shapes x 5 variants); REQUIREs a v3_ncu.json row for each row's shape.
const std::vector<AblationRow>& ablation_rows();

}  // namespace flashlab::test
