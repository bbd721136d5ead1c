// config_from_json.hpp — config_json's object (config/config_json.hpp, docs/output.md "Config") read
// back: the trace readers rebuild a trace's Problem from its header with it. It resolves what it
// reads (resolve.hpp), so it sits above the schedule.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"

namespace flashlab {

/// A config read back: the Config that resolves to the written Problem, and its model name.
struct ConfigJson {
  Config config;
  std::string model;
};

/// Reads config_json's object. Every key config_json writes (config_json.hpp) except the derived ones and `model` is required;
/// the derived keys, when present, must equal what the config resolves to; no other key is
/// allowed. The five key names of format-1 trace headers are read as their new names (one rule,
/// docs/output.md): nq -> n_q, nk -> n_k, br -> b_r, bc -> b_c, sram -> sram_capacity_bytes, and
/// an object may not use both names of one field. Throws ConfigError whose field is
/// `where + "." + key` (where = e.g. "trace header config"), with the value and what is allowed,
/// for a missing, unknown, mistyped or out-of-range value (resolve()'s checks included).
ConfigJson config_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace flashlab
