// compare(): the error figures of a result against a reference, written by hand here, and the
// tolerances of reference.cpp from their closed forms, with the numbers worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "flashlab/numerics/numerics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using flashlab::test::config;

namespace {

constexpr double kU32 = 0x1.0p-24;  // fp32's unit roundoff, 5.96e-8

}  // namespace

TEST_CASE("compare reports the errors of O and L, and NaN (not 0) for a non-finite L") {
  const double inf = std::numeric_limits<double>::infinity();
  const Problem v2 = resolve(config(Algo::v2, 2, 1, 1, 1, 1));
  Reference ref{MatrixD::Zero(2, 1), Eigen::VectorXd::Zero(2), Dtype::fp32, {}};
  ref.O << 3.0, 4.0;  // ||O_ref||_F = 5
  ref.L << 1.0, inf;  // row 1 sees no key
  NumericResult r;
  r.O = MatrixF::Zero(2, 1);
  r.O << 3.0f, 4.5f;  // one error of 0.5
  r.L = Eigen::VectorXf::Zero(2);
  r.L << 1.25f, std::numeric_limits<float>::infinity();
  NumericError e = compare(r, ref, v2);
  CHECK(e.max_abs_O == flashlab::testing::approx(0.5));
  CHECK(e.rel_fro_O == flashlab::testing::approx(0.1));  // 0.5 / 5
  CHECK(e.max_abs_L == flashlab::testing::approx(0.25));
  CHECK(e.tol_O == 1e-5);                  // fp32, V2: the dtype's part alone
  CHECK(e.tol_L == 1e-4 + 4 * kU32 * 1.0);  // row 0: L_ref = 1, no logit bound
  CHECK(e.L_over_tol == flashlab::testing::approx(0.25 / (1e-4 + 4 * kU32)));
  CHECK(e.finite);
  CHECK_FALSE(e.within);  // 0.1 and 0.25 are far above fp32's tolerances

  r.L[0] = std::numeric_limits<float>::quiet_NaN();
  e = compare(r, ref, v2);
  CHECK_FALSE(e.finite);
  CHECK(std::isnan(e.max_abs_L));
  CHECK(std::isnan(e.L_over_tol));
  CHECK_FALSE(e.within);

  r.L[0] = 1.0f;
  r.L[1] = 0.0f;  // finite where the reference has +inf
  e = compare(r, ref, v2);
  CHECK_FALSE(e.finite);
}

TEST_CASE("the L tolerance scales with |L| and the logits: 80,006 and 3.4e10 worked by hand") {
  // Issue 10 item 5: Q = K = 100 in all d = 64 columns, scale 1/8: every logit is
  // 100 * 100 * 64 / 8 = 80,000 and L = 80,000 + ln 500 = 80,006.2146 (N_k = 500). The logit
  // bound is B = (1/8) * ||q|| * ||k|| = (1/8) * 800 * 800 = 80,000 (Cauchy-Schwarz is exact for
  // equal vectors). tol = 1e-4 + 4 * 2^-24 * 80,006.2146 + 66 * 2^-24 * 80,000
  //     = 1e-4 + 0.0190750 + 0.3147125 = 0.3338875.
  const double L = 80000 + std::log(500.0);
  const double tol = tolerance_L(Dtype::fp16, Algo::v2, 64, L, 80000);
  CHECK(tol == flashlab::testing::approx(0.3338875).epsilon(1e-6));
  // fp32 numbers near 80,006 (2^16 <= 80,006 < 2^17) are 2^-7 = 7.8e-3 apart: rounding L itself
  // is allowed, and the kernel's 3.7e-3 that an absolute 1e-4 failed passes; a lost ln l does not.
  CHECK(tol > 0x1.0p-7);
  CHECK(3.7e-3 < tol);
  CHECK(tol < std::log(2.0));  // L off by ln 2 (l counted twice) is still an error
  CHECK(tol < 1e-5 * L);

  // fp16 Q = K = 65504 (its largest value), d = 64: B = (1/8) (65504 * 8)^2 = 8 * 65504^2 =
  // 34,326,192,128 (2^34 <= B < 2^35: fp32 spacing 2^11 = 2048). B / 2^24 = 65504^2 / 2^21 =
  // 2046.00048828125, so tol = 1e-4 + (4 + 66) * 2046.00048828125 (+ 4 * 2^-24 ln N_k, < 2e-6).
  const double B = 8.0 * 65504.0 * 65504.0;
  CHECK(B == 34326192128.0);
  const double big = tolerance_L(Dtype::fp16, Algo::v2, 64, B + std::log(1024.0), B);
  CHECK(big == flashlab::testing::approx(1e-4 + 70 * 2046.00048828125).epsilon(1e-9));
  CHECK(big > 2048);   // above one spacing of fp32 at |L|
  CHECK(big < 5e-6 * B);

  // small logits keep the 1e-4 floor (V1, V2); standard attention adds u B for its S at the dtype:
  // B = 10 in fp16: 1e-4 + 66 * 2^-24 * 10 + 2^-11 * 10 = 1e-4 + 3.934e-5 + 4.883e-3.
  CHECK(tolerance_L(Dtype::fp16, Algo::v2, 64, 0.0, 0.0) == 1e-4);
  CHECK(tolerance_L(Dtype::fp16, Algo::standard, 64, 0.0, 10.0) ==
        flashlab::testing::approx(1e-4 + 3.9339066e-5 + 4.8828125e-3).epsilon(1e-6));
}

TEST_CASE("compare holds each row's L to its own tolerance: ratio over tolerance, worst row reported") {
  // Row 0 is the 80,006 row above (tol 0.3338875), row 1 an ordinary row (L_ref = 1, B = 0:
  // tol 1e-4 + 4 * 2^-24 = 1.0000238e-4). O is exact.
  const Problem p = resolve(config(Algo::v2, 2, 2, 64, 2, 2));
  Reference ref{MatrixD::Ones(2, 64), Eigen::VectorXd(2), Dtype::fp32, Eigen::VectorXd(2)};
  ref.L << 80000 + std::log(500.0), 1.0;
  ref.logit_bound << 80000, 0;
  NumericResult r;
  r.O = MatrixF::Ones(2, 64);
  r.L = Eigen::VectorXf(2);
  r.L << float(ref.L[0] + 0.25), 1.0f;  // fp32 keeps 80,006.4646 to 2^-7 = 7.8e-3
  NumericError e = compare(r, ref, p);
  const double off = double(r.L[0]) - ref.L[0];
  CHECK(std::abs(off - 0.25) <= 0x1.0p-8);
  CHECK(e.max_abs_L == flashlab::testing::approx(std::abs(off)));
  CHECK(e.L_over_tol == flashlab::testing::approx(std::abs(off) / 0.3338875).epsilon(1e-5));
  CHECK(e.tol_L == flashlab::testing::approx(0.3338875).epsilon(1e-6));
  CHECK(e.within);  // 0.25 of 0.33: the rounding of numbers of size 8e4
  // the same 0.25 on the ordinary row is 2,500 tolerances: a failure
  r.L << float(ref.L[0]), 1.25f;
  e = compare(r, ref, p);
  CHECK(e.L_over_tol == flashlab::testing::approx(0.25 / (1e-4 + 4 * kU32)).epsilon(1e-4));
  CHECK_FALSE(e.within);
  // and 0.5 on the large row is beyond its 0.334
  r.L << float(ref.L[0] + 0.5), 1.0f;
  CHECK_FALSE(compare(r, ref, p).within);
}

TEST_CASE("V1's O tolerance grows with its n round trips of O_i: u sqrt(n) more than the dtype's") {
  // fp16, N = 1024, B_c = 1: T_c = 1024 stores per Q block; u sqrt(n) = 2^-11 * 32 = 2^-6.
  Config c = config(Algo::v1, 1024, 1024, 64, 64, 1);
  c.dtype = Dtype::fp16;
  CHECK(v1_rounding_steps(resolve(c)) == 1024);
  CHECK(tolerance_O(resolve(c)) == 2e-3 + 0x1.0p-6);
  // V2 and standard attention round O once: the dtype's 4 u alone
  for (Algo a : {Algo::v2, Algo::standard}) {
    c.algo = a;
    CHECK(v1_rounding_steps(resolve(c)) == 0);
    CHECK(tolerance_O(resolve(c)) == 2e-3);
  }
  // block skip, top-left causal, N_q = 64 < N_k = 1024, B_r = 64, B_c = 1: the one Q block
  // (rows 0..63) sees keys 0..63, 64 tiles of one key; without block skip all 1,024 tiles.
  c = config(Algo::v1, 64, 1024, 64, 64, 1);
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  c.block_skip = true;
  CHECK(v1_rounding_steps(resolve(c)) == 64);
  c.block_skip = false;
  CHECK(v1_rounding_steps(resolve(c)) == 1024);
}

TEST_CASE("the reference's logit bound is |scale| |q_r| max_j |k_j| (Cauchy-Schwarz), above every |S_rj|") {
  Config c = config(Algo::v2, 3, 4, 2, 2, 2);
  c.scale = 0.5;
  const Problem p = resolve(c);
  Inputs in{MatrixF(3, 2), MatrixF(4, 2), MatrixF::Ones(4, 2)};
  in.Q << 3, 4, 0, 0, 1, 0;        // norms 5, 0, 1
  in.K << 1, 0, 0, 2, 6, 8, 0, 1;  // norms 1, 2, 10, 1
  const Reference ref = reference(p, in);
  CHECK(ref.logit_bound[0] == 0.5 * 5 * 10);
  CHECK(ref.logit_bound[1] == 0);
  CHECK(ref.logit_bound[2] == 0.5 * 1 * 10);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j) CHECK(std::abs(0.5 * in.Q.row(r).dot(in.K.row(j))) <= ref.logit_bound[r]);
}
