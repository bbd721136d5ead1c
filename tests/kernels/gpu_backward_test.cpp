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

TEST_CASE("committed backward run: every row agreed and was within tolerance, Nsight's bytes equal the simulator's") {
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

namespace {

/// The median of a launch's samples (Nsight Compute gpu__time_duration, ns): the middle one, or the
/// mean of the two middle ones, as Python's statistics.median.
double median_ns(const nlohmann::json& launch) {
  std::vector<double> x = launch.at("time_ns").get<std::vector<double>>();
  REQUIRE(!x.empty());
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/// A launch's grid as Nsight Compute writes it, "(x, y, z)".
std::vector<std::int64_t> grid_of(const nlohmann::json& launch) {
  std::istringstream in(launch.at("grid").get<std::string>());
  std::vector<std::int64_t> g(3);
  char c = 0;
  in >> c >> g[0] >> c >> g[1] >> c >> g[2] >> c;
  REQUIRE(in);
  return g;
}

/// The integers of FA2's backward kernel traits in a launch name:
/// Flash_bwd_kernel_traits<d, kBlockM, kBlockN, warps, ...>.
std::vector<int> fa2_traits(const std::string& name) {
  const std::string key = "Flash_bwd_kernel_traits<";
  const std::size_t at = name.find(key);
  REQUIRE(at != std::string::npos);
  std::vector<int> out;
  std::istringstream in(name.substr(at + key.size()));
  for (int k = 0; k < 4; ++k) {
    int v = 0;
    char comma = 0;
    in >> v >> comma;
    out.push_back(v);
  }
  return out;
}

}  // namespace

// tests/data/gpu_backward/fa2_parity.json: scripts/gpu/backward_perf.py on the H200 (issue 25 item 1).
// Each shape: the kernel instance checked in the same run (events against the simulator's as it
// counts now, dQ, dK, dV against float64: the raw figures), and every launch's Nsight Compute
// durations, this project's three backward kernels and FA2's three. The ratio is recomputed here.
namespace {

/// What a parity run's shapes cover (its non-candidate rows).
struct ParityCoverage {
  std::set<std::string> dtypes, masks, flags;
  std::set<int> dims;
  std::int64_t n_min = 1 << 30, n_max = 0, bh_min = 1 << 30, bh_max = 0;
  std::size_t shapes = 0, deterministic = 0;
};

/// Checks every shape of a parity run (backward_perf.py's fa2_parity.json): the instance checked in
/// the same run, events and gradients within tolerance, the launches' names, FA2's tile and grids.
ParityCoverage check_parity_run(const nlohmann::json& r) {
  ParityCoverage cov;
  const nlohmann::json& m = r.at("meta");
  CHECK(m.at("gpu").get<std::string>().find("H200") != std::string::npos);
  CHECK(m.at("kernel_sources_sha256").get<std::string>().size() == 64);
  CHECK(m.at("ncu_flags").get<std::string>().find("--cache-control all") != std::string::npos);
  CHECK(r.at("errors").empty());
  for (const auto& s : r.at("shapes")) {
    CAPTURE(s.at("flags").get<std::string>());
    const nlohmann::json& c = s.at("check");
    // the check ran the timed row's kernel instance: its flags with a smaller problem
    const Problem timed = problem_of(s.at("flags").get<std::string>());
    const Problem p = problem_of(c.at("checked_as").get<std::string>());
    CHECK(p.tiling.b_r == timed.tiling.b_r);
    CHECK(p.tiling.b_c == timed.tiling.b_c);
    CHECK(p.warps == timed.warps);
    CHECK(p.tiling.d == timed.tiling.d);
    CHECK(p.dtype == timed.dtype);
    CHECK(p.mask.kind == timed.mask.kind);
    CHECK(p.backward_form == timed.backward_form);
    CHECK(c.at("events").at("run") == true);
    CHECK(c.at("events").at("gpu") == c.at("events").at("sim"));
    CHECK(record_trace(p, TraceLevel::block).events.size() == c.at("events").at("sim").get<std::size_t>());
    REQUIRE(!c.at("grads").at("heads").empty());
    for (const auto& h : c.at("grads").at("heads")) {
      CHECK(h.at("finite") == true);
      for (const char* g : {"rel_fro_dQ", "rel_fro_dK", "rel_fro_dV"}) CHECK(h.at(g).get<double>() <= h.at("tol").get<double>());
    }
    CHECK(c.at("numbers").at("canary_intact") == true);
    // this project's three backward launches, then FA2's forward and three backward launches
    const auto& ours = s.at("ours");
    REQUIRE(ours.size() == 3);
    const char* our_names[] = {"fl_v2_bwd_dot_do_o", "fl_v2_bwd_dq_dk_dv", "fl_v2_bwd_convert_dq"};
    for (int k = 0; k < 3; ++k) CHECK(ours[k].at("name").get<std::string>().find(our_names[k]) != std::string::npos);
    const auto& fa2 = s.at("torch");
    REQUIRE(fa2.size() == 4);
    CHECK(fa2[0].at("name").get<std::string>().find("flash_fwd") != std::string::npos);
    const char* fa2_names[] = {"flash_bwd_dot_do_o", "flash_bwd_dq_dk_dv", "flash_bwd_convert_dq"};
    for (int k = 0; k < 3; ++k) CHECK(fa2[k + 1].at("name").get<std::string>().find(fa2_names[k]) != std::string::npos);
    if (s.at("candidate").get<bool>()) continue;
    // the timed tile is FA2's own, as its launch names it (d, B_r, B_c, warps), and the simulator's
    // default backward tile at this d
    const std::vector<int> traits = fa2_traits(fa2[2].at("name").get<std::string>());
    CHECK(traits[0] == timed.tiling.d);
    CHECK(traits[1] == timed.tiling.b_r);
    CHECK(traits[2] == timed.tiling.b_c);
    CHECK(traits[3] == timed.warps);
    CHECK(default_blocks(timed.tiling.d, Pass::backward) == std::pair<std::int64_t, std::int64_t>{timed.tiling.b_r, timed.tiling.b_c});
    // the main kernels' grids: FA2's (blocks, batch, heads) and ours (blocks, batch x heads, 1), the
    // blocks T_c in the released form and FA2's nsplits dQ slices in the deterministic form (mha_bwd:
    // ceil(SMs / (batch x heads)), 132 SMs) — which PyTorch ran only if the row's deterministic mode
    // reached FA2
    const std::vector<std::int64_t> g_fa2 = grid_of(fa2[2]), g_ours = grid_of(ours[1]);
    const std::int64_t blocks = timed.backward_form == BackwardForm::deterministic ? (132 + timed.bh() - 1) / timed.bh()
                                                                                   : (timed.tiling.n_k + timed.tiling.b_c - 1) / timed.tiling.b_c;
    CHECK(g_fa2 == std::vector<std::int64_t>{blocks, timed.batch, timed.heads});
    CHECK(g_ours == std::vector<std::int64_t>{blocks, timed.bh(), 1});
    ++cov.shapes;
    cov.deterministic += timed.backward_form == BackwardForm::deterministic;
    cov.flags.insert(s.at("flags").get<std::string>());
    cov.dtypes.insert(s.at("dtype").get<std::string>());
    cov.masks.insert(s.at("mask").get<std::string>());
    cov.dims.insert(s.at("d").get<int>());
    cov.n_min = std::min(cov.n_min, timed.tiling.n_q), cov.n_max = std::max(cov.n_max, timed.tiling.n_q);
    cov.bh_min = std::min(cov.bh_min, timed.bh()), cov.bh_max = std::max(cov.bh_max, timed.bh());
  }
  return cov;
}

}  // namespace

TEST_CASE("committed FA2 parity run: every timed shape checked, on FA2's tile, shapes covered") {
  const ParityCoverage cov = check_parity_run(read_json(kDir / "fa2_parity.json"));
  CHECK(cov.shapes >= 16);
  CHECK(cov.deterministic >= 4);
  CHECK(cov.dtypes == std::set<std::string>{"fp16", "bf16"});
  CHECK(cov.masks == std::set<std::string>{"none", "causal"});
  CHECK(cov.dims == std::set<int>{64, 128});
  CHECK(cov.n_min <= 1024);
  CHECK(cov.n_max >= 32768);
  CHECK(cov.bh_min <= 16);
  CHECK(cov.bh_max >= 256);
}

// tests/data/gpu_backward/fa2_parity_new_shapes.json: the same script on shapes the run above does
// not hold (backward_perf.py --shapes scripts/gpu/configs/backward_new_shapes.txt): ragged N, batch x
// heads 16 and 256, the deterministic form at N = 8k and 16k.
TEST_CASE("committed FA2 parity run on new shapes: every shape checked, none among the first run's") {
  const ParityCoverage first = check_parity_run(read_json(kDir / "fa2_parity.json"));
  const ParityCoverage fresh = check_parity_run(read_json(kDir / "fa2_parity_new_shapes.json"));
  CHECK(fresh.shapes >= 10);
  CHECK(fresh.deterministic >= 2);
  for (const std::string& f : fresh.flags) {
    CAPTURE(f);
    CHECK(first.flags.count(f) == 0);
  }
}

// Issue 25's target: per shape, FA2's three backward kernels take at least 0.9x the time of this
// project's three (sums of the median Nsight Compute durations, recomputed from the samples). The
// committed run (kernel sources 3c699d9b) gives 0.93-0.98 on all 12 shapes.
TEST_CASE("committed FA2 parity run: V2's backward at >= 0.9x FA2's on every shape (issue 25)") {
  for (const char* file : {"fa2_parity.json", "fa2_parity_new_shapes.json"}) {
    CAPTURE(file);
    const nlohmann::json r = read_json(kDir / file);
    for (const auto& s : r.at("shapes")) {
      if (s.at("candidate").get<bool>()) continue;
      CAPTURE(s.at("flags").get<std::string>());
      double ours = 0, fa2 = 0;
      for (const auto& l : s.at("ours")) ours += median_ns(l);
      for (const auto& l : s.at("torch"))
        if (l.at("name").get<std::string>().find("flash_bwd") != std::string::npos) fa2 += median_ns(l);
      CAPTURE(ours);
      CAPTURE(fa2);
      CHECK(fa2 / ours >= 0.9);
    }
  }
}
