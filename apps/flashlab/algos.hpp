// algos.hpp — the --algo list of commands that run several algorithms (run, sweep).
#pragma once

#include <string>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab::cli {

// all_algos() and resolve_algo(): flashlab/config/config.hpp.

/// Parses "standard,v1,v2" or "all" (field names the flag for errors). Throws ConfigError for an
/// unknown name, an empty list or a repeated name.
std::vector<Algo> parse_algo_list(const std::string& field, const std::string& text);

/// `--algo` of a command that runs its own algorithms (compare: standard, V1, V2): always throws
/// ConfigError("algo", text, ...) — for v3 saying it is not modelled there yet (it is built for
/// standard attention, V1 and V2: issue 27), and where to go. (explain takes --algo v2 | v3: the
/// walk's end, cmd_explain.cpp.)
[[noreturn]] void refuse_algo(const std::string& command, const std::string& text);

}  // namespace flashlab::cli
