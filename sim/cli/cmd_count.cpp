// cmd_count.cpp — `flashlab count`: the counters of one configuration as a table or one JSON object.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/time/time_model.hpp"
#include "grid_line.hpp"
#include "map_picture.hpp"
#include "png_output.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

void print_table(const Problem& p, const Counters& k, const std::string& model) {
  std::cout << config_line(p) << "\n";
  if (!model.empty()) std::cout << "model: " << model << "\n";
  std::cout << fmt::format("\nHBM traffic, all {} (batch, head) pairs\n", p.bh());
  std::cout << fmt::format("  {:<6}{:>34}{:>34}\n", "tensor", "read", "written");
  for (int t = 0; t < kTensorCount; ++t)
    std::cout << fmt::format("  {:<6}{:>34}{:>34}\n", to_string(Tensor(t)),
                             bytes_both(k.cost.bytes(Tensor(t), Dir::read)),
                             bytes_both(k.cost.bytes(Tensor(t), Dir::write)));
  std::cout << fmt::format("  {:<6}{:>34}{:>34}\n", "total", bytes_both(k.cost.read_bytes()),
                           bytes_both(k.cost.write_bytes()));
  std::cout << fmt::format("  read + written: {}\n", bytes_both(k.cost.read_bytes() + k.cost.write_bytes()));
  std::cout << "Other memory levels (read, written):\n";
  for (Memory m : {Memory::sector, Memory::sram, Memory::registers}) {
    if (m == Memory::sector && !k.sectors) continue;
    const TensorBytes& b = k.levels[int(m)];
    std::cout << fmt::format("  {:<10}{:>30}{:>34}\n", to_string(m), bytes_both(total(b, Dir::read)),
                             bytes_both(total(b, Dir::write)));
  }

  std::cout << fmt::format("\nTiles (i, j): total {}, visited {}; full {}, partial {}, skipped {}\n",
                           group_digits(k.tiles.total), group_digits(k.tiles.visited), group_digits(k.tiles.full),
                           group_digits(k.tiles.partial), group_digits(k.tiles.skipped));
  std::cout << fmt::format("Matmul FLOPs: {} ({}FLOP)\n", group_digits(k.cost.flops),
                           human_count(double(k.cost.flops)));
  std::cout << "Non-matmul operations:";
  for (int o = 0; o < kOpKindCount; ++o)
    std::cout << fmt::format("  {} {}", to_string(OpKind(o)), group_digits(k.cost.op(OpKind(o))));
  std::cout << "\n";
  std::cout << fmt::format("SRAM per thread block: peak {} of capacity M = {} ({:.1f}%)\n",
                           bytes_both(std::uint64_t(k.sram_peak_bytes)), bytes_both(std::uint64_t(k.sram_capacity)),
                           100.0 * double(k.sram_peak_bytes) / double(k.sram_capacity));
  std::cout << grid_line(p, k) << "\n";
  std::cout << fmt::format("Launches ({}):\n", k.launches.size());
  for (const LaunchCounters& l : k.launches)
    std::cout << fmt::format("  {:<18} grid {:>13}  read {:>28}  written {:>28}\n", l.name,
                             group_digits(std::uint64_t(l.grid)), bytes_both(l.cost.read_bytes()),
                             bytes_both(l.cost.write_bytes()));
}

}  // namespace

void register_count(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "count", "Count one configuration: HBM bytes per tensor, tiles, FLOPs, non-matmul ops, SRAM, grid");
  auto flags = add_config_flags(*cmd);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print one JSON object (config + counters) instead of the table");
  auto map_path = std::make_shared<std::string>();
  CLI::Option* map_opt = cmd->add_option(
      "--map", *map_path,
      "also draw the block-skip map (full / partial / skipped tiles, the viewer's colours) to this PNG file");
  map_opt->type_name("FILE.png");
  cmd->callback([flags, json, map_path, map_opt] {
    // The picture's path is checked and its temporary file opened before any work.
    std::unique_ptr<PngOutput> map = map_opt->count() ? std::make_unique<PngOutput>("map", *map_path) : nullptr;
    const Problem p = resolve(flags->build());
    Progress progress("count");  // on stderr when it is a terminal and the walk is long
    const Modelled m = model_with_progress(p, progress);  // counters (sectors, L2 and DRAM) and the time model
    progress.clear();
    const Counters& k = m.counters;
    std::string wrote;
    if (map) {
      const viz::Image img = map_picture(p);
      map->write(img);
      wrote = fmt::format("map: wrote {} ({} x {} px, {} x {} tiles, {} px per tile)", map->path(), img.width,
                          img.height, p.tiling.t_r(), p.tiling.t_c(), map_cell_px(p.tiling.t_r(), p.tiling.t_c()));
    }
    if (*json) {
      nlohmann::json out = counters_json(k, p);
      out["config"] = problem_json(p);
      out["config"]["model"] = flags->model();
      out["grid"]["fits_on_sm"] = fits_on_sm(k);  // false: blocks_per_sm and waves are 0, no wave can run
      out["predicted"] = predicted_json(m.time);
      std::cout << out.dump(2) << "\n";
      if (!wrote.empty()) std::cerr << wrote << "\n";  // stdout stays one JSON object
    } else {
      print_table(p, k, flags->model_description());
      std::cout << predicted_text(p, k, m.time);
      if (!wrote.empty()) std::cout << wrote << "\n";
    }
  });
}

}  // namespace flashlab::cli
