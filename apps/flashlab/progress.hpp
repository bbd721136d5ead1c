// progress.hpp — progress on stderr for work that runs longer than a second: on a terminal a
// one-line bar, "[#########.....................]  31%  sweep 4/12: n = 4096, v2", drawn once the
// work has run for a second (FLASHLAB_PROGRESS_AFTER=SECONDS for tests) and redrawn in place at most
// every 100 ms, erased before the command prints its result (issue 9); off a terminal (a pipe, a CI
// log, a notebook) a plain line every 10 seconds (report/progress_line.hpp,
// FLASHLAB_PROGRESS_EVERY=SECONDS for tests), "flashlab sweep: 31% (4/12: n = 4096, v2), 20.0 s
// elapsed, about 44.5 s left" (issue 24); nothing with --quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/walk_fraction.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::cli {

/// Whether progress is silenced (--quiet, every command that reports progress; commands.cpp).
bool& quiet_progress();

class Progress {
 public:
  enum class Mode { none, bar, lines };
  /// `what` names the work ("sweep", "run"); `items` how many parts it has (sweep points,
  /// algorithms), each advanced by fraction() and closed by tick(). A bar when stderr is a TTY,
  /// plain lines when it is not, none with --quiet.
  explicit Progress(std::string what, std::size_t items = 1);
  /// A bar when `enabled`, else none.
  Progress(std::string what, std::size_t items, bool enabled);
  ~Progress();  // erases the bar
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Names the current part (e.g. "n = 4096, v2").
  void label(std::string text);
  /// The current part is this far done, f in [0, 1].
  void fraction(double f);
  /// The current part is done; the next one starts at fraction 0.
  void tick();
  /// Erases the bar (before the command prints its result).
  void clear();
  /// Whether progress is reported at all: observers feeding it are attached only then.
  bool enabled() const { return mode_ != Mode::none; }
  /// The bar as it would be drawn now, without the carriage return.
  std::string line() const;
  /// The plain line after `elapsed` seconds, without the newline.
  std::string plain_line(double elapsed) const;

 private:
  Progress(std::string what, std::size_t items, Mode mode);
  void draw();
  double done_fraction() const;

  std::string what_, label_;
  std::size_t items_, done_ = 0;
  double part_ = 0;
  Mode mode_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_{};
  std::chrono::duration<double> first_draw_;  // the bar's: work shorter than this shows none
  std::chrono::duration<double> every_;  // plain lines' interval
};

/// An executor observer that reports how far the walk is (executor/walk_fraction.hpp) to a
/// Progress as the current part's fraction. Looks at the clock every 4096 steps only.
class WalkProgress final : public StepObserver {
 public:
  WalkProgress(const Problem& p, Progress& progress);
  void on_step(const StepView& s) override;

 private:
  Progress& progress_;
  WalkFraction walked_;
  std::uint64_t steps_ = 0;
};

/// count(p, sectors) with the walk reported to `progress` when it is enabled (no observer, and no
/// cost, when it is not).
Counters count_with_progress(const Problem& p, Progress& progress, bool sectors = false);
/// model(p) (time/time_model.hpp: counters with sectors and the L2 model, predicted time) with
/// `progress` advanced by the walk.
Modelled model_with_progress(const Problem& p, Progress& progress);
/// simulate(p, in, opt) with the walk reported to `progress` when it is enabled.
NumericResult simulate_with_progress(const Problem& p, const Inputs& in, const NumericsOptions& opt,
                                     Progress& progress);

}  // namespace flashlab::cli
