// Split-KV's kernels (fl_v2_forward_split, fl_v2_combine) and grouped K/V heads, as recorded on an
// H200 by scripts/gpu/split_validate.py under tests/data/gpu_split/ (report.md beside them), against
// the simulator: each GPU trace equals a fresh simulator trace of its config, and Nsight Compute's
// global load and store bytes of every kernel equal the simulator's sector level (the bytes the
// kernels move in whole 32-byte sectors), recomputed here, per launch.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
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

const fs::path kDir = data_dir("gpu_split");

// The tensors each split-KV launch loads and stores (schedule.hpp make_split_schedule).
const std::map<std::string, std::pair<std::vector<Tensor>, std::vector<Tensor>>> kLaunchTensors = {
    {"v2_forward_split", {{Tensor::Q, Tensor::K, Tensor::V}, {Tensor::Oacc, Tensor::Lacc}}},
    {"flash_combine", {{Tensor::Lacc, Tensor::Oacc}, {Tensor::O, Tensor::L}}},
};

}  // namespace

TEST_CASE("committed split-KV GPU traces equal fresh simulator traces of their configs") {
  const std::vector<fs::path> files = trace_files(kDir);
  REQUIRE(files.size() >= 4);
  std::size_t split = 0, grouped = 0, combines = 0, stats = 0;
  for (const fs::path& f : files) {
    CAPTURE(f.filename().string());
    const flashlab::Trace gpu = read_trace(f.string());
    check_gpu_header(gpu);
    const Problem p = trace_problem(gpu.header);
    const DiffResult d = diff_traces(fresh_sim_trace(gpu), gpu);  // m, l too: every split's thread block
    CHECK_MESSAGE(d.agree(), format_diff(d, "sim", "gpu"));
    CHECK(d.events_a == gpu.events.size());
    split += p.splits > 1;
    grouped += p.kv_heads < p.heads;
    stats += !gpu.stats.empty() && d.values_compared > 0;
    for (const Event& e : gpu.events) combines += e.launch == 1 && e.eq == Eq::combine;
  }
  CHECK(split >= 4);
  CHECK(grouped >= 1);  // the decode step: 32 query heads over 8 K/V heads
  CHECK(combines > 0);
  CHECK(stats >= 2);  // m, l of every split's thread block of one Q block, compared by the script
}

TEST_CASE("the comparison fails on a changed Oacc store or a changed m value of a later split") {
  const fs::path f = kDir / "split-causalbr-s3.trace";  // m, l of Q block 1 in each of 3 splits
  const flashlab::Trace gpu = read_trace(f.string());
  const flashlab::Trace sim = fresh_sim_trace(gpu);
  REQUIRE(diff_traces(sim, gpu).agree());

  flashlab::Trace bytes = gpu;
  const auto store = std::find_if(bytes.events.begin(), bytes.events.end(),
                                  [](const Event& e) { return e.op == Op::store && e.tensor == Tensor::Oacc; });
  REQUIRE(store != bytes.events.end());
  store->bytes -= 4;
  CHECK(diff_traces(sim, bytes).differing_events == 1);

  flashlab::Trace stats = gpu;
  REQUIRE(stats.stats.size() == 1);
  auto& snap = stats.stats.front().snapshots.back();  // the last split's final step
  const auto finite = std::find_if(snap.m.begin(), snap.m.end(), [](float x) { return std::isfinite(x); });
  REQUIRE(finite != snap.m.end());
  *finite += 0.5f;
  CHECK(diff_traces(sim, stats).values_differing == 1);
}

TEST_CASE("committed split-KV run: every row agreed and was within tolerance, Nsight's bytes equal the sector level") {
  const nlohmann::json r = read_json(kDir / "results.json");
  CHECK(r.at("meta").at("device").get<std::string>().find("H200") != std::string::npos);
  CHECK(r.at("meta").at("commit").get<std::string>().size() == 40);
  REQUIRE(r.at("grid").size() >= 12);
  std::map<std::string, std::string> flags;
  for (const auto& row : r.at("grid")) {
    CAPTURE(row.at("name").get<std::string>());
    check_raw_row(row);
    CHECK(row.at("canary") == true);
    CHECK(row.at("worst_O").get<double>() <= row.at("tol_O").get<double>());
    flags[row.at("name")] = row.at("flags");
  }
  REQUIRE(r.at("ncu").size() >= 20);
  std::size_t per_launch = 0;
  for (const auto& k : r.at("ncu")) {
    const std::string name = k.at("row"), kernel = k.at("kernel");
    CAPTURE(name);
    CAPTURE(kernel);
    REQUIRE(flags.count(name));
    const Problem p = problem_of(flags[name]);
    const Counters c = count(p, true);  // the sector level, recomputed here (not the script's figures)
    const auto sector = [&](const std::vector<Tensor>& ts, Dir dir) {
      std::uint64_t b = 0;
      for (Tensor t : ts) b += c.bytes(Memory::sector, t, dir);
      return b;
    };
    std::uint64_t ld = 0, st = 0;
    if (const auto it = kLaunchTensors.find(kernel); it != kLaunchTensors.end() && p.splits > 1) {
      ld = sector(it->second.first, Dir::read);
      st = sector(it->second.second, Dir::write);
      ++per_launch;
    } else {  // one launch (or standard attention's three, compared together): the totals
      ld = total(c.levels[int(Memory::sector)], Dir::read);
      st = total(c.levels[int(Memory::sector)], Dir::write);
    }
    CHECK(k.at("ncu").at("ld").get<std::uint64_t>() == ld);
    CHECK(k.at("ncu").at("st").get<std::uint64_t>() == st);
  }
  CHECK(per_launch >= 16);  // both launches of every split row
}
