// cmd_compare.cpp — `flashlab compare`: standard attention, FlashAttention V1 and V2 side by side
// on one configuration, with the ratios standard/V2 and V1/V2. Default: one Llama-3-8B attention
// layer (32 heads, d = 128) at 8192 tokens, causal, batch 1. With no tile given, each algorithm runs
// on its reference kernel's tile (reference_tile.hpp), which the header names with its grid.
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "algos.hpp"
#include "commands.hpp"
#include "tile_lines.hpp"
#include "v1_notes.hpp"
#include "flashlab/config/reference_tile.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/report/report_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "grid_line.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

using report::CompareRow;
using report::compare_rows;
using report::ratio_of;

std::string label(const CompareRow& r, const Problem& p) {
  const std::string l = report::label_of(r.metric, p);
  return r.part ? "  of which " + l : l;
}

void print_table(const std::vector<report::Figures>& cols, const std::string& model, bool reference, const Config& c) {
  const Problem& p = cols.back().problem;
  if (!model.empty()) std::cout << model << "\n";
  std::cout << problem_line(p) << "\n" << tile_lines(cols, reference, c);
  // Standard attention has no tile loop (FA1 Algorithm 0): --block-skip changes nothing there.
  std::cout << fmt::format(
      "block skip: V1 {}, V2 {}, standard does not apply (no tile loop); warps: V1 {}, V2 {} of {} (counts cover "
      "all {} (batch, head) pairs)\n\n",
      cols[1].problem.block_skip ? "on" : "off", cols[2].problem.block_skip ? "on" : "off",
      to_string(cols[1].problem.split), to_string(cols[2].problem.split), p.warps, p.bh());
  if (p.backward())  // the backward's schedules (docs/model.md "Backward pass")
    std::cout << fmt::format("pass {}: standard FA1 Alg. 3, V1 FA1 Alg. 4, V2 FA2 Alg. 2 ({} form)\n\n",
                             to_string(p.pass), to_string(cols[2].problem.backward_form));
  std::cout << fmt::format("{:<42}{:>14}{:>14}{:>14}{:>14}{:>10}\n", "", "standard", "V1", "V2", "standard/V2",
                           "V1/V2");
  for (const CompareRow& r : compare_rows()) {
    const report::Value s = r.metric.value(cols[0]), v1 = r.metric.value(cols[1]), v2 = r.metric.value(cols[2]);
    const auto shown = [](double x) { return std::isnan(x) ? std::string("-") : report::ratio(x, 1); };
    std::cout << fmt::format("{:<42}{:>14}{:>14}{:>14}{:>14}{:>10}\n", label(r, p), report::human(r.metric, s),
                             report::human(r.metric, v1), report::human(r.metric, v2), shown(ratio_of(s, v2)),
                             shown(ratio_of(v1, v2)));
  }
  std::cout << fmt::format("{:<42}{:>14}{:>14}{:>14}\n", "bound (time model)", to_string(cols[0].time.bound),
                           to_string(cols[1].time.bound), to_string(cols[2].time.bound));
  std::cout << "\n" << v1_notes(cols[0], cols[1]);
  for (const report::Figures& f : cols)  // 0 waves above: no block fits on an SM, say why
    if (!fits_on_sm(f.counters)) std::cout << to_string(f.problem.algo) << ": " << grid_line(f.problem, f.counters) << "\n";
  std::cout << kPapersCountLine << "\n";
  const std::uint64_t dirty[] = {dirty_at_end(cols[0].counters), dirty_at_end(cols[1].counters),
                                 dirty_at_end(cols[2].counters)};
  if (dirty[0] + dirty[1] + dirty[2] > 0)
    std::cout << fmt::format("DRAM written: during the launches; still dirty in the L2 at their end, not counted there: "
                             "standard {}, V1 {}, V2 {}\n",
                             report::human_bytes(double(dirty[0])), report::human_bytes(double(dirty[1])),
                             report::human_bytes(double(dirty[2])));
  std::cout << "HBM and matmul times are lower bounds from the GPU preset's datasheet rates; the predicted times use "
            << (cols.back().time.measured ? "measured" : "datasheet")
            << " ceilings (docs/model.md \"Time model\"); warp figures: docs/warps.md; exact counts: flashlab count "
               "--algo ALGO --json\n";
}

}  // namespace

void register_compare(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Standard attention, FlashAttention V1 and V2 side by side with ratios (default: Llama-3-8B layer, "
      "8192 tokens, causal)");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = "llama3-8b"});
  auto json = std::make_shared<bool>(false);
  auto algo = std::make_shared<std::string>();
  CLI::Option* algo_opt = cmd->add_option("--algo", *algo, "not taken: compare runs its own algorithms (--algo v3 says why V3 is not here yet)")
                              ->type_name("ALGO");
  cmd->add_flag("--json", *json, "print one JSON object: each algorithm's config and metrics, and the ratios");
  cmd->callback([flags, json, algo, algo_opt] {
    if (algo_opt->count() > 0) refuse_algo("compare", *algo);
    const Config c = flags->build();
    if (const auto [flag, value] = hopper_switch_given(c); !flag.empty())
      throw ConfigError(flag, value,
                        "none with compare: it sets standard attention, V1 and V2 side by side, and --" + flag +
                            " is a switch of --algo v3 only (count or explain --algo v3)");
    std::vector<report::Figures> cols;
    Progress progress("compare", all_algos().size());  // on stderr when it is a terminal and the work is long
    for (Algo a : all_algos()) {
      const Problem p = resolve_algo(compared_config(c, a), a);
      progress.label(std::string(to_string(a)));
      WalkProgress walk(p, progress);
      cols.push_back(report::measure(p, progress.enabled() ? &walk : nullptr));
      progress.tick();
    }
    progress.clear();
    if (*json)
      std::cout << report::compare_json(cols, flags->model()).dump(2) << "\n";
    else
      print_table(cols, flags->model_description(), uses_reference_tiles(c), c);
  });
}

}  // namespace flashlab::cli
