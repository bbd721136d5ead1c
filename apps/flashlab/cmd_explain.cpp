// cmd_explain.cpp — `flashlab explain`: why V2 is faster than V1 (the default, `--algo v2`), or V3
// than V2 on Hopper (`--algo v3`), one improvement at a time.
//
// --algo v2 starts from V1 (FA1 Algorithm 1: K/V outer loop, one thread block per (batch, head), O_i
// normalised at every step, split-K warps, no block skip) and turns on, one after the other, the
// changes the FA2 paper names (§3.1 fewer non-matmul FLOPs, §3.2 parallelism over the sequence,
// §3.3 work partitioning between warps) plus causal block skip (§3.1.1), in the order the seed
// ranks their impact: loop order, parallelism over Q blocks, delayed rescaling, split-Q warps,
// block skip (v1_to_v2_walk). The last step is V2 (FA2 Algorithm 1).
// --algo v3 starts from V2 (FA2's kernel on its tile), goes to FA3's Hopper schedule with every
// switch off (wgmma and TMA on FA3's tile), then turns on FA3's switches in the order its paper builds
// them: the stage ring, warp specialization, ping-pong, intra-warpgroup overlap, then the persistent
// scheduler (v2_to_v3_walk, docs/model.md "From V2 to V3 one switch at a time"). The last step is V3
// with FA3's defaults for the config.
// Each step is a schedule of the simulator; its predicted time comes from the time model
// (docs/model.md "Time model"), and the output says what changed: bytes per level, grid and waves,
// the tile and warps, the bounding unit and the units' shares of the time. Predictions only: the
// measured ablations are on their validation pages.
#include <optional>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "algos.hpp"
#include "commands.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/config/hopper_walk.hpp"
#include "flashlab/config/reference_tile.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/config_flags.hpp"
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

/// One step of a walk as the command runs it: the change it adds, a short key, its config.
struct Step {
  std::string what, key;
  Config config;
};

/// A column of the table after time, speed-up, TFLOP/s and bound: a figure of the catalogue
/// (metrics.hpp), also compared between steps and written to the JSON.
struct Column {
  const char* header;
  int width;
  const char* key;
};

/// A walk: its steps, the figures its table shows, the switches it skips (v3) and its closing lines.
struct Walk {
  std::vector<Step> steps;
  std::vector<Column> columns;
  std::vector<HopperWalkSkip> skipped;
  bool v3 = false;
  std::optional<Config> fa2;  // the V2 step as PyTorch's FA2 launches it, where that is split-KV
};

/// What one step costs: the catalogue's figures (predicted time, bytes per level, grid, operations,
/// the warp model) of its schedule.
struct Point {
  std::string what, key;
  report::Figures f;
};

Point measure(const Step& step, Progress& progress) {
  const Problem p = resolve(step.config);
  progress.label(step.key);
  WalkProgress walk(p, progress);
  Point pt{step.what, step.key, report::measure(p, progress.enabled() ? &walk : nullptr)};
  progress.tick();
  return pt;
}

/// From V1 to V2 (v1_to_v2_walk): V1's schedule with the switches turned so far.
Walk v1_to_v2(const Config& c) {
  Walk w;
  for (const WalkStep& s : v1_to_v2_walk()) w.steps.push_back({s.what, s.key, with_switches(c, s.switches)});
  w.columns = {{"HBM", 11, "hbm_total_bytes"}, {"DRAM", 11, "dram_total_bytes"}, {"grid", 9, "grid_blocks"},
               {"waves", 7, "waves"},          {"non-matmul", 12, "ops_all"},    {"warp SRAM", 11, "warp_smem_bytes"},
               {"barriers", 10, "warp_barriers"}};
  return w;
}

/// From V2 to V3 (v2_to_v3_walk) on FA3's defaults for c (resolve() refuses what V3 does not take,
/// naming the field, before any step is measured).
Walk v2_to_v3(const Config& c) {
  Config fa3 = c;
  fa3.algo = Algo::v3;
  const HopperWalk hw = v2_to_v3_walk(resolve(fa3));
  Walk w;
  w.v3 = true;
  for (const HopperWalkStep& s : hw.steps) w.steps.push_back({s.what, s.key, with_hopper_step(c, s)});
  w.columns = {{"HBM", 11, "hbm_total_bytes"}, {"DRAM", 11, "dram_total_bytes"}, {"SRAM", 12, "sram_peak_bytes"},
               {"grid", 9, "grid_blocks"},     {"waves", 7, "waves"}};
  w.skipped = hw.skipped;
  // PyTorch's FA2 splits the K/V blocks where the grid leaves SMs idle (num_splits_heuristic): the walk
  // starts from V2 on FA2's tile without splits, as the simulator's V3 runs (FA3's own split-KV is not
  // modelled), and says what FA2 launches
  Config fa2 = w.steps.front().config;
  fa2.kernel = Kernel::fa2;
  fa2.b_r.reset();
  fa2.b_c.reset();
  try {
    if (resolve(fa2).splits > 1) w.fa2 = fa2;
  } catch (const ConfigError&) {
    // a config FA2's launch rules do not take (count --kernel fa2 says why): no note
  }
  return w;
}

double value(const Point& p, std::string_view key) { return report::value_of(key, p.f).as_double(); }
std::string shown(const Point& p, std::string_view key) {
  const report::Metric& m = report::metric(key);
  return report::human(m, m.value(p.f));
}

/// The launch that takes longest: the one whose bound and unit shares the step reports.
const LaunchTime& longest(const TimePrediction& t) {
  return *std::max_element(t.launches.begin(), t.launches.end(),
                           [](const LaunchTime& a, const LaunchTime& b) { return a.time_s < b.time_s; });
}

/// What moved between two steps: each column's figure that moved by at least 1%, the tile and the
/// warps where they changed, the bound, and the units whose share of the thread blocks' time moved
/// by 3 points or more.
std::string changes(const Point& a, const Point& b, const std::vector<Column>& columns) {
  std::string s;
  const auto add = [&s](const std::string& x) { s += (s.empty() ? "" : "; ") + x; };
  const Tiling &ta = a.f.problem.tiling, &tb = b.f.problem.tiling;
  if (ta.b_r != tb.b_r || ta.b_c != tb.b_c) add(fmt::format("tile {} x {} -> {} x {}", ta.b_r, ta.b_c, tb.b_r, tb.b_c));
  if (a.f.problem.warps != b.f.problem.warps) add(fmt::format("warps {} -> {}", a.f.problem.warps, b.f.problem.warps));
  for (const Column& c : columns) {
    const double x = value(a, c.key), y = value(b, c.key);
    if (std::abs(y - x) > 0.01 * std::max(std::abs(x), std::abs(y)))
      add(fmt::format("{} {} -> {}", report::label_of(report::metric(c.key), b.f.problem), shown(a, c.key), shown(b, c.key)));
  }
  if (a.f.time.bound != b.f.time.bound)
    add(fmt::format("bound {} -> {}", to_string(a.f.time.bound), to_string(b.f.time.bound)));
  // a step that changed something but bought no time: say which bound it left alone
  const bool flat = a.f.time.bound == b.f.time.bound && std::abs(b.f.time.time_s - a.f.time.time_s) < 0.01 * a.f.time.time_s;
  const LaunchTime &la = longest(a.f.time), &lb = longest(b.f.time);
  std::string shares;
  for (int u = 0; u <= int(HwUnit::latency); ++u) {
    const double x = 100 * la.share[std::size_t(u)], y = 100 * lb.share[std::size_t(u)];
    if (std::abs(y - x) >= 3) shares += fmt::format("{}{} {:.0f}% -> {:.0f}%", shares.empty() ? "" : ", ", to_string(HwUnit(u)), x, y);
  }
  if (!shares.empty()) add("share of block time: " + shares);
  if (s.empty()) return "no figure moves by 1% or more";
  if (flat) add(fmt::format("time within 1%: still {} bound, which this step does not relieve", to_string(b.f.time.bound)));
  return s;
}

void print_text(const std::vector<Point>& pts, const std::optional<Point>& fa2, const Walk& w, const std::string& model,
                bool reference) {
  if (!model.empty()) std::cout << model << "\n";
  std::cout << problem_line(pts.back().f.problem) << "\n";
  if (w.v3)
    std::cout << hopper_walk_tile_lines(pts[0].f.problem, pts[1].f.problem, pts.back().f.problem, reference) << "\n";
  else
    std::cout << walk_tile_line(pts.back().f.problem, reference) << "\n";
  const auto row = [&w](std::vector<std::string> cells) {
    std::string line = fmt::format("{:<34}{:>12}{:>9}{:>9}{:>10}", cells[0], cells[1], cells[2], cells[3], cells[4]);
    for (std::size_t k = 0; k < w.columns.size(); ++k) line += fmt::format("{:>{}}", cells[5 + k], w.columns[k].width);
    return line + "\n";
  };
  std::vector<std::string> head{"step", "time", "speed-up", "TFLOP/s", "bound"};
  for (const Column& c : w.columns) head.emplace_back(c.header);
  std::cout << row(head);
  const double t0 = pts.front().f.time.time_s;
  for (const Point& p : pts) {
    std::vector<std::string> cells{p.what, shown(p, "predicted_seconds"), fmt::format("{:.2f}x", t0 / p.f.time.time_s),
                                   fmt::format("{:.1f}", p.f.time.tflops), std::string(to_string(p.f.time.bound))};
    for (const Column& c : w.columns) cells.push_back(shown(p, c.key));
    std::cout << row(cells);
  }
  std::cout << "\nWhat each step changes:\n";
  for (std::size_t k = 1; k < pts.size(); ++k)
    std::cout << fmt::format("  {} ({:.2f}x): {}\n", pts[k].what, pts[k - 1].f.time.time_s / pts[k].f.time.time_s,
                             changes(pts[k - 1], pts[k], w.columns));
  for (const HopperWalkSkip& s : w.skipped) std::cout << fmt::format("  {}: not turned on: {}\n", s.key, s.why);
  if (fa2) {
    const Problem& f = fa2->f.problem;
    std::cout << fmt::format(
        "\nPyTorch's FA2 launches split-KV here: {} splits on B_r x B_c = {} x {} and a combine, {} predicted "
        "(`flashlab count --kernel fa2`, {:.2f}x the V2 row). The walk starts from V2 without splits, as the "
        "simulator's V3 runs (FA3's own split-KV is not modelled).\n",
        f.splits, f.tiling.b_r, f.tiling.b_c, shown(*fa2, "predicted_seconds"), t0 / fa2->f.time.time_s);
  }
  const TimePrediction& t = pts.back().f.time;
  std::cout << "\nTimes: the time model (docs/model.md \"Time model\") at the "
            << (t.measured ? "measured" : "datasheet")
            << " ceilings of the GPU preset. HBM: the papers' accesses (global-memory requests); DRAM: the L2 "
               "model's. ";
  if (!w.v3) {
    std::cout << "Warp SRAM and barriers: the warp model (docs/warps.md), all warps and thread blocks.\n";
    return;
  }
  std::cout << "SRAM: the peak per thread block. V3's TFLOP/s run on wgmma, V2's on mma.sync; FA3's bytes are "
               "V2's on the same tile, its switches change when each unit works. The order: docs/model.md \"From V2 "
               "to V3 one switch at a time\". Predictions only: the staged Hopper kernel's measured ablation of these "
               "switches is in docs/validation/v3_h200.md.\n";
}

nlohmann::json to_json(const std::vector<Point>& pts, const std::optional<Point>& fa2, const Walk& w,
                       const std::string& model) {
  nlohmann::json out;
  out["model"] = model;
  out["config"] = config_json(pts.back().f.problem, model);
  for (const Point& p : pts) {
    nlohmann::json step = {{"step", p.key},
                           {"what", p.what},
                           {"switches", config_json(p.f.problem, model)},
                           {"predicted", report::predicted_json(p.f.time)}};
    for (const Column& c : w.columns) step["figures"][c.key] = report::json_value(report::value_of(c.key, p.f));
    out["steps"].push_back(step);
  }
  if (w.v3) {
    out["skipped"] = nlohmann::json::array();
    for (const HopperWalkSkip& s : w.skipped) out["skipped"].push_back({{"step", s.key}, {"why", s.why}});
    out["measured_ablation"] = "docs/validation/v3_h200.md";
    // what PyTorch's FA2 launches where it splits the K/V blocks (null where it does not)
    out["fa2_split_kv"] = nullptr;
    if (fa2)
      out["fa2_split_kv"] = {{"splits", fa2->f.problem.splits},
                             {"b_r", fa2->f.problem.tiling.b_r},
                             {"b_c", fa2->f.problem.tiling.b_c},
                             {"predicted", report::predicted_json(fa2->f.time)}};
  }
  return out;
}

}  // namespace

void register_explain(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Why V2 is faster: from V1 to V2 one improvement at a time (loop order, one block per Q block, delayed "
      "rescaling, split-Q warps, block skip); with --algo v3, why V3 is faster on Hopper: from V2 to V3 one switch "
      "at a time (wgmma + TMA, stage ring, warp specialization, ping-pong, intra-warpgroup overlap, persistent "
      "scheduler); the predicted time after each and what changed");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = ""});
  auto json = std::make_shared<bool>(false);
  auto algo = std::make_shared<std::string>("v2");
  cmd->add_option("--algo", *algo,
                  "where the walk ends: v2 (from V1 to V2) | v3 (from V2 to V3, FA3's Hopper forward) (default: v2)")
      ->type_name("ALGO");
  cmd->add_flag("--json", *json, "print one JSON object: the config and each step's figures");
  cmd->callback([flags, json, algo] {
    if (*algo != "v2" && *algo != "v3")
      throw ConfigError("algo", *algo, "v2 (the walk from V1 to V2, the default) or v3 (from V2 to V3 on Hopper)");
    const bool v3 = *algo == "v3";
    const Config c = flags->build();
    // The walk sets the switches itself: a switch given on the command line would be ignored.
    const std::string allowed =
        v3 ? "not with explain --algo v3, which walks from V2 to V3 on V2's loop and sets each of V3's switches"
           : "not with explain, which sets each switch along its walk from V1 to V2";
    const std::string on_off[] = {"off", "on"};
    if (c.order) throw ConfigError("--order", std::string(to_string(*c.order)), allowed);
    if (c.grid) throw ConfigError("--grid", std::string(to_string(*c.grid)), allowed);
    if (c.rescale) throw ConfigError("--rescale", std::string(to_string(*c.rescale)), allowed);
    if (c.split) throw ConfigError("--warp-split", std::string(to_string(*c.split)), allowed);
    if (c.block_skip) throw ConfigError("--block-skip", on_off[*c.block_skip], allowed);
    if (c.warp_specialize) throw ConfigError("--warp-specialize", on_off[*c.warp_specialize], allowed);
    if (c.stages) throw ConfigError("--stages", std::to_string(*c.stages), allowed);
    if (c.pingpong) throw ConfigError("--pingpong", on_off[*c.pingpong], allowed);
    if (c.intra_overlap) throw ConfigError("--intra-overlap", on_off[*c.intra_overlap], allowed);
    if (c.scheduler) throw ConfigError("--scheduler", std::string(to_string(*c.scheduler)), allowed);
    if (v3 && c.warps)
      throw ConfigError("--warps", std::to_string(*c.warps),
                        "not with explain --algo v3: V2 runs FA2's 4 warps, each V3 step the warps of its warpgroups");
    if (c.pass != Pass::forward)
      throw ConfigError("--pass", std::string(to_string(c.pass)),
                        v3 ? "forward with explain --algo v3 (V3 is FA3's Hopper forward)"
                           : "forward: the walk switches the forward's loop order, grid, rescaling, warps and block "
                             "skip; the backward depends on --algo only (compare --pass backward shows V1's and V2's)");
    const Walk w = v3 ? v2_to_v3(c) : v1_to_v2(c);
    for (const Step& s : w.steps) (void)resolve(s.config);  // every step's config checked before any is measured
    Progress progress("explain", w.steps.size() + (w.fa2 ? 1 : 0));  // on stderr when it is a terminal and the work is long
    std::vector<Point> pts;
    for (const Step& s : w.steps) pts.push_back(measure(s, progress));
    std::optional<Point> fa2;
    if (w.fa2) fa2 = measure(Step{"FA2 as PyTorch launches it", "fa2", *w.fa2}, progress);
    progress.clear();
    if (*json)
      std::cout << to_json(pts, fa2, w, flags->model()).dump(2) << "\n";
    else
      print_text(pts, fa2, w, flags->model_description(), uses_reference_tiles(c));
  });
}

}  // namespace flashlab::cli
