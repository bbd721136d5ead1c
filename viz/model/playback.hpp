// playback.hpp — stepping through a schedule: a Track is one algorithm's Executor positioned at
// any step (a seek backwards replays from the start; the executor cannot run in reverse), and
// Playback is the shared clock (play, pause, speed, scrub) that moves every track in step.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab::viz {

class Track {
 public:
  /// `total_steps`: the schedule's Counters::steps when already known (a finished run's), else
  /// counted here (one walk of every tile).
  explicit Track(const Problem& p, std::optional<std::uint64_t> total_steps = std::nullopt);

  /// Steps of the whole schedule, one (batch, head) (Counters::steps).
  std::uint64_t total_steps() const { return total_; }
  /// Steps run so far: 0 before the first step.
  std::uint64_t position() const { return pos_; }
  /// Runs the executor until exactly min(k, total_steps()) steps have run.
  void seek(std::uint64_t k);

  const Executor& executor() const { return *exec_; }
  /// The last step run; nullptr at position 0.
  const StepView* last() const { return pos_ > 0 ? &exec_->last() : nullptr; }

 private:
  Problem p_;
  std::unique_ptr<Executor> exec_;
  std::uint64_t pos_ = 0, total_ = 0;
};

/// The playback clock: a position in steps, moved by play (speed steps per second), step, scrub.
class Playback {
 public:
  void set_total(std::uint64_t total);
  std::uint64_t total() const { return total_; }
  std::uint64_t position() const { return pos_; }
  void seek(std::uint64_t k);
  void step(std::int64_t delta);

  bool playing() const { return playing_; }
  /// Starts playing; at the end, from the start again.
  void play();
  void pause() { playing_ = false; }
  /// Steps per second while playing.
  double speed = 8;
  /// Advances by speed * seconds while playing (fractions carry over); pauses at the end.
  void advance(double seconds);

 private:
  std::uint64_t total_ = 0, pos_ = 0;
  double carry_ = 0;
  bool playing_ = false;
};

}  // namespace flashlab::viz
