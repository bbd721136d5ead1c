// The deterministic backward's results committed under tests/data/gpu_deterministic/ (recorded on
// an H200 by scripts/gpu/deterministic_validate.py; deterministic_report.md beside them) against
// the simulator: each GPU trace equals a fresh simulator trace of its config (FA2's nsplits thread
// blocks per head walking strided K/V blocks, every slice of dQacc zeroed and summed), every row's
// gradients were within tolerance, and the same backward run five times gave dQ bit for bit the
// same in the deterministic form.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/executor/executor.hpp"
#include "flashlab/trace/diff.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "gpu_data.hpp"

using namespace flashlab;
using namespace flashlab::gpu_data;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = data_dir("gpu_deterministic");

}  // namespace

TEST_CASE("committed deterministic-backward GPU traces equal fresh simulator traces of their configs") {
  const std::vector<fs::path> files = trace_files(kDir);
  REQUIRE(files.size() >= 3);
  std::set<std::int64_t> splits;
  for (const fs::path& f : files) {
    CAPTURE(f.filename().string());
    const flashlab::Trace gpu = read_trace(f.string());
    check_gpu_header(gpu);
    CHECK(gpu.header.config.backward_form == BackwardForm::deterministic);
    const Problem p = trace_problem(gpu.header);
    const DiffResult d = diff_traces(record_trace(p, TraceLevel::block), gpu);
    CHECK_MESSAGE(d.agree(), format_diff(d, "sim", "gpu"));
    CHECK(d.events_a == gpu.events.size());
    splits.insert(p.dq_splits);
    // the main launch's thread blocks are the splits: block s's tiles lie in K/V blocks s + k nsplits
    for (const Event& e : gpu.events)
      if (e.launch == 1 && e.j >= 0) CHECK(std::int64_t(e.j) % p.dq_splits == std::int64_t(e.block));
  }
  CHECK(splits.size() >= 3);  // several nsplits, one above T_c among them
  CHECK(*splits.rbegin() == 132);
}

TEST_CASE("committed deterministic-backward run: every row agreed and was within tolerance; dQ bit-identical over repeats") {
  const nlohmann::json r = read_json(kDir / "deterministic_results.json");
  CHECK(r.at("passed") == true);
  CHECK(r.at("meta").at("device").get<std::string>().find("H200") != std::string::npos);
  CHECK(r.at("meta").at("sms") == 132);  // the preset's SM count, so nsplits is FA2's on this GPU
  CHECK(r.at("meta").at("commit").get<std::string>().size() == 40);
  REQUIRE(r.at("grid").size() >= 5);
  for (const auto& row : r.at("grid")) {
    CAPTURE(row.at("name").get<std::string>());
    CHECK(row.at("events_agree") == true);
    CHECK(row.at("within") == true);
    CHECK(row.at("canary") == true);
    CHECK(row.at("worst_dQ").get<double>() <= row.at("tol").get<double>());
    // the event count recomputed here from the row's flags
    const Problem p = problem_of(row.at("flags").get<std::string>());
    CHECK(p.backward_form == BackwardForm::deterministic);
    CHECK(row.at("sim_events").get<std::uint64_t>() == record_trace(p, TraceLevel::block).events.size());
  }
  const auto& det = r.at("repeats").at("deterministic");
  CHECK(det.at("runs") == 5);
  CHECK(det.at("bit_identical") == true);
  CHECK(det.at("max_abs_diff").get<double>() == 0.0);
  CHECK(det.at("run0_within") == true);
  const auto& rel = r.at("repeats").at("released");
  CHECK(rel.at("runs") == 5);
  CHECK(rel.at("run0_within") == true);
  // the atomic order may change dQ; whatever was seen, it is far below the tolerance
  CHECK(rel.at("max_abs_diff").get<double>() <= 1e-2 * rel.at("max_abs_dQ").get<double>());
}
