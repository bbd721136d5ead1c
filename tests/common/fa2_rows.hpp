// fa2_rows.hpp — the FA2 call that a row of a measured data set describes (tests/data/pytorch_fa2,
// tests/data/gpu_fa2_backward), as the simulator takes it (header-only).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"

namespace flashlab::test {

/// --kernel fa2 with the row's batch, heads, kv_heads, n_q, n_k, d, dtype and mask; the data sets'
/// "causal" is FA2's, bottom-right.
inline Config fa2_config(const nlohmann::json& row) {
  Config c;
  c.kernel = Kernel::fa2;
  c.batch = row.at("batch");
  c.heads = row.at("heads");
  c.kv_heads = row.at("kv_heads").get<std::int64_t>();
  c.n_q = row.at("n_q");
  c.n_k = row.at("n_k");
  c.d = row.at("d");
  c.dtype = parse_dtype(row.at("dtype").get<std::string>());
  const std::string mask = row.at("mask");
  c.mask = parse_mask(mask == "causal" ? "causal-br" : mask);
  return c;
}

}  // namespace flashlab::test
