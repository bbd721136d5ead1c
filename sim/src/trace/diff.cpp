// diff.cpp — comparing two traces (see diff.hpp).
#include "flashlab/trace/diff.hpp"

#include <algorithm>
#include <cmath>
#include <compare>
#include <numeric>
#include <sstream>

#include "flashlab/config/config_json.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab {

double ml_tolerance(Dtype t) {
  switch (t) {
    case Dtype::fp32: return 1e-5;
    case Dtype::fp16: return 1e-3;
    case Dtype::bf16: return 8e-3;
  }
  return 1e-5;
}

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  // the keys of the one config schema (config_json.hpp); the model preset's name changes no event
  const nlohmann::json x = config_json(resolve(a)), y = config_json(resolve(b));
  // a key one side lacks (the switches of a tiled forward, against standard attention) reads "-"
  const auto text = [](const nlohmann::json& c, const std::string& key) {
    if (!c.contains(key)) return std::string("-");
    const nlohmann::json& v = c.at(key);
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::vector<std::string> out;
  nlohmann::json keys = x;
  keys.update(y);  // x's keys in order, then y's own
  for (const auto& item : keys.items())
    if (item.key() != "model" && text(x, item.key()) != text(y, item.key()))
      out.push_back(item.key() + ": " + text(x, item.key()) + " in A, " + text(y, item.key()) + " in B");
  return out;
}

std::vector<std::string> event_field_differences(const Event& a, const Event& b) {
  std::vector<std::string> f;
  if (a.launch != b.launch) f.push_back("launch");
  if (a.block != b.block) f.push_back("block");
  if (a.step != b.step) f.push_back("step");
  if (a.op != b.op) f.push_back("op");
  if (a.tensor != b.tensor) f.push_back("tensor");
  if (a.i != b.i) f.push_back("i");
  if (a.j != b.j) f.push_back("j");
  if (a.rows != b.rows) f.push_back("rows");
  if (a.cols != b.cols) f.push_back("cols");
  if (a.bytes != b.bytes) f.push_back("bytes");
  if (a.warp != b.warp) f.push_back("warp");
  if (a.eq != b.eq) f.push_back("eq");
  return f;
}

namespace {

// Where an event belongs: its (launch, block, step) group. Stream order is by this key.
struct GroupKey {
  std::uint16_t launch = 0;
  std::uint32_t block = 0, step = 0;
  auto operator<=>(const GroupKey&) const = default;
};
GroupKey group_key(const Event* e) { return GroupKey{e->launch, e->block, e->step}; }

// The events compared, in (launch, block, step) order (stable: order within a step is kept).
std::vector<const Event*> ordered(const std::vector<Event>& ev, bool block_level_only) {
  std::vector<const Event*> v;
  v.reserve(ev.size());
  for (const Event& e : ev)
    if (!block_level_only || e.warp == -1) v.push_back(&e);
  const auto less = [](const Event* x, const Event* y) { return group_key(x) < group_key(y); };
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
  return v;
}

void compare_events(const std::vector<const Event*>& a, const std::vector<const Event*>& b, const DiffOptions& opt,
                    DiffResult& r) {
  std::size_t x = 0, y = 0;
  while (x < a.size() || y < b.size()) {
    // the next group: the smaller key of the two heads
    const GroupKey k = x == a.size() ? group_key(b[y])
                       : y == b.size() ? group_key(a[x])
                                       : std::min(group_key(a[x]), group_key(b[y]));
    std::size_t xe = x, ye = y;
    while (xe < a.size() && group_key(a[xe]) == k) ++xe;
    while (ye < b.size() && group_key(b[ye]) == k) ++ye;
    const std::size_t na = xe - x, nb = ye - y;
    std::uint64_t diff = 0;
    for (std::size_t n = 0; n < std::max(na, nb); ++n) {
      const Event* ea = n < na ? a[x + n] : nullptr;
      const Event* eb = n < nb ? b[y + n] : nullptr;
      if (ea && eb && same_event(*ea, *eb)) continue;
      ++diff;
      if (r.first) continue;
      EventDivergence d;
      d.launch = k.launch;
      d.block = k.block;
      d.step = k.step;
      d.index = n;
      if (ea) d.a = *ea;
      if (eb) d.b = *eb;
      if (ea && eb) d.fields = event_field_differences(*ea, *eb);
      for (std::size_t c = n > opt.context ? n - opt.context : 0; c < n; ++c) d.context.push_back(*a[x + c]);
      r.first = d;
    }
    r.differing_events += diff;
    r.differing_steps += diff > 0;
    x = xe;
    y = ye;
  }
}

bool close(float a, float b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(double(a) - double(b)) <= tol * std::max(1.0, std::fabs(double(b)));
}

void compare_block(const BlockStats& sa, const BlockStats& sb, DiffResult& r) {
  const std::size_t n = std::max(sa.snapshots.size(), sb.snapshots.size());
  for (std::size_t k = 0; k < n; ++k) {
    const StatSnapshot* a = k < sa.snapshots.size() ? &sa.snapshots[k] : nullptr;
    const StatSnapshot* b = k < sb.snapshots.size() ? &sb.snapshots[k] : nullptr;
    if (!a || !b || a->step != b->step || a->j != b->j) {
      ++r.values_differing;
      if (!r.first_stat)
        r.first_stat = StatDivergence{sa.i, k, a ? a->step : b->step, 's', 0, a ? double(a->j) : -2.0,
                                      b ? double(b->j) : -2.0};
      continue;
    }
    for (char which : {'m', 'l'}) {
      const auto& va = which == 'm' ? a->m : a->l;
      const auto& vb = which == 'm' ? b->m : b->l;
      for (std::size_t row = 0; row < va.size() && row < vb.size(); ++row) {
        ++r.values_compared;
        if (close(va[row], vb[row], r.tol_ml)) continue;
        ++r.values_differing;
        if (!r.first_stat) r.first_stat = StatDivergence{sa.i, k, a->step, which, row, va[row], vb[row]};
      }
    }
  }
}

// Both lists are by increasing i (trace.hpp); blocks in one trace only are noted, not compared.
void compare_stats(const Trace& ta, const Trace& tb, DiffResult& r) {
  auto x = ta.stats.begin(), y = tb.stats.begin();
  while (x != ta.stats.end() || y != tb.stats.end()) {
    if (y == tb.stats.end() || (x != ta.stats.end() && x->i < y->i)) {
      r.notes.push_back("m and l of Q block " + std::to_string(x->i) + " only in A: not compared");
      ++x;
    } else if (x == ta.stats.end() || y->i < x->i) {
      r.notes.push_back("m and l of Q block " + std::to_string(y->i) + " only in B: not compared");
      ++y;
    } else {
      compare_block(*x++, *y++, r);
    }
  }
}

}  // namespace

DiffResult diff_traces(const Trace& a, const Trace& b, const DiffOptions& opt) {
  const std::vector<std::string> cfg = config_differences(a.header.config, b.header.config);
  if (!cfg.empty()) {
    std::string list;
    for (const auto& s : cfg) list += (list.empty() ? "" : "; ") + s;
    throw ConfigError("trace configs", "differ (" + list + ")",
                      "two traces of one config (`flashlab compare` sets standard attention, V1 and V2 side by side, `flashlab explain --algo v3` V2 and V3)");
  }
  DiffResult r;
  const bool block_only = a.header.level != b.header.level;
  r.level = block_only ? TraceLevel::block : a.header.level;
  if (block_only) {
    r.dropped_warp_events = true;
    r.notes.push_back(std::string("A is a ") + std::string(to_string(a.header.level)) + "-level trace and B a " +
                      std::string(to_string(b.header.level)) + "-level one: compared at block level");
  }
  const auto ea = ordered(a.events, block_only), eb = ordered(b.events, block_only);
  r.events_a = ea.size();
  r.events_b = eb.size();
  compare_events(ea, eb, opt, r);
  r.tol_ml = opt.tol_ml.value_or(ml_tolerance(a.header.config.dtype));
  compare_stats(a, b, r);
  return r;
}

std::string format_diff(const DiffResult& r, const std::string& na, const std::string& nb) {
  std::ostringstream o;
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  if (r.agree()) {
    o << "traces agree: " << r.events_a << " events at " << to_string(r.level) << " level";
    if (r.values_compared) o << ", " << r.values_compared << " m and l values within " << r.tol_ml << " (relative)";
    o << "\n";
    return o.str();
  }
  if (r.first) {
    const EventDivergence& d = *r.first;
    o << "first divergence: launch " << d.launch << ", block " << d.block << ", step " << d.step << ", event "
      << d.index << " of the step\n";
    if (!d.context.empty()) o << "  before it, both traces have:\n";
    for (const Event& e : d.context) o << "    " << event_line(e) << "\n";
    o << "  " << na << ": " << (d.a ? event_line(*d.a) : std::string("(no event)")) << "\n";
    o << "  " << nb << ": " << (d.b ? event_line(*d.b) : std::string("(no event)")) << "\n";
    if (!d.fields.empty()) {
      o << "  fields that differ:";
      for (const auto& f : d.fields) o << " " << f;
      o << "\n";
    }
  }
  o << "differing events: " << r.differing_events << " in " << r.differing_steps
    << (r.differing_steps == 1 ? " step (" : " steps (") << na << ": "
    << r.events_a << " events, " << nb << ": " << r.events_b << ")\n";
  if (r.first_stat) {
    const StatDivergence& s = *r.first_stat;
    if (s.which == 's')
      o << "m/l snapshots differ: Q block " << s.i << ", snapshot " << s.snapshot << " (step or K/V block j differ, or "
        << "one trace has fewer snapshots)\n";
    else
      o << "first m/l value out of tolerance " << r.tol_ml << ": Q block " << s.i << ", step " << s.step << ", row "
        << s.row << ", " << s.which << " = " << s.a << " in " << na << ", " << s.b << " in " << nb << "\n";
    o << "differing m/l values: " << r.values_differing << " of " << r.values_compared << "\n";
  }
  return o.str();
}

}  // namespace flashlab
