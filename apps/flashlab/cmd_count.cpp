// cmd_count.cpp — `flashlab count`: the counters of one configuration as a table or one JSON object.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/report/report_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "grid_line.hpp"
#include "map_picture.hpp"
#include "png_output.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

using report::bytes_both;
using report::group_digits;

// "<label>: <value>" of a catalogue metric, exact.
std::string item(const report::Figures& f, const char* key) {
  const report::Metric& m = report::metric(key);
  return fmt::format("{}: {}", report::label_of(m, f.problem), report::precise(m, m.value(f)));
}

void print_warps(const report::Figures& f) {
  const Problem& p = f.problem;
  if (!f.warp_model && has_tiles(make_schedule(p))) {
    std::cout << fmt::format("Warps: {} per thread block in warp roles (docs/model.md \"V3\"): the warp model "
                             "(docs/warps.md) is not modelled for {}\n",
                             p.warps, to_string(p.algo));
    return;
  }
  if (!f.warp_model) {
    std::cout << "Warps: standard attention has no tile loop to split between warps (docs/warps.md)\n";
    return;
  }
  std::cout << fmt::format("Warps: {} per thread block, {} (docs/warps.md), all thread blocks and (batch, head) pairs\n",
                           p.warps, to_string(p.split));
  for (const char* key : {"warp_smem_write_bytes", "warp_smem_read_bytes", "warp_barriers"})
    std::cout << "  " << item(f, key) << "\n";
  std::cout << "  " << item(f, "warp_extra_ops");
  std::string kinds;
  for (int o = 0; o < kOpKindCount; ++o) {
    const report::Value v = report::value_of(fmt::format("warp_extra_{}", to_string(OpKind(o))), f);
    if (v.integer > 0) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", to_string(OpKind(o)), group_digits(v.integer));
  }
  std::cout << (kinds.empty() ? "" : " (" + kinds + ")") << "\n";
}

void print_table(const report::Figures& f, const std::string& model) {
  const Problem& p = f.problem;
  const auto n = [&f](const std::string& key) { return report::value_of(key, f).integer; };
  std::cout << config_line(p) << "\n";
  if (!model.empty()) std::cout << "model: " << model << "\n";
  std::cout << fmt::format("\nHBM traffic, all {} (batch, head) pairs\n", p.bh());
  const auto row = [](std::string_view name, std::uint64_t read, std::uint64_t written) {
    std::cout << fmt::format("  {:<6}{:>34}{:>34}\n", name, bytes_both(read), bytes_both(written));
  };
  std::cout << fmt::format("  {:<6}{:>34}{:>34}\n", "tensor", "read", "written");
  for (int t = 0; t < kTensorCount; ++t) {
    const std::string name(to_string(Tensor(t)));
    // the forward's tensors always; the backward's (dO ... dS) where the schedule moves them
    if (Tensor(t) > Tensor::P && n("read_" + name) == 0 && n("write_" + name) == 0) continue;
    row(name, n("read_" + name), n("write_" + name));
  }
  row("total", n("hbm_read_bytes"), n("hbm_write_bytes"));
  if (n("hbm_atomic_bytes") > 0)
    std::cout << fmt::format("  atomic adds to dQacc (read-modify-write, Nsight Compute's reductions): {}\n",
                             bytes_both(n("hbm_atomic_bytes")));
  std::cout << fmt::format("  read + written{}: {}\n", n("hbm_atomic_bytes") > 0 ? " + atomic" : "",
                           bytes_both(n("hbm_total_bytes")));
  std::cout << "Other memory levels (read, written):\n";
  for (const char* level : {"sector", "sram", "registers"}) {
    const report::Value r = report::value_of(std::string(level) + "_read_bytes", f);
    if (r.none()) continue;  // the sector level when it was not counted
    std::cout << fmt::format("  {:<10}{:>30}{:>34}\n", level, bytes_both(r.integer),
                             bytes_both(n(std::string(level) + "_write_bytes")));
  }

  std::cout << fmt::format("\nTiles (i, j): total {}, visited {}; full {}, partial {}, skipped {}\n",
                           group_digits(n("tiles_total")), group_digits(n("tiles_visited")),
                           group_digits(n("tiles_full")), group_digits(n("tiles_partial")),
                           group_digits(n("tiles_skipped")));
  std::cout << fmt::format("Matmul FLOPs: {} ({})\n", group_digits(n("flops_matmul")),
                           report::human_count(double(n("flops_matmul")), "FLOP"));
  std::cout << "Non-matmul operations:";
  for (int o = 0; o < kOpKindCount; ++o) {
    const std::string kind(to_string(OpKind(o)));
    std::cout << fmt::format("  {} {}", kind, group_digits(n("ops_" + kind)));
  }
  std::cout << "\n";
  std::cout << fmt::format("SRAM per thread block: peak {} of capacity M = {} ({:.1f}%)\n",
                           bytes_both(n("sram_peak_bytes")), bytes_both(n("sram_capacity_bytes")),
                           100.0 * double(n("sram_peak_bytes")) / double(n("sram_capacity_bytes")));
  std::cout << grid_line(p, f.counters) << "\n";  // says so when no block fits on an SM (grid_line.hpp)
  std::cout << fmt::format("Launches ({}):\n", f.counters.launches.size());
  std::size_t width = 20;  // FA2's kernel names are longer than this project's
  for (const LaunchCounters& l : f.counters.launches) width = std::max(width, l.name.size());
  for (const LaunchCounters& l : f.counters.launches)
    std::cout << fmt::format("  {:<{}} grid {:>13}  read {:>28}  written {:>28}\n", l.name, width,
                             group_digits(std::uint64_t(l.grid)), bytes_both(l.cost.read_bytes()),
                             bytes_both(l.cost.write_bytes()));
  print_warps(f);
}

}  // namespace

void register_count(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "count", "Count one configuration: HBM bytes per tensor, tiles, FLOPs, non-matmul ops, SRAM, grid, warp split");
  auto flags = add_config_flags(*cmd);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print one JSON object (config + every metric of docs/output.md) instead of the table");
  auto map_path = std::make_shared<std::string>();
  CLI::Option* map_opt = cmd->add_option(
      "--map", *map_path,
      "also draw the block-skip map (full / partial / skipped tiles, the viewer's colours) to this PNG file");
  map_opt->type_name("FILE.png");
  cmd->callback([flags, json, map_path, map_opt] {
    // The picture's destination is checked before any work (png_output.hpp).
    std::optional<PngOutput> map;
    if (map_opt->count()) map.emplace("map", *map_path);
    const Problem resolved = resolve(flags->build());
    Progress progress("count");  // on stderr when it is a terminal and the walk is long
    WalkProgress walk(resolved, progress);
    const report::Figures f = report::measure(resolved, progress.enabled() ? &walk : nullptr);
    progress.clear();
    const Problem& p = f.problem;
    std::string wrote;
    if (map) {
      const viz::Image img = map_picture(p);
      map->write(img);
      wrote = fmt::format("map: wrote {} ({} x {} px, {} x {} tiles, {})", map->path(), img.width, img.height,
                          p.tiling.t_r(), p.tiling.t_c(), map_scale(p.tiling.t_r(), p.tiling.t_c()));
    }
    if (*json) {
      std::cout << report::count_json(f, flags->model()).dump(2) << "\n";
      if (!wrote.empty()) std::cerr << wrote << "\n";  // stdout stays one JSON object
    } else {
      print_table(f, flags->model_description());
      std::cout << predicted_text(p, f.counters, f.time);  // every schedule is timed (V3 too)
      if (!wrote.empty()) std::cout << wrote << "\n";
    }
  });
}

}  // namespace flashlab::cli
