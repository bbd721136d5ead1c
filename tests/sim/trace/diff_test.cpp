// diff: identical traces agree; a change injected into each field of an event is found where it
// was made; configs must match; m and l are compared within the dtype's tolerance.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/diff.hpp"
#include "flashlab/contract/error.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

Trace sample(TraceLevel level = TraceLevel::warp) {
  Config c = test::small(Algo::v2, 21, 19, 8, 8, 8, Mask{MaskKind::causal_tl, 0, 0});
  c.warps = 2;
  c.split = WarpSplit::split_k;
  const Problem p = resolve(c);
  Trace t = record_trace(p, level);
  add_stats(t, p, {1, 2}, InputSpec{});
  return t;
}

}  // namespace

TEST_CASE("identical traces agree") {
  const Trace a = sample();
  const DiffResult r = diff_traces(a, a);
  CHECK(r.agree());
  CHECK(r.differing_events == 0);
  CHECK(r.events_a == a.events.size());
  CHECK(r.values_compared > 0);
  CHECK(format_diff(r).find("traces agree") == 0);
}

TEST_CASE("a change in any one field of one event is found, with its block, step and field") {
  const Trace a = sample();
  const std::size_t k = a.events.size() / 2;  // an event in the middle of block 1's stream
  const Event orig = a.events[k];
  std::size_t index = 0;  // its position within its (block, step)
  for (std::size_t n = k; n > 0 && a.events[n - 1].block == orig.block && a.events[n - 1].step == orig.step; --n) ++index;
  struct Field {
    const char* name;
    void (*change)(Event&);
  };
  const Field fields[] = {
      {"bytes", [](Event& e) { e.bytes += 2; }},  {"i", [](Event& e) { e.i += 1; }},
      {"j", [](Event& e) { e.j += 1; }},          {"rows", [](Event& e) { e.rows += 1; }},
      {"cols", [](Event& e) { e.cols += 1; }},    {"op", [](Event& e) { e.op = e.op == Op::load ? Op::store : Op::load; }},
      {"tensor", [](Event& e) { e.tensor = e.tensor == Tensor::K ? Tensor::V : Tensor::K; }},
      {"warp", [](Event& e) { e.warp = std::int16_t(e.warp + 5); }},
      {"eq", [](Event& e) { e.eq = e.eq == Eq::scores ? Eq::softmax_v2 : Eq::scores; }},
  };
  for (const Field& f : fields) {
    CAPTURE(f.name);
    Trace b = a;
    f.change(b.events[k]);
    const DiffResult r = diff_traces(a, b);
    CHECK(!r.agree());
    CHECK(r.differing_events == 1);
    CHECK(r.differing_steps == 1);
    REQUIRE(r.first);
    CHECK(r.first->block == orig.block);
    CHECK(r.first->step == orig.step);
    CHECK(r.first->index == index);
    CHECK(r.first->fields == std::vector<std::string>{f.name});
    CHECK(same_event(*r.first->a, orig));
    CHECK(same_event(*r.first->b, b.events[k]));
    CHECK(r.first->context.size() == std::min<std::size_t>(index, 3));
    CHECK(format_diff(r).find(std::string("fields that differ: ") + f.name) != std::string::npos);
  }
  // block and step move the event to another (block, step): found at the step it left
  for (const char* name : {"block", "step"}) {
    CAPTURE(name);
    Trace b = a;
    if (std::string(name) == "block") b.events[k].block += 1;
    else b.events[k].step += 1;
    const DiffResult r = diff_traces(a, b);
    CHECK(!r.agree());
    CHECK(r.differing_events >= 1);
    REQUIRE(r.first);
    CHECK(r.first->block == orig.block);
    CHECK(r.first->step == orig.step);
    CHECK(r.first->index == index);
  }
}

TEST_CASE("a missing event and an extra event are counted in their step") {
  const Trace a = sample();
  Trace b = a;
  const Event last = b.events.back();
  b.events.pop_back();
  DiffResult r = diff_traces(a, b);
  CHECK(r.differing_events == 1);
  REQUIRE(r.first);
  CHECK(r.first->a.has_value());
  CHECK(!r.first->b.has_value());
  CHECK(r.first->step == last.step);
  b = a;
  b.events.push_back(last);
  r = diff_traces(a, b);
  CHECK(r.differing_events == 1);
  CHECK(format_diff(r).find("(no event)") != std::string::npos);
}

TEST_CASE("traces of different configs are refused, naming the fields") {
  const Trace a = sample();
  Trace b = a;
  b.header.config.d = 16;
  b.header.config.warps = 4;
  try {
    diff_traces(a, b);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    const std::string s = e.what();
    CHECK(s.find("d: 8 in A, 16 in B") != std::string::npos);
    CHECK(s.find("warps: 2 in A, 4 in B") != std::string::npos);
  }
}

TEST_CASE("a warp-level and a block-level trace are compared at block level") {
  const DiffResult r = diff_traces(sample(TraceLevel::warp), sample(TraceLevel::block));
  CHECK(r.agree());
  CHECK(r.dropped_warp_events);
  CHECK(r.level == TraceLevel::block);
}

TEST_CASE("m and l: within the dtype's tolerance they agree, beyond it they differ") {
  const Trace a = sample();
  REQUIRE(a.header.config.dtype == Dtype::fp16);
  CHECK(ml_tolerance(Dtype::fp16) == 1e-3);
  const float m0 = a.stats[0].snapshots[1].m[0], l0 = a.stats[0].snapshots[1].l[0];
  REQUIRE(std::isfinite(m0));
  Trace b = a;
  b.stats[0].snapshots[1].m[0] = m0 + 0.0004f * std::max(1.0f, std::fabs(m0));
  CHECK(diff_traces(a, b).agree());
  b.stats[0].snapshots[1].l[0] = l0 * (1 + 0.003f);
  const DiffResult r = diff_traces(a, b);
  CHECK(!r.agree());
  CHECK(r.values_differing == 1);
  REQUIRE(r.first_stat);
  CHECK(r.first_stat->which == 'l');
  CHECK(r.first_stat->step == a.stats[0].snapshots[1].step);
  // a looser tolerance accepts it
  DiffOptions loose;
  loose.tol_ml = 1e-2;
  CHECK(diff_traces(a, b, loose).agree());
  // -inf against -inf agrees, -inf against a number does not
  Trace c = a;
  c.stats[0].snapshots[0].m[0] = -std::numeric_limits<float>::infinity();
  Trace d = c;
  CHECK(diff_traces(c, d).agree());
  d.stats[0].snapshots[0].m[0] = -1e30f;
  CHECK(!diff_traces(c, d).agree());
}
