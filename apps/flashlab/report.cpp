// report.cpp — the configuration line (report.hpp).
#include "report.hpp"

#include <fmt/format.h>

#include "flashlab/report/format.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab::cli {

std::string shape_line(const Problem& p) {
  const Tiling& t = p.tiling;
  return fmt::format(
      "N_q = {}, N_k = {}, d = {}; B_r = {}, B_c = {} -> T_r = {}, T_c = {}; mask {}; {}; batch {}, heads {}; "
      "SRAM M = {}; GPU {}",
      t.n_q, t.n_k, t.d, t.b_r, t.b_c, t.t_r(), t.t_c(), to_string(p.mask), to_string(p.dtype), p.batch, p.heads,
      report::bytes_both(std::uint64_t(p.sram_capacity)), p.gpu.name);
}

std::string config_line(const Problem& p) {
  std::string line = fmt::format("{}: {}; block skip {}", to_string(p.algo), shape_line(p), p.block_skip ? "on" : "off");
  // a variant between V1 and V2 (docs/model.md "Variants"): the switches beyond block skip
  Switches same = p.switches();
  same.block_skip = preset_switches(p.algo).block_skip;
  if (p.algo != Algo::standard && !(same == preset_switches(p.algo)))
    line += fmt::format("; order {}, grid {}, rescale {}, warp split {}", to_string(p.order), to_string(p.grid),
                        to_string(p.rescale), to_string(p.split));
  if (p.backward())
    line += fmt::format("; pass {}{}", to_string(p.pass),
                        p.algo == Algo::v2 ? fmt::format(" ({} form)", to_string(p.backward_form)) : "");
  if (p.algo == Algo::v3) {  // V3's switches (docs/model.md "V3")
    const HopperSwitches& h = p.hopper;
    line += fmt::format("; {} warps ({} consumer warpgroup{}{}), {} stage{}, ping-pong {}, intra-warpgroup overlap {}, "
                        "{} scheduler",
                        p.warps, p.consumer_groups(), p.consumer_groups() == 1 ? "" : "s",
                        h.warp_specialize ? " and a producer" : ", no producer",
                        h.stages, h.stages == 1 ? "" : "s", h.pingpong ? "on" : "off", h.intra_overlap ? "on" : "off",
                        to_string(h.scheduler));
  }
  if (p.splits > 1) line += fmt::format("; split-KV, {} splits of {} K/V blocks", p.splits, split_range(p, 0).end);
  if (p.kernel == Kernel::fa2)
    line += p.folded ? fmt::format("; kernel fa2 (decode: the {} query heads of each K/V head folded into rows)", p.tiling.n_q)
                     : std::string("; kernel fa2");
  return line;
}

}  // namespace flashlab::cli
