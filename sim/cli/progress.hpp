// progress.hpp — a one-line progress bar on stderr for long runs, drawn only when stderr is a
// terminal (never into a pipe or a log file).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace flashlab::cli {

class Progress {
 public:
  /// Draws when `total` >= `min_total` and stderr is a TTY.
  Progress(std::size_t total, std::size_t min_total);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// One more item done; `label` names it (e.g. "n = 4096").
  void tick(const std::string& label);

 private:
  std::size_t total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point last_draw_{};  // redraws at most every 50 ms
};

}  // namespace flashlab::cli
