// The metrics catalogue (flashlab/report/metrics.hpp): its metrics on shared/DESIGN.md's worked
// example against element counts derived from the algorithms' lines, the warp model's figures
// against docs/warps.md's closed forms, and the catalogue's own consistency.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/warps/warps.hpp"
#include "../../common/config_helpers.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using report::Figures;
using report::value_of;

namespace {

// The worked example: N = N_q = N_k = 1024, d = 64, B_r = B_c = 64, no mask; fp32, so every
// element (Q K V O S P and the statistics alike) is 4 bytes and bytes = 4 x elements.
Figures worked(Algo a) {
  Config c = test::small(a, 1024, 1024, 64, 64, 64);
  c.dtype = Dtype::fp32;
  return report::measure(resolve(c));
}

std::uint64_t n(const char* key, const Figures& f) {
  const report::Value v = value_of(key, f);
  REQUIRE(v.kind == report::Value::Kind::integer);
  return v.integer;
}

constexpr std::uint64_t N = 1024, d = 64, B = 64, T = N / B, e = 4;

}  // namespace

TEST_CASE("worked example, V2: reads 2,162,688 elements, writes 66,560") {
  const Figures f = worked(Algo::v2);
  // FA2 Alg. 1: Q_i once per Q block (N d), K_j and V_j once per tile (2 T N d); O once (N d), L once (N)
  CHECK(N * d + 2 * T * N * d == 2'162'688);
  CHECK(N * d + N == 66'560);
  CHECK(n("hbm_read_bytes", f) == 2'162'688 * e);
  CHECK(n("hbm_write_bytes", f) == 66'560 * e);
  CHECK(n("hbm_total_bytes", f) == (2'162'688 + 66'560) * e);
  CHECK(n("read_K", f) == T * N * d * e);
  CHECK(n("write_L", f) == N * 4);
  CHECK(n("hbm_o_l_m_read_bytes", f) == 0);
  CHECK(n("hbm_s_p_bytes", f) == 0);
  CHECK(n("flops_matmul", f) == T * T * 4 * B * B * d);  // 4 rows cols d per tile
  CHECK(n("tiles_visited", f) == T * T);
  CHECK(n("grid_blocks", f) == T);  // one thread block per Q block
  // arithmetic intensity: 268,435,456 FLOPs over 8,916,992 bytes
  CHECK(value_of("flops_per_hbm_byte", f).as_double() == flashlab::testing::approx(268'435'456.0 / 8'916'992.0));
}

TEST_CASE("worked example, V1: reads 2,260,992 elements, writes 1,081,344 + 67,584") {
  const Figures f = worked(Algo::v1);
  // FA1 Alg. 1: K and V once (2 N d); per tile Q_i, O_i (2 B d) and l_i, m_i (2 B): 256 tiles
  CHECK(2 * N * d + T * T * (2 * B * d + 2 * B) == 2'260'992);
  // lines 12-13 write O_i, l_i, m_i per tile (B d + 2 B); line 2 initialises O, l, m (N d + 2 N)
  CHECK(T * T * (B * d + 2 * B) == 1'081'344);
  CHECK(N * d + 2 * N == 67'584);
  CHECK(n("hbm_read_bytes", f) == 2'260'992 * e);
  CHECK(n("hbm_write_bytes", f) == (1'081'344 + 67'584) * e);
  // the re-reads of O, l, m: every tile reads O_i, l_i, m_i back
  CHECK(n("hbm_o_l_m_read_bytes", f) == T * T * (B * d + 2 * B) * e);
  CHECK(n("grid_blocks", f) == 1);
  // line 12 divides every O element by l_new twice per tile (de- and re-normalise)
  CHECK(n("ops_div", f) == T * T * 2 * B * d);
}

TEST_CASE("worked example, standard: reads 2,293,760 elements, writes 2,162,688") {
  const Figures f = worked(Algo::standard);
  // FA1 Alg. 0: read Q, K (2 N d), S (N^2), P and V (N^2 + N d); write S, P (2 N^2) and O (N d)
  CHECK(3 * N * d + 2 * N * N == 2'293'760);
  CHECK(2 * N * N + N * d == 2'162'688);
  CHECK(n("hbm_read_bytes", f) == 2'293'760 * e);
  CHECK(n("hbm_write_bytes", f) == 2'162'688 * e);
  CHECK(n("hbm_s_p_bytes", f) == 4 * N * N * e);  // S and P each written once and read once
  // standard attention has no tile loop for the warp model to split: no warp figure
  CHECK_FALSE(f.warp_model);
  for (const char* key : {"warp_smem_bytes", "warp_barriers", "warp_extra_ops"}) CHECK(value_of(key, f).none());
}

TEST_CASE("time lower bounds from the GPU preset's datasheet figures") {
  const Figures f = worked(Algo::v2);
  REQUIRE(f.problem.gpu.name == "h200");
  // the H200 datasheet: 4.8 TB/s HBM, 67 TFLOP/s fp32 (fp32 inputs)
  CHECK(value_of("hbm_seconds", f).as_double() == flashlab::testing::approx(double((2'162'688 + 66'560) * e) / 4.8e12));
  CHECK(value_of("matmul_seconds", f).as_double() == flashlab::testing::approx(double(T * T * 4 * B * B * d) / 67e12));
}

namespace {

// A config where every warp has rows and columns: N = 128, d = 16, B_r = B_c = 32, W = 4, no
// mask: 16 full tiles of r = c = 32 (V1 computes all, V2 too), r_w = c_w = 8.
Figures small(Algo a, WarpSplit split) {
  Config c;
  c.algo = a;
  c.n_q = c.n_k = 128;
  c.d = 16;
  c.b_r = c.b_c = 32;
  c.warps = 4;
  c.split = split;
  return report::measure(resolve(c));
}

}  // namespace

TEST_CASE("warp split: split-K against split-Q on a small V1 config, docs/warps.md closed forms") {
  const Figures q = small(Algo::v1, WarpSplit::split_q), k = small(Algo::v1, WarpSplit::split_k);
  const std::uint64_t tiles = 16, r = 32, dd = 16, W = 4;
  // split-Q: warps share only K_j, V_j — two barriers per tile, no shared-memory partials, and the
  // warps' operations add up to the block's exactly
  CHECK(n("warp_barriers", q) == 2 * tiles);
  CHECK(n("warp_smem_bytes", q) == 0);
  CHECK(n("warp_extra_ops", q) == 0);
  // split-K per tile: fp32 partials of the row max (r each), the row sum (r each) and P~V (r d each)
  // written by each of the W warps; read back: the row max by every warp (W r each), the row sum
  // and O by the owners of the rows (W r_w and W r_w d for each, r_w summing to r)
  CHECK(n("warp_smem_write_bytes", k) == tiles * 4 * W * (r + r + r * dd));
  CHECK(n("warp_smem_read_bytes", k) == tiles * 4 * (W * W * r + W * r + W * r * dd));
  CHECK(n("warp_barriers", k) == 5 * tiles);  // + one after each of the three partial writes
  // max: split-Q does r c per tile. split-K: each warp's partial max over its c_w columns takes
  // r (c_w - 1), r (c - W) in all; every warp combines the W partials of every row, W (W - 1) r;
  // the owners form m_new = max(m, m~), r. Difference: r (W^2 - 2W + 1) = r (W - 1)^2.
  // add: split-Q does r (c + d). split-K: partial row sums r (c - W), the owners' W - 1 adds of
  // the row sum plus one for l_new (W r), and W - 1 adds of O's partials plus line 12's own
  // (W r d): r c + W r d. Difference: (W - 1) r d.
  CHECK(n("warp_extra_max", k) == tiles * r * (W - 1) * (W - 1));
  CHECK(n("warp_extra_add", k) == tiles * (W - 1) * r * dd);
  CHECK(n("warp_extra_ops", k) == tiles * (r * (W - 1) * (W - 1) + (W - 1) * r * dd));
  for (const char* kind : {"warp_extra_exp", "warp_extra_sub", "warp_extra_mul", "warp_extra_div", "warp_extra_log"})
    CHECK(n(kind, k) == 0);
  // the split changes no block-level count
  for (const char* key : {"hbm_total_bytes", "flops_matmul", "ops_all", "tiles_visited", "steps"})
    CHECK(n(key, q) == n(key, k));
}

TEST_CASE("warp split: V2 split-K does r W (W - 1) more max per tile (every warp folds in m_old)") {
  const Figures k = small(Algo::v2, WarpSplit::split_k);
  CHECK(n("warp_extra_max", k) == 16 * 32 * 4 * 3);
  CHECK(n("warp_extra_add", k) == 16 * 3 * 32 * 16);
}

// WarpCounter adds one walk per kind of step; summing every step's walk must give the same.
TEST_CASE("WarpCounter's totals equal the step-by-step sum, and split-Q's warps add up to the block") {
  struct Case {
    Algo algo;
    std::int64_t n_q, n_k, d, b_r, b_c;
    MaskKind mask;
    int warps;
  };
  for (const Case& x : {Case{Algo::v2, 100, 77, 16, 32, 16, MaskKind::causal_br, 4},
                        Case{Algo::v1, 100, 77, 16, 32, 16, MaskKind::causal_tl, 3},
                        Case{Algo::v2, 33, 130, 8, 16, 64, MaskKind::none, 8},
                        Case{Algo::v1, 9, 5, 4, 4, 4, MaskKind::causal_tl, 5}})
    for (WarpSplit split : {WarpSplit::split_q, WarpSplit::split_k}) {
      CAPTURE(int(x.algo));
      CAPTURE(x.n_q);
      CAPTURE(int(split));
      Config c;
      c.algo = x.algo;
      c.n_q = x.n_q;
      c.n_k = x.n_k;
      c.d = x.d;
      c.b_r = x.b_r;
      c.b_c = x.b_c;
      c.mask.kind = x.mask;
      c.warps = x.warps;
      c.split = split;
      c.batch = 2;
      const Problem p = resolve(c);
      Executor ex(p);
      WarpCounter counter(p);
      ex.add_observer(&counter);
      std::vector<WarpWork> brute(std::size_t(p.warps));
      while (ex.step()) {
        const std::vector<WarpWork> w = step_warp_work(p, ex.last());
        for (std::size_t k = 0; k < w.size(); ++k) brute[k] += w[k];
      }
      CHECK(counter.per_head() == brute);
      if (split == WarpSplit::split_q) {
        const Figures f = report::figures_of(ex, counter);
        for (int o = 0; o < kOpKindCount; ++o) {
          std::uint64_t sum = 0;
          for (const WarpWork& w : f.warps) sum += w.op(OpKind(o));
          CHECK(sum == f.counters.cost.op(OpKind(o)));
        }
      }
    }
}

TEST_CASE("the catalogue: unique keys and JSON paths, every count --json key of before, labels and help") {
  std::set<std::string> keys, paths;
  for (const report::Metric& m : report::catalogue()) {
    CAPTURE(m.key);
    CHECK(keys.insert(m.key).second);
    CHECK(paths.insert(m.json_path).second);
    CHECK_FALSE(m.label.empty());
    CHECK(m.help.size() > 20);
    CHECK(m.value);
  }
  // the keys `count --json` printed before the catalogue, which scripts read
  for (const char* path : {"hbm.total_read_bytes", "hbm.total_write_bytes", "hbm.total_bytes", "tiles.total",
                           "tiles.visited", "tiles.full", "tiles.partial", "tiles.skipped", "flops.matmul",
                           "sram.peak_bytes", "sram.capacity_bytes", "grid.blocks", "grid.blocks_per_sm",
                           "grid.waves", "grid.sms", "steps"})
    CHECK_MESSAGE(paths.count(path) == 1, path);
  for (const char* t : {"Q", "K", "V", "O", "l", "m", "L", "S", "P"})
    for (const char* dir : {"read", "write"}) CHECK(paths.count(std::string("hbm.") + dir + "_bytes." + t) == 1);
  for (const char* op : {"exp", "max", "add", "sub", "mul", "div", "log"}) CHECK(paths.count(std::string("ops.") + op) == 1);
  CHECK_THROWS_WITH_AS(report::metric("hbm_bytes"), doctest::Contains("metric = hbm_bytes: one of hbm_read_bytes"),
                       ConfigError);
}

TEST_CASE("metrics_json: every metric at its dotted path, none as null") {
  const Figures f = worked(Algo::standard);
  const nlohmann::json j = report::metrics_json(f);
  CHECK(j.at("hbm").at("total_read_bytes") == 2'293'760 * e);
  CHECK(j.at("grid").at("sms") == f.problem.gpu.sms);
  CHECK(j.at("warps").at("barriers").is_null());
  CHECK(j.at("warps").at("extra_ops").at("max").is_null());
  CHECK(j.at("derived").at("flops_per_hbm_byte").is_number_float());
}

TEST_CASE("labels, human and precise forms by unit") {
  const Figures f = worked(Algo::v2);
  CHECK(report::label_of(report::metric("waves"), f.problem) == "waves on h200");
  CHECK(report::label_of(report::metric("hbm_seconds"), f.problem) == "HBM time at 4.80 TB/s");
  CHECK(report::human(report::metric("hbm_read_bytes"), value_of("hbm_read_bytes", f)) == "8.25 MiB");
  CHECK(report::precise(report::metric("hbm_read_bytes"), value_of("hbm_read_bytes", f)) == "8,650,752 B (8.25 MiB)");
  CHECK(report::human(report::metric("flops_matmul"), value_of("flops_matmul", f)) == "268.4 M");
  CHECK(report::human(report::metric("tiles_total"), value_of("tiles_total", f)) == "256");
  CHECK(report::human(report::metric("warp_barriers"), report::Value{}) == "-");
  CHECK(report::exact(value_of("hbm_read_bytes", f)) == "8650752");
  CHECK(report::exact(report::Value{}).empty());
}
