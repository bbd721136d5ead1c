// frame_stats.cpp — see frame_stats.hpp.
#include "model/frame_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace flashlab::viz {

FrameStats summarize(std::vector<double> ms) {
  FrameStats s;
  s.frames = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / double(n);
  s.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  const auto rank = std::size_t(std::ceil(0.95 * double(n)));
  s.p95_ms = ms[std::max<std::size_t>(rank, 1) - 1];
  s.max_ms = ms.back();
  return s;
}

std::string to_string(const FrameStats& s) {
  if (s.frames == 0) return "frames 0: none timed";
  char buf[160];
  std::snprintf(buf, sizeof buf, "frames %zu: mean %.2f ms (%.1f fps), median %.2f ms, p95 %.2f ms, max %.2f ms",
                s.frames, s.mean_ms, s.fps(), s.median_ms, s.p95_ms, s.max_ms);
  return buf;
}

std::string frame_report(double first_ms, const std::vector<double>& later_ms) {
  char first[96];
  std::snprintf(first, sizeof first, "first frame %.2f ms (builds the textures); ", first_ms);
  if (later_ms.empty()) return std::string(first) + "no frame after it to time (--frames 2 or more)";
  const FrameStats s = summarize(later_ms);
  char buf[200];
  std::snprintf(buf, sizeof buf, "the %zu frame%s after it: mean %.2f ms (%.1f fps), median %.2f ms, p95 %.2f ms, max %.2f ms",
                s.frames, s.frames == 1 ? "" : "s", s.mean_ms, s.fps(), s.median_ms, s.p95_ms, s.max_ms);
  return first + std::string(buf);
}

}  // namespace flashlab::viz
