// sweep_axis.hpp — what `flashlab sweep` varies (N, d, B_r, B_c or M) and the list of values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab::cli {

enum class Axis : std::uint8_t { n, d, br, bc, sram };

/// "n" (or "seq") | "d" | "br" | "bc" | "sram"; throws ConfigError("over", text, allowed).
Axis parse_axis(const std::string& text);
std::string to_string(Axis a);

/// Sets the axis in c: n sets N_q = N_k; d; br sets B_r; bc sets B_c; sram sets M (bytes).
void set_axis(Config& c, Axis a, std::int64_t value);

/// The configuration flags (without "--") whose value set_axis replaces at every point: n: seq,
/// nq, nk; d: d; br: br; bc: bc; sram: sram. `flashlab sweep` refuses them beside --over, since
/// the value given would be silently dropped.
std::vector<std::string> axis_flags(Axis a);

/// How the values were asked for: a list ("512,1024,2048"), or from/to with a step (linear) or
/// log2 (from, 2 from, 4 from, ... up to `to`). Texts as typed; empty = not given.
struct ValueSpec {
  std::string values, from, to, step;
  bool log2 = false;
};
inline constexpr std::size_t kMaxSweepPoints = 10000;

/// The values, in order. Throws ConfigError naming the flag (values, from, to, step) when the
/// spec is ambiguous, missing, not integers, not increasing, or over kMaxSweepPoints points.
std::vector<std::int64_t> sweep_values(const ValueSpec& s);

}  // namespace flashlab::cli
