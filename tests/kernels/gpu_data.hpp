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

/// The facts every committed GPU trace's header carries: recorded on an H200 at a full commit.
inline void check_gpu_header(const flashlab::Trace& gpu) {
  CHECK(gpu.header.source == TraceSource::gpu);
  CHECK(gpu.header.gpu.device.find("H200") != std::string::npos);
  CHECK(gpu.header.gpu.commit.size() == 40);
}

}  // namespace flashlab::gpu_data
