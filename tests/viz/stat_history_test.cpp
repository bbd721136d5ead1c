// m and l of a Q block during playback against a dense float64 computation on the same inputs:
// after V2's step on tile (i, j), m is the row max of S over K/V blocks 0..j and l the sum of
// exp(S - m) over them (FA2 Alg. 1 line 9).
#include <doctest/doctest.h>

#include <cmath>

#include "flashlab/numerics/limits.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "model/stat_history.hpp"
#include "../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::viz;

TEST_CASE("m and l of the current Q block, step by step, against a dense float64 row max and row sum") {
  Config c;
  c.n_q = 96;
  c.n_k = 80;
  c.d = 16;
  c.b_r = 32;
  c.b_c = 32;
  c.dtype = Dtype::fp32;
  const Problem p = resolve(c);
  const StatHistory h(p);
  REQUIRE(h.blocks() == 3);
  const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 0);
  const std::int64_t i = 1;
  // V2 steps of block 1: 0 load Q_1, 1 tile (1, 0), 2 tile (1, 1), 3 tile (1, 2) (cols 16), 4 store
  for (std::uint32_t step = 1; step <= 3; ++step) {
    const StatSnapshot* s = h.at(i, std::uint32_t(i), step);
    REQUIRE(s);
    CHECK(s->j == std::int64_t(step) - 1);
    const std::int64_t keys = std::min<std::int64_t>(80, 32 * step);
    for (std::int64_t r = 0; r < 32; ++r) {
      double m = -INFINITY, l = 0;
      for (std::int64_t k = 0; k < keys; ++k)
        m = std::max(m, p.scale * double(in.Q.row(32 * i + r).cast<double>().dot(in.K.row(k).cast<double>())));
      for (std::int64_t k = 0; k < keys; ++k)
        l += std::exp(p.scale * double(in.Q.row(32 * i + r).cast<double>().dot(in.K.row(k).cast<double>())) - m);
      CHECK(s->m[std::size_t(r)] == flashlab::testing::approx(m).epsilon(1e-5));
      CHECK(s->l[std::size_t(r)] == flashlab::testing::approx(l).epsilon(1e-4));
    }
  }
  CHECK(h.at(i, 0, 3) == nullptr);                           // block 0's steps come before block 1's
  CHECK(h.at(i, 2, 0) == &h.snapshots(i).back());           // block 2's after them
  CHECK(h.at(5, 1, 0) == nullptr);                           // no Q block 5
}

TEST_CASE("numerics refuse configs too large to run interactively, with the reason") {
  Config c;
  c.n_q = c.n_k = 65536;
  c.d = 128;
  const Problem p = resolve(c);
  CHECK(numerics_too_large(p).find("flashlab run") != std::string::npos);
  const StatResult r = run_numerics(p);
  CHECK(r.history == nullptr);
  CHECK(r.error.find("numerics = on") == 0);
}

// Issue 9 item 8: at N = 131072 the viewer said "use flashlab run", which refuses that size too.
// The viewer's limit N^2 d <= 2^28 gives N <= 2^11 = 2,048 at d = 64; flashlab run's N^2 <= 2^28
// and N^2 max(d, 64) <= 2^34 give N <= 2^14 = 16,384 at d = 64, and 2^13.5 -> 11,585 at d = 128
// (11,585^2 * 128 = 17,179,164,800 <= 2^34 = 17,179,869,184 < 11,586^2 * 128 = 17,182,130,688).
TEST_CASE("numerics too large for the viewer: the size each tool takes") {
  Config c;
  c.n_q = c.n_k = 131072;
  c.d = 64;
  c.b_r = c.b_c = 128;
  const std::string why = numerics_too_large(resolve(c));
  CHECK(why.find("over the viewer's limit 268,435,456 (2^28: N_q = N_k <= 2,048 at d = 64)") != std::string::npos);
  CHECK(why.find("`flashlab run --steps I` takes up to N_q N_k <= 2^28 and N_q N_k max(d, 64) <= 2^34 "
                 "(N_q = N_k <= 16,384 at d = 64): lower --seq") != std::string::npos);
  CHECK(numerics_max_square_n(128) == 11'585);
  CHECK(numerics_max_square_n(1) == 16'384);
  c.n_q = c.n_k = 4096;  // over the viewer's limit (2^30), within flashlab run's (2^24 scores, 2^30 work)
  CHECK(numerics_too_large(resolve(c)).find("`flashlab run --steps I` computes m and l of one Q block at this size") !=
        std::string::npos);
}
