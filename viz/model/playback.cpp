// playback.cpp — see playback.hpp.
#include "model/playback.hpp"

#include <algorithm>
#include <cmath>

#include "flashlab/executor/count.hpp"

namespace flashlab::viz {

Track::Track(const Problem& p, std::optional<std::uint64_t> total_steps)
    : p_(p), exec_(std::make_unique<Executor>(p)), total_(total_steps ? *total_steps : count(p).steps) {}

void Track::seek(std::uint64_t k) {
  k = std::min(k, total_);
  if (k < pos_) {
    exec_ = std::make_unique<Executor>(p_);
    pos_ = 0;
  }
  while (pos_ < k && exec_->step()) ++pos_;
}

void Playback::set_total(std::uint64_t total) {
  total_ = total;
  pos_ = std::min(pos_, total_);
}

void Playback::seek(std::uint64_t k) {
  pos_ = std::min(k, total_);
  carry_ = 0;
}

void Playback::step(std::int64_t delta) {
  playing_ = false;
  if (delta < 0) {
    const auto back = std::uint64_t(-delta);
    seek(back > pos_ ? 0 : pos_ - back);
  } else {
    seek(pos_ + std::uint64_t(delta));
  }
}

void Playback::play() {
  if (pos_ >= total_) seek(0);  // play at the end starts over
  playing_ = total_ > 0;
}

void Playback::advance(double seconds) {
  if (!playing_) return;
  carry_ += std::max(0.0, speed * seconds);
  const double whole = std::floor(carry_);
  carry_ -= whole;
  const auto room = double(total_ - pos_);
  pos_ += std::uint64_t(std::min(whole, room));
  if (pos_ >= total_) playing_ = false;
}

}  // namespace flashlab::viz
