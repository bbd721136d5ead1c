// command_line.hpp — flashlab-gpu's flags: the configuration flags shared with flashlab and the
// viewer (flags/), the options of one run, and the program's own; with the value rules of
// flags/values.hpp (no empty value) on every one of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/App.hpp>

#include "flashlab/flags/config_flags.hpp"
#include "runner.hpp"

namespace flashlab::gpu {

/// The options of one run: the configuration flags of the flashlab command plus these.
struct RunFlags {
  std::shared_ptr<const cli::ConfigFlags> config;
  RunOptions opt;
  std::int64_t stats_block = -1;
  std::string trace_format = "binary";
  bool no_events = false, no_check = false;
};

/// The whole command line of flashlab-gpu.
struct ProgramFlags {
  RunFlags run;
  std::string configs, json_path, commit, driver;  // commit: set the default before adding
  bool tiles = false;
};

/// The flags of one run line of --configs FILE on `app`, then refuse_empty_values(app).
void add_line_flags(CLI::App& app, RunFlags& f);

/// Every flag of flashlab-gpu on `app` (a run's flags, --configs, --json, --commit, --driver,
/// --list-tiles), then refuse_empty_values(app).
void add_program_flags(CLI::App& app, ProgramFlags& f);

}  // namespace flashlab::gpu
