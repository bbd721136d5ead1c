// hbm_sweep.cpp — see hbm_sweep.hpp.
#include "model/hbm_sweep.hpp"

#include <algorithm>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::viz {

std::string_view to_string(SweepAxis a) {
  return a == SweepAxis::block ? "block size B (B_r = B_c = B)" : "SRAM size M (auto blocks)";
}

std::vector<std::int64_t> sweep_values(const Config& c, SweepAxis a) {
  std::vector<std::int64_t> xs;
  if (a == SweepAxis::block) {
    const std::int64_t n = std::max(c.n_q, c.n_k);
    for (std::int64_t b = 16; b <= 1024; b *= 2) {
      xs.push_back(b);
      if (b >= n) break;
    }
  } else {
    for (std::int64_t kib = 8; kib <= 256; kib *= 2) xs.push_back(kib * 1024);
  }
  return xs;
}

SweepPoint sweep_point(const Config& c, SweepAxis a, std::int64_t x) {
  SweepPoint pt;
  pt.x = x;
  for (Algo algo : {Algo::standard, Algo::v1, Algo::v2}) {
    const auto k = std::size_t(algo);
    Config ci = c;
    ci.algo = algo;
    if (a == SweepAxis::block) {
      ci.auto_blocks = false;
      ci.b_r = ci.b_c = x;
    } else {
      ci.auto_blocks = true;
      ci.b_r.reset();
      ci.b_c.reset();
      ci.sram_bytes = x;
    }
    try {
      const Problem p = resolve(ci);
      pt.b_r[k] = p.tiling.b_r;
      pt.b_c[k] = p.tiling.b_c;
      const std::int64_t tiles = p.tiling.t_r() * p.tiling.t_c();
      if (algo != Algo::standard && tiles > kSweepTileLimit) {
        pt.why[k] = "T_r x T_c = " + report::group_digits(std::uint64_t(tiles)) + " tiles: more than " +
                    report::group_digits(std::uint64_t(kSweepTileLimit)) + ", left out to stay interactive";
        continue;
      }
      pt.hbm[k] = report::value_of(kSweepMetric, report::Figures{p, count(p), false, {}, false, {}}).integer;
    } catch (const ConfigError& e) {
      pt.why[k] = e.what();
    }
  }
  return pt;
}

std::vector<SweepPoint> sweep_hbm(const Config& c, SweepAxis a) {
  std::vector<SweepPoint> pts;
  for (std::int64_t x : sweep_values(c, a)) pts.push_back(sweep_point(c, a, x));
  return pts;
}

}  // namespace flashlab::viz
