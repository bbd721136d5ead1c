// predicted_report.hpp — how `count` and `compare` print the L2/DRAM levels and the time model
// (time/time_model.hpp): the JSON object `predicted` and the text block.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::cli {

/// The one line that says which bytes the FlashAttention papers count.
inline constexpr const char* kPapersCountLine =
    "The FA papers' \"HBM accesses\" are the requests (hbm); DRAM is what reaches the memory chips "
    "after the L2 (the L2 model).";

/// 1.5e-3 -> "1.500 ms" (s, ms or us).
std::string seconds_text(double s);

/// `predicted`: time_s, tflops, peak_fraction, bound, dram_read_bytes, dram_write_bytes,
/// ceilings ("measured" or "datasheet" and their source), launches[] (name, time_s, blocks_s,
/// bound, grid, waves, blocks_per_sm, occupancy_limit, registers_per_thread, sharing, sm_busy,
/// dram_read_bytes, dram_write_bytes, unit_s.<unit>, share.<unit>).
nlohmann::json predicted_json(const TimePrediction& t);

/// The text block of `count`: DRAM beside the requests per tensor, then the predicted time per
/// launch with its bound and the unit breakdown.
std::string predicted_text(const Problem& p, const Counters& k, const TimePrediction& t);

}  // namespace flashlab::cli
