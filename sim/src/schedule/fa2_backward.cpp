// fa2_backward.cpp — what PyTorch's FA2 backward launches (`--kernel fa2 --pass backward`): V2's
// released backward as data (backward.cpp) under FA2's kernel names, with the reads FA2's main
// kernel adds (schedule.hpp make_fa2_backward_schedule; docs/model.md "Backward pass").
#include <array>
#include <stdexcept>
#include <string_view>

#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

namespace detail {

Schedule make_fa2_backward_schedule(const Problem& p) {
  Schedule s = make_backward_schedule(Algo::v2, BackwardForm::released);
  // flash_bwd_launch_template.h run_flash_bwd_seqk_parallel: the launches in order, and the names
  // of V2's released backward they replace
  constexpr std::array<std::string_view, 3> ours = {"flash_bwd_dot_do_o", "flash_bwd_dq_dk_dv", "flash_bwd_convert_dq"};
  constexpr std::array<std::string_view, 3> fa2 = {"flash_bwd_dot_do_o_kernel", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
                                                   "flash_bwd_convert_dq_kernel"};
  if (s.launches.size() != ours.size()) throw std::logic_error("make_fa2_backward_schedule: V2's released backward changed");
  for (std::size_t k = 0; k < ours.size(); ++k) {
    if (s.launches[k].name != ours[k]) throw std::logic_error("make_fa2_backward_schedule: expected launch " + std::string(ours[k]));
    s.launches[k].name = std::string(fa2[k]);
  }
  // flash_bwd_kernel.h compute_dq_dk_dv_1colblock: every thread reads L and D of the rows its
  // accumulator fragment holds, once per Q block; the warps side by side along the keys of S_ij
  // hold the same rows, so each of them requests L_i and D_i
  const auto columns = std::uint8_t(fa2_backward_traits(p.tiling.d).warp_columns());
  for (Action& a : s.launches[1].body)
    if (a.op == Op::load && (a.tensor == Tensor::L || a.tensor == Tensor::D)) a.requests = columns;
  return s;
}

}  // namespace detail
}  // namespace flashlab
