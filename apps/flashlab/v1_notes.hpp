// v1_notes.hpp — compare's notes where V1's figures would surprise a reader next to standard
// attention's (issue 24: the default compare showed V1 above standard with no word why).
#pragma once

#include <string>

#include "flashlab/report/metrics.hpp"

namespace flashlab::cli {

/// The notes where V1's figures would surprise a reader next to standard attention's: more HBM
/// bytes (Q and O read, O written back, with l and m, at each of its T_c K/V blocks), a longer predicted time
/// (one thread block per (batch, head)). Empty when neither holds; each note ends in a newline.
std::string v1_notes(const report::Figures& standard, const report::Figures& v1);

}  // namespace flashlab::cli
