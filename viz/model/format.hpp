// format.hpp — token positions as the viewer's axes print them: a "k" (1024) suffix, and ticks in
// tokens. Every other number is printed by flashlab/report/format.hpp, as the CLI prints it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flashlab::viz {

/// Token positions: 512 -> "512", 32768 -> "32k", 1536 -> "1.5k" (k = 1024 tokens).
std::string format_tokens(std::int64_t tokens);

/// Ticks of an axis spanning `extent` tokens over `pixels` pixels: multiples of the smallest power
/// of two step (>= 1 token) that keeps ticks at least `min_spacing` pixels apart, from 0 to extent.
std::vector<std::int64_t> token_ticks(std::int64_t extent, double pixels, double min_spacing);

}  // namespace flashlab::viz
