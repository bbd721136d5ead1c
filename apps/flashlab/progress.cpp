// progress.cpp — the progress bar, the plain lines and the executor observer that feeds them (progress.hpp).
#include "progress.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <unistd.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/report/progress_line.hpp"

namespace flashlab::cli {
namespace {

constexpr auto kRedraw = std::chrono::milliseconds(100);
constexpr std::size_t kWidth = 30;

// Work shorter than this never shows a bar: FLASHLAB_PROGRESS_AFTER seconds when set to a number above
// 0 (the tests' short threshold, so that a fraction of a second of work shows the bar), else 1 second.
std::chrono::duration<double> first_draw() {
  const char* text = std::getenv("FLASHLAB_PROGRESS_AFTER");
  const double v = text ? std::strtod(text, nullptr) : 0;
  return std::chrono::duration<double>(v > 0 ? v : 1.0);
}

Progress::Mode mode_for_stderr() {
  if (quiet_progress()) return Progress::Mode::none;
  return ::isatty(STDERR_FILENO) == 1 ? Progress::Mode::bar : Progress::Mode::lines;
}

}  // namespace

bool& quiet_progress() {
  static bool quiet = false;
  return quiet;
}

Progress::Progress(std::string what, std::size_t items) : Progress(std::move(what), items, mode_for_stderr()) {}

Progress::Progress(std::string what, std::size_t items, bool enabled)
    : Progress(std::move(what), items, enabled ? Mode::bar : Mode::none) {}

Progress::Progress(std::string what, std::size_t items, Mode mode)
    : what_(std::move(what)), items_(std::max<std::size_t>(items, 1)), mode_(mode),
      start_(std::chrono::steady_clock::now()), first_draw_(first_draw()), every_(report::progress_every()) {}

Progress::~Progress() { clear(); }

void Progress::label(std::string text) {
  label_ = std::move(text);
  draw();
}

void Progress::fraction(double f) {
  part_ = std::clamp(f, 0.0, 1.0);
  draw();
}

void Progress::tick() {
  done_ = std::min(done_ + 1, items_);
  part_ = 0;
  draw();
}

void Progress::clear() {
  if (!drawn_ || mode_ != Mode::bar) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

double Progress::done_fraction() const {
  return (double(done_) + (done_ < items_ ? part_ : 0.0)) / double(items_);
}

std::string Progress::line() const {
  const double all = done_fraction();
  const std::size_t filled = std::min(kWidth, std::size_t(all * double(kWidth)));
  std::string text = fmt::format("[{}{}] {:3.0f}%  {}", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                                 100 * all, what_);
  if (items_ > 1) text += fmt::format(" {}/{}", std::min(done_ + 1, items_), items_);
  if (!label_.empty()) text += ": " + label_;
  return text;
}

std::string Progress::plain_line(double elapsed) const {
  std::string part;
  if (items_ > 1) part = fmt::format("{}/{}", std::min(done_ + 1, items_), items_);
  if (!label_.empty()) part += (part.empty() ? "" : ": ") + label_;
  return report::progress_line(what_, done_fraction(), part, elapsed);
}

void Progress::draw() {
  if (mode_ == Mode::none) return;
  const auto now = std::chrono::steady_clock::now();
  if (mode_ == Mode::lines) {  // one line each time another interval has passed
    const std::chrono::duration<double> since = now - start_, since_last = now - last_draw_;
    if (since < every_ || (drawn_ && since_last < every_)) return;
    last_draw_ = now;
    drawn_ = true;
    std::fprintf(stderr, "%s\n", plain_line(since.count()).c_str());
    std::fflush(stderr);
    return;
  }
  if (now - start_ < first_draw_ || (drawn_ && now - last_draw_ < kRedraw)) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r\033[K%s", line().c_str());
  std::fflush(stderr);
  drawn_ = true;
}

WalkProgress::WalkProgress(const Problem& p, Progress& progress) : progress_(progress), walked_(p) {}

void WalkProgress::on_step(const StepView& s) {
  walked_.step(s);
  if (++steps_ % 4096 == 0) progress_.fraction(walked_.value());
}

Counters count_with_progress(const Problem& p, Progress& progress, bool sectors) {
  WalkProgress walk(p, progress);
  return count(p, sectors, false, progress.enabled() ? &walk : nullptr);
}

Modelled model_with_progress(const Problem& p, Progress& progress) {
  WalkProgress walk(p, progress);
  return model(p, progress.enabled() ? &walk : nullptr);
}

NumericResult simulate_with_progress(const Problem& p, const Inputs& in, const NumericsOptions& opt,
                                     Progress& progress) {
  WalkProgress walk(p, progress);
  return simulate(p, in, opt, progress.enabled() ? &walk : nullptr);
}

}  // namespace flashlab::cli
