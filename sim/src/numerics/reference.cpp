// reference.cpp — the float64 dense reference, the error measures and their tolerances.
//
// Tolerances. u is the unit roundoff of the input type (fp16 2^-11 = 4.9e-4, bf16 2^-8 = 3.9e-3,
// fp32 u32 = 2^-24 = 6.0e-8). The result differs from the float64 reference on the same (already
// rounded) inputs through:
//   (a) the store of O at the dtype: relative error <= u per element, RMS about u/sqrt(3), so
//       about 0.6 u of rel_fro_O;
//   (b) P~ cast to the dtype before P~ V: each weight off by <= u relative, again about 0.6 u;
//   (c) standard attention also stores S and P at the dtype: |dS| <= u |S| shifts P by about
//       u |S| relative (|S| ~ 1 for N(0, 1) inputs at scale 1/sqrt(d)), P's store adds 0.6 u;
//   (d) V1 rounds O_i to the dtype at each of its n stores (FA1 Algorithm 1 line 12, n =
//       v1_rounding_steps); the later steps scale the stored O_i by l_k / l_n, the share of the
//       row's softmax mass seen by step k, so the final error is sum_k eps_k (l_k / l_n) O^(k),
//       |eps_k| <= u. With even mass (l_k / l_n = k / n): worst case u (n + 1) / 2 (every rounding
//       the same way, never seen); independent roundings of RMS u/sqrt(3) give
//       u/sqrt(3) * sqrt(sum_k (k/n)^2) ~ u/sqrt(3) * sqrt(n/3) = u sqrt(n) / 3;
//   (e) fp32 accumulation: S over d terms and P~ V over N_k terms, about sqrt(N_k) u32 RMS.
// tolerance(): 4 u for fp16 and bf16 (2e-3, 1.6e-2): (a) + (b) + (c) with room; fp32: 1e-5 =
// 168 u, (e) for N_k up to 2^20 keys. tolerance_O() adds V1's (d) as three times its RMS, u sqrt(n):
// V1 at fine tiles (fp16, N = 1024, B_c = 1: n = 1024, expected 5.2e-3) is above 4 u by its own
// rounding, which is the lesson of lab 04, not a fault.
//
// tolerance_L(): L = m + ln l in fp32. The spacing of fp32 numbers near x is 2^(floor(log2 |x|) - 23)
// <= 2^-23 |x|, and one rounding to fp32 moves x by at most half of it, u32 |x|: an error of fp32
// numbers scales with their size, and an absolute bound on L fails wherever |L| is large
// (L = 80,006: spacing 2^-7 = 7.8e-3; fp16 Q = K = 65504, d = 64: L = 3.4e10, spacing 4096).
//   - the logits S_rj = scale q_r . k_j in fp32 over d terms: |dS_rj| <= (d + 2) u32 B_r (d
//     products and d - 1 additions, gamma_d <= d u32 times sum |q_r,k k_j,k| <= ||q_r|| ||k_j||,
//     plus the scaling), B_r = |scale| ||q_r|| max_j ||k_j|| (Reference::logit_bound, Cauchy-
//     Schwarz); L = logsumexp(S_r) has gradient P_r (weights summing to 1), so L moves by at most
//     max_j |dS_rj|;
//   - m and L: numbers of size |L| rounded to fp32: m + ln l once, and in kernels the exp2 form's
//     scaling of S and m by log2(e) and back (FA2 kernels): 4 roundings of u32 |L| = 2^-22 |L|;
//   - l: an fp32 sum of up to N_k terms and the rescalings of V1's and V2's steps; its relative
//     error (about sqrt(N_k) u32 RMS) is ln l's absolute error: 1e-4 covers N_k up to 2^20;
//   - standard attention takes m and l from S stored at the dtype: u B_r more.
// tol_L(r) = 1e-4 + 2^-22 |L_ref(r)| + ((d + 2) u32 + [standard] u) B_r. For N(0, 1) inputs
// (B_r ~ 10) it stays near 1e-4; constant Q = K = 100, d = 64 (every logit 80,000): 0.33, above
// the spacing 7.8e-3 where 1e-4 called an error of 3.7e-3 a failure, yet 4e-6 of |L|.
//
// The backward (grad_reference, tolerance_grad). dQ, dK, dV differ from the float64 chain rule on
// the same inputs through: P rounded to the dtype before dV += P^T dO and dS before dQ += dS K and
// dK += dS^T Q (each weight off by <= u relative: about 0.6 u of the relative error each); O stored
// at the dtype, which enters D = rowsum(dO o O) and through dP - D every dS (another u-sized
// relative term, larger where dP and D nearly cancel); dQ, dK, dV stored at the dtype (0.6 u); for
// standard attention P, dP and dS stored at the dtype (3 more such terms). tolerance_grad: 8 u
// covers these with room (fp32: 1e-4, the fp32 sums over N_k and N_q terms). V1 and the paper's V2
// round dQ_i at each of the n steps that add to it, as V1's forward rounds O_i: u sqrt(n) more, as
// in tolerance_O. tests/sim/numerics/backward_numerics_test.cpp holds it over every algorithm,
// form, mask and dtype of its grid.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab {
namespace {

constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kU32 = 0x1.0p-24;  // fp32's unit roundoff

}  // namespace

double unit_roundoff(Dtype t) {
  switch (t) {
    case Dtype::fp16: return 0x1.0p-11;
    case Dtype::bf16: return 0x1.0p-8;
    case Dtype::fp32: return kU32;
  }
  return kU32;
}

double tolerance(Dtype t) {
  switch (t) {
    case Dtype::fp16: return 2e-3;
    case Dtype::bf16: return 1.6e-2;
    case Dtype::fp32: return 1e-5;
  }
  return 1e-5;
}

std::int64_t v1_rounding_steps(const Problem& p) {
  // O_i goes through HBM at every step in the K/V outer order (V1, and every variant with
  // --order kv-outer), whatever the preset's name.
  if (p.algo == Algo::standard || p.order != LoopOrder::kv_outer) return 0;
  const Tiling& t = p.tiling;
  if (!p.block_skip) return t.t_c();
  std::int64_t most = 0;
  for (std::int64_t i = 0; i < t.t_r(); ++i) {
    const BlockRange r = visible_col_blocks(t, p.band, i);
    if (!r.empty()) most = std::max(most, r.last - r.first + 1);
  }
  return most;
}

double tolerance_O(const Problem& p) {
  return tolerance(p.dtype) + unit_roundoff(p.dtype) * std::sqrt(double(v1_rounding_steps(p)));
}

double tolerance_L(Dtype t, Algo a, std::int64_t d, double L_ref, double logit_bound) {
  const double logits = (double(d) + 2) * kU32 + (a == Algo::standard ? unit_roundoff(t) : 0.0);
  return 1e-4 + 4 * kU32 * std::abs(L_ref) + logits * logit_bound;
}

Reference reference(const Problem& p, const Inputs& in) {
  const Tiling& t = p.tiling;
  const MatrixD K = in.K.cast<double>(), V = in.V.cast<double>();
  Reference ref{MatrixD::Zero(t.n_q, t.d), Eigen::VectorXd::Constant(t.n_q, kInfD), p.dtype, {}};
  const double k_norm = t.n_k > 0 ? K.rowwise().norm().maxCoeff() : 0.0;
  ref.logit_bound = std::abs(p.scale) * k_norm * in.Q.cast<double>().rowwise().norm();
  // Row chunks keep the float64 scores at (chunk, N_k) instead of (N_q, N_k).
  const std::int64_t chunk = 256;
  MatrixD S;
  for (std::int64_t r0 = 0; r0 < t.n_q; r0 += chunk) {
    const std::int64_t rows = std::min(chunk, t.n_q - r0);
    S.noalias() = p.scale * (in.Q.middleRows(r0, rows).cast<double>() * K.transpose());
    for (std::int64_t a = 0; a < rows; ++a) {
      const KeyRange keys = row_keys(p.band, t.n_k, r0 + a);
      if (keys.empty()) continue;  // O = 0, L = +inf
      auto s = S.row(a).segment(keys.first, keys.count());
      const double m = s.maxCoeff();
      const Eigen::RowVectorXd e = (s.array() - m).exp().matrix();
      const double l = e.sum();
      ref.O.row(r0 + a).noalias() = (e * V.middleRows(keys.first, keys.count())) / l;
      ref.L[r0 + a] = m + std::log(l);
    }
  }
  return ref;
}

GradReference grad_reference(const Problem& p, const Inputs& in) {
  const Tiling& t = p.tiling;
  if (in.dO.rows() != t.n_q || in.dO.cols() != t.d)
    throw ConfigError("inputs.dO", std::to_string(in.dO.rows()) + " x " + std::to_string(in.dO.cols()),
                      "a matrix of " + std::to_string(t.n_q) + " x " + std::to_string(t.d) + " (N_q x d)");
  const MatrixD Q = in.Q.cast<double>(), K = in.K.cast<double>(), V = in.V.cast<double>();
  GradReference g{MatrixD::Zero(t.n_q, t.d), MatrixD::Zero(t.n_k, t.d), MatrixD::Zero(t.n_k, t.d),
                  Eigen::VectorXd::Zero(t.n_q)};
  const std::int64_t chunk = 256;  // rows of P at a time: (chunk, N_k) in float64
  MatrixD P, dP;
  for (std::int64_t r0 = 0; r0 < t.n_q; r0 += chunk) {
    const std::int64_t rows = std::min(chunk, t.n_q - r0);
    P.noalias() = p.scale * (Q.middleRows(r0, rows) * K.transpose());
    for (std::int64_t a = 0; a < rows; ++a) {
      const KeyRange keys = row_keys(p.band, t.n_k, r0 + a);
      if (keys.empty()) {
        P.row(a).setZero();
        continue;
      }
      auto s = P.row(a).segment(keys.first, keys.count());
      const double m = s.maxCoeff();
      const Eigen::RowVectorXd e = (s.array() - m).exp().matrix();
      const double l = e.sum();
      P.row(a).setZero();
      P.row(a).segment(keys.first, keys.count()) = e / l;
    }
    const MatrixD dO = in.dO.middleRows(r0, rows).cast<double>();
    g.dV.noalias() += P.transpose() * dO;                  // dV = P^T dO
    dP.noalias() = dO * V.transpose();                     // dP = dO V^T
    const Eigen::VectorXd D = P.cwiseProduct(dP).rowwise().sum();  // = rowsum(dO o O), O = P V
    g.D.segment(r0, rows) = D;
    const MatrixD dS = P.cwiseProduct(dP.colwise() - D);  // dS = P o (dP - D)
    g.dQ.middleRows(r0, rows).noalias() = p.scale * (dS * K);
    g.dK.noalias() += p.scale * (dS.transpose() * Q.middleRows(r0, rows));
  }
  return g;
}

double tolerance_grad(const Problem& p) {
  const double u = unit_roundoff(p.dtype);
  const double base = p.dtype == Dtype::fp32 ? 1e-4 : 8 * u;
  if (p.algo != Algo::v1 && !(p.algo == Algo::v2 && p.backward_form == BackwardForm::paper)) return base;
  // dQ_i rounded at every step that adds to it: the most tiles a Q block visits
  const Tiling& t = p.tiling;
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < t.t_r(); ++i) {
    const BlockRange r = visible_col_blocks(t, p.band, i);
    n = std::max(n, p.block_skip ? (r.empty() ? 0 : r.last - r.first + 1) : t.t_c());
  }
  return base + u * std::sqrt(double(n));
}

GradError compare_grads(const NumericResult& r, const GradReference& ref, const Problem& p) {
  const auto rel = [](const MatrixF& x, const MatrixD& want) {
    if (x.rows() != want.rows() || x.cols() != want.cols())
      throw ConfigError("result", std::to_string(x.rows()) + " x " + std::to_string(x.cols()),
                        "the reference's " + std::to_string(want.rows()) + " x " + std::to_string(want.cols()));
    const double diff = (x.cast<double>() - want).norm(), norm = want.norm();
    return norm > 0 ? diff / norm : diff;
  };
  GradError e;
  e.finite = r.dQ.allFinite() && r.dK.allFinite() && r.dV.allFinite() && r.D.allFinite();
  e.rel_fro_dQ = rel(r.dQ, ref.dQ);
  e.rel_fro_dK = rel(r.dK, ref.dK);
  e.rel_fro_dV = rel(r.dV, ref.dV);
  e.max_abs_D = r.D.size() ? (r.D.cast<double>() - ref.D).cwiseAbs().maxCoeff() : 0.0;
  e.tol = tolerance_grad(p);
  e.within = e.finite && e.rel_fro_dQ <= e.tol && e.rel_fro_dK <= e.tol && e.rel_fro_dV <= e.tol;
  return e;
}

NumericError compare(const NumericResult& r, const Reference& ref, const Problem& p) {
  if (r.O.rows() != ref.O.rows() || r.O.cols() != ref.O.cols() || r.L.size() != ref.L.size())
    throw ConfigError("result", std::to_string(r.O.rows()) + " x " + std::to_string(r.O.cols()) + " O, " +
                                    std::to_string(r.L.size()) + " L",
                      "the reference's " + std::to_string(ref.O.rows()) + " x " + std::to_string(ref.O.cols()) +
                          " O and " + std::to_string(ref.L.size()) + " L");
  NumericError e;
  e.finite = r.O.allFinite();
  const MatrixD diff = r.O.cast<double>() - ref.O;
  e.max_abs_O = diff.size() ? diff.cwiseAbs().maxCoeff() : 0.0;
  const double ref_norm = ref.O.norm();
  e.rel_fro_O = ref_norm > 0 ? diff.norm() / ref_norm : diff.norm();
  e.tol_O = tolerance_O(p);
  const auto row_tol_L = [&](Eigen::Index k) {
    const double bound = k < ref.logit_bound.size() ? ref.logit_bound[k] : 0.0;
    return tolerance_L(ref.dtype, p.algo, ref.O.cols(), ref.L[k], bound);
  };
  e.tol_L = tolerance_L(ref.dtype, p.algo, ref.O.cols(), 0.0, 0.0);
  bool have_row = false;      // a row with a finite L_ref compared: tol_L is that of the worst such row
  bool non_finite_L = false;  // a non-finite L where the reference is finite: no error to report
  for (Eigen::Index k = 0; k < ref.L.size(); ++k) {
    const double got = r.L[k], want = ref.L[k];
    if (std::isinf(want)) {
      e.finite = e.finite && got == kInfD;
    } else if (!std::isfinite(got)) {
      e.finite = false;
      non_finite_L = true;
    } else {
      const double err = std::abs(got - want), tol = row_tol_L(k);
      e.max_abs_L = std::max(e.max_abs_L, err);
      if (!have_row || err / tol > e.L_over_tol) {
        e.L_over_tol = err / tol;
        e.tol_L = tol;
        have_row = true;
      }
    }
  }
  if (non_finite_L) e.max_abs_L = e.L_over_tol = std::numeric_limits<double>::quiet_NaN();
  e.within = e.finite && e.rel_fro_O <= e.tol_O && e.L_over_tol <= 1;
  return e;
}

}  // namespace flashlab
