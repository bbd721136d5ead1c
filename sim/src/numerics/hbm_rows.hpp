// hbm_rows.hpp — which rows of an HBM tensor an action touches (internal to sim/src/numerics).
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/tensor_shape.hpp"

namespace flashlab::numerics_detail {

/// Rows [first, first + count) of a tensor.
struct Rows {
  std::int64_t first = 0, count = 0;
};

/// The rows action a touches in step s: Q block i's (of every split's copy for q_block_splits),
/// K/V block j's, or all of them (N_k for a per-key tensor, N_q otherwise).
inline Rows action_rows(const Problem& p, const Action& a, const StepView& s) {
  const Tiling& t = p.tiling;
  switch (a.region) {
    case Region::q_block:
    case Region::q_block_splits: return {s.i * t.b_r, t.rows(s.i)};  // in one split's copy, or in each
    case Region::kv_block: return {s.j * t.b_c, t.cols(s.j)};
    case Region::whole:
    case Region::none: break;
  }
  return {0, per_key(a.tensor) ? t.n_k : t.n_q};
}

}  // namespace flashlab::numerics_detail
