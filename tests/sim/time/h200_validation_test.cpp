// The L2 and time models against the H200 measurements of the project's kernels committed in
// tests/data/gpu_timing/h200.json (scripts/gpu/timing.py; its meta names the commit, the command,
// the driver and how Nsight Compute counted DRAM). Every measured config runs through the model;
// the DRAM ratios are printed and asserted. Time is scored on the kernel-only data set
// tests/data/gpu_time/h200.json (time_dataset_test.cpp), whose rows are split into training and test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "../../common/generated_doc.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

struct Row {
  std::string flags, algo;
  double time_ratio = 0, read_ratio = 0;
  double write = 0, write_during = 0, write_upper = 0;  // measured; predicted during; all stored
};

Problem problem_of(const nlohmann::json& c) {
  Config x;
  x.algo = parse_algo(c["algo"].get<std::string>());
  x.n_q = c["n_q"];
  x.n_k = c["n_k"];
  x.d = c["d"];
  x.b_r = c["b_r"].get<std::int64_t>();
  x.b_c = c["b_c"].get<std::int64_t>();
  x.warps = c["warps"];
  x.batch = c["batch"];
  x.heads = c["heads"];
  x.dtype = parse_dtype(c["dtype"].get<std::string>());
  x.mask = parse_mask(c["mask"].get<std::string>());
  if (x.algo != Algo::standard) x.block_skip = c["block_skip"].get<bool>();  // standard's: off, taken by none
  return resolve(x);
}

const std::vector<Row>& rows() {
  static const std::vector<Row> all = [] {
    std::ifstream in(FLASHLAB_TEST_DATA "/gpu_timing/h200.json");
    REQUIRE(in);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::vector<Row> out;
    std::printf("%-118s %7s %7s %9s %9s\n", "config (flashlab-gpu flags)", "time", "DRAM rd", "wr meas", "wr pred");
    for (const nlohmann::json& r : j["runs"]) {
      const Modelled m = model(problem_of(r["config"]));
      Row x;
      x.flags = r["flags"];
      x.algo = r["config"]["algo"];
      x.time_ratio = m.time.time_s / (r["median_ms"].get<double>() * 1e-3);
      x.read_ratio = double(m.time.dram_read_bytes) / r["dram_read"].get<double>();
      x.write = r["dram_write"].get<double>();
      x.write_during = double(m.time.dram_write_bytes);
      x.write_upper = x.write_during;  // every distinct byte stored: write-backs + dirty at the end
      for (const LaunchCounters& l : m.counters.launches) x.write_upper += double(total(l.l2_dirty_at_end, Dir::write));
      std::printf("%-118s %7.3f %7.3f %9.2f %9.2f\n", x.flags.c_str(), x.time_ratio, x.read_ratio, x.write / 1e6,
                  x.write_during / 1e6);
      out.push_back(x);
    }
    return out;
  }();
  return all;
}

// The configs whose DRAM reads the L2 model misses, both V1 with one thread block per head:
// - d = 128, B_r = 32, 16 heads, whose O round trips (32.5 MiB for the 16 resident heads) fill half
//   the L2: the LRU keeps all of them, the device evicts some (98 MB read at bdb5334, 151 MB with
//   the kernels of bef22c9 against the model's 50 MB);
// - N = 1024, one head: 461 KB read against the model's 393 KB (0.85), 68 KB on a config that reads
//   under half a megabyte (it read 433 KB, 0.91, at bdb5334).
bool read_miss(const Row& r) {
  return r.flags.rfind("--algo v1 --nq 4096 --nk 4096 --d 128 --br 32 --bc 64 --warps 4 --mask none --batch 1 --heads 16", 0) == 0 ||
         r.flags.rfind("--algo v1 --nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --warps 4 --mask none --batch 1 --heads 1 ", 0) == 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

TEST_CASE("H200 validation data: at least 40 configs of the three algorithms") {
  CHECK(rows().size() >= 40);
  for (const char* a : {"standard", "v1", "v2"})
    CHECK(std::count_if(rows().begin(), rows().end(), [&](const Row& r) { return r.algo == a; }) >= 10);
}

TEST_CASE("H200 validation: DRAM reads within 10% on every measured config but two") {
  int misses = 0;
  for (const Row& r : rows()) {
    CAPTURE(r.flags);
    CAPTURE(r.read_ratio);
    if (read_miss(r)) {
      ++misses;
      CHECK(r.read_ratio < 0.9);  // predicted below measured: the LRU keeps what the device evicts
      CHECK(r.read_ratio > 0.3);
    } else {
      CHECK(std::abs(r.read_ratio - 1) <= 0.10);
    }
  }
  CHECK(misses == 2);
}

TEST_CASE("H200 validation: DRAM writes lie between the model's write-backs and all stores") {
  // The device writes dirty lines back earlier than an LRU evicts them: the measured writes are at
  // least the model's write-backs during the launch (less 10% and 1 MB) and at most every byte
  // stored (the model's write-backs plus what it leaves dirty at the end, plus 10%) — except V1's
  // d = 128 config of read_miss, where the device evicts O between round trips.
  for (const Row& r : rows()) {
    if (read_miss(r)) continue;
    CAPTURE(r.flags);
    CAPTURE(r.write / 1e6);
    CAPTURE(r.write_during / 1e6);
    CHECK(r.write >= 0.9 * r.write_during - 1e6);
    CHECK(r.write <= 1.1 * std::max(r.write_upper, r.write_during) + 1e6);
    // where the stores exceed the L2 several times, the write-backs are within 10%
    if (r.write_upper > 4 * 62914560.0) CHECK(r.write_during / r.write == flashlab::testing::approx(1).epsilon(0.10));
  }
}

// The one time miss (docs/model.md "The two constants"): V2 on 64 x 128 x 4 at d = 64, which the
// kernels' tile loads without per-chunk checks made 1.56x faster (bef22c9); the overlap rule (5
// warps, the V2 rows' median) predicts it 1.44x. The model over-predicts the 4-warp V2 kernels.
bool time_miss(const Row& r) {
  return r.flags.find("--d 64 --br 64 --bc 128 --warps 4") != std::string::npos;
}

TEST_CASE("H200 validation: PyTorch's FA2 forward (its tiles, 4 warps) as the V2 schedule") {
  // The `torch` rows: FA2's kernel, 128 x 128 tiles at d <= 64 and 128 x 64 at d = 128, 4 warps,
  // grid (m_block, batch, head). Rows with two kernels (FA2's split-KV path for small grids) are
  // a schedule the model does not express yet and are left out.
  std::ifstream in(FLASHLAB_TEST_DATA "/gpu_timing/h200.json");
  REQUIRE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  int rows_run = 0, read_misses = 0;
  std::vector<double> time_ratio;
  for (const nlohmann::json& r : j["torch"]) {
    if (r["launch_ms"].size() != 1) continue;
    Config c;
    c.algo = Algo::v2;
    c.n_q = c.n_k = r["n"];
    c.d = r["d"];
    c.b_r = 128;
    c.b_c = c.d <= 64 ? 128 : 64;
    c.warps = 4;
    c.batch = r["batch"];
    c.heads = r["heads"];
    c.mask = r["causal"].get<bool>() ? Mask{MaskKind::causal_tl, 0, 0} : Mask{};
    c.kernel = Kernel::fa2;  // its tile and split decision are the ones above
    const Problem p = resolve(c);
    REQUIRE(p.splits == 1);
    const Modelled m = model(p);
    const double t = m.time.time_s / (r["median_ms"].get<double>() * 1e-3);
    const double rd = double(m.time.dram_read_bytes) / r["dram_read"].get<double>();
    std::printf("torch FA2 %lldx%lld N=%lld d=%lld causal=%d: time %.3f, DRAM read %.3f\n", (long long)c.batch,
                (long long)c.heads, (long long)c.n_q, (long long)c.d, int(r["causal"].get<bool>()), t, rd);
    CAPTURE(c.n_q);
    CAPTURE(c.d);
    CAPTURE(rd);
    CAPTURE(t);
    ++rows_run;
    time_ratio.push_back(t);
    // DRAM reads within 10%, except FA2's causal d = 128 rows, which re-read K and V from DRAM
    // more than the lock-step replay predicts (predicted 0.67 and 0.83 of measured)
    if (r["causal"].get<bool>() && c.d == 128 && std::abs(rd - 1) > 0.10) {
      ++read_misses;
      CHECK(rd < 1);
    } else {
      CHECK(std::abs(rd - 1) <= 0.10);
    }
    // FA2's time is scored with this project's kernels' on the kernel-only data set
    // (tests/sim/time/time_dataset_test.cpp): these rows' times are per call, with PyTorch's host work
  }
  CHECK(rows_run == 12);
  CHECK(read_misses <= 2);
}
