// action_cost.cpp — the counting model: bytes per action, FLOPs and ops per equation (docs/model.md).
#include "flashlab/executor/action_cost.hpp"

#include <initializer_list>

#include "flashlab/schedule/tensor_shape.hpp"

namespace flashlab {

bool row_equation(Eq eq) {
  return eq == Eq::init_stats || eq == Eq::finalize_v2 || eq == Eq::normalize || eq == Eq::logsumexp ||
         eq == Eq::bwd_D || eq == Eq::convert_dq || eq == Eq::zero_dq || eq == Eq::finalize_split || eq == Eq::combine;
}

int tensor_element_bytes(const Problem& p, Tensor t) { return element_bytes_of(t, p.e_in); }

Extent action_extent(const Problem& p, const Action& a, std::int64_t i, std::int64_t j) {
  const Tiling& t = p.tiling;
  if (a.op == Op::compute) {
    if (row_equation(a.eq)) {
      const std::int64_t width = a.eq == Eq::logsumexp ? 1 : t.d;
      return i >= 0 ? Extent{t.rows(i), width} : Extent{t.n_q, width};
    }
    if (a.eq == Eq::init_grads) return j >= 0 ? Extent{t.cols(j), t.d} : Extent{t.n_k, t.d};  // dK_j, dV_j
    return i >= 0 ? Extent{t.rows(i), t.cols(j)} : Extent{t.n_q, t.n_k};
  }
  const std::int64_t width = row_width(a.tensor, t.d);
  const std::int64_t rows = a.padded ? t.b_r : t.rows(i);  // a padded block: B_r rows, the last one too
  switch (a.region) {
    case Region::q_block: return {rows, width};
    case Region::kv_block: return {t.cols(j), width};
    case Region::q_block_splits: return {rows * copies(p, a.tensor), width};  // the rows of each split's copy
    case Region::whole:
      switch (tensor_shape(a.tensor).rows) {
        case RowsOf::score: return {t.n_q, t.n_k};
        case RowsOf::key: return {t.n_k, width};
        case RowsOf::query: return {t.n_q, width};
      }
      break;
    case Region::none: break;
  }
  return {0, 0};
}

namespace {

using u = std::uint64_t;
using K = OpKind;

/// n non-matmul operations of one kind.
struct Ops {
  K kind;
  u n;
};

/// The cost of `flops` matmul FLOPs and the listed operations (a kind listed twice adds up): the one
/// form every equation's rule below takes.
Cost rule(u flops, std::initializer_list<Ops> ops = {}) {
  Cost k;
  k.flops = flops;
  for (const Ops& o : ops) k.ops[int(o.kind)] += o.n;
  return k;
}

// equation_cost of the forward's fills, S = scale Q K^T, standard attention's softmax and P V (FA1
// Alg. 0) and split-KV's combine; other equations cost nothing here.
Cost forward_cost(Eq eq, u r, u c, u d) {
  switch (eq) {
    case Eq::scores:  // S = scale * Q K^T: r*c*d multiply-adds, one scaling mul per score
      return rule(2 * r * c * d, {{K::mul, r * c}});
    case Eq::softmax_dense:
      // Alg. 0 line 2, row-wise: rowmax (c-1 max), S - max (sub), exp, rowsum (c-1 add), divide
      return rule(0, {{K::max, r * (c - 1)}, {K::sub, r * c}, {K::exp, r * c}, {K::add, r * (c - 1)},
                      {K::div, r * c}});
    case Eq::output_dense: return rule(2 * r * c * d);  // O = P V
    case Eq::combine: {
      // c = splits S. Per row: mx = max_s L_s (S - 1 max); L = mx + log(sum_s exp(L_s - mx)) (S sub,
      // S exp, S - 1 add, 1 log, 1 add); the weights exp(L_s - L) (S sub, S exp). Per O element:
      // sum_s w_s O_s (S mul, S - 1 add).
      const u s = c > 0 ? c : 1;  // (c = 0: one split, nothing to merge)
      return rule(0, {{K::max, r * (s - 1)}, {K::sub, 2 * r * s}, {K::exp, 2 * r * s},
                      {K::add, r * (s - 1) + r + r * d * (s - 1)}, {K::log, r}, {K::mul, r * d * s}});
    }
    default: return {};  // the fills (none, init_stats): no arithmetic; online_softmax_cost, backward_cost
  }
}

// equation_cost of V1's and V2's online softmax and output updates (FA1 Alg. 1 lines 10-12, FA2
// Alg. 1 lines 9-13) and their epilogues; other equations cost nothing here.
Cost online_softmax_cost(Eq eq, u r, u c, u d) {
  switch (eq) {
    case Eq::softmax_v1:
      // line 10: m~ = rowmax(S): c-1 max per row; P~ = exp(S - m~): sub, exp per score;
      //          l~ = rowsum(P~): c-1 add per row
      // line 11: m_new = max(m, m~): 1 max; l_new = e^(m - m_new) l + e^(m~ - m_new) l~:
      //          2 sub, 2 exp, 2 mul, 1 add per row
      return rule(0, {{K::max, r * (c - 1)}, {K::sub, r * c}, {K::exp, r * c}, {K::add, r * (c - 1)},
                      {K::max, r}, {K::sub, 2 * r}, {K::exp, 2 * r}, {K::mul, 2 * r}, {K::add, r}});
    case Eq::output_v1:
      // line 12, term by term: per row alpha = l * e^(m - m_new) (1 mul); per O element
      // alpha*O (mul), e^(m~ - m_new) * (P~V) (mul), each term / l_new (2 div), their sum (add);
      // P~ V: 2 r c d FLOPs
      return rule(2 * r * c * d, {{K::mul, r + 2 * r * d}, {K::div, 2 * r * d}, {K::add, r * d}});
    case Eq::softmax_v2:
      // line 9: m_new = max(m_old, rowmax(S)): c max per row; P~ = exp(S - m_new): sub, exp per
      // score; l_new = e^(m_old - m_new) l_old + rowsum(P~): 1 sub, 1 exp, 1 mul, c add per row
      return rule(0, {{K::max, r * c}, {K::sub, r * c + r}, {K::exp, r * c + r}, {K::mul, r}, {K::add, r * c}});
    case Eq::output_v2:
      // line 10: O = diag(e^(m_old - m_new)) O + P~ V: 1 mul and 1 add per O element
      return rule(2 * r * c * d, {{K::mul, r * d}, {K::add, r * d}});
    case Eq::finalize_v2:
    case Eq::finalize_split:  // the same on the split's keys (its L_s,i is -inf where l_i = 0)
      // line 12: O = diag(l)^-1 O: 1 div per O element (r x d extent); line 13: L = m + log(l)
      return rule(0, {{K::div, r * d}, {K::log, r}, {K::add, r}});
    case Eq::normalize:
      // --order kv-outer --rescale delayed, once per Q block after its last step: O = diag(l)^-1 O,
      // FA2 Alg. 1 line 12's one division per O element (r x d extent)
      return rule(0, {{K::div, r * d}});
    case Eq::logsumexp:
      // --order q-outer --rescale step, once per Q block after its last step: L = m + log(l),
      // FA2 Alg. 1 line 13 (O is already normalised by every step's line 12 of FA1 Alg. 1)
      return rule(0, {{K::log, r}, {K::add, r}});
    default: return {};  // forward_cost, backward_cost
  }
}

// equation_cost of the backward pass's equations (docs/model.md "Backward pass"; FA1 Alg. 3 and 4,
// FA2 Alg. 2); other equations cost nothing here. Five matmuls per tile, 2 r c d FLOPs each:
// S = Q K^T (Eq::scores), dV += P^T dO, dP = dO V^T, dQ += dS K, dK += dS^T Q.
Cost backward_cost(Eq eq, u r, u c, u d) {
  switch (eq) {
    case Eq::convert_dq:
      // a type conversion; the deterministic form's c = nsplits slices of dQacc_i summed first
      // (flash_bwd_preprocess_kernel.h convert_dQ): c - 1 adds per element
      return rule(0, {{K::add, c > 1 ? r * d * (c - 1) : 0}});
    case Eq::bwd_D:
      // D = rowsum(dO o O) over an r x d extent: 1 mul per element, d - 1 adds per row
      return rule(0, {{K::mul, r * d}, {K::add, r * (d - 1)}});
    case Eq::probs_v1:
      // FA1 Alg. 4 line 13: P = diag(l)^-1 exp(S - m): sub, exp, div per score
      return rule(0, {{K::sub, r * c}, {K::exp, r * c}, {K::div, r * c}});
    case Eq::probs_v2:
      // FA2 Alg. 2 line 11: P = exp(S - L): sub, exp per score
      return rule(0, {{K::sub, r * c}, {K::exp, r * c}});
    case Eq::grad_s:
      // dS = scale P o (dP - D): sub, mul per score, and the softmax scale (FA1 Alg. 4 lines 20-21
      // multiply scale dS_ij once for both dQ_i and dK_j; FA2 folds it likewise)
      return rule(0, {{K::sub, r * c}, {K::mul, 2 * r * c}});
    case Eq::grad_s_dense:
      // FA1 Alg. 3 line 3: D_i = sum_l P_il dP_il (mul per score, c - 1 adds per row), then
      // dS = scale P o (dP - D): sub, two mul per score
      return rule(0, {{K::mul, 3 * r * c}, {K::add, r * (c - 1)}, {K::sub, r * c}});
    // dV += P^T dO (c x d, r deep), dP = dO V^T (r x c, d deep), dQ (+)= dS K (r x d, c deep),
    // dK (+)= dS^T Q (c x d, r deep)
    case Eq::grad_v: case Eq::grad_p: case Eq::grad_v_dense: case Eq::grad_p_dense:
    case Eq::grad_q: case Eq::grad_q_dense: case Eq::grad_k: case Eq::grad_k_dense:
      return rule(2 * r * c * d);
    default: return {};  // the fills (init_grads, zero_dq); forward_cost, online_softmax_cost
  }
}

}  // namespace

Cost equation_cost(Eq eq, std::int64_t r_, std::int64_t c_, std::int64_t d_) {
  const u r = u(r_), c = u(c_), d = u(d_);
  switch (eq) {
    case Eq::none: case Eq::init_stats: case Eq::scores: case Eq::softmax_dense: case Eq::output_dense:
    case Eq::combine:
      return forward_cost(eq, r, c, d);
    case Eq::softmax_v1: case Eq::output_v1: case Eq::softmax_v2: case Eq::output_v2: case Eq::finalize_v2:
    case Eq::finalize_split: case Eq::normalize: case Eq::logsumexp:
      return online_softmax_cost(eq, r, c, d);
    case Eq::init_grads: case Eq::zero_dq: case Eq::convert_dq: case Eq::bwd_D: case Eq::probs_v1:
    case Eq::probs_v2: case Eq::grad_v: case Eq::grad_p: case Eq::grad_v_dense: case Eq::grad_p_dense:
    case Eq::grad_s: case Eq::grad_s_dense: case Eq::grad_q: case Eq::grad_q_dense: case Eq::grad_k:
    case Eq::grad_k_dense:
      return backward_cost(eq, r, c, d);
    case Eq::stage_full: case Eq::stage_empty:  // V3's barriers, not equations
      return {};
  }
  return {};
}

Dir direction(Op op) { return op == Op::load ? Dir::read : op == Op::store ? Dir::write : Dir::atomic; }

Cost action_cost(const Problem& p, const Action& a, std::int64_t i, std::int64_t j) {
  const Extent e = action_extent(p, a, i, j);
  Cost k;
  if (a.op == Op::load || a.op == Op::store || a.op == Op::atomic) {
    // each of the action's requests (Action::requests) moves the region; a region of the K/V head
    // (Action::per_kv_head) counts its group's share in each query head's walk
    const auto bytes = std::uint64_t(e.rows) * std::uint64_t(e.cols) * std::uint64_t(tensor_element_bytes(p, a.tensor)) *
                       std::uint64_t(a.requests) / (a.per_kv_head ? std::uint64_t(p.group()) : 1);
    k.hbm[int(a.tensor)][int(direction(a.op))] = bytes;
  } else if (a.op == Op::compute) {
    // a row equation's extent is rows x d (or x 1); every other equation's is rows x cols
    if (a.eq == Eq::combine) return equation_cost(a.eq, e.rows, p.splits, p.tiling.d);  // c: the splits
    if (a.eq == Eq::convert_dq) return equation_cost(a.eq, e.rows, p.dq_splits, p.tiling.d);  // c: the slices
    if (row_equation(a.eq)) return equation_cost(a.eq, e.rows, 0, p.tiling.d);
    k = equation_cost(a.eq, e.rows, e.cols, p.tiling.d);
  }
  return k;
}

}  // namespace flashlab
