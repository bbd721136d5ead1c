// Inputs of numerics mode: fills, seeding, values at the dtype, and the errors of bad input.
#include <doctest/doctest.h>

#include <cmath>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

// True when x has at most `bits` significant bits (a normal number of a format with that
// precision): frexp's mantissa in [0.5, 1) times 2^bits is an integer.
bool fits_precision(float x, int bits) {
  if (x == 0) return true;
  int e = 0;
  const double mant = std::frexp(double(x), &e);
  const double scaled = std::ldexp(mant, bits);
  return scaled == std::floor(scaled);
}

}  // namespace

TEST_CASE("parse_fill reads random, zero, index and constants, and names the field on errors") {
  CHECK(parse_fill("q", "random").kind == Fill::Kind::random);
  CHECK(parse_fill("q", "zero").kind == Fill::Kind::zero);
  CHECK(parse_fill("v", "index").kind == Fill::Kind::index);
  const Fill c = parse_fill("k", "-10");
  CHECK(c.kind == Fill::Kind::constant);
  CHECK(c.value == -10.0f);
  CHECK(parse_fill("k", "0.25").value == 0.25f);
  for (const char* bad : {"", "abc", "1x", "nan", "inf", "1e99"}) {
    CAPTURE(bad);
    try {
      parse_fill("fill-k", bad);
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK(e.field() == "fill-k");
      CHECK(e.value() == bad);
      CHECK(std::string(e.what()).find("random, zero, index") != std::string::npos);
    }
  }
}

TEST_CASE("make_inputs: seeded, reproducible, rounded to the dtype, one stream per matrix") {
  Config c = config(Algo::v2, 256, 300, 64, 64, 64);
  c.dtype = Dtype::fp16;
  const Problem p = resolve(c);
  const Inputs a = make_inputs(p, Fill{}, Fill{}, Fill{}, 42), b = make_inputs(p, Fill{}, Fill{}, Fill{}, 42);
  CHECK(a.Q.rows() == 256);
  CHECK(a.K.rows() == 300);
  CHECK(a.V.cols() == 64);
  CHECK(a.Q == b.Q);
  CHECK(a.K == b.K);
  CHECK(a.V == b.V);
  const Inputs other = make_inputs(p, Fill{}, Fill{}, Fill{}, 43);
  CHECK(a.Q != other.Q);
  CHECK(a.Q != a.K.topRows(256));
  // changing V's fill leaves Q and K as they were
  const Inputs v_index = make_inputs(p, Fill{}, Fill{}, Fill{Fill::Kind::index, 0}, 42);
  CHECK(v_index.Q == a.Q);
  CHECK(v_index.K == a.K);
  for (std::int64_t r = 0; r < 300; ++r) CHECK(v_index.V.row(r).isConstant(float(r)));

  // N(0, 1): over 300 * 64 = 19,200 values the mean is within 5 standard errors (0.036) of 0
  // and the variance within 0.05 of 1.
  const double mean = a.K.cast<double>().mean();
  const double var = (a.K.cast<double>().array() - mean).square().mean();
  CHECK(std::abs(mean) < 0.036);
  CHECK(std::abs(var - 1) < 0.05);

  // every value is an fp16 number: at most 11 significant bits (|x| > 2^-14, normal range)
  for (const MatrixF* x : {&a.Q, &a.K, &a.V})
    for (Eigen::Index k = 0; k < x->size(); ++k) {
      const float v = x->data()[k];
      if (std::abs(v) >= 0x1.0p-14f) CHECK(fits_precision(v, 11));
    }
  c.dtype = Dtype::bf16;
  const Inputs bf = make_inputs(resolve(c), Fill{}, Fill{}, Fill{}, 42);
  int coarser = 0;
  for (Eigen::Index k = 0; k < bf.Q.size(); ++k) {
    CHECK(fits_precision(bf.Q.data()[k], 8));
    coarser += bf.Q.data()[k] != a.Q.data()[k];
  }
  CHECK(coarser > 0);
  const Inputs constant = make_inputs(p, Fill{Fill::Kind::constant, 0.1f}, Fill{Fill::Kind::zero, 0}, Fill{}, 1);
  CHECK(constant.Q.isConstant(round1(Dtype::fp16, 0.1f)));
  CHECK(constant.K.isZero());
}

TEST_CASE("numerics rejects inputs of the wrong shape and traced blocks outside 0..T_r-1") {
  const Problem p = resolve(config(Algo::v2, 100, 80, 16, 32, 32));
  Inputs in = make_inputs(p, Fill{}, Fill{}, Fill{}, 1);
  NumericsOptions opt;
  opt.trace_blocks = {4};  // T_r = ceil(100 / 32) = 4
  CHECK_THROWS_WITH_AS(NumericsObserver(p, in, opt), "trace block = 4: a Q block index from 0 to T_r - 1 = 3",
                       ConfigError);
  opt.trace_blocks = {-1};
  CHECK_THROWS_AS(NumericsObserver(p, in, opt), ConfigError);
  in.K = MatrixF::Zero(79, 16);
  CHECK_THROWS_WITH_AS(simulate(p, in), "inputs.K = 79 x 16: a matrix of 80 x 16 (the problem's shape)", ConfigError);
  in = make_inputs(p, Fill{}, Fill{}, Fill{}, 1);
  NumericResult r = simulate(p, in);
  r.L.conservativeResize(99);
  CHECK_THROWS_AS(compare(r, reference(p, in), p), ConfigError);
}

TEST_CASE("constant fills must be values of the dtype: fp16 65504, bf16 and fp32 their largest finite") {
  // fp16: (2 - 2^-10) 2^15 = 65504; bf16: (2 - 2^-7) 2^127; fp32: (2 - 2^-23) 2^127.
  CHECK(dtype_max(Dtype::fp16) == 65504.0);
  CHECK(dtype_max(Dtype::bf16) == std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
  CHECK(dtype_max(Dtype::fp32) == std::ldexp(2.0 - std::ldexp(1.0, -23), 127));
  CHECK(parse_fill("q", "-65504", Dtype::fp16).value == -65504.0f);
  CHECK(parse_fill("q", "70000", Dtype::bf16).value == 70000.0f);
  CHECK(parse_fill("v", "index", Dtype::fp16).kind == Fill::Kind::index);
  const std::vector<std::pair<const char*, Dtype>> bad{{"70000", Dtype::fp16},  {"65505", Dtype::fp16},
                                                       {"3.39e38", Dtype::bf16}, {"3.41e38", Dtype::fp32},
                                                       {"inf", Dtype::fp32},    {"-inf", Dtype::bf16},
                                                       {"nan", Dtype::fp16}};
  for (const auto& [text, t] : bad) {
    CAPTURE(text);
    try {
      parse_fill("q", text, t);
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK(e.field() == "q");
      CHECK(e.value() == text);
      CHECK(e.allowed().rfind("a finite number representable in " + std::string(to_string(t)) + " (|x| <= ", 0) == 0);
    }
  }
  CHECK_THROWS_WITH_AS(parse_fill("q", "70000", Dtype::fp16),
                       "q = 70000: a finite number representable in fp16 (|x| <= 65504)", ConfigError);
  // make_inputs refuses the same constants given directly, and an index fill past the dtype.
  Config c = config(Algo::v2, 8, 8, 4, 4, 4);
  c.dtype = Dtype::fp16;
  const Problem p = resolve(c);
  CHECK_THROWS_AS(make_inputs(p, Fill{Fill::Kind::constant, 70000.0f}, Fill{}, Fill{}, 0), ConfigError);
  c.n_k = 65506;  // rows 0..65505: 65505 > 65504
  c.b_c = 64;
  CHECK_THROWS_AS(make_inputs(resolve(c), Fill{}, Fill{}, Fill{Fill::Kind::index, 0}, 0), ConfigError);
  c.n_k = 65505;  // last row 65504
  CHECK(make_inputs(resolve(c), Fill{}, Fill{}, Fill{Fill::Kind::index, 0}, 0).V(65504, 0) == 65504.0f);
}
