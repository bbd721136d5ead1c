// Cases R1-R5: small configurations whose values are derived by hand in each case's comment (R1 is
// lab 02's N_q = 2, N_k = 5 example, docs/labs/02_causal_block_skip.md), for every algorithm.
// With Q = 0 (or one logit per row) every visible weight is exp(0) = 1 exactly, so O is a mean of
// small integers and every dtype represents it exactly: those checks are exact up to fp32's
// rounding of L = m + ln l. Standard attention stores P = 1/count at the dtype, so its exact
// checks run at fp32 only.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const Fill kZero{Fill::Kind::zero, 0}, kIndex{Fill::Kind::index, 0}, kRandom{Fill::Kind::random, 0};

// The (algorithm, dtype, block skip) combinations whose O is exact for Q = 0 inputs.
struct Variant {
  Algo algo;
  Dtype dtype;
  bool skip;
};
std::vector<Variant> exact_variants() {
  std::vector<Variant> v;
  for (Algo a : kAlgos)
    for (Dtype t : kDtypes)
      for (bool skip : {false, true})
        if (a != Algo::standard || (t == Dtype::fp32 && !skip)) v.push_back({a, t, skip});
  return v;
}

void check_no_nan(const NumericResult& r) {
  CHECK_FALSE(r.O.hasNaN());
  CHECK_FALSE(r.L.hasNaN());
  for (const auto& trace : r.traces)
    for (const StatSnapshot& s : trace)
      for (std::size_t k = 0; k < s.m.size(); ++k) {
        CHECK_FALSE(std::isnan(s.m[k]));
        CHECK_FALSE(std::isnan(s.l[k]));
      }
}

}  // namespace

TEST_CASE("R1: causal alignment when N_q < N_k") {
  // N_q = 2, N_k = 5, d = 1, Q = K = 0, V_j = j, B_r = B_c = 2. BR: row r sees c <= r + 3;
  // TL: c <= r. O is the mean of the visible j, L = ln(count).
  for (const Variant& v : exact_variants()) {
    CAPTURE(to_string(v.algo));
    CAPTURE(to_string(v.dtype));
    CAPTURE(v.skip);
    Config c = config(v.algo, 2, 5, 1, 2, 2);
    c.dtype = v.dtype;
    if (v.algo != Algo::standard) c.block_skip = v.skip;  // standard attention takes no block skip
    c.mask = Mask{MaskKind::causal_br, 0, 0};
    Problem p = resolve(c);
    const Inputs in = make_inputs(p, kZero, kZero, kIndex, 1);
    NumericResult r = run(p, in);
    CHECK(r.O(0, 0) == flashlab::testing::approx(1.5));
    CHECK(r.O(1, 0) == flashlab::testing::approx(2.0));
    CHECK(r.L[0] == flashlab::testing::approx(std::log(4.0)));
    CHECK(r.L[1] == flashlab::testing::approx(std::log(5.0)));

    c.mask = Mask{MaskKind::causal_tl, 0, 0};
    p = resolve(c);
    r = run(p, in);
    CHECK(r.O(0, 0) == flashlab::testing::approx(0.0));
    CHECK(r.O(1, 0) == flashlab::testing::approx(0.5));
    CHECK(r.L[0] == flashlab::testing::approx(0.0));
    CHECK(r.L[1] == flashlab::testing::approx(std::log(2.0)));
  }
}

TEST_CASE("R2: N_q > N_k with bottom-right causal leaves rows with no key") {
  // N_q = 4, N_k = 2, d = 1, Q = K = 0, V = [[3], [7]], B_r = B_c = 2; row r sees c <= r - 2.
  for (const Variant& v : exact_variants()) {
    CAPTURE(to_string(v.algo));
    CAPTURE(to_string(v.dtype));
    CAPTURE(v.skip);
    Config c = config(v.algo, 4, 2, 1, 2, 2);
    c.dtype = v.dtype;
    if (v.algo != Algo::standard) c.block_skip = v.skip;  // standard attention takes no block skip
    c.mask = Mask{MaskKind::causal_br, 0, 0};
    const Problem p = resolve(c);
    Inputs in = make_inputs(p, kZero, kZero, kZero, 1);
    in.V << 3, 7;
    VisitCounter visits;
    NumericsOptions opt;
    opt.trace_blocks = {0, 1};
    const NumericResult r = run(p, in, &visits, opt);
    check_no_nan(r);
    CHECK(r.O(0, 0) == 0.0f);
    CHECK(r.O(1, 0) == 0.0f);
    CHECK(r.L[0] == kInf);
    CHECK(r.L[1] == kInf);
    CHECK(r.O(2, 0) == flashlab::testing::approx(3.0));
    CHECK(r.L[2] == flashlab::testing::approx(0.0));
    CHECK(r.O(3, 0) == flashlab::testing::approx(5.0));
    CHECK(r.L[3] == flashlab::testing::approx(std::log(2.0)));
    // Q block 0 (rows 0-1) has no visible key: with block skip it visits no tile; without,
    // its one tile is visited and fully masked (and still gives no NaN, checked above).
    if (v.algo != Algo::standard) CHECK(visits.visited[0] == (v.skip ? 0 : 1));
    if (v.algo != Algo::standard) CHECK(visits.visited[1] == 1);
  }
}

TEST_CASE("R3: ragged last tile, N smaller than a block") {
  // N = 33, d = 1, B_r = B_c = 32, scale 1, q = 1, k_j = -10, V_j = j: every logit is -10, so
  // O = mean(0..32) = 16 and L = -10 + ln 33. K/V block 1 holds one key (cols(1) = 1). Zero
  // padding of that tile's 31 missing keys (logit 0 > -10) would give
  // O = 528 e^-10 / (33 e^-10 + 31) ~ 7.7e-4 instead.
  for (const Variant& v : exact_variants()) {
    CAPTURE(to_string(v.algo));
    CAPTURE(to_string(v.dtype));
    CAPTURE(v.skip);
    Config c = config(v.algo, 33, 33, 1, 32, 32);
    c.dtype = v.dtype;
    if (v.algo != Algo::standard) c.block_skip = v.skip;  // standard attention takes no block skip
    c.scale = 1.0;
    Problem p = resolve(c);
    const Inputs in = make_inputs(p, Fill{Fill::Kind::constant, 1}, Fill{Fill::Kind::constant, -10}, kIndex, 1);
    NumericResult r = run(p, in);
    REQUIRE(r.O.rows() == 33);  // the output has N rows: nothing past row N exists to be written
    for (int row = 0; row < 33; ++row) {
      CAPTURE(row);
      CHECK(r.O(row, 0) == flashlab::testing::approx(16.0));
      CHECK(r.L[row] == flashlab::testing::approx(-10.0 + std::log(33.0)));
    }

    // N = 1: O = V_0 exactly (one weight exp(0) = 1, l = 1), for random V.
    c.n_q = c.n_k = 1;
    c.d = 4;
    p = resolve(c);
    const Inputs one = make_inputs(p, kRandom, kRandom, kRandom, 7);
    r = run(p, one);
    REQUIRE(r.O.rows() == 1);
    CHECK(r.O.row(0) == one.V.row(0));
    CHECK(r.L[0] == flashlab::testing::approx(p.scale * one.Q.row(0).dot(one.K.row(0))));
  }
}

TEST_CASE("R4: causal K/V loop bound with an offset") {
  // N_q = 100, N_k = 128, BR, B_r = 64, B_c = 32, Q = 0, V_j = j: row r sees keys 0..r+28, so
  // O[r] = (r + 28) / 2. Q block 0's last row (63) sees keys up to 91, in K/V blocks
  // 0..floor(91/32) = 0..2: 3 tiles; block 1's last row (99) sees up to 127: blocks 0..3, 4 tiles.
  for (const Variant& v : exact_variants()) {
    CAPTURE(to_string(v.algo));
    CAPTURE(to_string(v.dtype));
    CAPTURE(v.skip);
    Config c = config(v.algo, 100, 128, 8, 64, 32);
    c.dtype = v.dtype;
    if (v.algo != Algo::standard) c.block_skip = v.skip;  // standard attention takes no block skip
    c.mask = Mask{MaskKind::causal_br, 0, 0};
    Problem p = resolve(c);
    Inputs in = make_inputs(p, kZero, kRandom, kIndex, 3);
    VisitCounter visits;
    NumericResult r = run(p, in, &visits);
    CHECK(r.O(0, 0) == flashlab::testing::approx(14.0));
    CHECK(r.O(63, 0) == flashlab::testing::approx(45.5));
    CHECK(r.O(99, 0) == flashlab::testing::approx(63.5));
    for (int row = 0; row < 100; ++row) {
      CAPTURE(row);
      CHECK(r.O(row, 7) == flashlab::testing::approx((row + 28) / 2.0));
      CHECK(r.L[row] == flashlab::testing::approx(std::log(row + 29.0)));
    }
    if (v.algo != Algo::standard && v.skip) {
      CHECK(visits.visited[0] == 3);
      CHECK(visits.visited[1] == 4);
      CHECK(visits.total == 7);
    }

    // N_q = N_k = 256, B_r = B_c = 64, TL: O[r] = r/2. Q block i sees K/V blocks 0..i: 1+2+3+4
    // = 10 of 16 tiles, the 4 diagonal ones partial.
    c = config(v.algo, 256, 256, 8, 64, 64);
    c.dtype = v.dtype;
    if (v.algo != Algo::standard) c.block_skip = v.skip;  // standard attention takes no block skip
    c.mask = Mask{MaskKind::causal_tl, 0, 0};
    p = resolve(c);
    in = make_inputs(p, kZero, kRandom, kIndex, 4);
    VisitCounter square;
    r = run(p, in, &square);
    for (int row = 0; row < 256; ++row) {
      CAPTURE(row);
      CHECK(r.O(row, 3) == flashlab::testing::approx(row / 2.0));
    }
    if (v.algo != Algo::standard && v.skip) {
      CHECK(square.total == 10);
      for (int i = 0; i < 4; ++i) {
        CHECK(square.visited[i] == i + 1);
        CHECK(square.partial[i] == 1);
      }
    }
  }
}

TEST_CASE("R5: block sizes from SRAM size M") {
  // M = 49,152 bytes of fp32 = 12,288 elements; B_c = ceil(M/(4d)), B_r = min(B_c, d).
  struct Row {
    std::int64_t d, b_r, b_c, bytes;
  };
  const Row rows[] = {{32, 32, 96, 40'960}, {64, 48, 48, 46'080}, {128, 24, 24, 39'168}};
  for (const Row& want : rows) {
    CAPTURE(want.d);
    Config c = config(Algo::v1, 200, 200, want.d, 1, 1);
    c.b_r.reset();
    c.b_c.reset();
    c.auto_blocks = true;
    c.sram_bytes = 49'152;
    const Problem p = resolve(c);
    CHECK(p.tiling.b_r == want.b_r);
    CHECK(p.tiling.b_c == want.b_c);
    // (B_r d + 2 B_c d + B_r B_c) * 4 bytes: Q_i, K_j, V_j, S_ij
    CHECK((want.b_r * want.d + 2 * want.b_c * want.d + want.b_r * want.b_c) * 4 == want.bytes);
    CHECK(sram_bytes(make_schedule(p), p.tiling.b_r, p.tiling.b_c, want.d, 4) == want.bytes);
    CHECK(want.bytes <= 49'152);
  }
  // d = 32 (B_r = 32 != B_c = 96, ragged at N = 200): V1 and V2 equal the dense float64 result.
  for (Algo a : {Algo::v1, Algo::v2}) {
    CAPTURE(to_string(a));
    Config c = config(a, 200, 200, 32, 1, 1);
    c.b_r.reset();
    c.b_c.reset();
    c.auto_blocks = true;
    c.sram_bytes = 49'152;
    const Problem p = resolve(c);
    const Inputs in = make_inputs(p, kRandom, kRandom, kRandom, 5);
    const NumericError e = compare(simulate(p, in), reference(p, in), p);
    CHECK(e.finite);
    CHECK(e.rel_fro_O <= tolerance(Dtype::fp32));
    CHECK(e.L_over_tol <= 1);
    CHECK(e.within);
  }
}
