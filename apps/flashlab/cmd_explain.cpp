// cmd_explain.cpp — `flashlab explain`: why V2 is faster than V1, one improvement at a time.
//
// Starts from V1 (FA1 Algorithm 1: K/V outer loop, one thread block per (batch, head), O_i
// normalised at every step, split-K warps, no block skip) and turns on, one after the other, the
// changes the FA2 paper names (§3.1 fewer non-matmul FLOPs, §3.2 parallelism over the sequence,
// §3.3 work partitioning between warps) plus causal block skip (§3.1.1), in the order the seed
// ranks their impact: loop order, parallelism over Q blocks, delayed rescaling, split-Q warps,
// block skip. The last step is V2 (FA2 Algorithm 1). Each step is a schedule of the simulator
// (docs/model.md "Variants"); its predicted time comes from the time model (docs/model.md "Time
// model"), and the table says what changed: bytes per level, grid and waves, non-matmul
// operations, the warps' shared-memory traffic and barriers.
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "algos.hpp"
#include "commands.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/config/reference_tile.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/report/report_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "tile_lines.hpp"

namespace flashlab::cli {
namespace {

/// What one step costs: the catalogue's figures (predicted time, bytes per level, grid, operations,
/// the warp model) of its schedule.
struct Point {
  WalkStep change;
  report::Figures f;
};

Point measure(const Config& base, const WalkStep& ch, Progress& progress) {
  const Problem p = resolve(with_switches(base, ch.switches));
  progress.label(ch.key);
  WalkProgress walk(p, progress);
  Point pt{ch, report::measure(p, progress.enabled() ? &walk : nullptr)};
  progress.tick();
  return pt;
}

/// The catalogue's figures that explain a step, in the table's order after time and TFLOP/s.
constexpr const char* kFigures[] = {"hbm_total_bytes", "dram_total_bytes", "grid_blocks",    "waves",
                                    "ops_all",         "warp_smem_bytes",  "warp_barriers"};

double value(const Point& p, std::string_view key) { return report::value_of(key, p.f).as_double(); }
std::string shown(const Point& p, std::string_view key) {
  const report::Metric& m = report::metric(key);
  return report::human(m, m.value(p.f));
}

/// "label a -> b" for each figure that moved by at least 1% between two steps, and the bound.
std::string changes(const Point& a, const Point& b) {
  std::string s;
  const auto add = [&s](const std::string& x) { s += (s.empty() ? "" : "; ") + x; };
  for (const char* key : kFigures) {
    const double x = value(a, key), y = value(b, key);
    if (std::abs(y - x) > 0.01 * std::max(std::abs(x), std::abs(y)))
      add(fmt::format("{} {} -> {}", report::label_of(report::metric(key), b.f.problem), shown(a, key), shown(b, key)));
  }
  if (a.f.time.bound != b.f.time.bound)
    add(fmt::format("bound {} -> {}", to_string(a.f.time.bound), to_string(b.f.time.bound)));
  return s.empty() ? "no figure moves by 1% or more" : s;
}

void print_text(const std::vector<Point>& pts, const std::string& model, bool reference) {
  if (!model.empty()) std::cout << model << "\n";
  std::cout << problem_line(pts.back().f.problem) << "\n" << walk_tile_line(pts.back().f.problem, reference) << "\n";
  const std::string row = "{:<34}{:>12}{:>9}{:>9}{:>10}{:>11}{:>11}{:>9}{:>7}{:>12}{:>11}{:>10}\n";
  std::cout << fmt::format(fmt::runtime(row), "step", "time", "speed-up", "TFLOP/s", "bound", "HBM", "DRAM", "grid",
                           "waves", "non-matmul", "warp SRAM", "barriers");
  const double t0 = pts.front().f.time.time_s;
  for (const Point& p : pts)
    std::cout << fmt::format(fmt::runtime(row), p.change.what, shown(p, "predicted_seconds"),
                             fmt::format("{:.2f}x", t0 / p.f.time.time_s), fmt::format("{:.1f}", p.f.time.tflops),
                             to_string(p.f.time.bound), shown(p, "hbm_total_bytes"), shown(p, "dram_total_bytes"),
                             shown(p, "grid_blocks"), shown(p, "waves"), shown(p, "ops_all"),
                             shown(p, "warp_smem_bytes"), shown(p, "warp_barriers"));
  std::cout << "\nWhat each step changes:\n";
  for (std::size_t k = 1; k < pts.size(); ++k)
    std::cout << fmt::format("  {} ({:.2f}x): {}\n", pts[k].change.what, pts[k - 1].f.time.time_s / pts[k].f.time.time_s,
                             changes(pts[k - 1], pts[k]));
  const TimePrediction& t = pts.back().f.time;
  std::cout << "\nTimes: the time model (docs/model.md \"Time model\") at the "
            << (t.measured ? "measured" : "datasheet")
            << " ceilings of the GPU preset. HBM: the papers' accesses (global-memory requests); DRAM: the L2 "
               "model's. Warp SRAM and barriers: the warp model (docs/warps.md), all warps and thread blocks.\n";
}

nlohmann::json to_json(const std::vector<Point>& pts, const std::string& model) {
  nlohmann::json out;
  out["model"] = model;
  out["config"] = config_json(pts.back().f.problem, model);
  for (const Point& p : pts) {
    nlohmann::json step = {{"step", p.change.key},
                           {"what", p.change.what},
                           {"switches", config_json(p.f.problem, model)},
                           {"predicted", report::predicted_json(p.f.time)}};
    for (const char* key : kFigures) step["figures"][key] = report::json_value(report::value_of(key, p.f));
    out["steps"].push_back(step);
  }
  return out;
}

}  // namespace

void register_explain(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Why V2 is faster: from V1 to V2 one improvement at a time (loop order, one block per Q block, delayed "
      "rescaling, split-Q warps, block skip), with the predicted time after each and what changed");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = ""});
  auto json = std::make_shared<bool>(false);
  auto algo = std::make_shared<std::string>();
  CLI::Option* algo_opt = cmd->add_option("--algo", *algo, "not taken: explain runs its own algorithms (--algo v3 says why V3 is not here yet)")
                              ->type_name("ALGO");
  cmd->add_flag("--json", *json, "print one JSON object: the config and each step's figures");
  cmd->callback([flags, json, algo, algo_opt] {
    if (algo_opt->count() > 0) refuse_algo("explain", *algo);
    const Config c = flags->build();
    // The walk sets the switches itself: a switch given on the command line would be ignored.
    const std::string allowed = "not with explain, which sets each switch along its walk from V1 to V2";
    if (c.order) throw ConfigError("--order", std::string(to_string(*c.order)), allowed);
    if (c.grid) throw ConfigError("--grid", std::string(to_string(*c.grid)), allowed);
    if (c.rescale) throw ConfigError("--rescale", std::string(to_string(*c.rescale)), allowed);
    if (c.split) throw ConfigError("--warp-split", std::string(to_string(*c.split)), allowed);
    if (c.block_skip) throw ConfigError("--block-skip", *c.block_skip ? "on" : "off", allowed);
    if (c.pass != Pass::forward)
      throw ConfigError("--pass", std::string(to_string(c.pass)),
                        "forward: the walk switches the forward's loop order, grid, rescaling, warps and block skip; "
                        "the backward depends on --algo only (compare --pass backward shows V1's and V2's)");
    const std::vector<WalkStep> steps = v1_to_v2_walk();
    Progress progress("explain", steps.size());  // on stderr when it is a terminal and the work is long
    std::vector<Point> pts;
    for (const WalkStep& ch : steps) pts.push_back(measure(c, ch, progress));
    progress.clear();
    if (*json)
      std::cout << to_json(pts, flags->model()).dump(2) << "\n";
    else
      print_text(pts, flags->model_description(), uses_reference_tiles(c));
  });
}

}  // namespace flashlab::cli
