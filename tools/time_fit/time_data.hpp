// time_data.hpp — the time model's committed H200 data set (tests/data/gpu_time/h200.json, written
// by scripts/gpu/time_dataset.py) read back as rows of a measured and a predicted time: the rows
// that tools/fit_time_model fits on (the training split) and that the CI test scores (both splits).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashlab/time/time_model.hpp"

namespace flashlab::timefit {

/// One row: a run of this project's kernels or one call of PyTorch's FA2, with its walk kept so that
/// the prediction can be recomputed for other TimeParams without walking again.
struct Row {
  std::string flags;            // the data set's key (flashlab-gpu flags, or "torch --pass ...")
  std::string split;            // "train" or "test" (time_configs.split_of: the SHA-256 of the flags)
  std::string family;           // what the row runs, for the report: "v2 128x128x4", "torch forward", ...
  std::vector<double> measured_s;  // per launch: the mean of its ncu gpu__time_duration samples
                                   // (a PyTorch backward: its three backward launches)
  std::vector<double> measured_dram_read;  // per launch: the mean of its ncu dram__bytes_read.sum samples (bytes)
  std::string skipped;          // why the model does not predict this row ("" when it does)
  Problem problem;
  std::shared_ptr<const Schedule> schedule;
  std::shared_ptr<const BlockTimer> timer;
  std::shared_ptr<const Counters> counters;

  double measured() const;                        // seconds, all launches
  TimePrediction predict(const TimeParams& params) const;
};

/// The flags of the simulator's configuration for a data-set key: flashlab-gpu's flags as they are;
/// a PyTorch call as `--kernel fa2 --algo v2` with its shape (FA2's tile and split decision).
std::vector<std::string> simulator_flags(const std::string& key);

/// The Problem of a flag line ("--algo v2 --nq 1000 ..."; every flag with one value), built by the
/// flags' own builder (flags/config_flags.hpp build_config) as the command line builds it.
Problem problem_of(const std::vector<std::string>& flag_words);
Problem problem_of(const std::string& flags);

/// Every row of the data set at `path`, walked once each (rows the model cannot take are kept with
/// `skipped` set). A PyTorch backward row's leading forward launch (flash_fwd: the call writes O and
/// L first) is left out of its measured time, as this project's backward rows leave theirs out.
std::vector<Row> load_rows(const std::string& path);

/// The row's DRAM reads (bytes, all launches): measured by Nsight Compute, and the L2 model's.
double measured_dram_read(const Row& r);
double predicted_dram_read(const Row& r);
/// |predicted / measured - 1| of the DRAM reads per row of `rows` in `split` ("" for all) that is not
/// skipped and read at least 1 MiB from DRAM (below that, a launch's fixed reads and the flushed
/// caches' refill dominate what the L2 model counts).
std::vector<double> dram_errors(const std::vector<Row>& rows, const std::string& split);

/// |predicted / measured - 1| per row of `rows` in `split` ("" for all) that is not skipped.
std::vector<double> errors(const std::vector<Row>& rows, const std::string& split, const TimeParams& params);

/// One round of fit()'s coordinate search from `start`: each constant in turn over its grid (overlap
/// c 0.20..2.00 by 0.02, warp_stream beta 0..1.50 by 0.02, latency lambda 0..2.00 us by 0.02 us, issue
/// interval iota 0..12 cycles by 0.1, split-K phase floor phi 0..1 by 0.02: 440 points), the others held
/// at the best so far; a grid value
/// replaces the current one only when its loss (the mean |ln(predicted / measured)| over the training
/// rows) is strictly lower. Throws ConfigError when no row is a predicted training row.
struct SearchRound {
  TimeParams best;               // where the round ends (`start` when nothing was lower)
  double start_loss = 0;         // the loss at `start`
  double best_loss = 0;          // the loss at `best`
  double lowest_tried_loss = 0;  // the lowest loss among the grid points the round evaluated
  int tried = 0;                 // how many grid points it evaluated
};
SearchRound search_round(const std::vector<Row>& rows, const TimeParams& start);

/// The parameters that minimise the mean |ln(predicted / measured)| over the training rows: rounds
/// of search_round from c = 1, beta = 0.5, lambda = 0.5 us, iota = 0, phi = 0, at most eight, until a round
/// moves nothing (deterministic: the same data give the same figures). Their result is a fixed point
/// of search_round when the search converged within the eight rounds. The training rows are predicted
/// on all the machine's cores.
TimeParams fit(const std::vector<Row>& rows);

}  // namespace flashlab::timefit
