// The backward kernels' results committed under tests/data/gpu_backward/ (recorded on an H200 by
// scripts/gpu/backward_validate.py; report.md beside them) against the simulator: each GPU trace
// equals a fresh simulator trace of its config, and Nsight Compute's global load, store and
// reduction (atomic) bytes of every backward kernel equal the simulator's request bytes per launch
// wherever the statistics rows (L_i, D_i) start on 32-byte sectors.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/trace/diff.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "gpu_data.hpp"

using namespace flashlab;
using namespace flashlab::gpu_data;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = data_dir("gpu_backward");

nlohmann::json results() { return read_json(kDir / "results.json"); }

}  // namespace

TEST_CASE("committed backward GPU traces equal fresh simulator traces of their configs") {
  const std::vector<fs::path> files = trace_files(kDir);
  REQUIRE(files.size() >= 5);
  std::set<Algo> algos;
  std::size_t atomics = 0;
  for (const fs::path& f : files) {
    CAPTURE(f.filename().string());
    const flashlab::Trace gpu = read_trace(f.string());
    check_gpu_header(gpu);
    CHECK(gpu.header.config.pass == Pass::backward);
    const Problem p = trace_problem(gpu.header);
    const DiffResult d = diff_traces(record_trace(p, TraceLevel::block), gpu);
    CHECK_MESSAGE(d.agree(), format_diff(d, "sim", "gpu"));
    CHECK(d.events_a == gpu.events.size());
    algos.insert(p.algo);
    for (const Event& e : gpu.events) atomics += e.op == Op::atomic;
  }
  CHECK(algos == std::set<Algo>{Algo::v1, Algo::v2});
  CHECK(atomics > 0);  // the released V2's dQ_i added to dQacc
}

TEST_CASE("committed backward run: every row agreed and was within tolerance; Nsight's bytes equal the simulator's") {
  const nlohmann::json r = results();
  CHECK(r.at("meta").at("gpu").get<std::string>().find("H200") != std::string::npos);
  REQUIRE(r.at("grid").size() >= 10);
  for (const auto& row : r.at("grid")) {
    CAPTURE(row.at("name").get<std::string>());
    check_raw_row(row);
    CHECK(row.at("worst_dQ").get<double>() <= row.at("tol").get<double>());
  }
  REQUIRE(r.at("ncu").size() >= 10);
  for (const auto& k : r.at("ncu")) {
    const std::string name = k.at("row");
    CAPTURE(name);
    CAPTURE(k.at("kernel").get<std::string>());
    std::string flags;
    for (const auto& g : r.at("grid"))
      if (g.at("name") == name) flags = g.at("flags");
    REQUIRE(!flags.empty());
    const Problem p = problem_of(flags);
    // the simulator's bytes of this launch, recomputed here (not the ones the script recorded)
    const Counters c = count(p);
    const LaunchCounters* l = nullptr;
    for (const LaunchCounters& x : c.launches)
      if (x.name == k.at("kernel")) l = &x;
    REQUIRE(l != nullptr);
    const auto hw = [&](const char* m) { return k.at("ncu").at(m).get<std::uint64_t>(); };
    CHECK(hw("red") == l->cost.atomic_bytes());  // atomics: exact in every row
    CHECK(hw("atom") == 0);                      // RED (no return value), never ATOM
    if (p.tiling.n_q % 8 == 0) {  // every head's L, D rows start on a sector: exact
      CHECK(hw("ld") == l->cost.read_bytes());
      CHECK(hw("st") == l->cost.write_bytes());
    } else {  // a row run of 4-byte statistics that starts or ends inside a sector counts it whole
      const auto near = [](std::uint64_t a, std::uint64_t b, std::uint64_t slack) {
        return (a > b ? a - b : b - a) <= slack;
      };
      const std::uint64_t runs = c.tiles.visited + std::uint64_t(p.tiling.t_r() * p.bh());
      CHECK(near(hw("ld"), l->cost.read_bytes(), 2 * 2 * 32 * runs));
      CHECK(near(hw("st"), l->cost.write_bytes(), 2 * 32 * runs));
    }
  }
}
