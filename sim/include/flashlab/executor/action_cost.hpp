// action_cost.hpp — what one action costs: HBM bytes, matmul FLOPs and non-matmul ops (the counting
// model of docs/model.md, one rule per algorithm line).
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// Rows x cols (elements) of the region an action touches on tile (i, j) (-1 where unused):
/// Q_i, O_i: rows(i) x d; l_i, m_i, L_i: rows(i) x 1 (B_r rows for a padded action:
/// Action::padded); row equations (row_equation) rows(i) x d,
/// logsumexp rows(i) x 1; K_j, V_j: cols(j) x d; whole tensors:
/// N_q x d, N_k x d, N_q x 1 or N_q x N_k; compute actions: the tile, rows(i) x cols(j)
/// (N_q x N_k for standard attention's whole-matrix steps).
struct Extent {
  std::int64_t rows = 0, cols = 0;
};
Extent action_extent(const Problem& p, const Action& a, std::int64_t i, std::int64_t j);

/// Whether `eq` works on whole rows of O_i rather than on a tile S_ij: init_stats, finalize_v2,
/// normalize, bwd_D, zero_dq, convert_dq (extent rows(i) x d) and logsumexp (rows(i) x 1); equation_cost
/// takes c = 0 for them. init_grads's extent is cols(j) x d (dK_j, dV_j; N_k x d in a prologue).
bool row_equation(Eq eq);

/// Bytes per element of tensor t: 4 for the fp32 tensors l m L D dQacc, e_in for the others
/// (tensor_shape.hpp).
int tensor_element_bytes(const Problem& p, Tensor t);

/// The direction a data action's bytes count in: load read, store write, atomic atomic.
Dir direction(Op op);

/// The cost of one action on tile (i, j) for one (batch, head): a data action moves its extent
/// Action::requests times, 1 / group of it for a region of the K/V head (Action::per_kv_head).
Cost action_cost(const Problem& p, const Action& a, std::int64_t i, std::int64_t j);

/// Non-matmul ops and matmul FLOPs of equation `eq` on an r x c tile with head dim d
/// (docs/model.md lists each rule beside its algorithm line).
Cost equation_cost(Eq eq, std::int64_t r, std::int64_t c, std::int64_t d);

}  // namespace flashlab
