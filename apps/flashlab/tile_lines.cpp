// tile_lines.cpp — the tiles of compare's algorithms and of explain's walks (tile_lines.hpp).
#include "tile_lines.hpp"

#include <fmt/format.h>

#include "flashlab/config/reference_tile.hpp"
#include "flashlab/report/format.hpp"

namespace flashlab::cli {
namespace {

std::uint64_t integer(std::string_view key, const report::Figures& f) { return report::value_of(key, f).integer; }

std::string algo_name(Algo a) { return a == Algo::standard ? "standard" : a == Algo::v1 ? "V1" : "V2"; }

std::string grid_text(const report::Figures& f) {
  const std::string blocks = report::group_digits(integer("grid_blocks", f));
  if (f.problem.algo == Algo::standard) return fmt::format("grid {} in its launches", blocks);
  return fmt::format("grid {}, one thread block per {}", blocks,
                     f.problem.grid == GridKind::head ? "(batch, head)" : "(batch, head, Q block)");
}

}  // namespace

std::string problem_line(const Problem& p) {
  const Tiling& t = p.tiling;
  return fmt::format("N_q = {}, N_k = {}, d = {}; mask {}; {}; batch {}, heads {}; SRAM M = {}; GPU {}", t.n_q, t.n_k,
                     t.d, to_string(p.mask), to_string(p.dtype), p.batch, p.heads,
                     report::bytes_both(std::uint64_t(p.sram_capacity)), p.gpu.name);
}

std::string tile_source(const Config& c) {
  std::vector<std::string> given, preset;
  (c.b_r ? given : preset).push_back("B_r");
  (c.b_c ? given : preset).push_back("B_c");
  (c.warps ? given : preset).push_back("warps");
  const auto names = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t k = 0; k < v.size(); ++k) s += (k == 0 ? "" : k + 1 == v.size() ? " and " : ", ") + v[k];
    return s;
  };
  if (c.auto_blocks) return "B_r x B_c by the V1 paper's rule (--br/--bc auto), warps " + std::string(c.warps ? "as given" : "by default");
  if (preset.empty()) return "as given";
  if (given.empty()) return "the default tile for d";
  return names(given) + " as given, " + names(preset) + " by default";
}

std::string tile_lines(const std::vector<report::Figures>& cols, bool reference, const Config& c) {
  std::string out = reference ? "tiles B_r x B_c x warps (each algorithm on its reference kernel's):\n"
                              : "tiles B_r x B_c x warps (" + tile_source(c) + ", the same for all three):\n";
  for (const report::Figures& f : cols) {
    const Problem& p = f.problem;
    const Tiling& t = p.tiling;
    out += fmt::format("  {:<9}{:>4} x {:<4}x {}  T_r = {}, T_c = {}; {}", algo_name(p.algo), t.b_r, t.b_c, p.warps,
                       t.t_r(), t.t_c(), grid_text(f));
    if (reference) {
      const ReferenceTile r = reference_tile(p.algo, t.d);
      out += fmt::format("; {}: {}", r.kernel, r.why);
    }
    out += "\n";
  }
  return out;
}

std::string walk_tile_line(const Problem& p, bool reference) {
  const Tiling& t = p.tiling;
  std::string line = fmt::format("every step on one tile, B_r x B_c x warps = {} x {} x {}, T_r = {}, T_c = {}", t.b_r,
                                 t.b_c, p.warps, t.t_r(), t.t_c());
  if (!reference) return line + " (as given)\n";
  const ReferenceTile v2 = reference_tile(Algo::v2, t.d), v1 = reference_tile(Algo::v1, t.d);
  return line + fmt::format(": {} ({}), so that each step changes its switch only; {} runs {} x {} x {} ({}): "
                            "flashlab compare puts each algorithm on its own\n",
                            v2.why, v2.kernel, v1.kernel, v1.b_r, v1.b_c, v1.warps, v1.why);
}

std::string hopper_walk_tile_lines(const Problem& v2, const Problem& v3_off, const Problem& fa3, bool reference) {
  const Tiling &t2 = v2.tiling, &t3 = fa3.tiling;
  std::string out = fmt::format("V2 on B_r x B_c x warps = {} x {} x {}, T_r = {}, T_c = {}", t2.b_r, t2.b_c, v2.warps,
                                t2.t_r(), t2.t_c());
  if (reference) {
    const ReferenceTile r = reference_tile(Algo::v2, t2.d);
    out += fmt::format(": {} ({})", r.why, r.kernel);
  }
  out += fmt::format("\nV3 on B_r x B_c = {} x {}, T_r = {}, T_c = {}", t3.b_r, t3.b_c, t3.t_r(), t3.t_c());
  out += reference ? fmt::format(": FA3's tile for d = {} with mask {} (hopper/tile_size.h)", t3.d, to_string(fa3.mask))
                   : std::string(" (as given)");
  const std::int64_t groups = fa3.consumer_groups();
  out += fmt::format("; {} consumer warpgroup{} of 64 rows, {} warps", groups, groups == 1 ? "" : "s", v3_off.warps);
  if (fa3.warps != v3_off.warps) out += fmt::format(", {} from warp specialization on (the producer warpgroup)", fa3.warps);
  return out + "\n";
}

}  // namespace flashlab::cli
