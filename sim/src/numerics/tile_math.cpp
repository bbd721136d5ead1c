// tile_math.cpp — the forward equations on resident tiles (FA1 paper Algorithms 0 and 1, FA2
// paper Algorithm 1), fp32, with Eigen block products and vectorised row operations.
#include "tile_math.hpp"

#include <algorithm>
#include <limits>

namespace flashlab::tile_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// m where finite, 0 where m = -inf (a row that has seen no visible key): subtracting it gives
// exp(-inf - 0) = 0 instead of exp(-inf - -inf) = NaN.
VectorF finite_or_zero(const VectorF& m) { return (m.array() == -kInf).select(0.f, m); }

// S = exp(S - shift) row by row (contiguous rows of a row-major matrix), and rowsum into `sum`.
// Masked scores (-inf) give exactly 0: Eigen's vectorised exp clamps its argument at about -88.4
// and would return ~1e-38 for them, enough to make a row with no visible key look non-empty.
void exp_rows(MatrixF& S, const VectorF& shift, VectorF& sum) {
  sum.resize(S.rows());
  for (Eigen::Index a = 0; a < S.rows(); ++a) {
    auto s = S.row(a).array();
    s = (s == -kInf).select(0.f, (s - shift[a]).exp());
    sum[a] = s.sum();
  }
}

// e^x per row with e^-inf = 0 exactly (see exp_rows).
VectorF exp_or_zero(const VectorF& x) { return (x.array() == -kInf).select(0.f, x.array().exp()); }

}  // namespace

VectorF logsumexp(const VectorF& m, const VectorF& l) {
  return (l.array() == 0).select(kInf, m.array() + l.array().log());
}

void init_stats(Chip& c, std::int64_t rows, std::int64_t d) {
  c.sram_O.setZero(rows, d);
  c.l.setZero(rows);
  c.m.setConstant(rows, -kInf);
  c.L.setConstant(rows, kInf);
}

void scores(Chip& c, double scale, const Band& band, bool full) {
  MatrixF& S = c.sram_S;
  S.noalias() = float(scale) * (c.sram_Qi * c.sram_Kj.transpose());
  if (full) return;
  const std::int64_t cols = S.cols();
  for (Eigen::Index a = 0; a < S.rows(); ++a) {
    const std::int64_t r = c.r0 + a;
    // visible keys of row r: c in [r + lo, r + hi]; in tile columns b = c - c0, clamped
    const std::int64_t first = std::clamp<std::int64_t>(r + band.lo - c.c0, 0, cols);
    const std::int64_t end = std::clamp<std::int64_t>(r + band.hi - c.c0 + 1, first, cols);
    S.row(a).head(first).setConstant(-kInf);
    S.row(a).tail(cols - end).setConstant(-kInf);
  }
}

void softmax_v2(Chip& c) {
  c.m_new = c.m.cwiseMax(c.sram_S.rowwise().maxCoeff());
  const VectorF shift = finite_or_zero(c.m_new);
  exp_rows(c.sram_S, shift, c.l_tilde);  // P~ = exp(S - m_new), rowsum P~
  c.alpha = exp_or_zero(c.m - shift);  // e^(m_old - m_new); 0 while m_old = -inf
  c.l = c.alpha.cwiseProduct(c.l) + c.l_tilde;
  c.m = c.m_new;
}

void output_v2(Chip& c, Dtype t) {
  round_to_dtype(t, c.sram_S);  // P~ to the input dtype before the tensor-core P~ V
  c.sram_O = c.alpha.asDiagonal() * c.sram_O;
  c.sram_O.noalias() += c.sram_S * c.sram_Vj;
}

void finalize_v2(Chip& c) {
  for (Eigen::Index a = 0; a < c.sram_O.rows(); ++a) {
    if (c.l[a] > 0) c.sram_O.row(a) /= c.l[a];
    else c.sram_O.row(a).setZero();
  }
  c.L = logsumexp(c.m, c.l);
}

void softmax_v1(Chip& c) {
  c.m_tilde = c.sram_S.rowwise().maxCoeff();           // line 10: m~_ij = rowmax(S_ij)
  exp_rows(c.sram_S, finite_or_zero(c.m_tilde), c.l_tilde);  // P~_ij = exp(S_ij - m~_ij), l~_ij
  c.m_new = c.m.cwiseMax(c.m_tilde);                   // line 11: m_new = max(m_i, m~_ij)
  const VectorF shift = finite_or_zero(c.m_new);
  c.alpha = exp_or_zero(c.m - shift);                  // e^(m_i - m_new)
  c.beta = exp_or_zero(c.m_tilde - shift);             // e^(m~_ij - m_new)
  c.l_new = c.alpha.cwiseProduct(c.l) + c.beta.cwiseProduct(c.l_tilde);
}

void output_v1(Chip& c, Dtype t) {
  round_to_dtype(t, c.sram_S);  // P~ to the input dtype before P~ V, as for V2
  c.sram_PV.noalias() = c.sram_S * c.sram_Vj;
  // line 12, term by term: O_i = diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i) +
  //                               diag(l_new)^-1 (e^(m~ - m_new) P~ V_j)
  for (Eigen::Index a = 0; a < c.sram_O.rows(); ++a) {
    if (c.l_new[a] > 0)
      c.sram_O.row(a) = (c.sram_O.row(a) * (c.l[a] * c.alpha[a])) / c.l_new[a] +
                        (c.sram_PV.row(a) * c.beta[a]) / c.l_new[a];
  }
  c.m = c.m_new;
  c.l = c.l_new;
}

void softmax_dense(Chip& c) {
  c.m = c.sram_S.rowwise().maxCoeff();
  exp_rows(c.sram_S, finite_or_zero(c.m), c.l);
  for (Eigen::Index a = 0; a < c.sram_S.rows(); ++a)
    if (c.l[a] > 0) c.sram_S.row(a) /= c.l[a];
  c.L = logsumexp(c.m, c.l);
}

void output_dense(Chip& c) { c.sram_O.noalias() = c.sram_S * c.sram_Vj; }

}  // namespace flashlab::tile_math
