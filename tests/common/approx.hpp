// approx.hpp — doctest's Approx made relative to the values compared, whatever their size.
//
// doctest::Approx(v).epsilon(e) accepts a when |a - v| < e (scale + max(|a|, |v|)), and its scale is 1
// by default (doctest.h, operator==(double, const Approx&)): so a tolerance e is 2e for values near 1,
// and an absolute e for values much smaller than 1 — a time in seconds (1e-4) compared with the default
// e (about 1.2e-5) or with e = 1e-3 passes almost anything. approx(v) sets the scale to the smallest
// normal double: e is then relative to the larger of the two values (and two zeros still compare
// equal). Every test compares through it: scripts/check/test_approx.py (ctest test_approx) fails on a
// bare doctest::Approx under tests/.
#pragma once

#include <limits>

#include <doctest/doctest.h>

namespace flashlab::testing {

/// doctest::Approx(v) with e relative: |a - v| < e max(|a|, |v|); chain .epsilon(e) as doctest's.
inline doctest::Approx approx(double v) { return doctest::Approx(v).scale(std::numeric_limits<double>::min()); }

}  // namespace flashlab::testing
