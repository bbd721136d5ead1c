// gpu_data.hpp — reading the GPU runs committed under tests/data/ (gpu/, gpu_backward/,
// gpu_split/): their traces, results.json and flag lines, and the simulator's twin of a GPU trace.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace.hpp"

namespace flashlab::gpu_data {

namespace fs = std::filesystem;

/// The folder tests/data/NAME.
inline fs::path data_dir(const std::string& name) { return fs::path(FLASHLAB_TEST_DATA) / name; }

/// The .trace files of a folder, sorted (none when the folder is missing).
inline std::vector<fs::path> trace_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".trace") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// A JSON file of the folder (results.json), which must exist.
inline nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

/// The Problem of a flashlab-gpu flag line ("--algo v2 --nq 1000 ..."), built by the flags' own
/// builder (flags/config_flags.hpp build_config) as the command line builds it; flashlab-gpu's own
/// --stats-blocks is left out.
inline Problem problem_of(const std::string& flags) {
  std::istringstream in(flags);
  std::vector<std::string> w{std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
  std::vector<cli::FlagText> given;
  for (std::size_t k = 0; k + 1 < w.size(); k += 2)
    if (w[k] != "--stats-blocks") given.push_back({w[k].substr(2), w[k + 1]});
  return resolve(cli::build_config(given, ""));
}

/// A simulator trace of the GPU trace's config, with m and l of the same Q blocks on the same inputs.
inline flashlab::Trace fresh_sim_trace(const flashlab::Trace& gpu) {
  const Problem p = trace_problem(gpu.header);
  flashlab::Trace sim = record_trace(p, TraceLevel::block);
  std::vector<std::int64_t> blocks;
  for (const BlockStats& b : gpu.stats) blocks.push_back(b.i);
  if (!blocks.empty()) add_stats(sim, p, blocks, gpu.header.inputs.value());
  return sim;
}

/// A row of a GPU script's results.json judged from its raw figures, never from the verdicts the
/// script wrote ("passed", "within", "events_agree"): the GPU's event count equals the simulator's
/// as it counts now (recomputed from the row's flags), the output canaries were intact, and every
/// error the row measured is within its tolerance (O and L: worst_O <= tol_O, worst_L_over_tol <= 1;
/// gradients: worst_dQ, worst_dK, worst_dV <= tol).
inline void check_raw_row(const nlohmann::json& row) {
  CAPTURE(row.at("name").get<std::string>());
  const Problem p = problem_of(row.at("flags").get<std::string>());
  CHECK(row.at("gpu_events") == row.at("sim_events"));
  CHECK(row.at("sim_events").get<std::uint64_t>() == record_trace(p, TraceLevel::block).events.size());
  CHECK(row.at("canary") == true);
  if (row.contains("worst_O")) {
    CHECK(row.at("worst_O").get<double>() <= row.at("tol_O").get<double>());
    CHECK(row.at("worst_L_over_tol").get<double>() <= 1.0);
  }
  if (row.contains("worst_dQ"))
    for (const char* g : {"worst_dQ", "worst_dK", "worst_dV"}) CHECK(row.at(g).get<double>() <= row.at("tol").get<double>());
}

/// The facts every committed GPU trace's header carries: recorded on an H200 at a full commit.
inline void check_gpu_header(const flashlab::Trace& gpu) {
  CHECK(gpu.header.source == TraceSource::gpu);
  CHECK(gpu.header.gpu.device.find("H200") != std::string::npos);
  CHECK(gpu.header.gpu.commit.size() == 40);
}

}  // namespace flashlab::gpu_data
