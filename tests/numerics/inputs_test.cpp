// Inputs of numerics mode: fills, seeding, rounding to the dtype, and the errors of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "flashlab/error.hpp"
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

float round1(Dtype t, float x) {
  MatrixF m(1, 1);
  m(0, 0) = x;
  round_to_dtype(t, m);
  return m(0, 0);
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

TEST_CASE("round_to_dtype rounds to nearest even at 11 (fp16) and 8 (bf16) significant bits") {
  // fp16: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 -> the even one, 1;
  //       1 + 3*2^-11 halfway between 1 + 2^-10 and 1 + 2^-9 -> 1 + 2^-9; 65520 -> +inf (max 65504).
  CHECK(round1(Dtype::fp16, 1.0f + 0x1.0p-11f) == 1.0f);
  CHECK(round1(Dtype::fp16, 1.0f + 3 * 0x1.0p-11f) == 1.0f + 0x1.0p-9f);
  CHECK(round1(Dtype::fp16, 65504.0f) == 65504.0f);
  CHECK(std::isinf(round1(Dtype::fp16, 65520.0f)));
  CHECK(round1(Dtype::fp16, -std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
  // bf16: 8 bits; 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6; fp32 unchanged.
  CHECK(round1(Dtype::bf16, 1.0f + 0x1.0p-8f) == 1.0f);
  CHECK(round1(Dtype::bf16, 1.0f + 3 * 0x1.0p-8f) == 1.0f + 0x1.0p-6f);
  CHECK(round1(Dtype::fp32, 1.0f + 0x1.0p-20f) == 1.0f + 0x1.0p-20f);
}

TEST_CASE("round_to_dtype gives Eigen::half's and Eigen::bfloat16's bits for every kind of float") {
  // Random bit patterns cover normals, fp16 subnormals and overflow, infinities and NaN; 1001
  // columns leave a tail that is not a multiple of 8; a column block exercises strided rows.
  std::mt19937 g(3);
  MatrixF x(1024, 1001);
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    const std::uint32_t bits = g();
    std::memcpy(&x.data()[k], &bits, 4);
  }
  x(0, 0) = 65519.0f;   // largest value that rounds to the fp16 maximum 65504
  x(0, 1) = 0x1.0p-25f; // half of the smallest fp16 subnormal: ties to even, 0
  x(0, 2) = 0x1.8p-24f; // 1.5 x the smallest subnormal: ties to even, 2^-23
  for (Dtype t : {Dtype::fp16, Dtype::bf16}) {
    CAPTURE(to_string(t));
    MatrixF y = x;
    round_to_dtype(t, y);
    MatrixF z = x;
    round_to_dtype(t, z.block(5, 3, 100, 37));
    int mismatches = 0;
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (Eigen::Index c = 0; c < x.cols(); ++c) {
        const float v = x(r, c);
        const float want = t == Dtype::fp16 ? float(Eigen::half(v)) : float(Eigen::bfloat16(v));
        const bool in_block = r >= 5 && r < 105 && c >= 3 && c < 40;
        const float want_z = in_block ? want : v;
        auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; };
        mismatches += !same(y(r, c), want) + !same(z(r, c), want_z);
      }
    CHECK(mismatches == 0);
  }
  MatrixF edge(1, 3);
  edge << 65519.0f, 0x1.0p-25f, 0x1.8p-24f;
  round_to_dtype(Dtype::fp16, edge);
  CHECK(edge(0, 0) == 65504.0f);
  CHECK(edge(0, 1) == 0.0f);
  CHECK(edge(0, 2) == 0x1.0p-23f);
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

TEST_CASE("numerics rejects inputs of the wrong shape and traced blocks outside [0, T_r)") {
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
  CHECK_THROWS_AS(compare(r, reference(p, in), Algo::v2), ConfigError);
}
