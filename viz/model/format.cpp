// format.cpp — see format.hpp.
#include "model/format.hpp"

#include <cstdio>

namespace flashlab::viz {

std::string format_tokens(std::int64_t t) {
  if (t < 1024 || t % 128 != 0) return std::to_string(t);
  char buf[32];
  if (t % 1024 == 0) std::snprintf(buf, sizeof buf, "%lldk", static_cast<long long>(t / 1024));
  else std::snprintf(buf, sizeof buf, "%gk", double(t) / 1024);
  return buf;
}

std::vector<std::int64_t> token_ticks(std::int64_t extent, double pixels, double min_spacing) {
  std::vector<std::int64_t> ticks;
  if (extent <= 0 || pixels <= 0) return ticks;
  std::int64_t step = 1;
  while (double(step) * pixels / double(extent) < min_spacing && step < extent) step *= 2;
  for (std::int64_t t = 0; t <= extent; t += step) ticks.push_back(t);
  return ticks;
}

}  // namespace flashlab::viz
