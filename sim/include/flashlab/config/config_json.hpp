// config_json.hpp — the one JSON form of a configuration (docs/output.md "Config"): the trace
// header, `flashlab count|compare|run --json` and `flashlab-gpu --json` all write it with
// config_json, and the trace readers read it back with config_from_json (schedule/
// config_from_json.hpp: reading it back resolves it).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"

namespace flashlab {

/// p as one JSON object with the keys
///   algo, n_q, n_k, d, b_r, b_c, batch, heads, dtype, mask, block_skip, scale, warps, split,
///   sram_capacity_bytes (M, bytes), gpu   — what resolve() needs to rebuild p exactly;
///   t_r, t_c, e_in (bytes per element of Q K V O S P)   — derived, written for readers;
///   model   — the model preset the config was built from ("" when none).
/// Sizes are integers, mask/dtype/split/algo the names that the parsers of config.hpp accept.
nlohmann::json config_json(const Problem& p, const std::string& model = "");

}  // namespace flashlab
