// merge.cpp — split-KV's combine: partial results of the K/V splits merged by their log-sum-exp
// (numerics.hpp merge_splits).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "flashlab/numerics/numerics.hpp"

namespace flashlab {

Merged merge_splits(const std::vector<MatrixF>& parts_O, const MatrixF& parts_L) {
  const auto splits = std::int64_t(parts_O.size());
  if (splits == 0 || parts_L.cols() != splits)
    throw std::invalid_argument("merge_splits: one partial O per column of parts_L");
  const std::int64_t rows = parts_L.rows(), d = parts_O[0].cols();
  for (const MatrixF& o : parts_O)
    if (o.rows() != rows || o.cols() != d) throw std::invalid_argument("merge_splits: partial O of different shapes");
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Merged out{MatrixF::Zero(rows, d), Eigen::VectorXf::Constant(rows, kInf)};
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t a = 0;
    for (std::int64_t s = 1; s < splits; ++s)
      if (parts_L(r, s) > parts_L(r, a)) a = s;
    const float mx = parts_L(r, a);
    if (mx == -kInf) continue;  // no split saw a key: O = 0, L = +inf
    float rest = 0;             // sum over the other splits of exp(L_s - mx) <= splits - 1
    for (std::int64_t s = 0; s < splits; ++s)
      if (s != a) rest += std::exp(parts_L(r, s) - mx);
    const float L = mx + std::log1p(rest);
    out.L(r) = L;
    for (std::int64_t s = 0; s < splits; ++s) {
      const float w = std::exp(parts_L(r, s) - L);  // <= 1; exactly 0 for an empty split (-inf)
      if (w != 0) out.O.row(r) += w * parts_O[std::size_t(s)].row(r);
    }
  }
  return out;
}

}  // namespace flashlab
