// report.hpp — what flashlab-gpu prints: one line per run for people, one JSON object per run for
// scripts/gpu/validate.py.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner.hpp"

namespace flashlab::gpu {

/// "v2 fp16 N_q=1000 N_k=1000 d=64 64x64x4 causal: events agree (812), m/l agree (1920), O 3.1e-04 <= 2.0e-03, ..."
std::string summary_line(const RunResult& r);

/// Every figure of the run: "config" (config_json, the schema of every output), device, events,
/// numbers, timing, byte predictions, and "sim": the simulator's metrics as `flashlab count --json`
/// prints them (flashlab/report/metrics.hpp). `model` is the config's model preset ("" when none).
nlohmann::json to_json(const RunResult& r, const std::string& model);

}  // namespace flashlab::gpu
