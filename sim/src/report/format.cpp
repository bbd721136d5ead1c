// format.cpp — numbers as every program prints them (format.hpp).
#include "flashlab/report/format.hpp"

#include <array>

#include <fmt/format.h>

namespace flashlab::report {

std::string group_digits(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string human_bytes(double bytes, int decimals) {
  static constexpr std::array<const char*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < units.size()) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.{}f} {}", bytes, decimals, units[u]);
}

std::string human_count(double v, std::string_view unit) {
  static constexpr std::array<const char*, 7> units{"", "k", "M", "G", "T", "P", "E"};
  std::size_t u = 0;
  while (v >= 1000 && u + 1 < units.size()) {
    v /= 1000;
    ++u;
  }
  if (u == 0) return unit.empty() ? fmt::format("{:.0f}", v) : fmt::format("{:.0f} {}", v, unit);
  return fmt::format("{:.1f} {}{}", v, units[u], unit);
}

std::string bytes_both(std::uint64_t bytes) {
  return bytes < 1024 ? fmt::format("{} B", bytes)
                      : fmt::format("{} B ({})", group_digits(bytes), human_bytes(double(bytes)));
}

std::string ratio(double a, double b) {
  if (b == 0) return "-";
  const double r = a / b;
  if (r >= 100) return fmt::format("{:.0f}x", r);
  return r >= 0.01 || r == 0 ? fmt::format("{:.2f}x", r) : fmt::format("{:.2g}x", r);
}

std::string seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  return s >= 1e-3 ? fmt::format("{:.3f} ms", s * 1e3) : fmt::format("{:.1f} us", s * 1e6);
}

}  // namespace flashlab::report
