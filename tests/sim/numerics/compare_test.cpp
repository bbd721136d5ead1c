// compare(): the error figures of a result against a reference, written by hand here.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "flashlab/numerics/numerics.hpp"

using namespace flashlab;

TEST_CASE("compare reports the errors of O and L, and NaN (not 0) for a non-finite L") {
  const double inf = std::numeric_limits<double>::infinity();
  Reference ref{MatrixD::Zero(2, 1), Eigen::VectorXd::Zero(2), Dtype::fp32};
  ref.O << 3.0, 4.0;  // ||O_ref||_F = 5
  ref.L << 1.0, inf;  // row 1 sees no key
  NumericResult r;
  r.O = MatrixF::Zero(2, 1);
  r.O << 3.0f, 4.5f;  // one error of 0.5
  r.L = Eigen::VectorXf::Zero(2);
  r.L << 1.25f, std::numeric_limits<float>::infinity();
  NumericError e = compare(r, ref, Algo::v2);
  CHECK(e.max_abs_O == doctest::Approx(0.5));
  CHECK(e.rel_fro_O == doctest::Approx(0.1));  // 0.5 / 5
  CHECK(e.max_abs_L == doctest::Approx(0.25));
  CHECK(e.finite);
  CHECK_FALSE(e.within);  // 0.1 and 0.25 are far above fp32's tolerances

  r.L[0] = std::numeric_limits<float>::quiet_NaN();
  e = compare(r, ref, Algo::v2);
  CHECK_FALSE(e.finite);
  CHECK(std::isnan(e.max_abs_L));
  CHECK_FALSE(e.within);

  r.L[0] = 1.0f;
  r.L[1] = 0.0f;  // finite where the reference has +inf
  e = compare(r, ref, Algo::v2);
  CHECK_FALSE(e.finite);
}
