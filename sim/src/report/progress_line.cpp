// progress_line.cpp — the plain progress line and its interval (report/progress_line.hpp).
#include "flashlab/report/progress_line.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace flashlab::report {
namespace {

std::string seconds_text(double s) { return s < 100 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s); }

}  // namespace

std::string progress_line(std::string_view what, double done, std::string_view part, double elapsed) {
  const std::string left = done > 0 ? "about " + seconds_text(elapsed * (1 - done) / done) + " left" : "no estimate yet";
  return fmt::format("flashlab {}: {:.0f}%{}, {} elapsed, {}", what, 100 * done,
                     part.empty() ? std::string() : fmt::format(" ({})", part), seconds_text(elapsed), left);
}

double progress_every() {
  const char* text = std::getenv("FLASHLAB_PROGRESS_EVERY");
  const double v = text ? std::strtod(text, nullptr) : 0;
  return v > 0 ? v : 10.0;
}

}  // namespace flashlab::report
