// input_flags.hpp — the flags that choose the numerics' inputs Q, K, V and their seed (--q, --k,
// --v, --seed), as `flashlab run` takes them and `flashlab trace` takes them for its statistics.
#pragma once

#include <string>

#include <CLI/App.hpp>

#include "flashlab/trace/trace.hpp"

namespace flashlab::cli {

/// The flags' text, as given (checked where the inputs are made: parse_fill, parse_u64).
struct InputFlags {
  std::string q = "random", k = "random", v = "random", seed = "0";

  /// The inputs as a trace header records them, the seed parsed: throws ConfigError("seed", text,
  /// "an integer from 0 to 18446744073709551615 (2^64 - 1)").
  InputSpec spec() const;
};

/// Adds --q, --k, --v (FILL: random | zero | index | a number) and --seed (INT) to `cmd`, in the
/// option group `group` of its help.
void add_input_flags(CLI::App& cmd, InputFlags& in, const std::string& group);

}  // namespace flashlab::cli
