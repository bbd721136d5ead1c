// smem_wavefronts.cpp — the time model's shared-memory unit: a step's shared-memory wavefronts
// (smem_wavefronts.hpp), and the backward's warp layout they depend on (grad_layout, time_model.hpp).
#include "smem_wavefronts.hpp"

#include <algorithm>
#include <cmath>

#include "flashlab/executor/action_cost.hpp"
#include "flashlab/memory/occupancy.hpp"
#include "flashlab/time/time_model.hpp"
#include "sm_facts.hpp"

namespace flashlab::time_detail {
namespace {

constexpr double kWavefrontBytes = 128;  // one shared-memory wavefront: 32 banks of 4 bytes
constexpr double kPartialBytes = 4;  // fp32 partials of P~ V

bool softmax_row(const Launch& l) {
  const auto softmax = [](const std::vector<Action>& v) {
    return std::any_of(v.begin(), v.end(), [](const Action& a) { return a.op == Op::compute && a.eq == Eq::softmax_dense; });
  };
  return row_launch(l) && (softmax(l.body) || std::any_of(l.prologue.begin(), l.prologue.end(), softmax));
}

// Shared-memory bytes the warps read as matmul operands for equation `eq` on an r x c tile:
// split-Q warps each read all of K_j (S = QK^T) and V_j (O += PV) and their own rows of Q_i (and of
// P when P is in SRAM); split-K warps each read all of Q_i, their columns of K_j and V_j, and
// their columns of P (in SRAM).
double operand_bytes(const Problem& p, const Launch& l, Eq eq, double r, double c, bool split_k) {
  const double d = double(p.tiling.d), e = double(p.e_in), w = double(p.warps);
  const bool p_in_sram = placement_of(l, Tensor::P) == Memory::sram || placement_of(l, Tensor::S) == Memory::sram;
  switch (eq) {
    case Eq::scores: return (split_k ? w * r * d + c * d : r * d + w * c * d) * e;
    case Eq::output_v1: case Eq::output_v2: case Eq::output_dense:
      return (split_k ? c * d : w * c * d) * e + (p_in_sram ? r * c * e : 0.0);
    default: return 0;
  }
}

// Shared-memory bytes the warps move for backward equation `eq` on an r x c tile with layout g
// (grad_layout): S = Q_i K_j^T and dP = dO_i V_j^T on a grid of s_rows x (W / s_rows) warps, each
// reading its rows of Q_i (or dO_i) and its keys of K_j (or V_j), the keys once per chunk of
// q_chunk queries; dV_j += P^T dO_i and dK_j += dS^T Q_i on kv_rows x (W / kv_rows) warps (its keys
// of P^T or dS^T where they are in SRAM, its columns of dO_i or Q_i); P and dS written to SRAM (dS
// only where P stays in registers); dQ_i = dS_ij K_j on dq_rows x (W / dq_rows) warps.
double grad_operand_bytes(const Problem& p, const GradLayout& g, Eq eq, double r, double c) {
  const double d = double(p.tiling.d), e = double(p.e_in), w = double(p.warps);
  const double chunks = std::ceil(r / double(std::max<std::int64_t>(1, g.q_chunk)));
  switch (eq) {
    case Eq::scores: case Eq::grad_p: return (w / double(g.s_rows) * r + double(g.s_rows) * c * chunks) * d * e;
    case Eq::grad_v: case Eq::grad_k:
      return (double(g.kv_rows) * r * d + (g.p_in_sram ? w / double(g.kv_rows) * c * r : 0.0)) * e;
    case Eq::grad_s: return (g.p_in_sram ? 2.0 : 1.0) * r * c * e;
    case Eq::grad_q: return (w / double(g.dq_rows) * r * c + double(g.dq_rows) * c * d) * e;
    default: return 0;
  }
}

}  // namespace

bool grad_tiles(const Launch& l) {
  return std::any_of(l.body.begin(), l.body.end(), [](const Action& a) { return a.op == Op::compute && a.eq == Eq::grad_k; });
}

double step_smem_bytes(const Problem& p, const Launch& l, const StepView& s, bool tiles, double warp_bytes) {
  if (const double row_bytes = softmax_row_smem_bytes(p, l); row_bytes > 0) return row_bytes * double(p.tiling.n_q);
  const Tiling& t = p.tiling;
  const bool split_k = tiles && p.split == WarpSplit::split_k;
  double smem = warp_bytes;
  for (const Action& a : s.actions) {
    if (a.op == Op::compute) {
      const Extent x = action_extent(p, a, s.i, s.j);
      if (tiles && grad_tiles(l)) {
        smem += grad_operand_bytes(p, grad_layout(p), a.eq, double(x.rows), double(x.cols));
      } else if (tiles || s.i >= 0) {
        smem += operand_bytes(p, l, a.eq, double(x.rows), double(x.cols), split_k);
        if (tiles && (a.eq == Eq::output_v1 || a.eq == Eq::output_v2))
          smem += split_k_reduction_conflict_bytes(p, x.rows) + split_q_row_update_bytes(p, x.rows);
      } else {  // a whole-matrix step: its B_r x B_c tiles
        smem += double(t.t_r() * t.t_c()) * operand_bytes(p, l, a.eq, double(t.b_r), double(t.b_c), false);
      }
    } else if ((a.op == Op::store || a.op == Op::atomic) && placement_of(l, a.tensor) == Memory::sram) {
      smem += 2 * double(action_cost(p, a, s.i, s.j).hbm[int(a.tensor)][int(direction(a.op))]);
    }
  }
  return smem;
}

double softmax_row_smem_bytes(const Problem& p, const Launch& l) {
  if (!softmax_row(l)) return 0;
  const double row = double((p.tiling.n_k + 7) / 8 * 8);
  const double load_row = 8.0 / kLanes;          // scalar fp32 stores, 8 lanes per bank
  const double exp_row = 2.0 / kLanes;           // one load and one store per element, conflict-free
  const double store_row = 8.0 / (4 * kLanes);   // two 16-byte loads per lane, lanes 32 bytes apart
  // the two block reductions: each warp stores its value (one wavefront), then reads the warps'
  // values back as one broadcast load (one): 2 x 4 x 2 wavefronts a row
  constexpr double kReductions = 2 * 4 * 2;
  return ((load_row + exp_row + store_row) * row + kReductions) * kWavefrontBytes;
}

double split_k_reduction_conflict_bytes(const Problem& p, std::int64_t rows) {
  if (p.split != WarpSplit::split_k || p.warps <= 1) return 0;
  const double w = double(p.warps), r = double(rows);
  const double pv_conflict = kPartialBytes * w * r * double(p.tiling.d);
  const double row_groups = std::ceil(r / 8);  // stores and loads of 8 rows, a wavefront each
  const double stat_stores = 2 * w * (row_groups * kWavefrontBytes - r * kPartialBytes);
  const double max_loads = w * w * (row_groups * kWavefrontBytes - r * kPartialBytes);
  return pv_conflict + stat_stores + max_loads;
}

double split_q_row_update_bytes(const Problem& p, std::int64_t rows) {
  if (p.split != WarpSplit::split_q || p.order != LoopOrder::kv_outer || p.backward()) return 0;
  return 3 * kPartialBytes * double(rows) * double(p.tiling.d);
}

}  // namespace flashlab::time_detail

namespace flashlab {

GradLayout grad_layout(const Problem& p) {
  const std::int64_t br = p.tiling.b_r, d = p.tiling.d, w = p.warps;
  if (p.kernel == Kernel::fa2) {
    const Fa2BackwardTraits t = fa2_backward_traits(d);
    return {.s_rows = t.atom_m_sdp, .q_chunk = br, .kv_rows = 4, .dq_rows = t.atom_m_sdp, .p_in_sram = true};
  }
  // kernels/src/tiles.hpp backward_dq_row_groups: groups of 32 rows, else 16, such that the W / groups
  // warps of a group split d into multiples of 16
  std::int64_t groups = 0;
  for (std::int64_t rows : {32, 16}) {
    const std::int64_t m = br / rows;
    if (m >= 1 && br % rows == 0 && w % m == 0 && d % (w / m) == 0 && (d / (w / m)) % 16 == 0) {
      groups = m;
      break;
    }
  }
  groups = std::max<std::int64_t>(1, groups);
  if (p.algo == Algo::v2) {
    // grad_grid.cuh GridShape: B_c / 32 groups of 32 keys, the warps of a group along B_r for S^T and
    // dP^T (one pass over the queries) and along d for dK_j, dV_j; P^T and dS^T through SRAM
    const std::int64_t key_groups = std::max<std::int64_t>(1, std::min(w, p.tiling.b_c / 32));
    return {.s_rows = std::max<std::int64_t>(1, w / key_groups), .q_chunk = br, .kv_rows = key_groups,
            .dq_rows = groups, .p_in_sram = true};
  }
  // grad_tile.cuh GradShape kQC (V1's kernel): 16 queries up to d = 64; at d = 128 32 where a warp's
  // dQ columns are at most 32, else 16
  const std::int64_t dq_cols = d / std::max<std::int64_t>(1, w / groups);
  const std::int64_t chunk = d <= 64 ? 16 : dq_cols <= 32 ? 32 : 16;
  return {.s_rows = 1, .q_chunk = std::min(br, chunk), .kv_rows = w, .dq_rows = groups, .p_in_sram = false};
}

}  // namespace flashlab
