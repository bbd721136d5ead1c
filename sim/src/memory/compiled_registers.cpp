// compiled_registers.cpp — registers per thread of the compiled kernel instances (compiled_registers.hpp).
#include "flashlab/memory/compiled_registers.hpp"

#include <string>

namespace flashlab {
namespace {

struct Instance {
  std::string_view kernel;
  Dtype dtype;
  std::int64_t d, b_r, b_c, warps, registers;
};

constexpr Instance kInstances[] = {
#include "compiled_registers_table.inc"
};

}  // namespace

std::string_view compiled_kernel(const Problem& p, const Launch& l) {
  if (p.kernel == Kernel::fa2) return "";
  const std::string& n = l.name;
  if (n == "standard_scores") return "fl_standard_scores";
  if (n == "standard_output") return "fl_standard_output";
  // kernels/src/v1.cu's kernels take RowShape<Instance, split-K warps, O_i on chip (the Q outer order)>
  const bool on_chip = p.order == LoopOrder::q_outer;
  if (n == "flash_normalize")
    return p.split == WarpSplit::split_k ? (on_chip ? "fl_row_normalize/split-k/on-chip" : "fl_row_normalize/split-k/hbm")
                                         : (on_chip ? "fl_row_normalize/split-q/on-chip" : "fl_row_normalize/split-q/hbm");
  if (n == "v2_forward_split") return "fl_v2_forward_split";
  if (n == "flash_combine") return "fl_v2_combine";
  if (n == "flash_bwd_dot_do_o") return "fl_v2_bwd_dot_do_o";
  if (n == "flash_bwd_dq_dk_dv") return "fl_v2_bwd_dq_dk_dv";
  if (n == "flash_bwd_convert_dq") return "fl_v2_bwd_convert_dq";
  if (n == "v1_backward") return "fl_v1_backward";
  if (n == "v2_forward" || n == "v1_forward" || n == "flash_forward") {
    if (p.split != WarpSplit::split_q || !on_chip)
      return p.split == WarpSplit::split_k ? (on_chip ? "fl_row_forward/split-k/on-chip" : "fl_row_forward/split-k/hbm")
                                           : "fl_row_forward/split-q/hbm";
    return p.grid == GridKind::head || p.rescale == Rescale::step ? "fl_v2_variant" : "fl_v2_forward";
  }
  return "";
}

std::optional<std::int64_t> compiled_registers(const Problem& p, const Launch& l) {
  const std::string_view k = compiled_kernel(p, l);
  if (k.empty()) return std::nullopt;
  const Tiling& t = p.tiling;
  for (const Instance& x : kInstances)
    if (x.kernel == k && x.dtype == p.dtype && x.d == t.d && x.b_r == t.b_r && x.b_c == t.b_c && x.warps == p.warps)
      return x.registers;
  return std::nullopt;
}

}  // namespace flashlab
