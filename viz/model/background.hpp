// background.hpp — one result computed off the UI thread (the HBM sweep, the numerics run), so
// that a slow job never stalls a frame. A newer start() supersedes an older job: the older one
// runs to its end, unseen, and its result is dropped.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <utility>
#include <vector>

namespace flashlab::viz {

template <class T>
class Background {
 public:
  Background() = default;
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Starts `job` on its own thread; result() is empty until it finishes.
  void start(std::function<T()> job) {
    if (current_.valid()) abandoned_.push_back(std::move(current_));
    result_.reset();
    current_ = std::async(std::launch::async, std::move(job));
  }
  /// Picks up a finished job. Call once per frame.
  void poll() {
    if (current_.valid() && current_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      result_.emplace(current_.get());
    std::erase_if(abandoned_, [](std::future<T>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
  }
  /// Blocks until the current job has finished (tests, screenshots).
  void wait() {
    if (current_.valid()) result_.emplace(current_.get());
  }
  bool busy() const { return current_.valid(); }
  const T* result() const { return result_ ? &*result_ : nullptr; }

 private:
  std::future<T> current_;
  std::vector<std::future<T>> abandoned_;
  std::optional<T> result_;
};

}  // namespace flashlab::viz
