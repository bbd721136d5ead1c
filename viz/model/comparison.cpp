// comparison.cpp — see comparison.hpp.
#include "model/comparison.hpp"

#include <algorithm>

#include "flashlab/contract/error.hpp"

namespace flashlab::viz {

void Comparison::reset(const Config& c) {
  for (CompareSide& s : sides_) {
    Config ci = c;
    ci.algo = s.algo;
    s.analysis.reset();
    s.track.reset();
    s.error.clear();
    try {
      const Problem p = resolve(ci);
      s.analysis = std::make_unique<TileAnalysis>(p);
      s.track = std::make_unique<Track>(p, s.analysis->totals().steps);
    } catch (const ConfigError& e) {
      s.error = e.what();
    }
  }
}

std::uint64_t Comparison::total_steps() const {
  std::uint64_t n = 0;
  for (const CompareSide& s : sides_)
    if (s.track) n = std::max(n, s.track->total_steps());
  return n;
}

void Comparison::seek(std::uint64_t k) {
  for (CompareSide& s : sides_)
    if (s.track) s.track->seek(k);
}

std::vector<RatioRow> compare_rows(const Counters& a, const Counters& b) {
  auto d = [](std::uint64_t v) { return double(v); };
  return {
      {"HBM read", d(a.cost.read_bytes()), d(b.cost.read_bytes()), true,
       "Bytes read from HBM: V1 re-reads Q_i, O_i, l_i, m_i for every tile (FA1 Alg. 1 line 8), "
       "V2 reads Q_i once per Q block (FA2 Alg. 1 line 4)."},
      {"HBM write", d(a.cost.write_bytes()), d(b.cost.write_bytes()), true,
       "Bytes written to HBM: V1 writes O_i, l_i, m_i back after every tile (FA1 Alg. 1 lines 12-13), "
       "V2 writes O_i and L_i once (FA2 Alg. 1 lines 14-15)."},
      {"HBM total", d(a.cost.read_bytes() + a.cost.write_bytes()),
       d(b.cost.read_bytes() + b.cost.write_bytes()), true, "Read plus written bytes."},
      {"matmul FLOPs", d(a.cost.flops), d(b.cost.flops), false,
       "4 rows(i) cols(j) d per computed tile (S = Q K^T and P V)."},
      {"exp", d(a.cost.op(OpKind::exp)), d(b.cost.op(OpKind::exp)), false,
       "exp evaluations of the online softmax."},
      {"mul", d(a.cost.op(OpKind::mul)), d(b.cost.op(OpKind::mul)), false,
       "Non-matmul multiplies: V1 rescales O by l e^(m - m_new) every step."},
      {"div", d(a.cost.op(OpKind::div)), d(b.cost.op(OpKind::div)), false,
       "Divisions: V1 divides every O element by l_new twice per step (FA1 Alg. 1 line 12), V2 "
       "once at the end (FA2 Alg. 1 line 12)."},
      {"tiles computed", d(a.tiles.visited), d(b.tiles.visited), false,
       "Tiles the schedule computes; with block skip off (V1's default) skipped tiles are computed too."},
      {"steps", d(a.steps), d(b.steps), false, "Steps of the schedule, one (batch, head)."},
      {"SRAM peak", d(std::uint64_t(a.sram_peak_bytes)), d(std::uint64_t(b.sram_peak_bytes)), true,
       "Largest on-chip working set of one thread block: Q_i, K_j, V_j and S_ij."},
      {"grid blocks", d(std::uint64_t(a.grid_blocks)), d(std::uint64_t(b.grid_blocks)), false,
       "Thread blocks launched: V1 one per (batch, head), V2 one per Q block and (batch, head)."},
  };
}

}  // namespace flashlab::viz
