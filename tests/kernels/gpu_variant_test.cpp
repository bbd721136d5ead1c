// The variants between V1 and V2 on the GPU (every combination of --order, --grid, --rescale,
// --warp-split and --block-skip: kernels/src/v1.cu's row-update family and v2.cu), as recorded on an
// H200 by `scripts/gpu/split_validate.py --grid variant` under tests/data/gpu_variants/ (report.md
// beside them), against the simulator: each GPU trace equals a fresh simulator trace of its config,
// every row's events agreed and its O and L were within tolerance, and Nsight Compute's global load
// and store bytes equal the simulator's sector level, recomputed here.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

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

const fs::path kDir = data_dir("gpu_variants");

using SwitchSet = std::tuple<LoopOrder, GridKind, Rescale, WarpSplit, bool>;
SwitchSet switches_of(const Problem& p) { return {p.order, p.grid, p.rescale, p.split, p.block_skip}; }

}  // namespace

TEST_CASE("committed variant GPU traces equal fresh simulator traces of their configs") {
  const std::vector<fs::path> files = trace_files(kDir);
  REQUIRE(files.size() >= 8);
  std::set<std::tuple<LoopOrder, GridKind, Rescale>> nests;
  for (const fs::path& f : files) {
    CAPTURE(f.filename().string());
    const flashlab::Trace gpu = read_trace(f.string());
    check_gpu_header(gpu);
    const Problem p = trace_problem(gpu.header);
    const DiffResult d = diff_traces(fresh_sim_trace(gpu), gpu);  // m, l of one Q block too
    CHECK_MESSAGE(d.agree(), format_diff(d, "sim", "gpu"));
    CHECK(d.events_a == gpu.events.size());
    CHECK(d.values_compared > 0);
    nests.insert({p.order, p.grid, p.rescale});
  }
  CHECK(nests.size() == 8);  // every loop nest and rescale, each with its own steps
}

TEST_CASE("the comparison fails on a variant trace whose O_i round trip or normalize step is changed") {
  const flashlab::Trace gpu = read_trace((kDir / "var-a-kv-he-de-q-on.trace").string());  // + flash_normalize
  const flashlab::Trace sim = fresh_sim_trace(gpu);
  REQUIRE(diff_traces(sim, gpu).agree());
  flashlab::Trace changed = gpu;
  const auto normalize = std::find_if(changed.events.begin(), changed.events.end(),
                                      [](const Event& e) { return e.launch == 1 && e.eq == Eq::normalize; });
  REQUIRE(normalize != changed.events.end());
  normalize->cols = 1;  // the extent of a logsumexp, not of a normalize
  CHECK(diff_traces(sim, changed).differing_events == 1);
  flashlab::Trace dropped = gpu;
  const auto load_o = std::find_if(dropped.events.begin(), dropped.events.end(),
                                   [](const Event& e) { return e.op == Op::load && e.tensor == Tensor::O; });
  REQUIRE(load_o != dropped.events.end());
  dropped.events.erase(load_o);
  CHECK_FALSE(diff_traces(sim, dropped).agree());
}

TEST_CASE("committed variant run: all 32 combinations agreed and were within tolerance, Nsight's bytes equal the sector level") {
  const nlohmann::json r = read_json(kDir / "results.json");
  CHECK(r.at("meta").at("device").get<std::string>().find("H200") != std::string::npos);
  CHECK(r.at("meta").at("commit").get<std::string>().size() == 40);
  REQUIRE(r.at("grid").size() >= 60);
  std::map<std::string, std::string> flags;
  std::set<SwitchSet> combinations;
  for (const auto& row : r.at("grid")) {
    CAPTURE(row.at("name").get<std::string>());
    check_raw_row(row);
    CHECK(row.at("gpu_events") == row.at("sim_events"));
    CHECK(row.at("canary") == true);
    CHECK(row.at("worst_O").get<double>() <= row.at("tol_O").get<double>());
    flags[row.at("name")] = row.at("flags");
    combinations.insert(switches_of(problem_of(row.at("flags"))));
  }
  CHECK(combinations.size() == 32);  // 2^5 switch settings, each run on the GPU

  REQUIRE(r.at("ncu").size() >= 60);
  std::size_t two_launches = 0;
  for (const auto& k : r.at("ncu")) {
    const std::string name = k.at("row");
    CAPTURE(name);
    REQUIRE(flags.count(name));
    const Problem p = problem_of(flags[name]);
    const Counters c = count(p, true);  // the sector level, recomputed here (not the script's figures)
    // one launch, or with the K/V outer order, one thread block per head and delayed rescaling
    // flash_forward + flash_normalize, profiled together: the totals
    CHECK(k.at("ncu").at("ld").get<std::uint64_t>() == total(c.levels[int(Memory::sector)], Dir::read));
    CHECK(k.at("ncu").at("st").get<std::uint64_t>() == total(c.levels[int(Memory::sector)], Dir::write));
    two_launches += make_schedule(p).launches.size() == 2;
  }
  CHECK(two_launches >= 4);
}
