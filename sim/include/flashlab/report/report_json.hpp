// report_json.hpp — the JSON objects of `flashlab count --json` and `flashlab compare --json`,
// built once here for every program that prints them: the command line (apps/flashlab/) and the Python
// module (python/), whose count() and compare() return the same objects as dicts.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/executor/counters.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::report {

/// True when a thread block of every launch fits on one SM (k.blocks_per_sm > 0); false: the
/// blocks per SM and the waves are 0, no wave can run (apps/flashlab/grid_line.hpp says why).
bool fits_on_sm(const Counters& k);

/// One configuration's figures: every metric of the catalogue at its JSON path (metrics_json:
/// hbm.read_bytes.<T>, hbm.total_bytes, tiles.*, flops.matmul, ops.*, sram.*, grid.*,
/// memory.<level>.*, steps, derived.*, warps.*), "launches": one object per launch of the
/// schedule (name, grid, read_bytes and write_bytes at the hbm level, sram_peak_bytes,
/// blocks_per_sm, waves), and "config": config_json(p, model).
nlohmann::json figures_json(const Figures& f, const std::string& model);

/// `predicted`: time_s, tflops, peak_fraction, bound, dram_read_bytes, dram_write_bytes,
/// ceilings ("measured" or "datasheet", and their source: GpuSpec::rates_source), launches[] (name,
/// time_s, blocks_s, bound, grid, waves, blocks_per_sm, occupancy_limit, registers_per_thread,
/// sharing, sm_busy, dram_read_bytes, dram_write_bytes, unit_s.<unit>, share.<unit>).
nlohmann::json predicted_json(const TimePrediction& t);

/// What `flashlab count --json` prints: figures_json(f, model), grid.fits_on_sm and
/// "predicted": predicted_json(f.time). f must come from measure() (the time model run).
nlohmann::json count_json(const Figures& f, const std::string& model);

/// A row of `flashlab compare`: a catalogue metric, shown indented under the row above when `part`.
struct CompareRow {
  const Metric& metric;
  bool part;
};
/// The rows of the comparison, in order: HBM bytes read, written, in all (of which S and P, and
/// O, l, m read), DRAM bytes, matmul FLOPs, arithmetic intensity, exp and all non-matmul ops,
/// tiles visited, SRAM peak, grid, waves, the HBM, matmul and predicted times, TFLOP/s, and the
/// warp split's shared-memory bytes, barriers and extra operations.
const std::vector<CompareRow>& compare_rows();

/// a / b of two metric values; NaN where either is none or b is 0 (shown "-", null in JSON).
double ratio_of(const Value& a, const Value& b);

/// What `flashlab compare --json` prints for the figures of standard attention, V1 and V2 (in that
/// order, one configuration): "model", "algos".<algo> = figures_json + "predicted", and
/// "ratios".<key> = {"standard/v2", "v1/v2"} for each compare_rows() metric (null for NaN).
nlohmann::json compare_json(const std::vector<Figures>& cols, const std::string& model);

}  // namespace flashlab::report
