// tensor_pipe.cpp — the SM's tensor pipe shared by V3's consumer warpgroups (tensor_pipe.hpp).
#include "tensor_pipe.hpp"

#include <algorithm>
#include <limits>

namespace flashlab::time_detail {

int TensorPipe::step(State& s, double t, double& end, std::vector<Piece>* out) {
  for (;;) {
    if (s.busy_until < 0) {  // start the next wgmma: the head batch's ring, in turn
      while (!s.q.empty() && s.q.front().jobs.empty()) s.q.pop_front();
      if (s.q.empty()) {
        s.t = std::max(s.t, t);
        return -1;
      }
      Batch& b = s.q.front();
      for (std::size_t tries = 0; tries < b.ring.size(); ++tries) {
        const int agent = b.ring[b.next % b.ring.size()];
        b.next = (b.next + 1) % b.ring.size();
        const auto j = std::find_if(b.jobs.begin(), b.jobs.end(), [&](const Job& x) { return x.agent == agent; });
        if (j == b.jobs.end()) continue;
        s.busy_until = s.t + j->each, s.busy_tag = j->tag;
        if (out) {
          if (!out->empty() && out->back().tag == j->tag && out->back().end >= s.t) out->back().end = s.busy_until;
          else out->push_back({s.t, s.busy_until, j->tag});
        }
        break;
      }
    }
    if (s.busy_until > t) {  // the wgmma in service ends after t
      s.t = t;
      return -1;
    }
    s.t = s.busy_until, s.busy_until = -1;
    Batch& b = s.q.front();
    const auto j = std::find_if(b.jobs.begin(), b.jobs.end(), [&](const Job& x) { return x.tag == s.busy_tag; });
    if (--j->left > 0) continue;
    const int tag = j->tag;
    b.jobs.erase(j);
    end = s.t;
    return tag;
  }
}

void TensorPipe::advance(double t) {
  double end = 0;
  for (int tag; (tag = step(s_, t, end, &pieces)) >= 0;) {
    done.emplace_back(tag, end);
    cache_.clear();
  }
}

void TensorPipe::finish(int tag) {
  double end = 0;
  for (;;) {
    bool in = false;
    for (const Batch& b : s_.q)
      for (const Job& j : b.jobs) in = in || j.tag == tag;
    if (!in) return;
    const int ended = step(s_, std::numeric_limits<double>::infinity(), end, &pieces);
    if (ended < 0) return;
    done.emplace_back(ended, end);
    cache_.clear();
    if (ended == tag) return;
  }
}

void TensorPipe::add(int tag, int agent, double work, int wgmmas, int landing) {
  wgmmas = std::max(1, wgmmas);
  const Job j{.tag = tag, .agent = agent, .left = wgmmas, .each = work / double(wgmmas)};
  while (!s_.q.empty() && s_.q.front().jobs.empty() && s_.busy_until < 0) s_.q.pop_front();
  Batch* into = nullptr;
  if (!s_.q.empty())
    if (Batch& last = s_.q.back(); last.owner == agent || (landing >= 0 && last.landing == landing)) into = &last;
  if (!into) {
    s_.q.push_back(Batch{.owner = agent, .landing = landing, .jobs = {}, .ring = {}, .next = 0});
    into = &s_.q.back();
  }
  into->jobs.push_back(j);
  into->owner = agent;
  if (std::find(into->ring.begin(), into->ring.end(), agent) == into->ring.end()) into->ring.push_back(agent);
  cache_.clear();
}

double TensorPipe::tentative(int tag) const {
  for (const auto& [t, e] : cache_)
    if (t == tag) return e;
  State s = s_;
  double end = s.t;
  for (;;) {
    const int ended = step(s, std::numeric_limits<double>::infinity(), end, nullptr);
    if (ended < 0) break;
    cache_.emplace_back(ended, end);
    if (ended == tag) return end;
  }
  return s.t;  // not in the pipe: nothing to wait for
}

}  // namespace flashlab::time_detail
