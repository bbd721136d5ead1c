// format.hpp — numbers as the viewer prints them: counts with separators, bytes with units,
// token positions with a "k" (1024) suffix, and axis ticks in tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flashlab::viz {

/// 2162688 -> "2,162,688".
std::string format_count(std::uint64_t v);

/// Decimal units with two decimals: 999 -> "999 B", 4460544 -> "4.46 MB", 545260000 -> "545.26 MB".
std::string format_bytes(double bytes);

/// Token positions: 512 -> "512", 32768 -> "32k", 1536 -> "1.5k" (k = 1024 tokens).
std::string format_tokens(std::int64_t tokens);

/// a / b with two decimals and an "x": 1.5592 -> "1.56x"; "-" when b is 0.
std::string format_ratio(double a, double b);

/// Ticks of an axis spanning `extent` tokens over `pixels` pixels: multiples of the smallest power
/// of two step (>= 1 token) that keeps ticks at least `min_spacing` pixels apart, from 0 to extent.
std::vector<std::int64_t> token_ticks(std::int64_t extent, double pixels, double min_spacing);

}  // namespace flashlab::viz
