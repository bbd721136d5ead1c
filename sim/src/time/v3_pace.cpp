// v3_pace.cpp — the pace of V3's consumer instruction streams in the timeline (v3_pace.hpp).
#include "v3_pace.hpp"

#include <algorithm>
#include <limits>

#include "sm_facts.hpp"

namespace flashlab::time_detail {

double pace_s(const Problem& p, double others) {
  const GpuSpec& g = p.gpu;
  const double wgmma_clock = g.wgmma_flops.value() / (kWgmmaFlopPerCycle * double(g.sms));
  const double compiled = p.hopper.warp_specialize ? kCompiledPerEstimate : kCompiledPerEstimateInline;
  return compiled * (kPaceBase + kPacePerOther * others) / wgmma_clock;
}

int PacedStreams::step(std::vector<std::pair<int, double>>& jobs, double& t_now, double t) const {
  if (jobs.empty()) {
    t_now = std::max(t_now, t);
    return -1;
  }
  const double per = pace_s(p_, double(jobs.size() - 1));  // seconds per instruction, each
  std::size_t first = 0;
  for (std::size_t x = 1; x < jobs.size(); ++x)
    if (jobs[x].second < jobs[first].second) first = x;
  const double until = t_now + jobs[first].second * per;
  if (until > t) {
    for (auto& j : jobs) j.second -= (t - t_now) / per;
    t_now = t;
    return -1;
  }
  const double left = jobs[first].second;
  for (auto& j : jobs) j.second -= left;
  const int tag = jobs[first].first;
  jobs.erase(jobs.begin() + std::ptrdiff_t(first));
  t_now = until;
  return tag;
}

void PacedStreams::add(int tag, double instructions) { jobs_.emplace_back(tag, instructions); }

double PacedStreams::tentative(int tag) const {
  std::vector<std::pair<int, double>> jobs = jobs_;
  double t = t_;
  while (!jobs.empty())
    if (step(jobs, t, std::numeric_limits<double>::infinity()) == tag) return t;
  return t;
}

void PacedStreams::advance(double t) {
  for (int tag; (tag = step(jobs_, t_, t)) >= 0;) done.emplace_back(tag, t_);
}

void PacedStreams::finish(int tag) {
  for (;;) {
    bool in = false;
    for (const auto& j : jobs_) in = in || j.first == tag;
    if (!in) return;
    const int ended = step(jobs_, t_, std::numeric_limits<double>::infinity());
    done.emplace_back(ended, t_);
    if (ended == tag) return;
  }
}

Laid lay_v3_paced(const Problem& p, bool persistent, const V3Tiles& tiles,
                  const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double latency_s) {
  return lay_v3(p, persistent, tiles, blocks, latency_s, 0.0, true);  // iota unused: every floor paced
}

}  // namespace flashlab::time_detail
