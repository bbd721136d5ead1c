// grad_steps.cpp — the backward's equations on resident tiles (grad_steps.hpp).
#include "grad_steps.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "flashlab/schedule/schedule.hpp"  // copies
#include "hbm_rows.hpp"
#include "tile_math.hpp"

namespace flashlab {
namespace {

using numerics_detail::action_rows;
using numerics_detail::Rows;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

MatrixF rounded(Dtype t, const MatrixF& x) {
  MatrixF y = x;
  round_to_dtype(t, y);
  return y;
}

}  // namespace

struct GradSteps::State {
  Problem p;
  const Inputs& in;
  ForwardHbm fwd;
  // HBM (one (batch, head)); NaN until written, so a row the schedule never writes shows up
  MatrixF dQ, dK, dV, dP, dS;  // dP, dS (N_q, N_k): allocated by their first store
  std::vector<MatrixF> dQacc;  // (N_q, d) fp32 per slice: one, or the deterministic form's nsplits
  Eigen::VectorXf D;
  bool D_stored = false;
  // on chip
  tile_math::Chip f;          // Q_i (sram_Qi), K_j, V_j, S_ij then P_ij (sram_S), the mask's keys
  MatrixF O, dO, dQi, dQ_add;  // (rows, d): O_i, dO_i, dQ_i (or dQacc_i), the last scale dS K_j
  MatrixF dKj, dVj;           // (cols, d) accumulators
  MatrixF grad;               // (rows, cols): dP_ij, then dS_ij in place
  Eigen::VectorXf l, m, L, Di;
  bool dq_loaded = false;     // this step loaded dQ_i: grad_q adds to it (V1, the paper's V2)

  State(const Problem& p_, const Inputs& in_, ForwardHbm f_) : p(p_), in(in_), fwd(std::move(f_)) {
    const Tiling& t = p.tiling;
    dQ.setConstant(t.n_q, t.d, kNaN);
    dQacc.assign(std::size_t(copies(p, Tensor::dQacc)), MatrixF::Constant(t.n_q, t.d, kNaN));
    dK.setConstant(t.n_k, t.d, kNaN);
    dV.setConstant(t.n_k, t.d, kNaN);
    D.setConstant(t.n_q, kNaN);
  }

  // The slice of dQacc a step's thread block adds into: its split's (the deterministic form), else the one.
  MatrixF& slice(const StepView& s) { return dQacc[std::size_t(std::max<std::int64_t>(s.split, 0))]; }

  void load(const Action& a, const StepView& s) {
    const Rows r = action_rows(p, a, s);
    switch (a.tensor) {
      case Tensor::Q: f.r0 = r.first; f.sram_Qi = in.Q.middleRows(r.first, r.count); break;
      case Tensor::K: f.c0 = r.first; f.sram_Kj = in.K.middleRows(r.first, r.count); break;
      case Tensor::V: f.sram_Vj = in.V.middleRows(r.first, r.count); break;
      case Tensor::O: O = fwd.O.middleRows(r.first, r.count); break;
      case Tensor::dO: dO = in.dO.middleRows(r.first, r.count); break;
      case Tensor::dQ: dQi = dQ.middleRows(r.first, r.count); dq_loaded = true; break;
      case Tensor::dQacc:
        if (a.region == Region::q_block_splits) {
          // the convert of the deterministic form: slice 0, then + slice 1, ... in that order
          // (flash_bwd_preprocess_kernel.h convert_dQ), so dQ_i is one fixed sum
          dQi.setZero(r.count, p.tiling.d);
          for (const MatrixF& slice : dQacc) dQi += slice.middleRows(r.first, r.count);
        } else {
          dQi = slice(s).middleRows(r.first, r.count);
        }
        break;
      case Tensor::l: l = fwd.l.segment(r.first, r.count); break;
      case Tensor::m: m = fwd.m.segment(r.first, r.count); break;
      case Tensor::L: L = fwd.L.segment(r.first, r.count); break;
      case Tensor::D: Di = D.segment(r.first, r.count); break;
      case Tensor::P: f.sram_S = fwd.P; break;   // standard: the whole (N_q, N_k) matrix
      case Tensor::dP: grad = dP; break;
      case Tensor::dS: grad = dS; break;
      default: throw std::logic_error("numerics: a backward launch loads " + std::string(to_string(a.tensor)));
    }
  }

  void store(const Action& a, const StepView& s) {
    const Rows r = action_rows(p, a, s);
    const auto put = [&](MatrixF& hbm, const MatrixF& chip, bool round) {
      hbm.middleRows(r.first, r.count) = chip;
      if (round) round_to_dtype(p.dtype, hbm.middleRows(r.first, r.count));
    };
    switch (a.tensor) {
      case Tensor::dQ: put(dQ, dQi, true); break;
      case Tensor::dQacc:  // fp32; q_block_splits: every slice (the deterministic form's zeroing)
        if (a.region == Region::q_block_splits) {
          for (MatrixF& x : dQacc) x.middleRows(r.first, r.count) = dQi;
        } else {
          put(slice(s), dQi, false);
        }
        break;
      case Tensor::dK: put(dK, dKj, true); break;
      case Tensor::dV: put(dV, dVj, true); break;
      case Tensor::D: D.segment(r.first, r.count) = Di; D_stored = true; break;
      case Tensor::dP: dP = rounded(p.dtype, grad); break;
      case Tensor::dS: dS = rounded(p.dtype, grad); break;
      default: throw std::logic_error("numerics: a backward launch stores " + std::string(to_string(a.tensor)));
    }
  }

  void compute(const Action& a, const StepView& s) {
    const Tiling& t = p.tiling;
    const float scale = float(p.scale);
    MatrixF& P = f.sram_S;
    switch (a.eq) {
      case Eq::zero_dq: dQi.setZero(s.i >= 0 ? t.rows(s.i) : t.n_q, t.d); break;
      case Eq::init_grads:
        dKj.setZero(s.j >= 0 ? t.cols(s.j) : t.n_k, t.d);
        dVj.setZero(dKj.rows(), t.d);
        break;
      case Eq::bwd_D: Di = dO.cwiseProduct(O).rowwise().sum(); break;
      case Eq::scores: tile_math::scores(f, p.scale, p.band, s.cls == TileClass::full); break;
      case Eq::probs_v1: {
        // FA1 Alg. 4 line 13: P = diag(l)^-1 exp(S - m); rows with no visible key stay 0
        Eigen::VectorXf sum;
        tile_math::exp_rows(P, f.keys, tile_math::finite_or_zero(m), sum);
        for (Eigen::Index r = 0; r < P.rows(); ++r)
          if (l[r] > 0) P.row(r) /= l[r];
        break;
      }
      case Eq::probs_v2: {
        Eigen::VectorXf sum;  // FA2 Alg. 2 line 11: P = exp(S - L)
        tile_math::exp_rows(P, f.keys, tile_math::finite_or_zero(L), sum);
        break;
      }
      case Eq::grad_v: dVj.noalias() += rounded(p.dtype, P).transpose() * dO; break;
      case Eq::grad_p: grad.noalias() = dO * f.sram_Vj.transpose(); break;
      case Eq::grad_s: grad = scale * P.cwiseProduct(grad.colwise() - Di); break;  // scale folded into dS
      case Eq::grad_q:
        dQ_add.noalias() = rounded(p.dtype, grad) * f.sram_Kj;
        if (dq_loaded) dQi += dQ_add;
        break;
      case Eq::grad_k: dKj.noalias() += rounded(p.dtype, grad).transpose() * f.sram_Qi; break;
      case Eq::convert_dq: break;  // dQacc_i is on chip as dQi; its store rounds it to the dtype
      // standard attention (FA1 Alg. 3), whole matrices; P, dP and dS as stored at the dtype
      case Eq::grad_v_dense: dVj.noalias() = P.transpose() * dO; break;
      case Eq::grad_p_dense: grad.noalias() = dO * f.sram_Vj.transpose(); break;
      case Eq::grad_s_dense: {
        const Eigen::VectorXf d_row = P.cwiseProduct(grad).rowwise().sum();  // sum_l P_il dP_il
        grad = scale * P.cwiseProduct(grad.colwise() - d_row);
        break;
      }
      case Eq::grad_q_dense: dQi.noalias() = grad * f.sram_Kj; break;
      case Eq::grad_k_dense: dKj.noalias() = grad.transpose() * f.sram_Qi; break;
      default: throw std::logic_error("numerics: a backward launch computes " + std::string(to_string(a.eq)));
    }
  }
};

GradSteps::GradSteps(const Problem& p, const Inputs& in, ForwardHbm fwd)
    : st_(std::make_unique<State>(p, in, std::move(fwd))) {}

GradSteps::~GradSteps() = default;

void GradSteps::on_step(const StepView& s) {
  State& st = *st_;
  st.dq_loaded = false;
  for (const Action& a : s.actions) {
    switch (a.op) {
      case Op::load: st.load(a, s); break;
      case Op::store: st.store(a, s); break;
      case Op::atomic: {  // dQacc_i += scale dS_ij K_j
        const Rows r = action_rows(st.p, a, s);
        st.slice(s).middleRows(r.first, r.count) += st.dQ_add;  // slice s of the deterministic form
        break;
      }
      case Op::compute: st.compute(a, s); break;
      case Op::skip: case Op::barrier: case Op::reduce: break;
      case Op::arrive: case Op::wait: case Op::commit: break;  // V3's forward only
    }
  }
}

void GradSteps::fill(NumericResult& r) const {
  const State& st = *st_;
  r.dQ = st.dQ;
  r.dK = st.dK;
  r.dV = st.dV;
  // D as V2 stored it; V1 and standard attention keep it on chip: rowsum(dO o O) of the stored O
  r.D = st.D_stored ? st.D : Eigen::VectorXf(st.in.dO.cwiseProduct(st.fwd.O).rowwise().sum());
}

}  // namespace flashlab
