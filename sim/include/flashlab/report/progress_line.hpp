// progress_line.hpp — the plain progress line that long work prints where no bar can be drawn (a
// pipe, a CI log, a notebook): "flashlab sweep: 31% (4/12: n = 4096, v2), 20.0 s elapsed, about
// 44.5 s left", every progress_every() seconds. The `flashlab` command and the Python module print
// the same line.
#pragma once

#include <string>
#include <string_view>

namespace flashlab::report {

/// The line without its newline: `what` the work, `done` its fraction in [0, 1], `part` the part
/// it is in ("4/12: n = 4096, v2"; empty: none), `elapsed` seconds since it started.
std::string progress_line(std::string_view what, double done, std::string_view part, double elapsed);

/// Seconds between two lines: FLASHLAB_PROGRESS_EVERY when set to a number above 0 (the tests'
/// short interval), else 10.
double progress_every();

}  // namespace flashlab::report
