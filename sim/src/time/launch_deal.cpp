// launch_deal.cpp — a launch's thread blocks timed and dealt to the SMs as predict_time does it
// (launch_blocks.hpp): each block's summed steps, the deal (shared where blocks share an SM), the
// launch's round trip at its load, and the deal kept block by block for the timeline.
#include "launch_blocks.hpp"

#include <algorithm>
#include <functional>
#include <queue>

#include "block_deal.hpp"
#include "round_trips.hpp"

namespace flashlab::time_detail {

std::int64_t blocks_per_sm(const Problem& p, std::int64_t per_head, std::int64_t slots) {
  const std::int64_t sms = p.gpu.sms, grid = per_head * p.bh();
  return std::min(slots / sms, (grid + sms - 1) / sms);
}

BlockSums sum_blocks(const std::vector<StepWork>& works,
                     const std::vector<std::vector<std::pair<int, double>>>& block_steps, const TimeParams& at) {
  std::vector<StepTime> times;
  for (const StepWork& w : works) times.push_back(step_time(w, at));
  BlockSums out;
  out.dur.assign(block_steps.size(), 0.0);
  for (std::size_t blk = 0; blk < block_steps.size(); ++blk)
    for (const auto& [id, n] : block_steps[blk]) {
      const StepTime& st = times[std::size_t(id)];
      out.dur[blk] += n * st.time;
      for (int u = 0; u < kHwUnitCount; ++u) {
        out.unit[std::size_t(u)] += n * st.unit[std::size_t(u)];
        out.share[std::size_t(u)] += n * st.share[std::size_t(u)];
      }
    }
  return out;
}

std::pair<double, double> deal_blocks(const Problem& p, const Launch& l, const std::vector<StepWork>& works,
                                      const std::vector<std::vector<std::pair<int, double>>>& block_steps,
                                      const std::vector<double>& dur, std::int64_t slots, const TimeParams& at,
                                      std::vector<DealtBlock>* trace) {
  const std::int64_t sms = p.gpu.sms, k = blocks_per_sm(p, std::int64_t(dur.size()), slots);
  if (l.persistent || k <= 1) return deal_launch(p, l, dur, slots, at.latency_s);
  const bool reversed = descending_q_blocks(l);  // dealt the last Q block first
  std::vector<std::vector<double>> by_n;
  for (std::int64_t n = 1; n <= k; ++n) {
    std::vector<StepWork> w = works;
    for (StepWork& x : w) x.sharing = double(n);
    std::vector<double> d = sum_blocks(w, block_steps, at).dur;
    if (reversed) std::reverse(d.begin(), d.end());
    by_n.push_back(std::move(d));
  }
  std::vector<double> steps;
  for (const auto& b : block_steps) {
    double c = 0;
    for (const auto& [id, m] : b) c += m;
    steps.push_back(c);
  }
  if (reversed) std::reverse(steps.begin(), steps.end());
  auto r = deal_shared(by_n, steps, p.bh(), sms, k, trace);
  // busy as deal's: the SMs' time with a block, times the works' sharing (LaunchTime::sm_busy)
  if (!works.empty()) r.second *= works.front().sharing / double(k);
  return r;
}

TimeParams loaded_params(const Problem& p, const Launch& l, const std::vector<StepWork>& works,
                         const std::vector<std::vector<std::pair<int, double>>>& block_steps, std::int64_t slots,
                         const Counters& k, std::size_t x, const TimeParams& params) {
  const TimeParams at0 = with_round_trip(params, p.gpu, k, x, 0.0);
  const BlockSums idle = sum_blocks(works, block_steps, at0);
  const double makespan0 = deal_blocks(p, l, works, block_steps, idle.dur, slots, at0).first;
  const double l2_busy = idle.unit[int(HwUnit::l2)] * double(p.bh()) / double(p.gpu.sms);
  return with_round_trip(params, p.gpu, k, x, makespan0 > 0 ? std::min(1.0, l2_busy / makespan0) : 0.0);
}


LaunchBlocks launch_blocks(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k, std::size_t x,
                           const TimeParams& params) {
  LaunchBlocks out;
  const Launch& l = s.launches[x];
  out.at = loaded_params(p, l, b.works_[x], b.block_steps_[x], b.occ_[x].slots, k, x, params);
  out.works = b.works_[x];
  for (const StepWork& w : out.works) out.times.push_back(step_time(w, out.at));
  out.steps = b.block_steps_[x];
  out.dur = sum_blocks(out.works, out.steps, out.at).dur;
  out.sharing = b.sharing_[x];
  out.persistent = l.persistent;
  // the deal of deal_blocks, keeping which slot takes which block (ties: the lowest slot)
  const std::int64_t per_head = std::int64_t(out.dur.size()), bh = p.bh();
  const std::int64_t blocks = per_head * bh;
  const bool longest_first = descending_q_blocks(l);
  const std::int64_t slots = l.persistent ? std::int64_t(p.gpu.sms) : b.occ_[x].slots;
  out.first_trip = l.persistent && p.hopper.warp_specialize ? out.at.latency_s : 0.0;
  const auto block_of = [&](std::int64_t g) -> std::pair<std::int64_t, std::int64_t> {
    const std::int64_t r = g % per_head;
    return {g / per_head, longest_first ? per_head - 1 - r : r};
  };
  const std::size_t used = std::size_t(std::min(slots, blocks));
  out.slot_blocks.assign(used, {});
  out.slot_finish.assign(used, out.first_trip);
  const std::int64_t sms = p.gpu.sms, per_sm = blocks_per_sm(p, per_head, slots);
  if (!l.persistent && per_sm > 1) {
    // processor sharing (deal_blocks): each SM's slots, a block on the first slot of its SM free when it starts
    std::vector<DealtBlock> dealt;
    deal_blocks(p, l, out.works, out.steps, out.dur, slots, out.at, &dealt);
    std::stable_sort(dealt.begin(), dealt.end(), [](const DealtBlock& a, const DealtBlock& c) { return a.start < c.start; });
    out.slot_spans.assign(std::size_t(sms * per_sm), {});
    out.slot_blocks.assign(std::size_t(sms * per_sm), {});
    out.slot_finish.assign(std::size_t(sms * per_sm), 0.0);
    for (const DealtBlock& d : dealt)
      for (std::int64_t lane = 0; lane < per_sm; ++lane) {
        const std::size_t q = std::size_t(lane * sms + d.sm);  // slot q is on SM q mod SMs
        if (out.slot_finish[q] > d.start * (1 + 1e-12) + 1e-15) continue;
        out.slot_blocks[q].push_back(block_of(d.g));
        out.slot_spans[q].push_back({d.start, d.end});
        out.slot_finish[q] = d.end;
        break;
      }
  } else if (blocks <= slots || (l.persistent && !longest_first)) {
    for (std::int64_t g = 0; g < blocks; ++g) {
      const std::size_t q = std::size_t(g % slots);
      out.slot_blocks[q].push_back(block_of(g));
      out.slot_finish[q] += out.dur[std::size_t(block_of(g).second)];
    }
  } else {
    using Free = std::pair<double, std::size_t>;
    std::priority_queue<Free, std::vector<Free>, std::greater<Free>> free;
    for (std::size_t q = 0; q < used; ++q) free.push({out.first_trip, q});
    for (std::int64_t g = 0; g < blocks; ++g) {
      const auto [t, q] = free.top();
      free.pop();
      out.slot_blocks[q].push_back(block_of(g));
      out.slot_finish[q] = t + out.dur[std::size_t(block_of(g).second)];
      free.push({out.slot_finish[q], q});
    }
  }
  for (double f : out.slot_finish) out.makespan = std::max(out.makespan, f);
  return out;
}

}  // namespace flashlab::time_detail
