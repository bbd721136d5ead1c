// fa2_backward.cpp — what PyTorch's FA2 backward launches (`--kernel fa2 --pass backward`): V2's
// released backward as data (backward.cpp) under FA2's kernel names, with the reads FA2's main
// kernel adds (schedule.hpp make_fa2_backward_schedule; docs/model.md "Backward pass").
#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "actions.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

using namespace schedule_words;

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
  // hold the same rows, so each of them requests L_i and D_i, 8 rows (lane / 4) per request
  const auto columns = std::uint8_t(fa2_backward_traits(p.tiling.d).warp_columns());
  for (Action& a : s.launches[1].body)
    if (a.op == Op::load && (a.tensor == Tensor::L || a.tensor == Tensor::D)) {
      a.requests = columns;
      a.request_rows = 8;
    }

  // flash_bwd_preprocess_kernel.h dot_do_o: the thread with threadIdx.x % kGmemThreadsPerRow == 0
  // stores dP_sum of its row, rows of a warp consecutive: a warp's store is 32 / kGmemThreadsPerRow
  // rows x 4 bytes, 16 at 8 threads per row (half a sector; kernel_traits.h: kGmemThreadsPerRow =
  // kBlockKSmem / kGmemElemsPerLoad, kBlockKSmem = 64 when 64 divides d, else 32, 16 bytes per
  // load), and each warp's store counts a whole sector: 32 bytes for its 128 / kGmemThreadsPerRow
  const std::int64_t threads_per_row = (p.tiling.d % 64 == 0 ? 64 : 32) / (16 / p.e_in);
  const auto d_store = std::uint8_t(std::max<std::int64_t>(1, threads_per_row / 4));
  // mha_bwd allocates dQaccum and dsoftmax_sum with seqlen_q_rounded rows, and FA2's kernels move
  // whole B_r-row blocks of them without predicates: dot_do_o zeroes dQacc_i (gdQaccum, kBlockM x
  // kHeadDim) and writes D_i for all kBlockM rows; the main kernel reads dP_sum of every row of
  // its fragment (`dP_sum(mi) = gdPsum(row)`; L is read only for rows < N_q) and adds whole
  // dQ_i tiles into dQaccum; convert_dq reads whole dQacc_i tiles (it writes dQ_i predicated)
  for (Launch& l : s.launches)
    for (auto* acts : {&l.outer_begin, &l.body, &l.outer_end})
      for (Action& a : *acts) {
        if (a.tensor == Tensor::dQacc || a.tensor == Tensor::D) a.padded = true;
        if (&l == &s.launches[0] && a.op == Op::store && a.tensor == Tensor::D) a.requests = d_store;
      }

  // Grouped K/V heads: the main kernel writes dK_j, dV_j per query head into mha_bwd's dk_expanded,
  // dv_expanded ((batch, N_k, heads, d), the input type), then at::sum_out sums each group of
  // heads / kv_heads into dK, dV ((batch, N_k, kv_heads, d)): a launch for each
  if (p.kv_heads != p.heads)
    for (const auto& [name, grad] : {std::pair{"at::sum dK", Tensor::dK}, std::pair{"at::sum dV", Tensor::dV}}) {
      Launch sum = launch(name, {grid(Dim::batch), grid(Dim::head)});
      Action out = store(grad, Region::whole);
      out.per_kv_head = true;
      sum.prologue = {{load(grad, Region::whole), out}};
      sum.placement = {{grad, Memory::registers}};
      s.launches.push_back(std::move(sum));
    }
  return s;
}

}  // namespace detail
}  // namespace flashlab
