// cmd_metrics.cpp — `flashlab metrics`: the catalogue of metrics (flashlab/report/metrics.hpp) as a
// Markdown table — each metric's key (the sweep's CSV column), its path in `count --json`, its
// unit, its label and what it counts. docs/output.md holds this table, checked by a test.
#include <iostream>

#include "commands.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::cli {
namespace {

// A cell of a Markdown table: "|" escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void print_catalogue() {
  std::cout << "| key (CSV column) | count --json path | unit | label | what it counts |\n"
               "|---|---|---|---|---|\n";
  for (const report::Metric& m : report::catalogue())
    std::cout << "| `" << m.key << "` | `" << m.json_path << "` | " << report::to_string(m.unit) << " | "
              << cell(m.label) << " | " << cell(m.help) << (m.in_csv ? "" : " (not a CSV column)")
              << " |\n";
}

}  // namespace

void register_metrics(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "metrics", "List the catalogue of metrics that count, compare, sweep, the viewer and flashlab-gpu report");
  cmd->callback(print_catalogue);
}

}  // namespace flashlab::cli
