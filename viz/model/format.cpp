// format.cpp — see format.hpp.
#include "model/format.hpp"

#include <array>
#include <cstdio>

namespace flashlab::viz {

std::string format_count(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  const std::size_t n = digits.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && (n - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 6> units{"B", "kB", "MB", "GB", "TB", "PB"};
  std::size_t u = 0;
  while (bytes >= 1000 && u + 1 < units.size()) {
    bytes /= 1000;
    ++u;
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[u]);
  return buf;
}

std::string format_tokens(std::int64_t t) {
  if (t < 1024 || t % 128 != 0) return std::to_string(t);
  char buf[32];
  if (t % 1024 == 0) std::snprintf(buf, sizeof buf, "%lldk", static_cast<long long>(t / 1024));
  else std::snprintf(buf, sizeof buf, "%gk", double(t) / 1024);
  return buf;
}

std::string format_ratio(double a, double b) {
  if (b == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
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
