// limits.hpp — the largest problem the numerics (numerics.hpp: simulate and the float64 reference)
// are run on by the tools: `flashlab run`, `flashlab trace --stats-blocks`, and what the viewer
// tells a user to run instead of its own smaller interactive limit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace flashlab {

/// The dense float64 reference holds N_q x N_k scores: 2^28 of them is 2 GiB.
inline constexpr std::int64_t kNumericsMaxScores = std::int64_t(1) << 28;
/// The reference and the simulation each take about N_q N_k d multiply-adds (Q K^T and P V); d
/// counts as at least 64, for the per-score work (exp, max, sum) and the per-tile steps. 2^34 is
/// seconds of work, not hours.
inline constexpr std::int64_t kNumericsMaxWork = std::int64_t(1) << 34;

/// The largest N such that N_q = N_k = N is within both limits at head dimension d >= 1:
/// N^2 <= kNumericsMaxScores and N^2 max(d, 64) <= kNumericsMaxWork (16,384 for d <= 64).
inline std::int64_t numerics_max_square_n(std::int64_t d) {
  const std::int64_t cap = std::min(kNumericsMaxScores, kNumericsMaxWork / std::max<std::int64_t>(d, 64));
  auto n = std::int64_t(std::sqrt(double(cap)));  // then exact: n^2 <= cap < (n + 1)^2
  while (n * n > cap) --n;
  while ((n + 1) * (n + 1) <= cap) ++n;
  return n;
}

}  // namespace flashlab
