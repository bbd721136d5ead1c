// `--kernel fa2 --pass backward` against what PyTorch 2.11's FA2 backward launched on an H200: the 12
// "torch --pass backward" rows of the time data set (tests/data/gpu_time/h200.json, written by
// scripts/gpu/time_dataset.py under Nsight Compute with --cache-control all: the L2 flushed before
// every kernel). Each row holds the call's forward (it writes O and L) and then FA2's three backward
// kernels with their template names, grids, blocks and DRAM bytes (dram__bytes_read/write.sum). The
// launches, traits and grids are checked exactly; the bytes at two levels, each against its like:
//  - requests (the papers' HBM bytes, Nsight Compute's l1tex global load/store/reduction bytes):
//    against closed forms derived here from FA2's kernels (flash_bwd_preprocess_kernel.h,
//    flash_bwd_kernel.h, kernel_traits.h); the measured requests of all 18 calls of
//    tests/data/gpu_fa2_backward/fa2_backward_bytes.json (these 12, ragged N, a window, d = 32, 96,
//    grouped K/V heads) are compared in fa2_backward_bytes_test.cpp;
//  - DRAM reads: the L2 model's DRAM reads against dram__bytes_read.sum, within 1% (two launches
//    outside, bounded below). DRAM writes are not compared: what a kernel writes back during its
//    run depends on when the L2 evicts (0 bytes in the small rows, whose stores all stay in the L2).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "time_data.hpp"
#include "../../common/test_data.hpp"

using namespace flashlab;
using json = nlohmann::json;
using u64 = std::uint64_t;

namespace {

json torch_backward_rows() {
  const json doc = test::read_test_data("gpu_time/h200.json");
  json out = json::array();
  for (const json& r : doc.at("torch"))
    if (r.at("flags").get<std::string>().find("--pass backward") != std::string::npos) out.push_back(r);
  return out;
}

std::array<std::int64_t, 3> dims(const std::string& s) {  // "(32, 4, 16)"
  std::array<std::int64_t, 3> g{};
  char c;
  std::istringstream in(s);
  in >> c >> g[0] >> c >> g[1] >> c >> g[2];
  return g;
}

double mean(const json& samples) {
  double s = 0;
  for (const json& x : samples) s += x.get<double>();
  return s / double(samples.size());
}

// FA2's backward launches of one call, as the data set names them: the flash_bwd kernels, in order.
std::vector<json> backward_launches(const json& row) {
  std::vector<json> out;
  for (const json& l : row.at("launches"))
    if (l.at("name").get<std::string>().find("flash_bwd") != std::string::npos) out.push_back(l);
  return out;
}

// Tile (i, j) has a key a query may see (no mask, or bottom-right causal: key c <= row r + N_k - N_q):
// its smallest key against its largest row.
bool visible(const Problem& p, std::int64_t i, std::int64_t j) {
  const Tiling& t = p.tiling;
  if (p.mask.kind == MaskKind::none) return true;
  const std::int64_t last_row = std::min(t.n_q, (i + 1) * t.b_r) - 1;
  return j * t.b_c <= last_row + t.n_k - t.n_q;
}

// The request bytes of FA2's three kernels per (batch, head), for N_q, N_k multiples of the tile and
// d = kHeadDim (every row of the data set): dot_do_o reads O_i, dO_i, writes D_i and zeroes dQacc_i
// (fp32) — D_i from one thread per row, kGmemThreadsPerRow = kBlockKSmem / 8 threads to a row
// (kBlockKSmem = 64 when 64 divides d, else 32), so a warp stores 32 / kGmemThreadsPerRow rows of 4
// bytes and requests a whole 32-byte sector: D counts kGmemThreadsPerRow / 4 times, at least once;
// the main kernel loads K_j, V_j once (a K/V block no query sees loads nothing), Q_i and
// dO_i per visible tile, L_i and D_i per visible tile once per warp column of its S = Q K^T MMA
// (`columns`), adds dQ_i into dQacc_i (atomics) and writes dK_j, dV_j; convert_dq reads dQacc, writes dQ.
struct Requests {
  u64 pre_read, pre_write, main_read, main_write, main_atomic, conv_read, conv_write;
};
Requests closed_form(const Problem& p, u64 columns) {
  const Tiling& t = p.tiling;
  const u64 e = u64(p.e_in), d = u64(t.d), nq = u64(t.n_q), nk = u64(t.n_k);
  Requests r{};
  r.pre_read = 2 * nq * d * e;
  const u64 threads_per_row = (d % 64 == 0 ? 64 : 32) / (16 / e);
  r.pre_write = nq * 4 * std::max<u64>(1, threads_per_row / 4) + nq * d * 4;
  u64 tiles = 0, kv_seen = 0;
  for (std::int64_t j = 0; j < t.t_c(); ++j) {
    bool seen = false;
    for (std::int64_t i = 0; i < t.t_r(); ++i)
      if (visible(p, i, j)) ++tiles, seen = true;
    kv_seen += seen;
  }
  const u64 br = u64(t.b_r), bc = u64(t.b_c);
  r.main_read = kv_seen * 2 * bc * d * e + tiles * (2 * br * d * e + columns * 2 * br * 4);
  r.main_write = 2 * nk * d * e;
  r.main_atomic = tiles * br * d * 4;
  r.conv_read = nq * d * 4;
  r.conv_write = nq * d * e;
  return r;
}

}  // namespace

TEST_CASE("--kernel fa2 --pass backward: PyTorch's three launches on the H200 — names, traits, grids, blocks") {
  const json rows = torch_backward_rows();
  REQUIRE(rows.size() == 12);
  for (const json& row : rows) {
    const std::string key = row.at("flags");
    CAPTURE(key);
    const Problem p = timefit::problem_of(timefit::simulator_flags(key));
    const Counters k = count(p);
    const std::vector<json> ls = backward_launches(row);
    REQUIRE(ls.size() == 3);
    REQUIRE(k.launches.size() == 3);
    // the main kernel's measured traits: <kHeadDim, kBlockM, kBlockN, kNWarps, AtomLayoutMSdP, ...>
    const Fa2BackwardTraits tr = fa2_backward_traits(p.tiling.d);
    const std::string traits = "Flash_bwd_kernel_traits<" + std::to_string(tr.head_dim) + ", " + std::to_string(p.tiling.b_r) +
                               ", " + std::to_string(p.tiling.b_c) + ", " + std::to_string(p.warps) + ", " +
                               std::to_string(tr.atom_m_sdp) + ",";
    const std::int64_t bh_grid[3] = {p.tiling.t_r(), p.tiling.t_c(), p.tiling.t_r()};  // blockIdx.x: Q or K/V blocks
    for (std::size_t x = 0; x < 3; ++x) {
      CAPTURE(x);
      const std::string name = ls[x].at("name");
      CHECK(name.find(" " + k.launches[x].name + "<") != std::string::npos);
      CHECK(name.find(traits) != std::string::npos);
      const auto g = dims(ls[x].at("grid")), b = dims(ls[x].at("block"));
      CHECK(g[0] == bh_grid[x]);
      CHECK(g[1] == p.batch);  // gridDim.y: batch, gridDim.z: heads
      CHECK(g[2] == p.heads);
      CHECK(k.launches[x].grid == g[0] * g[1] * g[2]);
      CHECK(b[0] == 32 * p.warps);
    }
  }
}

TEST_CASE("--kernel fa2 --pass backward: request bytes per launch equal FA2's kernels' closed forms") {
  for (const json& row : torch_backward_rows()) {
    const std::string key = row.at("flags");
    CAPTURE(key);
    const Problem p = timefit::problem_of(timefit::simulator_flags(key));
    const Counters k = count(p);
    // warps along the keys of S_ij, read off the measured name: kNWarps / AtomLayoutMSdP
    const std::string name = backward_launches(row)[1].at("name");
    const auto at = name.find("Flash_bwd_kernel_traits<");
    std::istringstream in(name.substr(at + 24));
    std::int64_t hd, bm, bn, warps, atom;
    char c;
    in >> hd >> c >> bm >> c >> bn >> c >> warps >> c >> atom;
    const Requests r = closed_form(p, u64(warps / atom));
    const u64 bh = u64(p.bh());
    CHECK(k.launches[0].cost.read_bytes() == bh * r.pre_read);
    CHECK(k.launches[0].cost.write_bytes() == bh * r.pre_write);
    CHECK(k.launches[1].cost.read_bytes() == bh * r.main_read);
    CHECK(k.launches[1].cost.write_bytes() == bh * r.main_write);
    CHECK(k.launches[1].cost.atomic_bytes() == bh * r.main_atomic);
    CHECK(k.launches[2].cost.read_bytes() == bh * r.conv_read);
    CHECK(k.launches[2].cost.write_bytes() == bh * r.conv_write);
    // what the released V2 schedule on the same tile does not read: the repeated L_i and D_i
    Config v = {};
    v.algo = Algo::v2;
    v.pass = Pass::backward;
    v.batch = p.batch, v.heads = p.heads, v.n_q = p.tiling.n_q, v.n_k = p.tiling.n_k, v.d = p.tiling.d;
    v.b_r = p.tiling.b_r, v.b_c = p.tiling.b_c, v.warps = p.warps, v.mask = p.mask, v.dtype = p.dtype;
    const Counters ours = count(resolve(v));
    CHECK(k.launches[1].cost.read_bytes() - ours.launches[1].cost.read_bytes() ==
          bh * (closed_form(p, u64(warps / atom)).main_read - closed_form(p, 1).main_read));
  }
}

TEST_CASE("--kernel fa2 --pass backward: the L2 model's DRAM reads within 1% of Nsight Compute's, but two") {
  int within = 0, launches = 0;
  for (const json& row : torch_backward_rows()) {
    const std::string key = row.at("flags");
    CAPTURE(key);
    const Problem p = timefit::problem_of(timefit::simulator_flags(key));
    const Modelled m = model(p);
    const std::vector<json> ls = backward_launches(row);
    for (std::size_t x = 0; x < 3; ++x) {
      const double measured = mean(ls[x].at("dram_rd"));
      const double ratio = double(total(m.counters.launches[x].dram, Dir::read)) / measured;
      CAPTURE(x);
      CAPTURE(ratio);
      ++launches;
      if (std::abs(ratio - 1) <= 0.01) {
        ++within;
        continue;
      }
      // the main kernel at d = 128 without a mask (64 x 128 tiles, T_r = 64 Q blocks walked by every
      // K/V block): FA2 reads 4.5-4.8% more from DRAM than the L2 model's LRU gives; its requests are
      // the closed form's above
      CHECK(x == 1);
      CHECK(p.tiling.d == 128);
      CHECK(p.mask.kind == MaskKind::none);
      CHECK(ratio >= 0.95);
      CHECK(ratio < 1.0);
    }
  }
  CHECK(launches == 36);
  CHECK(within == 34);
}

TEST_CASE("--kernel fa2 --pass backward: what FA2 does not launch, or this model does not count, is refused") {
  const auto field = [](Config c) {
    try {
      resolve(c);
    } catch (const ConfigError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  Config c;
  c.kernel = Kernel::fa2;
  c.pass = Pass::backward;
  c.n_q = c.n_k = 1024;
  c.d = 64;
  CHECK(field(c) == "accepted");
  const Problem p = resolve(c);
  CHECK(p.tiling.b_r == 128);
  CHECK(p.tiling.b_c == 128);
  CHECK(p.warps == 8);
  CHECK(p.splits == 1);
  Config x = c;
  x.d = 264;
  CHECK(field(x) == "d");  // FA2's largest head dim is 256
  x = c, x.d = 100;
  CHECK(field(x) == "d");  // PyTorch pads it to 104 with launches of its own
  x = c, x.dtype = Dtype::fp32;
  CHECK(field(x) == "dtype");
  x = c, x.n_q = 512, x.mask = parse_mask("causal");
  CHECK(field(x) == "mask");  // top-left causal with N_q != N_k: FA2's is bottom-right
  x = c, x.backward_form = BackwardForm::paper;
  CHECK(field(x) == "backward-form");
  x = c, x.heads = 8, x.kv_heads = 2;
  CHECK(field(x) == "accepted");  // dK, dV per query head, then PyTorch's at::sum per group
  x = c, x.heads = 12, x.kv_heads = 4;
  CHECK(field(x) == "kv-heads");  // groups of 3 do not divide N_k d e_in = 2^17 bytes into equal shares
  x = c, x.b_r = 64;
  CHECK(field(x) == "br/bc");
  x = c, x.warps = 2;
  CHECK(field(x) == "warps");
  x = c, x.pass = Pass::both;
  CHECK(field(x) == "pass");
  x = c, x.splits = 2;
  CHECK(field(x) == "splits");
  x = c, x.algo = Algo::v1;
  CHECK(field(x) == "kernel");
  x = c, x.mask = parse_mask("window:128,0");
  CHECK(field(x) == "accepted");  // FA2's local backward (Is_local)
}
