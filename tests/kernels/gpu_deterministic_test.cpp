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

#include "flashlab/executor/count.hpp"
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

TEST_CASE("committed deterministic-backward run: every row agreed and was within tolerance, dQ bit-identical over repeats") {
  const nlohmann::json r = read_json(kDir / "deterministic_results.json");
  CHECK(r.at("meta").at("device").get<std::string>().find("H200") != std::string::npos);
  CHECK(r.at("meta").at("sms") == 132);  // the preset's SM count, so nsplits is FA2's on this GPU
  CHECK(r.at("meta").at("commit").get<std::string>().size() == 40);
  REQUIRE(r.at("grid").size() >= 5);
  for (const auto& row : r.at("grid")) {
    CAPTURE(row.at("name").get<std::string>());
    check_raw_row(row);
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

// Nsight Compute on the three deterministic backward kernels of three rows (ncu_results.json):
// the reduction (atomic) bytes are the simulator's atomics into the slices, exactly; loads and
// stores equal the simulator's request bytes per launch where every head's L, D rows start on a
// 32-byte sector (N_q a multiple of 8), within a sector per row run otherwise — as for the
// released kernels (gpu_backward_test.cpp).
TEST_CASE("committed deterministic-backward Nsight Compute bytes equal the simulator's per launch") {
  const nlohmann::json r = read_json(kDir / "ncu_results.json");
  REQUIRE(r.at("rows").size() == 9);
  const char* const kernels[] = {"flash_bwd_dot_do_o", "flash_bwd_dq_dk_dv", "flash_bwd_convert_dq"};
  for (std::size_t k = 0; k < r.at("rows").size(); ++k) {
    const auto& x = r.at("rows")[k];
    CAPTURE(x.at("row").get<std::string>());
    CAPTURE(x.at("kernel").get<std::string>());
    const Problem p = problem_of(x.at("flags").get<std::string>());
    const Counters c = count(p);
    REQUIRE(c.launches.size() == 3);
    const LaunchCounters& l = c.launches[k % 3];
    CHECK(l.name == kernels[k % 3]);
    const auto hw = [&](const char* m) { return x.at("ncu").at(m).get<std::uint64_t>(); };
    // per (batch, head) x pairs: the grid's blocks are the simulator's
    CHECK(hw("red") == l.cost.atomic_bytes());
    CHECK(hw("atom") == 0);  // RED (no return value), never ATOM
    if (p.tiling.n_q % 8 == 0) {
      CHECK(hw("ld") == l.cost.read_bytes());
      CHECK(hw("st") == l.cost.write_bytes());
    } else {
      const auto near = [](std::uint64_t a, std::uint64_t b, std::uint64_t slack) { return (a > b ? a - b : b - a) <= slack; };
      const std::uint64_t runs = c.tiles.visited + std::uint64_t(p.tiling.t_r() * p.bh());
      CHECK(near(hw("ld"), l.cost.read_bytes(), 2 * 2 * 32 * runs));
      CHECK(near(hw("st"), l.cost.write_bytes(), 2 * 32 * runs));
    }
  }
}
