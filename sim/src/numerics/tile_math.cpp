// tile_math.cpp — the forward equations on resident tiles (FA1 paper Algorithms 0 and 1, FA2
// paper Algorithm 1), fp32, with Eigen block products and vectorised row operations.
#include "tile_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashlab::tile_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// e^x per row with e^-inf = 0 exactly (see exp_rows).
VectorF exp_or_zero(const VectorF& x) {
  VectorF e(x.size());
  for (Eigen::Index a = 0; a < x.size(); ++a) e[a] = x[a] == -kInf ? 0.f : std::exp(x[a]);
  return e;
}

}  // namespace

// m where finite, 0 where m = -inf (a row that has seen no visible key): subtracting it gives
// exp(-inf - 0) = 0 instead of exp(-inf - -inf) = NaN.
VectorF finite_or_zero(const VectorF& m) { return (m.array().abs() == kInf).select(0.f, m); }

// S = exp(S - shift) on each row's visible columns, exactly 0 elsewhere, and rowsum into `sum`.
// Only the visible segment goes through Eigen's vectorised exp: it clamps its argument at about
// -88.4, so exp(-inf) would give ~1e-38, not 0, and a row with no visible key would look non-empty.
void exp_rows(MatrixF& S, const std::vector<KeyRange>& keys, const VectorF& shift, VectorF& sum) {
  sum.resize(S.rows());
  const Eigen::Index cols = S.cols();
  for (Eigen::Index a = 0; a < S.rows(); ++a) {
    const KeyRange k = keys[std::size_t(a)];
    auto row = S.row(a);
    if (k.empty()) {
      row.setZero();
      sum[a] = 0;
      continue;
    }
    auto seen = row.segment(k.first, k.count()).array();
    seen = (seen - shift[a]).exp();
    sum[a] = seen.sum();
    row.head(k.first).setZero();
    row.tail(cols - 1 - k.last).setZero();
  }
}

VectorF logsumexp(const VectorF& m, const VectorF& l) {
  return (l.array() == 0).select(kInf, m.array() + l.array().log());
}

void init_stats(Chip& c, std::int64_t rows, std::int64_t d) {
  c.sram_O.setZero(rows, d);
  c.l.setZero(rows);
  c.m.setConstant(rows, -kInf);
  c.L.setConstant(rows, kInf);
}

void set_visible(Chip& c, const Band& band, bool full) {
  const std::int64_t rows = c.sram_S.rows(), cols = c.sram_S.cols();
  c.keys.resize(std::size_t(rows));
  for (std::int64_t a = 0; a < rows; ++a) {
    if (full) {
      c.keys[std::size_t(a)] = KeyRange{0, cols - 1};
      continue;
    }
    // visible keys of row r: c in [r + lo, r + hi]; in tile columns b = c - c0, clamped
    const std::int64_t r = c.r0 + a;
    const std::int64_t first = std::clamp<std::int64_t>(r + band.lo - c.c0, 0, cols);
    const std::int64_t last = std::clamp<std::int64_t>(r + band.hi - c.c0, first - 1, cols - 1);
    c.keys[std::size_t(a)] = KeyRange{first, last};
  }
}

void scores(Chip& c, double scale, const Band& band, bool full) {
  MatrixF& S = c.sram_S;
  S.noalias() = float(scale) * (c.sram_Qi * c.sram_Kj.transpose());
  set_visible(c, band, full);
  if (full) return;
  for (Eigen::Index a = 0; a < S.rows(); ++a) {
    const KeyRange k = c.keys[std::size_t(a)];
    if (k.empty()) {
      S.row(a).setConstant(-kInf);
      continue;
    }
    S.row(a).head(k.first).setConstant(-kInf);
    S.row(a).tail(S.cols() - 1 - k.last).setConstant(-kInf);
  }
}

void softmax_v2(Chip& c) {
  c.m_new = c.m.cwiseMax(c.sram_S.rowwise().maxCoeff());
  const VectorF shift = finite_or_zero(c.m_new);
  exp_rows(c.sram_S, c.keys, shift, c.l_tilde);  // P~ = exp(S - m_new), rowsum P~
  c.alpha = exp_or_zero(c.m - shift);  // e^(m_old - m_new); 0 while m_old = -inf
  c.l = c.alpha.cwiseProduct(c.l) + c.l_tilde;
  c.m = c.m_new;
}

void output_v2(Chip& c, Dtype t) {
  round_to_dtype(t, c.sram_S);  // P~ to the input dtype before the tensor-core P~ V
  c.sram_O = c.alpha.asDiagonal() * c.sram_O;
  c.sram_O.noalias() += c.sram_S * c.sram_Vj;
}

void normalize(Chip& c) {
  for (Eigen::Index a = 0; a < c.sram_O.rows(); ++a) {
    if (c.l[a] > 0) c.sram_O.row(a) /= c.l[a];
    else c.sram_O.row(a).setZero();
  }
}

void finalize_v2(Chip& c) {
  normalize(c);
  c.L = logsumexp(c.m, c.l);
}

void finalize_split(Chip& c) {
  normalize(c);
  c.L = logsumexp(c.m, c.l);
  for (Eigen::Index r = 0; r < c.L.size(); ++r)
    if (!(c.l(r) > 0)) c.L(r) = -std::numeric_limits<float>::infinity();
}

void softmax_v1(Chip& c) {
  c.m_tilde = c.sram_S.rowwise().maxCoeff();           // line 10: m~_ij = rowmax(S_ij)
  exp_rows(c.sram_S, c.keys, finite_or_zero(c.m_tilde), c.l_tilde);  // P~_ij = exp(S_ij - m~_ij), l~_ij
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
  exp_rows(c.sram_S, c.keys, finite_or_zero(c.m), c.l);
  for (Eigen::Index a = 0; a < c.sram_S.rows(); ++a)
    if (c.l[a] > 0) c.sram_S.row(a) /= c.l[a];
  c.L = logsumexp(c.m, c.l);
}

void output_dense(Chip& c) { c.sram_O.noalias() = c.sram_S * c.sram_Vj; }

}  // namespace flashlab::tile_math
