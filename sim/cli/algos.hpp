// algos.hpp — running one configuration under several algorithms (compare, run, sweep).
#pragma once

#include <string>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab::cli {

/// standard, v1, v2 — the order every multi-algorithm report uses.
const std::vector<Algo>& all_algos();

/// Parses "standard,v1,v2" or "all" (field names the flag for errors). Throws ConfigError for an
/// unknown name, an empty list or a repeated name.
std::vector<Algo> parse_algo_list(const std::string& field, const std::string& text);

/// resolve(c) with c.algo = a. A ConfigError is rethrown with " (algo <a>, <context>)" added to
/// its field: the algorithm only when another algorithm accepts the config (the SRAM tiles of
/// standard attention are smaller), the context (e.g. a sweep point) when given.
Problem resolve_algo(Config c, Algo a, const std::string& context = "");

}  // namespace flashlab::cli
