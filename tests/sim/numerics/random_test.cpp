// Random configurations against float64: ragged tiles, every mask, every dtype, standard, V1
// and V2 (block skip on and off); V1 and V2 agree; no NaN anywhere. The float64 reference itself
// is checked first against a brute-force loop written from the mask definitions of docs/model.md
// "Tiles and masks", so the comparisons below do not rest on the library's own mask code.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "numerics_util.hpp"
#include "../../common/mask_definition.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Naive softmax(S) V per row, float64, skipping hidden keys one by one.
Reference brute_force(const Problem& p, const Inputs& in) {
  const Tiling& t = p.tiling;
  Reference ref{MatrixD::Zero(t.n_q, t.d), Eigen::VectorXd::Constant(t.n_q, kInf), p.dtype, Eigen::VectorXd(t.n_q)};
  // the logit bound |scale| |q_r| max_j |k_j| of the tolerance on L, by loops
  double k_max = 0;
  for (std::int64_t c = 0; c < t.n_k; ++c) {
    double sq = 0;
    for (std::int64_t k = 0; k < t.d; ++k) sq += double(in.K(c, k)) * double(in.K(c, k));
    k_max = std::max(k_max, std::sqrt(sq));
  }
  for (std::int64_t r = 0; r < t.n_q; ++r) {
    double sq = 0;
    for (std::int64_t k = 0; k < t.d; ++k) sq += double(in.Q(r, k)) * double(in.Q(r, k));
    ref.logit_bound[r] = std::abs(p.scale) * std::sqrt(sq) * k_max;
  }
  for (std::int64_t r = 0; r < t.n_q; ++r) {
    double m = -kInf;
    std::vector<double> s(std::size_t(t.n_k), -kInf);
    for (std::int64_t c = 0; c < t.n_k; ++c) {
      if (!visible_by_definition(p.mask, t.n_q, t.n_k, r, c)) continue;
      double dot = 0;
      for (std::int64_t k = 0; k < t.d; ++k) dot += double(in.Q(r, k)) * double(in.K(c, k));
      s[std::size_t(c)] = p.scale * dot;
      m = std::max(m, s[std::size_t(c)]);
    }
    if (m == -kInf) continue;
    double l = 0;
    for (std::int64_t c = 0; c < t.n_k; ++c) {
      const double w = std::exp(s[std::size_t(c)] - m);
      l += w;
      for (std::int64_t k = 0; k < t.d; ++k) ref.O(r, k) += w * double(in.V(c, k));
    }
    ref.O.row(r) /= l;
    ref.L[r] = m + std::log(l);
  }
  return ref;
}

struct RandomConfig {
  Config c;
  std::uint64_t seed;
};

// Sizes 1..160 (ragged against B_r, B_c in 1..48 most of the time), T_c <= 64 (V1's tolerance,
// reference.cpp (d)), masks cycling through none, causal, causal-br, window:L,R.
RandomConfig random_config(std::mt19937_64& g, int k) {
  auto pick = [&g](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); };
  Config c;
  c.n_q = pick(1, 160);
  c.n_k = pick(1, 160);
  c.d = std::array<std::int64_t, 6>{1, 3, 8, 16, 32, 64}[std::size_t(pick(0, 5))];
  c.b_r = pick(1, 48);
  c.b_c = pick((c.n_k + 63) / 64, 48);
  c.dtype = kDtypes[k % 3];
  switch (k % 4) {
    case 0: c.mask = Mask{}; break;
    case 1: c.mask = Mask{MaskKind::causal_tl, 0, 0}; break;
    case 2: c.mask = Mask{MaskKind::causal_br, 0, 0}; break;
    default: c.mask = Mask{MaskKind::window, pick(0, 40), pick(0, 40)}; break;
  }
  return {c, std::uint64_t(k) + 100};
}

constexpr int kConfigs = 48;

}  // namespace

TEST_CASE("reference equals a brute-force softmax over the mask definitions") {
  std::mt19937_64 g(11);
  for (int k = 0; k < kConfigs; ++k) {
    const RandomConfig rc = random_config(g, k);
    CAPTURE(k);
    const Problem p = resolve(rc.c);
    const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, rc.seed);
    const Reference fast = reference(p, in), slow = brute_force(p, in);
    CHECK((fast.O - slow.O).cwiseAbs().maxCoeff() <= 1e-12);
    for (std::int64_t r = 0; r < p.tiling.n_q; ++r) {
      if (std::isinf(slow.L[r])) CHECK(fast.L[r] == kInf);
      else CHECK(std::abs(fast.L[r] - slow.L[r]) <= 1e-12);
      CHECK(fast.logit_bound[r] == flashlab::testing::approx(slow.logit_bound[r]).epsilon(1e-12));
    }
  }
}

TEST_CASE("random configs: standard, V1 and V2 against float64, V1 = V2, no NaN") {
  std::mt19937_64 g(12);
  int rows_without_keys = 0;
  for (int k = 0; k < kConfigs; ++k) {
    const RandomConfig rc = random_config(g, k);
    const Config& c0 = rc.c;
    CAPTURE(k);
    CAPTURE(c0.n_q);
    CAPTURE(c0.n_k);
    CAPTURE(c0.d);
    CAPTURE(*c0.b_r);
    CAPTURE(*c0.b_c);
    CAPTURE(to_string(c0.mask));
    CAPTURE(to_string(c0.dtype));
    const Problem base = resolve(c0);
    const Inputs in = make_inputs(base, Fill{}, Fill{}, Fill{}, rc.seed);
    const Reference ref = reference(base, in);
    rows_without_keys += int(ref.L.array().isInf().count());

    NumericResult by_algo[3][2];
    for (Algo a : kAlgos)
      for (bool skip : {false, true}) {
        CAPTURE(to_string(a));
        CAPTURE(skip);
        Config c = c0;
        c.algo = a;
        if (a != Algo::standard) c.block_skip = skip;  // standard attention takes no block skip
        const Problem p = resolve(c);
        const NumericResult r = simulate(p, in);
        const NumericError e = compare(r, ref, p);
        CHECK(e.finite);
        CHECK_FALSE(r.O.hasNaN());
        CHECK_FALSE(r.L.hasNaN());
        CHECK(e.rel_fro_O <= tolerance(c.dtype));
        CHECK(e.L_over_tol <= 1);
        CHECK(e.within);
        by_algo[int(a)][skip] = r;
      }
    // V1 and V2 give the same O and L within the dtype's tolerance (each block skip setting).
    for (int skip = 0; skip < 2; ++skip) {
      const NumericResult &v1 = by_algo[int(Algo::v1)][skip], &v2 = by_algo[int(Algo::v2)][skip];
      const MatrixD dO = (v1.O - v2.O).cast<double>();
      const double norm = v2.O.cast<double>().norm();
      CHECK(dO.norm() <= tolerance(c0.dtype) * norm);
      for (std::int64_t r = 0; r < base.tiling.n_q; ++r) {
        if (std::isinf(v2.L[r])) CHECK(v1.L[r] == v2.L[r]);
        else  // each within its own tolerance of L_ref
          CHECK(std::abs(double(v1.L[r]) - double(v2.L[r])) <=
                2 * tolerance_L(c0.dtype, Algo::v2, c0.d, ref.L[r], ref.logit_bound[r]));
      }
    }
  }
  // the configurations do exercise rows with no visible key (L = +inf)
  CHECK(rows_without_keys > 0);
}

TEST_CASE("numerics leaves the counters as count() gives them") {
  for (Algo a : kAlgos) {
    CAPTURE(to_string(a));
    Config c = config(a, 70, 90, 16, 32, 16);
    c.mask = Mask{MaskKind::causal_br, 0, 0};
    const Problem p = resolve(c);
    const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 2);
    NumericsObserver numerics(p, in);
    Executor e(p);
    e.add_observer(&numerics);
    e.run();
    const Counters with = e.counters(), without = count(p);
    CHECK(with.cost.read_bytes() == without.cost.read_bytes());
    CHECK(with.cost.write_bytes() == without.cost.write_bytes());
    CHECK(with.cost.flops == without.cost.flops);
    CHECK(with.tiles.visited == without.tiles.visited);
    CHECK(with.steps == without.steps);
  }
}
