// cmd_timeline.cpp — `flashlab timeline`: one SM's thread blocks event by event (flashlab/time/timeline.hpp,
// docs/model.md "Timeline, event by event"): each unit's busy fraction and idle time by cause, the
// critical path's parts, the SM's time beside the analytic rule's; `--json FILE` / `--csv FILE` write
// the intervals (and lanes, ring occupancy) through the project's output helper (command_output.hpp).
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include "command_output.hpp"
#include "commands.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/flags/values.hpp"
#include "flashlab/report/timeline_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/timeline.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

// What the SM runs of the launch: thread blocks (standard, V1, V2: one a grid cell each), or V3's
// work tiles (a Q block of one (batch, head) each, dealt to thread blocks by its tile scheduler).
std::string work_text(const Timeline& t) {
  if (t.v3) return fmt::format("{} work tile{} (a Q block of one head each)", t.tiles, t.tiles == 1 ? "" : "s");
  return fmt::format("{} thread block{}", t.tiles, t.tiles == 1 ? "" : "s");
}

void print_summary(const Problem& p, const Timeline& t, const report::TimelineLaunch& launch) {
  std::cout << config_line(p) << "\n";
  const std::string which = launch.count > 1 ? fmt::format(", launch {} of {}: {}", launch.index, launch.count, launch.name)
                                             : std::string();
  std::cout << fmt::format("Timeline of SM {} ({}{}): {}, {:.3f} us{}\n", t.sm,
                           t.v3 ? "event by event" : "step by step", which, work_text(t), t.time_s * 1e6,
                           t.v3 ? fmt::format(" (the analytic rule: {:.3f} us)", t.analytic_s * 1e6) : std::string());
  if (launch.count > 1)
    std::cout << fmt::format("(only launch {} is laid out; {}: flashlab count times every launch)\n", launch.index,
                             launch.count == 2 ? "the other is not" : fmt::format("the other {} are not", launch.count - 1));
  std::cout << "Units (busy, then idle by cause, fractions of the SM's time):\n";
  for (const UnitUse& u : t.units) {
    std::cout << fmt::format("  {:<7} busy {:5.1f}%\n", to_string(u.unit), 100 * u.busy);
    for (const IdleCause& c : u.idle)
      if (c.fraction >= 0.001) std::cout << fmt::format("          idle {:5.1f}%: {}\n", 100 * c.fraction, c.cause);
  }
  std::cout << "Critical path (the agent that finishes last):\n";
  for (const CriticalPart& c : t.critical_path)
    if (c.fraction >= 0.001) std::cout << fmt::format("  {:5.1f}%  {}\n", 100 * c.fraction, c.what);
  if (!t.note.empty()) std::cout << "Note: " << t.note << "\n";
}

std::string to_csv(const Timeline& t) {
  std::ostringstream out;
  out << "start_s,end_s,lane,what,i,j,bh,tensor\n";
  for (const TimelineInterval& iv : t.intervals)
    out << fmt::format("{:.9g},{:.9g},{},{},{},{},{},{}\n", iv.start_s, iv.end_s, t.lanes[std::size_t(iv.lane)].name,
                       to_string(iv.what), iv.i, iv.j, iv.bh, tensor_name(iv));
  return out.str();
}

// --max-intervals: the default, and the most a JSON or CSV file holds (each interval about 100 bytes).
constexpr std::int64_t kDefaultMaxIntervals = 200'000, kMaxIntervals = 100'000'000;

}  // namespace

void register_timeline(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "timeline", "One SM's thread blocks event by event: units busy and idle by cause, the critical path");
  auto flags = add_config_flags(*cmd);
  // integers parsed by the project's parse_int_in, whose errors name the flag and what it allows
  auto sm = std::make_shared<std::string>("-1");
  cmd->add_option("--sm", *sm, "which SM (0 to SMs - 1; default -1: the busiest)")->type_name("INT");
  auto max_intervals = std::make_shared<std::string>(std::to_string(kDefaultMaxIntervals));
  cmd->add_option("--max-intervals", *max_intervals,
                  fmt::format("intervals written at most (the first in time; 0 to {}, default {})", kMaxIntervals,
                              kDefaultMaxIntervals))
      ->type_name("INT");
  auto json_path = std::make_shared<std::string>();
  auto csv_path = std::make_shared<std::string>();
  CLI::Option* json_opt = cmd->add_option("--json", *json_path, "write lanes, intervals, ring, units to this JSON file");
  json_opt->type_name("FILE");
  CLI::Option* csv_opt = cmd->add_option("--csv", *csv_path, "write the intervals to this CSV file");
  csv_opt->type_name("FILE");
  cmd->callback([flags, sm, max_intervals, json_path, csv_path, json_opt, csv_opt] {
    std::optional<OutputFile> json, csv;  // destinations checked before any work
    if (json_opt->count()) json.emplace(*json_path, "json");
    if (csv_opt->count()) csv.emplace(*csv_path, "csv");
    if (json && csv) check_distinct(*json, *csv);
    // the SM's upper bound is the GPU's (timeline() checks it); here only that it is an integer
    const std::int64_t sm_index = parse_int_in("sm", *sm, -1, std::numeric_limits<std::int32_t>::max(),
                                               " (-1: the busiest; at most the GPU's SMs - 1)");
    const std::int64_t most = parse_int_in("max-intervals", *max_intervals, 0, kMaxIntervals);
    const Problem p = resolve(flags->build());
    const Schedule s = make_schedule(p);
    const Timeline t = timeline(p, s, {.sm = sm_index, .max_intervals = std::size_t(most)});
    const report::TimelineLaunch launch = report::timeline_launch(s);
    print_summary(p, t, launch);
    if (json) json->write(report::timeline_json(t, launch).dump() + "\n"), std::cout << "wrote " << json->path() << "\n";
    if (csv) csv->write(to_csv(t)), std::cout << "wrote " << csv->path() << "\n";
  });
}

}  // namespace flashlab::cli
