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
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"
#include "command_line.hpp"
#include "flashlab/kernels/api.hpp"
#include "flashlab/trace/output_file.hpp"
#include "report.hpp"
#include "runner.hpp"

#ifndef FLASHLAB_GIT_COMMIT
#define FLASHLAB_GIT_COMMIT "unknown"
#endif

namespace {

using namespace flashlab;
using namespace flashlab::gpu;

std::pair<Problem, RunOptions> finish(const RunFlags& f, const std::string& command) {
  const Problem p = resolve(f.config->build());
  RunOptions o = f.opt;
  o.events = !f.no_events;
  o.check = !f.no_check;
  if (f.stats_block >= 0) o.stats_block = f.stats_block;
  o.trace_format = parse_trace_format(f.trace_format);
  o.command = command;
  o.model = f.config->model();
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
  for (Family f : {Family::forward, Family::backward, Family::split})
    for (Algo algo : {Algo::standard, Algo::v1, Algo::v2})
      for (int d : {32, 64, 128}) {
        if ((f == Family::backward && algo == Algo::standard) || (f == Family::split && algo != Algo::v2)) continue;
        const char* family = f == Family::forward ? "forward" : f == Family::backward ? "backward" : "split-kv";
        std::printf("%-8s %-8s d=%-3d:", std::string(to_string(algo)).c_str(), family, d);
        for (const TileShape& s : compiled_tiles(algo, d, f)) std::printf(" %dx%dx%d", s.b_r, s.b_c, s.warps);
        std::printf("\n");
      }
  // The variants off a preset's kernel (kernels/README.md): one tile, where its kernel compiles it.
  // v1's row-update family runs split-K warps on every v1 tile above with the K/V outer order and on
  // row_q_outer_tile with the Q outer order; split-Q warps there, and V2's kernel with --grid head or
  // --rescale step, on kVariantShape only.
  for (int d : {32, 64, 128}) {
    std::printf("%-17s d=%-3d:", "split-k q-outer", d);
    for (const TileShape& s : compiled_tiles(Algo::v1, d))
      if (s == row_q_outer_tile(d)) std::printf(" %dx%dx%d", s.b_r, s.b_c, s.warps);
    std::printf("\n");
  }
  for (Algo algo : {Algo::v1, Algo::v2})
    for (int d : {32, 64, 128}) {
      std::printf("%-17s d=%-3d:", algo == Algo::v1 ? "split-q kv-outer" : "v2 head|step", d);
      for (const TileShape& s : compiled_tiles(algo, d))
        if (s == kVariantShape) std::printf(" %dx%dx%d", s.b_r, s.b_c, s.warps);
      std::printf("\n");
    }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flashlab-gpu — runs standard attention, FlashAttention V1 or V2 (split-KV with --splits) on the GPU\n"
               "and checks it against the simulator (events, m and l) and a float64 reference (O, L); times the plain build.",
               "flashlab-gpu"};
  ProgramFlags all;
  all.commit = FLASHLAB_GIT_COMMIT;
  add_program_flags(app, all);
  const RunFlags& flags = all.run;
  const std::string &configs = all.configs, &json_path = all.json_path, &commit = all.commit, &driver = all.driver;
  const bool& tiles = all.tiles;

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
        add_line_flags(sub, one);
        sub.parse(line, false);
        runs.push_back(finish(one, "flashlab-gpu " + line));
      }
    }
    nlohmann::json results = nlohmann::json::array();
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
      results.push_back(to_json(r, o.model));
    }
    if (!json_path.empty()) write_output_file(json_path, results.dump(1));
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
