// block_deal.cpp — a launch's thread blocks dealt to the SMs' slots (block_deal.hpp).
#include "block_deal.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <limits>
#include <queue>
#include <tuple>

namespace flashlab::time_detail {

namespace {

double sum_of(const std::vector<double>& dur) {
  double s = 0;
  for (double d : dur) s += d;
  return s;
}

/// The (batch, head) pairs dealt one by one where bh is larger (block_deal.hpp kDealtExactly): enough
/// heads for kDealtExactly blocks, at least one.
std::int64_t heads_dealt(std::int64_t per_head, std::int64_t bh) {
  return std::min(bh, std::max<std::int64_t>(1, kDealtExactly / std::max<std::int64_t>(1, per_head)));
}

}  // namespace

std::pair<double, double> deal(const std::vector<double>& dur, std::int64_t bh, std::int64_t slots) {
  const std::int64_t per_head = std::int64_t(dur.size()), grid = per_head * bh;
  if (grid > kDealtExactly && grid > slots) {
    // every slot stays busy until the last blocks are dealt: the heads past the first m add their work
    // spread over the slots (the tail differs by less than one block)
    const std::int64_t m = heads_dealt(per_head, bh);
    const double w = sum_of(dur);
    return {deal(dur, m, slots).first + double(bh - m) * w / double(slots), double(bh) * w};
  }
  double makespan = 0, busy = 0;
  if (grid <= slots) {
    for (double d : dur) makespan = std::max(makespan, d), busy += d;
    return {makespan, double(bh) * busy};
  }
  std::priority_queue<double, std::vector<double>, std::greater<double>> free;
  for (std::int64_t q = 0; q < slots; ++q) free.push(0.0);
  for (std::int64_t g = 0; g < grid; ++g) {
    const double start = free.top();
    free.pop();
    const double end = start + dur[std::size_t(g % per_head)];
    busy += dur[std::size_t(g % per_head)];
    makespan = std::max(makespan, end);
    free.push(end);
  }
  return {makespan, busy};
}

std::pair<double, double> deal_persistent(const std::vector<double>& dur, std::int64_t bh, std::int64_t ctas,
                                          bool longest_first, double first_trip) {
  const std::int64_t per_head = std::int64_t(dur.size()), tiles = per_head * bh;
  if (!longest_first) {
    // static: thread block c takes tiles c, c + ctas, ..., whose Q blocks (c + k ctas) mod T_r repeat
    // every T_r / gcd(ctas, T_r) of them: each block's sum in closed form
    const std::int64_t period = per_head / std::gcd(ctas, per_head);
    double makespan = 0, busy = 0;
    for (std::int64_t c = 0; c < std::min(ctas, tiles); ++c) {
      const std::int64_t n = (tiles - c + ctas - 1) / ctas;  // its tiles
      double whole = 0, part = 0;
      for (std::int64_t k = 0; k < period; ++k) {
        const double d = dur[std::size_t((c + k * ctas) % per_head)];
        whole += d;
        if (k < n % period) part += d;
      }
      const double f = first_trip + double(n / period) * whole + part;
      makespan = std::max(makespan, f), busy += f;
    }
    return {makespan, busy};
  }
  if (tiles > kDealtExactly && tiles > ctas) {  // as deal's: the later heads spread over the thread blocks
    const std::int64_t m = heads_dealt(per_head, bh);
    const double w = sum_of(dur);
    const auto [first, busy] = deal_persistent(dur, m, ctas, longest_first, first_trip);
    return {first + double(bh - m) * w / double(ctas), busy + double(bh - m) * w};
  }
  const auto tile_time = [&](std::int64_t t) {
    const std::int64_t r = t % per_head;
    return dur[std::size_t(longest_first ? per_head - 1 - r : r)];
  };
  double makespan = 0, busy = 0;
  std::priority_queue<double, std::vector<double>, std::greater<double>> free;
  for (std::int64_t c = 0; c < std::min(ctas, tiles); ++c) free.push(first_trip), busy += first_trip;
  for (std::int64_t t = 0; t < tiles; ++t) {
    const double end = free.top() + tile_time(t);
    free.pop();
    busy += tile_time(t);
    makespan = std::max(makespan, end);
    free.push(end);
  }
  return {makespan, busy};
}

bool descending_q_blocks(const Launch& l) {
  return std::any_of(l.loops.begin(), l.loops.end(),
                     [](const Loop& x) { return x.dim == Dim::q_block && x.thread_block && x.order == Order::descending; });
}

std::pair<double, double> deal_launch(const Problem& p, const Launch& l, const std::vector<double>& dur,
                                      std::int64_t slots, double trip) {
  if (!l.persistent) {
    if (!descending_q_blocks(l)) return deal(dur, p.bh(), slots);
    return deal(std::vector<double>(dur.rbegin(), dur.rend()), p.bh(), slots);  // the last Q block first
  }
  const double first_trip = p.hopper.warp_specialize ? trip : 0.0;
  return deal_persistent(dur, p.bh(), std::int64_t(p.gpu.sms), descending_q_blocks(l), first_trip);
}

std::pair<double, double> deal_shared(const std::vector<std::vector<double>>& dur_by_n, const std::vector<double>& steps,
                                      std::int64_t bh, std::int64_t sms, std::int64_t k, std::vector<DealtBlock>* trace) {
  const std::vector<double>& full = dur_by_n[std::size_t(k - 1)];
  const std::int64_t per_head = std::int64_t(full.size()), grid = per_head * bh;
  if (!trace && grid > kDealtExactly && grid > sms * k) {
    const std::int64_t m = heads_dealt(per_head, bh);
    const double w = sum_of(full);
    return {deal_shared(dur_by_n, steps, m, sms, k).first + double(bh - m) * w / double(sms * k), double(bh) * w};
  }
  struct Resident {
    std::int64_t g;
    double left;   // fraction of the block's work still to do
    double start;  // seconds
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Resident>> on;
  on.resize(static_cast<std::size_t>(sms));
  std::vector<double> at(std::size_t(sms), 0.0), last_take(std::size_t(sms), -inf), step(std::size_t(sms), 0.0);
  std::int64_t next = 0;
  for (std::int64_t r = 0; r < k; ++r)  // breadth first: a block per SM, then a second, ...
    for (std::int64_t s = 0; s < sms && next < grid; ++s) on[std::size_t(s)].push_back({next++, 1.0, 0.0});
  auto dur = [&](std::int64_t g, std::size_t n) { return dur_by_n[n - 1][std::size_t(g % per_head)]; };
  // the last partial wave (fewer blocks left than SMs) is dealt one block per SM per step
  auto spacing = [&](std::size_t s) { return grid - next < sms ? step[s] : 0.0; };
  // an SM's next event: its first resident block's end, or its next take where a slot is free
  auto next_event = [&](std::size_t s) {
    double t = inf;
    for (const Resident& x : on[s]) t = std::min(t, at[s] + x.left * dur(x.g, on[s].size()));
    if (std::int64_t(on[s].size()) < k && next < grid) t = std::min(t, std::max(at[s], last_take[s] + spacing(s)));
    return t;
  };
  // events in time order, ties first come first served. An SM takes one pending block at a time, the
  // next one step later (blocks sharing an SM end their last steps one after another, not at once):
  // the blocks of a last partial wave go one per SM, as the block scheduler spreads them
  using Ev = std::tuple<double, std::int64_t, std::size_t>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> ev;
  std::int64_t seq = 0;
  for (std::size_t s = 0; s < std::size_t(sms); ++s)
    if (!on[s].empty()) ev.push({next_event(s), seq++, s});
  double makespan = 0, busy = 0;
  while (!ev.empty()) {
    const auto [t, order, s] = ev.top();
    ev.pop();
    const std::size_t n = on[s].size();
    if (n > 0) {
      for (Resident& x : on[s]) x.left -= (t - at[s]) / dur(x.g, n);
      busy += double(k) * (t - at[s]);
    }
    at[s] = t;
    for (const Resident& x : on[s])
      if (x.left <= 1e-9) {
        step[s] = dur(x.g, n) / std::max(1.0, steps[std::size_t(x.g % per_head)]);
        if (trace) trace->push_back({x.g, std::int64_t(s), x.start, t});
      }
    std::erase_if(on[s], [](const Resident& x) { return x.left <= 1e-9; });
    makespan = std::max(makespan, t);
    if (std::int64_t(on[s].size()) < k && next < grid && t >= last_take[s] + spacing(s) - 1e-15) {
      on[s].push_back({next++, 1.0, t});
      last_take[s] = t;
    }
    if (const double e = next_event(s); e < inf) ev.push({e, seq++, s});
  }
  return {makespan, busy};
}

}  // namespace flashlab::time_detail
