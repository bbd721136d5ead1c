// grid_line.hpp — the grid of a configuration in one line of the `count` table, and, when one
// thread block does not fit on an SM of the GPU preset (an SRAM peak above the SM's shared memory,
// possible with --sram above the preset's, or more warps than an SM holds), why: never "0 blocks
// per SM -> 0 waves" as if zero waves were a figure (issue 9 item 8).
#pragma once

#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/report/report_json.hpp"

namespace flashlab::cli {

using report::fits_on_sm;  // flashlab/report/report_json.hpp

/// "Grid: 16 thread blocks; 3 blocks per SM on h200 (132 SMs) -> 1 wave", or
/// "Grid: 1 thread block; a block does not fit on an SM of h200: its SRAM peak 720,896 B
/// (704.00 KiB) is over the 233,472 B (228.00 KiB) of shared memory per SM -> no wave can run
/// (lower --sram, --br or --bc)" (its warps over the SM's when that is the reason).
std::string grid_line(const Problem& p, const Counters& k);

}  // namespace flashlab::cli
