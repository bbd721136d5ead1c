// The GPU traces committed under tests/data/gpu/ against fresh simulator traces of the same
// configurations. Each was recorded by an instrumented kernel (kernels/src/*.cu) on an H200 by
// scripts/gpu/validate.py, with its config, device, driver, commit and command in its header.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/trace/diff.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "gpu_data.hpp"

using namespace flashlab;
using namespace flashlab::gpu_data;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = data_dir("gpu");

std::vector<fs::path> gpu_traces() { return trace_files(kDir); }

}  // namespace

TEST_CASE("every committed GPU trace equals a fresh simulator trace of its config") {
  const auto files = gpu_traces();
  REQUIRE(files.size() >= 10);
  std::set<Algo> algos;
  bool no_key_rows = false;
  std::size_t v1_files = 0;
  for (const fs::path& f : files) {
    CAPTURE(f.filename().string());
    const flashlab::Trace gpu = read_trace(f.string());
    check_gpu_header(gpu);
    REQUIRE(gpu.header.inputs.has_value());
    REQUIRE(gpu.stats.size() == 1);
    const DiffResult d = diff_traces(fresh_sim_trace(gpu), gpu);
    CHECK_MESSAGE(d.agree(), format_diff(d, "sim", "gpu"));
    CHECK(d.events_a == gpu.events.size());
    CHECK(d.values_compared > 0);
    algos.insert(gpu.header.config.algo);
    // Recorded in format version 1, which has no launch field: standard attention's launch is its
    // step (S, softmax, PV), V1's and V2's 0 (docs/events.md "Versions").
    std::ifstream in(f);
    std::string first_line;
    std::getline(in, first_line);
    v1_files += first_line == "flashlab-trace text 1";
    for (const Event& e : gpu.events)
      CHECK(e.launch == (gpu.header.config.algo == Algo::standard ? e.step : 0));
    const Problem p = trace_problem(gpu.header);
    for (std::int64_t r = 0; r < p.tiling.n_q; ++r) no_key_rows = no_key_rows || row_keys(p.band, p.tiling.n_k, r).empty();
  }
  CHECK(algos.size() == 3);  // standard, V1 and V2 are all represented
  CHECK(no_key_rows);        // and at least one trace has rows that see no key
  CHECK(v1_files == files.size());
}

TEST_CASE("the comparison fails on a changed event, a changed launch or a changed m value") {
  const auto files = gpu_traces();
  REQUIRE(!files.empty());
  const flashlab::Trace gpu = read_trace(files.front().string());
  const flashlab::Trace sim = fresh_sim_trace(gpu);

  flashlab::Trace bytes = gpu;
  const auto load = std::find_if(bytes.events.begin(), bytes.events.end(), [](const Event& e) { return e.op == Op::load; });
  REQUIRE(load != bytes.events.end());
  load->bytes += 2;
  const DiffResult d1 = diff_traces(sim, bytes);
  CHECK_FALSE(d1.agree());
  CHECK(d1.differing_events == 1);

  for (const fs::path& f : files) {  // a standard-attention event recorded in another launch
    const flashlab::Trace g = read_trace(f.string());
    if (g.header.config.algo != Algo::standard) continue;
    flashlab::Trace moved = g;
    moved.events.back().launch = 1;
    CHECK_FALSE(diff_traces(fresh_sim_trace(g), moved).agree());
    break;
  }

  flashlab::Trace stats = gpu;
  auto& snap = stats.stats.front().snapshots.back();
  const auto finite = std::find_if(snap.m.begin(), snap.m.end(), [](float x) { return std::isfinite(x); });
  REQUIRE(finite != snap.m.end());
  *finite += 0.5f;
  CHECK(diff_traces(sim, stats).values_differing == 1);
}

TEST_CASE("the manifest names every committed trace with the run's facts") {
  std::ifstream f(kDir / "manifest.json");
  REQUIRE(f.good());
  const nlohmann::json m = nlohmann::json::parse(f);
  REQUIRE(m.is_array());
  CHECK(m.size() == gpu_traces().size());
  for (const auto& e : m) {
    CAPTURE(e.dump());
    CHECK(fs::exists(kDir / e.at("file").get<std::string>()));
    // whether the events agree is recomputed from the trace itself (above), not read from the manifest
    CHECK(e.at("commit").get<std::string>().size() == 40);
    CHECK(!e.at("driver").get<std::string>().empty());
  }
}
