// v3_pace.cpp — the pace of V3's consumer instruction streams in the timeline (v3_pace.hpp).
#include "v3_pace.hpp"

#include <algorithm>

#include "sm_facts.hpp"

namespace flashlab::time_detail {

double others_beside(const Laid& l) {
  std::vector<std::pair<double, int>> edges;
  double own = 0;
  for (const Span& s : l.spans)
    if (s.iv.what == Phase::softmax && l.lanes[std::size_t(s.iv.lane)].kind == LaneKind::agent) {
      edges.emplace_back(s.iv.start_s, 1), edges.emplace_back(s.iv.end_s, -1);
      own += s.iv.end_s - s.iv.start_s;
    }
  std::sort(edges.begin(), edges.end());
  int n = 0;
  double last = 0, seen = 0;  // the integral of n (n - 1): each of the n in a softmax sees n - 1 others
  for (const auto& [t, step] : edges) {
    seen += double(n) * double(n - 1) * (t - last);
    last = t, n += step;
  }
  return own > 0 ? seen / own : 0.0;
}

double pace_s(const Problem& p, double others) {
  const GpuSpec& g = p.gpu;
  const double wgmma_clock = g.wgmma_flops.value() / (kWgmmaFlopPerCycle * double(g.sms));
  const double compiled = p.hopper.warp_specialize ? kCompiledPerEstimate : kCompiledPerEstimateInline;
  return compiled * (kPaceBase + kPacePerOther * others) / wgmma_clock;
}

Laid lay_v3_paced(const Problem& p, bool persistent, const V3Tiles& tiles,
                  const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double latency_s) {
  // lay_v3's iota: cycles of the preset's clock per estimated instruction
  const double clock = p.gpu.clock_hz.value();
  double others = double(p.tiling.b_r / 64 - 1);
  Laid l = lay_v3(p, persistent, tiles, blocks, latency_s, pace_s(p, others) * clock);
  for (int round = 0; round < 8; ++round) {
    others = 0.5 * (others + others_beside(l));
    l = lay_v3(p, persistent, tiles, blocks, latency_s, pace_s(p, others) * clock);
  }
  return l;
}

}  // namespace flashlab::time_detail
