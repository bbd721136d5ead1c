// m and l after every step, against brute force: after the step on tile (i, j) a row's m is the
// max of its visible scores over keys c < (j + 1) B_c and l = sum exp(S - m) over the same keys.
// Step numbers are derived from the loop nests (FA2 Alg. 1, FA1 Alg. 1), not read from the code.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Running statistics of row r over keys c < limit, float64, mask by definition (c - r band).
void expected_stats(const Problem& p, const Inputs& in, std::int64_t r, std::int64_t limit, double& m, double& l) {
  const std::int64_t off = p.tiling.n_k - p.tiling.n_q;  // causal-br
  m = -kInf;
  l = 0;
  std::vector<double> s;
  for (std::int64_t c = 0; c < limit; ++c) {
    if (c > r + off) continue;
    s.push_back(p.scale * in.Q.row(r).cast<double>().dot(in.K.row(c).cast<double>()));
  }
  if (s.empty()) return;
  m = *std::max_element(s.begin(), s.end());
  for (double v : s) l += std::exp(v - m);
}

void check_snapshot(const Problem& p, const Inputs& in, std::int64_t block, const StatSnapshot& snap,
                    std::int64_t limit) {
  REQUIRE(std::int64_t(snap.m.size()) == p.tiling.rows(block));
  REQUIRE(snap.l.size() == snap.m.size());
  for (std::size_t a = 0; a < snap.m.size(); ++a) {
    double m, l;
    expected_stats(p, in, block * p.tiling.b_r + std::int64_t(a), limit, m, l);
    CAPTURE(a);
    CAPTURE(limit);
    if (m == -kInf) {
      CHECK(snap.m[a] == -std::numeric_limits<float>::infinity());
      CHECK(snap.l[a] == 0.0f);
    } else {
      CHECK(std::abs(snap.m[a] - m) <= 1e-5 * (1 + std::abs(m)));
      CHECK(std::abs(snap.l[a] - l) <= 1e-5 * l);
    }
  }
}

// N_q = 90 > N_k = 70 with bottom-right causal: Q block 0 (rows 0-31) sees keys c <= r - 20, so
// its rows 0-19 see none; B_c = 16 leaves a ragged last K/V block of 6 keys; fp16 inputs.
Config traced_config(Algo a) {
  Config c = config(a, 90, 70, 16, 32, 16);
  c.mask = Mask{MaskKind::causal_br, 0, 0};
  c.dtype = Dtype::fp16;
  if (a != Algo::standard) c.block_skip = false;  // standard attention takes no block skip
  return c;
}

}  // namespace

TEST_CASE("V2 trace: m and l after every step of a Q block's thread block") {
  for (bool skip : {false, true}) {
    CAPTURE(skip);
    Config c = traced_config(Algo::v2);
    c.block_skip = skip;
    const Problem p = resolve(c);
    const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 21);
    NumericsOptions opt;
    opt.trace_blocks = {0, 2};
    const NumericResult r = simulate(p, in, opt);
    REQUIRE(r.traces.size() == 2);
    const std::int64_t t_c = 5;  // ceil(70 / 16)
    for (std::size_t k = 0; k < 2; ++k) {
      const std::int64_t block = opt.trace_blocks[k];
      CAPTURE(block);
      const auto& trace = r.traces[k];
      // step 0 loads Q_i and sets m = -inf, l = 0; steps 1..T_c are tiles j = 0..T_c-1 (visited or
      // skipped); step T_c + 1 writes O_i and L_i.
      REQUIRE(std::int64_t(trace.size()) == t_c + 2);
      for (std::int64_t s = 0; s < t_c + 2; ++s) {
        CAPTURE(s);
        CHECK(trace[std::size_t(s)].step == std::uint32_t(s));
        const bool tile = s >= 1 && s <= t_c;
        CHECK(trace[std::size_t(s)].j == (tile ? s - 1 : -1));
        const std::int64_t limit = s == 0 ? 0 : std::min<std::int64_t>(tile ? s * 16 : 70, 70);
        check_snapshot(p, in, block, trace[std::size_t(s)], limit);
      }
    }
    // the final m, l give the stored L
    const StatSnapshot& last = r.traces[1].back();
    for (std::size_t a = 0; a < last.m.size(); ++a)
      CHECK(r.L[64 + std::int64_t(a)] == flashlab::testing::approx(last.m[a] + std::log(last.l[a])));
  }
}

TEST_CASE("V1 trace: m and l in HBM after line 2 and after each tile of the Q block") {
  const Problem p = resolve(traced_config(Algo::v1));
  const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 22);
  NumericsOptions opt;
  opt.trace_blocks = {1};
  const NumericResult r = simulate(p, in, opt);
  const std::int64_t t_r = 3, t_c = 5, block = 1;
  // step 0 is line 2; then per K/V block j: one step loading K_j, V_j, and T_r tile steps, so
  // tile (i, j) is step 1 + j (T_r + 1) + 1 + i.
  const auto& trace = r.traces.at(0);
  REQUIRE(std::int64_t(trace.size()) == 1 + t_c);
  CHECK(trace[0].step == 0);
  CHECK(trace[0].j == -1);
  check_snapshot(p, in, block, trace[0], 0);
  for (std::int64_t j = 0; j < t_c; ++j) {
    CAPTURE(j);
    const StatSnapshot& snap = trace[std::size_t(1 + j)];
    CHECK(snap.step == std::uint32_t(1 + j * (t_r + 1) + 1 + block));
    CHECK(snap.j == j);
    check_snapshot(p, in, block, snap, std::min<std::int64_t>((j + 1) * 16, 70));
  }
}

TEST_CASE("standard trace: rowmax and rowsum of S from the softmax step on") {
  Config c = traced_config(Algo::standard);
  c.dtype = Dtype::fp32;  // m, l of S stored at fp32, so the 1e-5 checks apply
  const Problem p = resolve(c);
  const Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 23);
  NumericsOptions opt;
  opt.trace_blocks = {2};
  const NumericResult r = simulate(p, in, opt);
  const auto& trace = r.traces.at(0);
  // Algorithm 0: step 0 computes S, step 1 P = softmax(S) (m, l exist from here), step 2 O = P V.
  REQUIRE(trace.size() == 2);
  CHECK(trace[0].step == 1);
  CHECK(trace[1].step == 2);
  for (const StatSnapshot& s : trace) check_snapshot(p, in, 2, s, 70);
}
