// config_json.hpp — the one JSON form of a configuration (docs/output.md "Config"): the trace
// header, `flashlab count|compare|run --json` and `flashlab-gpu --json` all write it with
// config_json, and the trace readers read it back with config_from_json.
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

/// A config read back: the Config that resolves to the written Problem, and its model name.
struct ConfigJson {
  Config config;
  std::string model;
};

/// Reads config_json's object. Every key above except the derived ones and `model` is required;
/// the derived keys, when present, must equal what the config resolves to; no other key is
/// allowed. The five key names of format-1 trace headers are read as their new names (one rule,
/// docs/output.md): nq -> n_q, nk -> n_k, br -> b_r, bc -> b_c, sram -> sram_capacity_bytes, and
/// an object may not use both names of one field. Throws ConfigError whose field is
/// `where + "." + key` (where = e.g. "trace header config"), with the value and what is allowed,
/// for a missing, unknown, mistyped or out-of-range value (resolve()'s checks included).
ConfigJson config_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace flashlab
