// progress.cpp — "[#########.........]  12/48  n = 4096" redrawn in place with a carriage return.
#include "progress.hpp"

#include <cstdio>

#include <unistd.h>

namespace flashlab::cli {

Progress::Progress(std::size_t total, std::size_t min_total)
    : total_(total), enabled_(total >= min_total && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

void Progress::tick(const std::string& label) {
  ++done_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ < total_ && now - last_draw_ < std::chrono::milliseconds(50)) return;
  last_draw_ = now;
  constexpr std::size_t width = 30;
  const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
  std::string bar(filled, '#');
  bar.append(width - filled, '.');
  std::fprintf(stderr, "\r\033[K[%s] %zu/%zu  %s", bar.c_str(), done_, total_, label.c_str());
  std::fflush(stderr);
}

}  // namespace flashlab::cli
