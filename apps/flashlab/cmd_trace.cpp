// cmd_trace.cpp — `flashlab trace`: the event trace of one config, one (batch, head), written to a
// file (text or binary, block or warp level; docs/events.md), with m and l of chosen Q blocks.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "input_flags.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "flashlab/report/format.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "run_report.hpp"

namespace flashlab::cli {
namespace {

// Largest trace written without --max-bytes: 2 GiB.
constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t(1) << 31;

struct TraceArgs {
  std::string command;  // the command line, for the header (command_line.hpp)
  std::string out, format = "binary", level = "block", stats_blocks, max_bytes = std::to_string(kDefaultMaxBytes);
  InputFlags in;  // the statistics' inputs
  bool stats_given = false;  // --stats-blocks given (its value is never empty: values.hpp)
};

// "I,J,..." -> the Q block indices (range-checked by add_stats).
std::vector<std::int64_t> parse_blocks(const std::string& text) {
  const std::string allowed = "Q block indices separated by commas, e.g. 0,3";
  std::vector<std::int64_t> blocks;
  for (const std::string& item : split_list("stats-blocks", text, allowed))
    blocks.push_back(parse_int("stats-blocks", item, allowed));
  return blocks;
}

// Refuses, before anything is computed or written, a trace whose size bound exceeds --max-bytes.
void check_size(const Problem& p, TraceHeader h, TraceFormat format, const TraceArgs& a, std::size_t stats_blocks) {
  const std::int64_t limit = parse_int("max-bytes", a.max_bytes, "an integer >= 1 (bytes)");
  if (limit < 1) throw ConfigError("max-bytes", a.max_bytes, "an integer >= 1 (bytes)");
  if (stats_blocks > 0) h.inputs = InputSpec{a.in.q, a.in.k, a.in.v, 0};
  const TraceSizeBound b = trace_size_bound(p, h, format, stats_blocks);
  if (b.bytes > std::uint64_t(limit))
    throw ConfigError("trace size",
                      fmt::format("{} for {} events (an upper bound, {} form)", report::bytes_both(b.bytes),
                                  report::group_digits(b.events), a.format),
                      fmt::format("at most --max-bytes {}; raise --max-bytes, or trace a smaller config",
                                  report::bytes_both(std::uint64_t(limit))));
}

void write(const Config& c, const std::string& model, const TraceArgs& a) {
  const Problem p = resolve(c);
  if (a.out.empty()) throw ConfigError("output", "(none)", "a file name: -o FILE");
  if (a.out == "-")  // the file is written to a temporary name, checked, then renamed: not a stream
    throw ConfigError("output", "-", "a file name: -o FILE (a trace is written whole to a file, not to standard output)");
  const TraceFormat format = parse_trace_format(a.format);
  Trace stats;  // header and statistics, when asked for
  stats.header.config = resolved_config(p);
  stats.header.level = parse_trace_level(a.level);
  check_trace_level(stats.header.level, make_schedule(p), p.algo);
  stats.header.command = a.command;
  stats.header.model = model;
  const std::vector<std::int64_t> blocks = a.stats_given ? parse_blocks(a.stats_blocks) : std::vector<std::int64_t>{};
  if (!blocks.empty() && p.backward())
    throw ConfigError("stats-blocks", a.stats_blocks,
                      "no value with --pass " + std::string(to_string(p.pass)) +
                          ": m and l are the forward's statistics (trace --pass forward --stats-blocks I records them)");
  check_size(p, stats.header, format, a, blocks.size());
  if (!blocks.empty()) {
    check_numerics_size(p);  // the statistics run the numerics of the whole (batch, head)
    add_stats(stats, p, blocks, a.in.spec());
  }
  TraceFileWriter w(a.out, p, stats.header, format);
  Progress progress("trace", 1);  // on stderr when it is a terminal and the walk is long
  progress.label("events to " + a.out);
  WalkProgress walk(p, progress);
  Executor ex(p);
  ex.add_observer(&w);
  if (progress.enabled()) ex.add_observer(&walk);
  ex.run();
  w.finish(stats.stats);
  progress.clear();
  std::cout << fmt::format("{}\nwrote {}: {} events ({}-level, {} form, one (batch, head))", config_line(p), a.out,
                           report::group_digits(w.events_written()), a.level, a.format);
  if (!stats.stats.empty()) {
    std::string blocks;
    for (const BlockStats& b : stats.stats) blocks += (blocks.empty() ? "" : ",") + std::to_string(b.i);
    std::cout << fmt::format("; m and l of Q blocks {} after each step", blocks);
  }
  std::cout << "\n";
}

}  // namespace

void register_trace(CLI::App& app, const std::string& command) {
  CLI::App* cmd = app.add_subcommand(
      "trace", "Write the event trace of one config (one (batch, head)) to a file: text or binary, block or warp level");
  auto flags = add_config_flags(*cmd);
  auto args = std::make_shared<TraceArgs>();
  args->command = command;
  cmd->add_option("-o,--output", args->out, "the trace file to write (written to a temporary name, then renamed)")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--format", args->format, "binary (40-byte records) | text (one line per event); default binary")
      ->type_name("FORM");
  cmd->add_option("--level", args->level,
                  "block (what the CUDA kernels record) | warp (with per-warp compute, reduce, barrier); default block")
      ->type_name("LEVEL");
  cmd->add_option("--max-bytes", args->max_bytes,
                  "refuse a trace whose size bound exceeds this many bytes (default 2147483648, 2 GiB)")
      ->type_name("BYTES");
  CLI::Option* stats = cmd->add_option("--stats-blocks", args->stats_blocks,
                                       "record m and l of these Q blocks after each step (numerics)")
                            ->type_name("I,J")
                            ->group("Statistics");
  add_input_flags(*cmd, args->in, "Statistics");
  cmd->callback([flags, args, stats] {
    args->stats_given = stats->count() > 0;
    write(flags->build(), flags->model(), *args);
  });
}

}  // namespace flashlab::cli
