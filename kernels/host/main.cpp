// main.cpp — flashlab-gpu: runs configurations on the GPU and checks them against the simulator.
//
// For each configuration: the instrumented kernel's event stream and m, l against a fresh
// simulator trace (flashlab diff), the plain kernel's O and L against the float64 reference,
// optionally its time (CUDA events, warm-up, median) and a GPU trace file. One configuration from
// the command line, or one per line of --configs FILE (one process: what Nsight Compute and
// compute-sanitizer wrap). Exit codes: 0 every check passed; 3 a check failed; 2 bad input
// (flashlab::ConfigError or a command-line error); 1 a CUDA or file error.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/kernels/api.hpp"
#include "report.hpp"
#include "runner.hpp"

#ifndef FLASHLAB_GIT_COMMIT
#define FLASHLAB_GIT_COMMIT "unknown"
#endif

namespace {

using namespace flashlab;
using namespace flashlab::gpu;

// The options of one run: the configuration flags of the flashlab command plus these.
struct RunFlags {
  std::shared_ptr<const cli::ConfigFlags> config;
  RunOptions opt;
  std::int64_t stats_block = -1;
  std::string trace_format = "binary";
  bool no_events = false, no_check = false;
};

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

std::pair<Problem, RunOptions> finish(const RunFlags& f, const std::string& command) {
  const Problem p = resolve(f.config->build());
  RunOptions o = f.opt;
  o.events = !f.no_events;
  o.check = !f.no_check;
  if (f.stats_block >= 0) o.stats_block = f.stats_block;
  o.trace_format = parse_trace_format(f.trace_format);
  o.command = command;
  if (o.reps < 1) throw ConfigError("reps", std::to_string(o.reps), "at least 1");
  if (o.warmup < 0) throw ConfigError("warmup", std::to_string(o.warmup), "at least 0");
  return {p, o};
}

std::string joined_args(int argc, char** argv) {
  std::string s;
  for (int k = 0; k < argc; ++k) s += (k ? " " : "") + std::string(argv[k]);
  return s;
}

void list_tiles() {
  for (Algo algo : {Algo::standard, Algo::v1, Algo::v2})
    for (int d : {32, 64, 128}) {
      std::printf("%-8s d=%-3d:", std::string(to_string(algo)).c_str(), d);
      for (const TileShape& s : compiled_tiles(algo, d)) std::printf(" %dx%dx%d", s.b_r, s.b_c, s.warps);
      std::printf("\n");
    }
}

// Writes `text` to `path` through a temporary file renamed when complete.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flashlab-gpu — runs standard attention, FlashAttention V1 or V2 on the GPU and checks it against\n"
               "the simulator (events, m and l) and a float64 reference (O, L); times the plain build.",
               "flashlab-gpu"};
  RunFlags flags;
  add_run_flags(app, flags);
  std::string configs, json_path, commit = FLASHLAB_GIT_COMMIT, driver;
  bool tiles = false;
  app.add_option("--configs", configs, "run every line of this file (flags of one run per line; # comments)");
  app.add_option("--json", json_path, "write every run's figures as a JSON array to this file");
  app.add_option("--commit", commit, "commit recorded in GPU traces (default: the one built)");
  app.add_option("--driver", driver, "driver version recorded in GPU traces (default: detected)");
  app.add_flag("--list-tiles", tiles, "list the tile shapes (B_r x B_c x warps) compiled for each kernel and d");

  try {
    app.parse(argc, argv);
    if (tiles) {
      list_tiles();
      return 0;
    }
    std::vector<std::pair<Problem, RunOptions>> runs;
    if (configs.empty()) {
      runs.push_back(finish(flags, joined_args(argc, argv)));
    } else {
      std::ifstream f(configs);
      if (!f) throw ConfigError("configs", configs, "a readable file of run lines");
      std::string line;
      while (std::getline(f, line)) {
        if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
        CLI::App sub{"one run", "flashlab-gpu"};
        RunFlags one;
        add_run_flags(sub, one);
        sub.parse(line, false);
        runs.push_back(finish(one, "flashlab-gpu " + line));
      }
    }
    nlohmann::json all = nlohmann::json::array();
    bool ok = true;
    for (auto& [p, o] : runs) {
      o.commit = commit;
      o.driver = driver;
      const RunResult r = run_config(p, o);
      if (o.profile) continue;
      std::printf("%s\n", summary_line(r).c_str());
      if (r.events_run && !r.events_agree) std::printf("%s\n", r.diff_report.c_str());
      std::fflush(stdout);
      ok = ok && r.passed();
      all.push_back(to_json(r));
    }
    if (!json_path.empty()) write_file(json_path, all.dump(1));
    return ok ? 0 : 3;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "flashlab-gpu: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flashlab-gpu: error: %s\n", e.what());
    return 1;
  }
}
