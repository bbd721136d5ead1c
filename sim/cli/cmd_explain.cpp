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

#include "commands.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/time/time_model.hpp"
#include "flashlab/warps/warps.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

/// One step of the walk: what it turns on, and the switches it runs with.
struct Change {
  std::string what;  // the improvement this step adds
  std::string key;   // JSON name of the step
  Switches switches;
};

/// V1's switches, then each improvement added to the previous step's.
std::vector<Change> walk() {
  std::vector<Change> out;
  Switches s = preset_switches(Algo::v1);
  out.push_back({"V1 (FA1 Algorithm 1)", "v1", s});
  s.order = LoopOrder::q_outer;
  out.push_back({"+ Q outer loop: O_i on chip", "order", s});
  s.grid = GridKind::q_block;
  out.push_back({"+ one block per Q block", "grid", s});
  s.rescale = Rescale::delayed;
  out.push_back({"+ delayed rescaling", "rescale", s});
  s.split = WarpSplit::split_q;
  out.push_back({"+ split-Q warps", "split", s});
  s.block_skip = true;
  out.push_back({"+ block skip = V2 (FA2 Alg. 1)", "block_skip", s});
  return out;
}

/// What one step costs: predicted time and the figures that explain it.
struct Point {
  Change change;
  Problem p;
  TimePrediction t;
  std::uint64_t hbm = 0, dram = 0, ops = 0, smem = 0, barriers = 0;
  std::int64_t grid = 0, waves = 0;
};

Point measure(const Config& base, const Change& ch, Progress& progress) {
  Config c = base;
  c.algo = Algo::v1;
  c.order = ch.switches.order;
  c.grid = ch.switches.grid;
  c.rescale = ch.switches.rescale;
  c.split = ch.switches.split;
  c.block_skip = ch.switches.block_skip;
  Point pt{ch, resolve(c), {}};
  WarpCounter warps(pt.p);
  progress.label(ch.key);
  const Modelled m = model(pt.p, &warps);
  progress.tick();
  pt.t = m.time;
  pt.hbm = m.counters.cost.read_bytes() + m.counters.cost.write_bytes();
  pt.dram = m.time.dram_read_bytes + m.time.dram_write_bytes;
  for (int o = 0; o < kOpKindCount; ++o) pt.ops += m.counters.cost.op(OpKind(o));
  for (const WarpWork& w : warps.totals()) {
    pt.smem += w.smem_read + w.smem_write;
    pt.barriers = std::max(pt.barriers, w.barriers);  // every warp waits at the same barriers
  }
  pt.grid = m.counters.grid_blocks;
  pt.waves = m.counters.waves;
  return pt;
}

/// "name a -> b" for each figure that moved by at least 1% between two steps.
std::string changes(const Point& a, const Point& b) {
  std::vector<std::string> out;
  const auto moved = [](double x, double y) { return std::abs(y - x) > 0.01 * std::max(std::abs(x), std::abs(y)); };
  const auto add = [&](const char* name, double x, double y, std::string (*show)(double)) {
    if (moved(x, y)) out.push_back(fmt::format("{} {} -> {}", name, show(x), show(y)));
  };
  const auto bytes = [](double v) { return human_bytes(v); };
  const auto count = [](double v) { return human_count(v); };
  const auto whole = [](double v) { return group_digits(std::uint64_t(v)); };
  add("HBM", double(a.hbm), double(b.hbm), bytes);
  add("DRAM", double(a.dram), double(b.dram), bytes);
  add("grid", double(a.grid), double(b.grid), whole);
  add("waves", double(a.waves), double(b.waves), whole);
  add("non-matmul ops", double(a.ops), double(b.ops), count);
  add("warp SRAM", double(a.smem), double(b.smem), bytes);
  add("barriers", double(a.barriers), double(b.barriers), whole);
  if (a.t.bound != b.t.bound)
    out.push_back(fmt::format("bound {} -> {}", to_string(a.t.bound), to_string(b.t.bound)));
  std::string s;
  for (const std::string& x : out) s += (s.empty() ? "" : "; ") + x;
  return s.empty() ? "no figure moves by 1% or more" : s;
}

void print_text(const std::vector<Point>& pts, const std::string& model) {
  if (!model.empty()) std::cout << model << "\n";
  std::cout << shape_line(pts.back().p) << "\n\n";
  std::cout << fmt::format("{:<34}{:>12}{:>9}{:>9}{:>10}{:>11}{:>11}{:>9}{:>7}{:>12}{:>11}{:>10}\n", "step",
                           "time", "speed-up", "TFLOP/s", "bound", "HBM", "DRAM", "grid", "waves", "non-matmul",
                           "warp SRAM", "barriers");
  const double t0 = pts.front().t.time_s;
  for (const Point& p : pts)
    std::cout << fmt::format("{:<34}{:>12}{:>8.2f}x{:>9.1f}{:>10}{:>11}{:>11}{:>9}{:>7}{:>12}{:>11}{:>10}\n",
                             p.change.what, seconds_text(p.t.time_s), t0 / p.t.time_s, p.t.tflops,
                             to_string(p.t.bound), human_bytes(double(p.hbm)), human_bytes(double(p.dram)),
                             group_digits(std::uint64_t(p.grid)), p.waves, human_count(double(p.ops)),
                             human_bytes(double(p.smem)), group_digits(p.barriers));
  std::cout << "\nWhat each step changes:\n";
  for (std::size_t k = 1; k < pts.size(); ++k)
    std::cout << fmt::format("  {} ({:.2f}x): {}\n", pts[k].change.what, pts[k - 1].t.time_s / pts[k].t.time_s,
                             changes(pts[k - 1], pts[k]));
  std::cout << "\nTimes: the time model (docs/model.md \"Time model\") at the "
            << (pts.back().t.ceilings && pts.back().t.ceilings->measured ? "measured" : "datasheet")
            << " ceilings of the GPU preset; HBM: the papers' accesses (global-memory requests); DRAM: the L2 "
               "model's. Barriers: those one warp waits at, summed over every thread block of every (batch, head).\n";
}

nlohmann::json to_json(const std::vector<Point>& pts, const std::string& model) {
  nlohmann::json out;
  out["model"] = model;
  out["config"] = problem_json(pts.back().p);
  for (const Point& p : pts)
    out["steps"].push_back({{"step", p.change.key},
                            {"what", p.change.what},
                            {"order", to_string(p.p.order)},
                            {"grid_kind", to_string(p.p.grid)},
                            {"rescale", to_string(p.p.rescale)},
                            {"split", to_string(p.p.split)},
                            {"block_skip", p.p.block_skip},
                            {"predicted", predicted_json(p.t)},
                            {"hbm_bytes", p.hbm},
                            {"dram_bytes", p.dram},
                            {"grid", p.grid},
                            {"waves", p.waves},
                            {"nonmatmul_ops", p.ops},
                            {"warp_smem_bytes", p.smem},
                            {"barriers_per_warp", p.barriers}});
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
  cmd->add_flag("--json", *json, "print one JSON object: the config and each step's figures");
  cmd->callback([flags, json] {
    const Config c = flags->build();
    // The walk sets the switches itself: a switch given on the command line would be ignored.
    const std::string allowed = "not with explain, which sets each switch along its walk from V1 to V2";
    if (c.order) throw ConfigError("--order", std::string(to_string(*c.order)), allowed);
    if (c.grid) throw ConfigError("--grid", std::string(to_string(*c.grid)), allowed);
    if (c.rescale) throw ConfigError("--rescale", std::string(to_string(*c.rescale)), allowed);
    if (c.split) throw ConfigError("--split", std::string(to_string(*c.split)), allowed);
    if (c.block_skip) throw ConfigError("--block-skip", *c.block_skip ? "on" : "off", allowed);
    const std::vector<Change> steps = walk();
    Progress progress("explain", steps.size());  // on stderr when it is a terminal and the work is long
    std::vector<Point> pts;
    for (const Change& ch : steps) pts.push_back(measure(c, ch, progress));
    progress.clear();
    if (*json)
      std::cout << to_json(pts, flags->model()).dump(2) << "\n";
    else
      print_text(pts, flags->model_description());
  });
}

}  // namespace flashlab::cli
