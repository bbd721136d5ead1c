// runner.hpp — one configuration on the GPU: the instrumented build's events and m, l against
// the simulator (trace diff), the plain build's O and L against the float64 reference, and the
// plain build's time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device.hpp"
#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "hw_bytes.hpp"

namespace flashlab::gpu {

struct RunOptions {
  InputSpec inputs;                      // fills and seed; head h uses seed + h
  bool events = true;                    // run the instrumented build and diff it with the simulator
  std::optional<std::int64_t> stats_block;  // Q block whose m, l are compared (default: the last)
  bool check = true;                     // O and L of the plain build against float64
  int check_heads = 0;                   // heads checked (0: all when small, else first and last)
  bool time = false;                     // time the plain build
  int warmup = 5, reps = 30;
  bool profile = false;                  // launch the plain build once and nothing else (for ncu)
  std::string trace_path;                // write the GPU trace here (empty: none)
  TraceFormat trace_format = TraceFormat::binary;
  std::string dump_dir;                  // write Q K V O (L, m, l) raw for an outside comparison
  std::string commit, driver, command;   // trace header facts (driver: overrides the detected one)
  std::string model;                     // the model preset of the config ("" when none)
};

struct HeadError {
  std::int64_t bh = 0;
  NumericError error;
};

struct HeadGradError {
  std::int64_t bh = 0;
  GradError error;
};

struct RunResult {
  Problem problem;
  DeviceInfo device;
  // Level 1 (events) and the m, l part of level 2.
  bool events_run = false, events_agree = false;
  std::uint64_t gpu_events = 0, sim_events = 0, stat_values = 0, stat_differing = 0;
  std::int64_t stats_block = -1;
  std::string diff_report;
  // Level 2: O and L of the plain build.
  std::vector<HeadError> numbers;
  bool numbers_within = true, canary_intact = true;
  // Level 2 of the backward (--pass backward): dQ, dK, dV of the plain build.
  std::vector<HeadGradError> grads;
  bool grads_within = true;
  // Timing of the plain build.
  std::vector<float> ms;
  double median_ms = 0, flops = 0, tflops = 0;
  // Level 3 predictions (the profiler's figures are read by scripts/gpu/validate.py): the
  // simulator's request level (hbm) and sector level (what the kernels move).
  TensorBytes sim_bytes{}, kernel_bytes{};
  report::Figures sim;  // the simulator's figures of the same configuration (all heads, sectors and warp model)

  bool passed() const { return (!events_run || events_agree) && numbers_within && grads_within && canary_intact; }
};

/// Runs p on the current device: its forward, or (--pass backward) its forward and then its backward,
/// whose events, dQ, dK, dV and time are checked. Throws ConfigError for a config the kernels do not
/// support (dtype fp32, d, tile shape, split, sizes, --pass both, V2's paper form), std::runtime_error
/// for CUDA failures.
RunResult run_config(const Problem& p, const RunOptions& opt);

/// Matmul FLOPs of the visible (row, key) pairs, 4 d per pair (Q K^T and P V), all heads: the
/// FLOP count that TFLOP/s figures use (a causal mask halves it, as in the FA2 paper's plots).
double attention_flops(const Problem& p);

}  // namespace flashlab::gpu
