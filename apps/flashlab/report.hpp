// report.hpp — what the commands print about a configuration besides the metrics: the one-line
// resolved configuration. Numbers are formatted by flashlab/report/format.hpp, metrics come from
// flashlab/report/metrics.hpp, JSON objects from flashlab/report/report_json.hpp.
#pragma once

#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::cli {

/// The algorithm-independent part of a configuration in one line: sizes, B_r x B_c tiles and
/// T_r x T_c, mask, dtype, batch, heads, SRAM capacity M and GPU.
std::string shape_line(const Problem& p);
/// "<algo>: <shape_line>; block skip on|off".
std::string config_line(const Problem& p);

// The JSON of count --json and compare --json is built by the library (flashlab/report/report_json.hpp),
// for the command line and the Python module alike.

}  // namespace flashlab::cli
