// The stepper: the executor's steps, each step's events (together: the recorded trace), and m, l
// of the current Q block against a float64 computation of the row max and row sum.
#include <doctest/doctest.h>

#include <cmath>

#include "flashlab/executor/count.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/stepper.hpp"
#include "../../common/trace_helpers.hpp"
#include "../../common/mask_definition.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

TEST_CASE("stepping through a run gives the recorded trace, step by step") {
  for (Algo a : {Algo::v1, Algo::v2}) {
    Config c = test::small(a, 21, 30, 8, 8, 8, Mask{MaskKind::causal_tl, 0, 0});
    c.warps = 3;
    const Problem p = resolve(c);
    Stepper st(p, TraceLevel::warp);
    std::vector<Event> all;
    std::uint64_t steps = 0;
    while (st.step()) {
      ++steps;
      all.insert(all.end(), st.events().begin(), st.events().end());
      CHECK(st.warp_work().size() == 3);
      CHECK(st.stats() == nullptr);
    }
    CHECK(!st.step());
    CHECK(test::same_events(all, record_trace(p, TraceLevel::warp).events));
    CHECK(st.counters().steps == steps);
    CHECK(st.counters().cost.read_bytes() == count(p).cost.read_bytes());
  }
}

TEST_CASE("m and l after the last tile of a Q block equal the float64 row max and row sum") {
  Config c = test::small(Algo::v2, 12, 10, 4, 4, 4, Mask{MaskKind::causal_br, 0, 0});
  c.dtype = Dtype::fp32;
  const Problem p = resolve(c);
  const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 11);
  Stepper st(p, TraceLevel::block, &in);
  std::vector<const StatSnapshot*> last(std::size_t(p.tiling.t_r()), nullptr);
  std::vector<std::int64_t> last_j(std::size_t(p.tiling.t_r()), -1);
  while (st.step()) {
    const StepView& s = st.last();
    if (s.level == Level::inner && !s.skip) {
      REQUIRE(st.stats() != nullptr);
      CHECK(st.stats()->step == s.step);
      last[std::size_t(s.i)] = st.stats();
      last_j[std::size_t(s.i)] = s.j;
    }
  }
  // N_q = 12, N_k = 10, bottom-right causal: row r sees keys c <= r - 2, so rows 2..11 see a key and
  // every one of the T_r = 3 Q blocks visits a tile.
  std::int64_t blocks_checked = 0;
  for (std::int64_t i = 0; i < p.tiling.t_r(); ++i) {
    if (!last[std::size_t(i)]) continue;  // a Q block with no visible key
    ++blocks_checked;
    for (std::int64_t r = 0; r < p.tiling.rows(i); ++r) {
      const std::int64_t row = i * p.tiling.b_r + r;
      double m = -INFINITY, l = 0;
      for (std::int64_t k = 0; k < p.tiling.n_k; ++k)
        if (test::visible_by_definition(p.mask, p.tiling.n_q, p.tiling.n_k, row, k)) m = std::max(m, p.scale * double(in.Q.row(row).cast<double>().dot(in.K.row(k).cast<double>())));
      for (std::int64_t k = 0; k < p.tiling.n_k; ++k)
        if (test::visible_by_definition(p.mask, p.tiling.n_q, p.tiling.n_k, row, k)) l += std::exp(p.scale * double(in.Q.row(row).cast<double>().dot(in.K.row(k).cast<double>())) - m);
      CAPTURE(row);
      if (std::isinf(m)) {
        CHECK(std::isinf(last[std::size_t(i)]->m[std::size_t(r)]));
        continue;
      }
      CHECK(last[std::size_t(i)]->m[std::size_t(r)] == flashlab::testing::approx(m).epsilon(1e-5));
      CHECK(last[std::size_t(i)]->l[std::size_t(r)] == flashlab::testing::approx(l).epsilon(1e-5));
    }
  }
  CHECK(blocks_checked == 3);
}
