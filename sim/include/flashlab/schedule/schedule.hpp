// schedule.hpp — an algorithm's loop nest as data, walked by one executor (executor.hpp).
//
// Standard attention, V1 and V2 are three values of `Schedule`, not three copies of counting code:
//   prologue steps                      (V1: line 2 initialises O, l, m in HBM; standard: all of it)
//   for o in outer blocks:              (V2: Q blocks i; V1: K/V blocks j)
//     outer_begin                       (V2: load Q_i; V1: load K_j, V_j)
//     for each inner block:             (V2: K/V blocks j; V1: Q blocks i)
//       inner, on a visited tile (i, j) — or one `skip` event on a skipped one
//     outer_end                         (V2: O_i = O_i / l_i, store O_i and L_i)
//   epilogue steps
// Actions flagged `if_visited` run only when the outer block has at least one visited tile.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"

namespace flashlab {

/// What part of a tensor an action touches, for one (batch, head).
enum class Region : std::uint8_t {
  none,      // compute actions on the current tile
  whole,     // the whole tensor: N_q rows (Q O l m L), N_k rows (K V), N_q x N_k (S P)
  q_block,   // rows(i) rows of a per-query tensor (Q O l m L)
  kv_block,  // cols(j) rows of K or V
};

/// One load, store or compute of a step.
struct Action {
  Op op = Op::compute;
  Tensor tensor = Tensor::none;  // load / store
  Region region = Region::none;
  Eq eq = Eq::none;              // compute
  bool if_visited = false;       // outer-level actions: only when the outer block visits a tile
};

enum class LoopOrder : std::uint8_t {
  none,      // standard attention: no tile loop
  q_outer,   // V2 (FA2 Alg. 1): outer loop over Q blocks i, one thread block per Q block
  kv_outer,  // V1 (FA1 Alg. 1): outer loop over K/V blocks j, inner over Q blocks i
};

struct Schedule {
  Algo algo = Algo::v2;
  LoopOrder order = LoopOrder::q_outer;
  std::vector<std::vector<Action>> prologue;  // one vector per step
  std::vector<Action> outer_begin;
  std::vector<Action> inner;
  std::vector<Action> outer_end;
  std::vector<std::vector<Action>> epilogue;  // one vector per step
};

/// The schedule of p.algo (FA1 Alg. 0 / FA1 Alg. 1 / FA2 Alg. 1; line by line in docs/model.md).
Schedule make_schedule(const Problem& p);

}  // namespace flashlab
