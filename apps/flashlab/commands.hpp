// commands.hpp — one registration function per `flashlab` command, each in its own cmd_<name>.cpp.
//
// A registration adds a CLI11 subcommand with its flags and a callback that does the work. The
// callback reports bad input by throwing flashlab::ConfigError (exit 2), a result that is a
// failure by throwing CommandFailed (its ExitStatus), and a failure of the work itself (an output
// that cannot be written, memory) by any other std::exception (exit 4); main.cpp maps them.
#pragma once

#include <stdexcept>
#include <string>

#include <CLI/App.hpp>

namespace flashlab::cli {

/// The exit status of `flashlab`, one meaning each, the same for every command.
enum ExitStatus : int {
  kExitOk = 0,           // success; diff: the traces agree
  kExitDiffer = 1,       // diff: the traces differ
  kExitBadInput = 2,     // bad input: a flag, a config, a file that is not a valid trace, an output refused
  kExitTolerance = 3,    // run: numerics out of tolerance
  kExitFailed = 4,       // the work failed: an output write, memory, any other error
};
/// The table of exit statuses that `flashlab --help` and every command's --help end with.
inline constexpr const char* kExitStatusHelp =
    "Exit status (every command):\n"
    "  0  success; diff: the traces agree\n"
    "  1  diff: the traces differ\n"
    "  2  bad input: a flag or config value; a trace file that cannot be read, is not a regular file, is\n"
    "     larger than a trace of its config can be, or is not a valid trace; an output path refused\n"
    "  3  run: numerics out of tolerance\n"
    "  4  the work failed: an output that could not be written (a file-size limit's SIGXFSZ included),\n"
    "     memory exhausted, any other error\n"
    "  130, 143  interrupted by SIGINT, SIGTERM (129: SIGHUP); no partial output file is left\n";

/// A command that ran but whose result is a failure (e.g. numerics out of tolerance).
class CommandFailed : public std::runtime_error {
 public:
  CommandFailed(int exit_code, const std::string& what) : std::runtime_error(what), code_(exit_code) {}
  int exit_code() const { return code_; }

 private:
  int code_;
};

void register_count(CLI::App& app);    // cmd_count.cpp: one config's counters, table or JSON
void register_compare(CLI::App& app);  // cmd_compare.cpp: standard, V1, V2 side by side with ratios
void register_explain(CLI::App& app);  // cmd_explain.cpp: V1 -> V2 one improvement at a time, predicted times
void register_run(CLI::App& app);      // cmd_run.cpp: numerics against the float64 reference
void register_sweep(CLI::App& app);    // cmd_sweep.cpp: a grid over N, d, B_r, B_c or M to CSV
// cmd_trace.cpp: the event trace of one config to a file; `command` (command_line.hpp) goes in its header
void register_trace(CLI::App& app, const std::string& command);
void register_diff(CLI::App& app);     // cmd_diff.cpp: two traces compared step by step
void register_metrics(CLI::App& app);  // cmd_metrics.cpp: the catalogue of metrics as a table
void register_timeline(CLI::App& app); // cmd_timeline.cpp: one SM's thread blocks event by event

/// Every command above on `app`, then the value rules of flags/values.hpp on all their options
/// (an empty value is an error naming the flag). `command` as for register_trace. The one
/// function main.cpp calls, and what tests enumerate the flags of.
void register_commands(CLI::App& app, const std::string& command);

}  // namespace flashlab::cli
