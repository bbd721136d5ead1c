// predicted_report.hpp — how `count` and `compare` print the L2/DRAM levels and the time model
// (time/time_model.hpp): the text block (the JSON object `predicted`: flashlab/report/report_json.hpp).
#pragma once

#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::cli {

/// The one line that says which bytes the FlashAttention papers count.
inline constexpr const char* kPapersCountLine =
    "The FA papers' \"HBM accesses\" are the requests (hbm); DRAM is what reaches the memory chips "
    "after the L2 (the L2 model).";

/// Bytes the launches leave dirty in the L2 at their end (the L2 model's; not in DRAM written, which
/// counts what reaches DRAM during the launches).
std::uint64_t dirty_at_end(const Counters& k);

/// 1.5e-3 -> "1.500 ms" (s, ms or us).
std::string seconds_text(double s);

/// The text block of `count`: DRAM beside the requests per tensor, then the predicted time per
/// launch with its bound and the unit breakdown.
std::string predicted_text(const Problem& p, const Counters& k, const TimePrediction& t);

}  // namespace flashlab::cli
