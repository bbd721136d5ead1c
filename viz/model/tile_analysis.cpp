// tile_analysis.cpp — see tile_analysis.hpp.
#include "model/tile_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "flashlab/report/format.hpp"

namespace flashlab::viz {

std::string_view to_string(Metric m) {
  switch (m) {
    case Metric::hbm_bytes: return "HBM bytes";
    case Metric::flops: return "matmul FLOPs";
    case Metric::exp_ops: return "exp count";
    case Metric::visit_order: return "visit order";
    case Metric::atomic_bytes: return "dQ atomics";
  }
  return "?";
}

std::string_view describe(Metric m) {
  switch (m) {
    case Metric::hbm_bytes:
      return "HBM bytes read and written by the tile's step: K_j and V_j in V2 (FA2 Alg. 1 line 7); "
             "Q_i, O_i, l_i, m_i in and O_i, l_i, m_i out in V1 (FA1 Alg. 1 lines 8, 12, 13).";
    case Metric::flops:
      return "Matmul FLOPs of the tile: 2 r c d for S = Q_i K_j^T plus 2 r c d for P V_j; masked "
             "elements of a partial tile are still computed.";
    case Metric::exp_ops:
      return "exp evaluations of the tile's online softmax: one per score of P~ = exp(S - m) plus "
             "the per-row rescaling factors exp(m_old - m_new).";
    case Metric::visit_order:
      return "Order in which the schedule computes the tiles: V2 walks K/V blocks j inside each Q "
             "block i, V1 walks Q blocks i inside each K/V block j; the backward's thread blocks own "
             "K/V blocks j and walk the Q blocks (FA2's released kernel from the last one down).";
    case Metric::atomic_bytes:
      return "Bytes the tile's step adds to the fp32 dQ accumulator with atomics (the released V2 "
             "backward: rows(i) x d x 4 per visited tile); 0 for every forward and for V1's and the "
             "paper's backward, which read and write dQ_i instead.";
  }
  return "";
}

TileAnalysis::TileAnalysis(const Problem& p) {
  const std::int64_t tiles = p.tiling.t_r() * p.tiling.t_c();
  has_stats_ = tiles <= kTileStatsLimit;
  exec_ = std::make_unique<Executor>(p, ExecOptions{.tile_stats = has_stats_});
  warps_ = std::make_unique<WarpCounter>(p);
  exec_->add_observer(warps_.get());
  exec_->run();
  figures_ = report::figures_of(*exec_, *warps_);
}

TileClass TileAnalysis::cls(std::int64_t i, std::int64_t j) const {
  return tile_class(tiling(), problem().band, i, j);
}

bool TileAnalysis::computed(std::int64_t i, std::int64_t j) const {
  if (!has_tiles(exec_->schedule())) return true;  // no tile loop: all of S is computed
  const auto& stats = exec_->tile_stats();
  if (stats.empty()) return !problem().block_skip || cls(i, j) != TileClass::skipped;
  return stats[std::size_t(i * tiling().t_c() + j)].visit >= 0;
}

std::int32_t TileAnalysis::visit_order(std::int64_t i, std::int64_t j) const {
  const auto& stats = exec_->tile_stats();
  if (stats.empty()) return -1;
  return stats[std::size_t(i * tiling().t_c() + j)].visit;
}

std::vector<WarpWork> TileAnalysis::warp_work(std::int64_t i, std::int64_t j) const {
  if (!has_tiles(exec_->schedule()) || !computed(i, j)) return {};
  const Cost c = cost(i, j);
  StepView s = exec_->tile_step(i, j);
  s.cost = &c;
  return step_warp_work(problem(), s);
}

double TileAnalysis::metric(Metric m, std::int64_t i, std::int64_t j) const {
  if (!computed(i, j)) return std::numeric_limits<double>::quiet_NaN();
  if (m == Metric::visit_order) {
    const std::int32_t v = visit_order(i, j);
    return v >= 0 ? double(v) : std::numeric_limits<double>::quiet_NaN();
  }
  const Cost c = cost(i, j);
  switch (m) {
    case Metric::hbm_bytes: return double(c.read_bytes() + c.write_bytes() + c.atomic_bytes());
    case Metric::flops: return double(c.flops);
    case Metric::exp_ops: return double(c.op(OpKind::exp));
    case Metric::atomic_bytes: return double(c.atomic_bytes());
    case Metric::visit_order: break;
  }
  return 0;
}

const TileAnalysis::Grid& TileAnalysis::grid(Metric m) const {
  auto& slot = grids_[std::size_t(m)];
  if (slot) return *slot;
  slot.emplace();
  if (!has_stats_) return *slot;
  const std::int64_t t_r = tiling().t_r(), t_c = tiling().t_c();
  auto& v = slot->values;
  v.resize(std::size_t(t_r * t_c));
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::int64_t i = 0; i < t_r; ++i)
    for (std::int64_t j = 0; j < t_c; ++j) {
      const double x = v[std::size_t(i * t_c + j)] = metric(m, i, j);
      if (std::isfinite(x)) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
    }
  if (lo <= hi) slot->range = {lo, hi};
  return *slot;
}

const std::vector<double>& TileAnalysis::metric_grid(Metric m) const { return grid(m).values; }

std::pair<double, double> TileAnalysis::metric_range(Metric m) const { return grid(m).range; }

std::string tile_summary(const TileAnalysis& a, std::int64_t i, std::int64_t j) {
  const Tiling& t = a.tiling();
  const std::int64_t r0 = i * t.b_r, c0 = j * t.b_c;
  std::string s = "tile (" + std::to_string(i) + ", " + std::to_string(j) + "): rows(i) x cols(j) = " +
                  std::to_string(t.rows(i)) + " x " + std::to_string(t.cols(j)) + "\n";
  s += "queries " + std::to_string(r0) + ".." + std::to_string(r0 + t.rows(i) - 1) + ", keys " +
       std::to_string(c0) + ".." + std::to_string(c0 + t.cols(j) - 1) + "\n";
  s += "class: " + std::string(to_string(a.cls(i, j)));
  if (!a.computed(i, j)) s += ", not computed (block skip)";
  else if (a.visit_order(i, j) >= 0) s += ", visit #" + std::to_string(a.visit_order(i, j));
  else s += ", computed";
  s += "\n";
  if (!has_tiles(a.executor().schedule())) {
    s += "this schedule has no tile loop: S and P go through HBM whole";
    return s;
  }
  const Problem& p = a.problem();
  if (p.splits > 1 && a.computed(i, j)) {  // split-KV: which split's thread block walks the tile
    const StepView step = a.executor().tile_step(i, j);
    const SplitRange r = split_range(p, step.split);
    s += "split " + std::to_string(step.split) + " of " + std::to_string(p.splits) + " (K/V blocks " +
         std::to_string(r.first) + ".." + std::to_string(r.end - 1) + "): thread block " + std::to_string(step.block) +
         "; flash_combine merges the " + std::to_string(p.splits) + " partial O_i, L_i\n";
  }
  const Cost c = a.cost(i, j);
  s += "HBM (one head): read " + report::human_bytes(double(c.read_bytes())) + ", write " +
       report::human_bytes(double(c.write_bytes())) + "\n";
  s += "matmul FLOPs: " + report::group_digits(c.flops) + ", exp: " + report::group_digits(c.op(OpKind::exp));
  return s;
}

}  // namespace flashlab::viz
