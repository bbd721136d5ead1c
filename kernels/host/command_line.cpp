// command_line.cpp — flashlab-gpu's flags (command_line.hpp).
#include "command_line.hpp"

#include "flashlab/flags/values.hpp"

namespace flashlab::gpu {
namespace {

void add_run_flags(CLI::App& app, RunFlags& f) {
  f.config = cli::add_config_flags(app);
  app.add_option("--q,--q-fill", f.opt.inputs.q, "Q fill: random | zero | index | a number (default random), as in flashlab run");
  app.add_option("--k,--k-fill", f.opt.inputs.k, "K fill (default random)");
  app.add_option("--v,--v-fill", f.opt.inputs.v, "V fill (default random)");
  app.add_option("--seed", f.opt.inputs.seed, "seed of the random fills; head h uses seed + h (default 0)");
  app.add_flag("--no-events", f.no_events, "skip the instrumented run and the event diff");
  app.add_option("--stats-blocks,--stats-block", f.stats_block,
                 "Q block whose m, l are compared after each step (default: last), as in flashlab trace");
  app.add_flag("--no-check", f.no_check, "skip the O and L check against float64");
  app.add_option("--check-heads", f.opt.check_heads, "heads checked against float64 (default: all when small, else 2)");
  app.add_flag("--time", f.opt.time, "time the plain build (CUDA events, median)");
  app.add_option("--warmup", f.opt.warmup, "untimed launches before timing (default 5)");
  app.add_option("--reps", f.opt.reps, "timed launches (default 30)");
  app.add_flag("--profile", f.opt.profile, "only launch the plain build once (for Nsight Compute)");
  app.add_option("--trace", f.opt.trace_path, "write the GPU trace (block-level events, m and l) to this file");
  app.add_option("--trace-format", f.trace_format, "binary | text (default binary)");
  app.add_option("--dump", f.opt.dump_dir, "write Q K V O (and L) as raw files with meta.json to this folder");
}

}  // namespace

void add_line_flags(CLI::App& app, RunFlags& f) {
  add_run_flags(app, f);
  cli::refuse_empty_values(app);
}

void add_program_flags(CLI::App& app, ProgramFlags& f) {
  add_run_flags(app, f.run);
  app.add_option("--configs", f.configs, "run every line of this file (flags of one run per line; # comments)");
  app.add_option("--json", f.json_path, "write every run's figures as a JSON array to this file");
  app.add_option("--commit", f.commit, "commit recorded in GPU traces (default: the one built)");
  app.add_option("--driver", f.driver, "driver version recorded in GPU traces (default: detected)");
  app.add_flag("--list-tiles", f.tiles, "list the tile shapes (B_r x B_c x warps) compiled for each kernel and d");
  cli::refuse_empty_values(app);
}

}  // namespace flashlab::gpu
