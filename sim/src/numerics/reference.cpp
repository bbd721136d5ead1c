// reference.cpp — the float64 dense reference, the error measures and their tolerances.
//
// Tolerances. With u the unit roundoff of the input type (fp16 2^-11 = 4.9e-4, bf16 2^-8 =
// 3.9e-3, fp32 2^-24 = 6.0e-8), the result differs from the float64 reference on the same
// (already rounded) inputs through:
//   (a) the store of O at the dtype: relative error <= u per element, RMS about u/sqrt(3), so
//       about 0.6 u of rel_fro_O;
//   (b) P~ cast to the dtype before P~ V: each weight off by <= u relative, again about 0.6 u;
//   (c) standard attention also stores S and P at the dtype: |dS| <= u |S| shifts P by about
//       u |S| relative (|S| ~ 1 for N(0, 1) inputs at scale 1/sqrt(d)), P's store adds 0.6 u;
//   (d) V1 rounds O_i at each of its T_c stores; the error of store k is scaled by the share of
//       the row's softmax mass seen by then (k / T_c for even mass), so the RMS sum is about
//       0.6 u sqrt(T_c / 3), which stays under 3.5 u for T_c <= 100;
//   (e) fp32 accumulation: S over d terms and P~ V over N_k terms, about sqrt(N_k) 2^-24 RMS.
// tolerance(): 4 u for fp16 and bf16 (2e-3, 1.6e-2): (a) + (b) + (c) or (a) + (b) + (d) with
// room; fp32: 1e-5 = 168 u, (e) for N_k up to 2^20 keys.
// tolerance_L(): L = m + ln l with m, l in fp32 from fp32 S for V1 and V2, whatever the dtype:
// |dL| <= |m| 2^-23 + (ln l's relative error, ~sqrt(N_k) 2^-24) — 1e-4 covers |S| up to ~100.
// Standard attention takes m and l from S stored at the dtype: |dL| <= u max|S|; 16 u more
// covers |S| <= 16.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab {
namespace {

constexpr double kInfD = std::numeric_limits<double>::infinity();

double unit_roundoff(Dtype t) {
  switch (t) {
    case Dtype::fp16: return 0x1.0p-11;
    case Dtype::bf16: return 0x1.0p-8;
    case Dtype::fp32: return 0x1.0p-24;
  }
  return 0x1.0p-24;
}

}  // namespace

double tolerance(Dtype t) {
  switch (t) {
    case Dtype::fp16: return 2e-3;
    case Dtype::bf16: return 1.6e-2;
    case Dtype::fp32: return 1e-5;
  }
  return 1e-5;
}

double tolerance_L(Dtype t, Algo a) { return 1e-4 + (a == Algo::standard ? 16 * unit_roundoff(t) : 0.0); }

Reference reference(const Problem& p, const Inputs& in) {
  const Tiling& t = p.tiling;
  const MatrixD K = in.K.cast<double>(), V = in.V.cast<double>();
  Reference ref{MatrixD::Zero(t.n_q, t.d), Eigen::VectorXd::Constant(t.n_q, kInfD), p.dtype};
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

NumericError compare(const NumericResult& r, const Reference& ref, Algo algo) {
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
  bool non_finite_L = false;  // a non-finite L where the reference is finite: no error to report
  for (Eigen::Index k = 0; k < ref.L.size(); ++k) {
    const double got = r.L[k], want = ref.L[k];
    if (std::isinf(want)) {
      e.finite = e.finite && got == kInfD;
    } else if (!std::isfinite(got)) {
      e.finite = false;
      non_finite_L = true;
    } else {
      e.max_abs_L = std::max(e.max_abs_L, std::abs(got - want));
    }
  }
  if (non_finite_L) e.max_abs_L = std::numeric_limits<double>::quiet_NaN();
  e.within = e.finite && e.rel_fro_O <= tolerance(ref.dtype) && e.max_abs_L <= tolerance_L(ref.dtype, algo);
  return e;
}

}  // namespace flashlab
