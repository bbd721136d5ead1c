// time_data_files.hpp — the committed GPU time data sets of tests/data/gpu_time/ (written by
// scripts/gpu/time_dataset.py: h200.json, h200_new_shapes.json, h200_compare.json), read for the
// tests that score the time model on them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "time_data.hpp"

namespace flashlab::test {

/// The path of data set `name` ("h200.json") under tests/data/gpu_time/.
std::string time_data_path(const std::string& name);
/// Data set `name` as JSON (meta, ours, torch, checks); a doctest REQUIRE fails when it cannot be read.
nlohmann::json time_data_json(const std::string& name);
/// What a generated page says of the run that wrote the data set with meta `m`: "`COMMAND`, DATE, GPU
/// with driver DRIVER; kernel sources `SHA-256's first 12 digits`".
std::string data_set_source(const nlohmann::json& m);
/// Its rows, each walked once per test binary (timefit::load_rows) and kept for the binary's life.
const std::vector<timefit::Row>& time_data_rows(const std::string& name);

}  // namespace flashlab::test
