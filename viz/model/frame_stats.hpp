// frame_stats.hpp — summary figures of frame times, for `flashlab-viewer --frames N`.
#pragma once

#include <string>
#include <vector>

namespace flashlab::viz {

struct FrameStats {
  std::size_t frames = 0;
  double mean_ms = 0, median_ms = 0, p95_ms = 0, max_ms = 0;
  double fps() const { return mean_ms > 0 ? 1000.0 / mean_ms : 0; }
};

/// Mean, median (mean of the two middle values for an even count), 95th percentile (nearest rank:
/// the ceil(0.95 n)-th smallest) and maximum of `ms`.
FrameStats summarize(std::vector<double> ms);

/// "frames 300: mean 4.10 ms (244.0 fps), median 4.02 ms, p95 4.90 ms, max 7.31 ms"; with no
/// frames, "frames 0: none timed".
std::string to_string(const FrameStats& s);

/// What `flashlab-viewer --frames N` prints: the first frame's time on its own (it builds the
/// textures: 14 s at 10^9 tiles), then the figures of the N - 1 frames after it:
/// "first frame 812.40 ms (builds the textures); the 299 frames after it: mean 4.10 ms (244.0 fps), ..."
/// or, for N = 1, "first frame 812.40 ms (builds the textures); no frame after it to time (--frames 2 or more)".
std::string frame_report(double first_ms, const std::vector<double>& later_ms);

}  // namespace flashlab::viz
