// names.hpp — the names of the contract's enums (tensor, op, equation, tile class), host only: the
// trace text form, the schedule's JSON, the counters and the reports all print with these.
#pragma once

#include <iterator>
#include <string_view>

#include "flashlab/contract/event.hpp"
#include "flashlab/contract/tiling.hpp"

namespace flashlab {

inline std::string_view to_string(Tensor t) {
  static constexpr std::string_view names[] = {"Q",  "K",  "V",  "O", "l",     "m",  "L",  "S", "P",
                                                "dO", "dQ", "dK", "dV", "D", "dQacc", "dP", "dS", "Oacc", "Lacc", "-"};
  static_assert(std::size(names) == kTensorCount + 1);
  return names[int(t)];
}

inline std::string_view to_string(Op o) {
  static constexpr std::string_view names[] = {"load", "store", "compute", "skip", "barrier", "reduce", "atomic", "arrive", "wait", "commit"};
  static_assert(std::size(names) == kOpCount);
  return names[int(o)];
}

inline std::string_view to_string(Eq e) {
  static constexpr std::string_view names[] = {"-",          "init_stats", "scores",        "softmax_v1",
                                                "output_v1",  "softmax_v2", "output_v2",     "finalize_v2",
                                                "softmax_dense", "output_dense", "normalize",   "logsumexp",
                                                "bwd_D",      "init_grads", "zero_dq",       "probs_v1",      "probs_v2",
                                                "grad_v",     "grad_p",     "grad_s",        "grad_q",
                                                "grad_k",     "convert_dq", "grad_v_dense",  "grad_p_dense",
                                                "grad_s_dense", "grad_q_dense", "grad_k_dense", "finalize_split", "combine",
                                                "stage_full", "stage_empty"};
  static_assert(std::size(names) == kEqCount);
  return names[int(e)];
}

inline std::string_view to_string(TileClass c) {
  static constexpr std::string_view names[] = {"full", "partial", "skipped"};
  return names[int(c)];
}

}  // namespace flashlab
