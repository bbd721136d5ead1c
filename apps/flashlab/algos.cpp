// algos.cpp — the --algo list of run and sweep (algos.hpp).
#include "algos.hpp"

#include <algorithm>

#include "flashlab/contract/error.hpp"
#include "flashlab/flags/values.hpp"

namespace flashlab::cli {

std::vector<Algo> parse_algo_list(const std::string& field, const std::string& text) {
  if (text == "all") return all_algos();
  const std::string allowed = "all, or a comma-separated list of standard, v1, v2, v3 without repeats (all: standard, v1, v2)";
  std::vector<Algo> out;
  for (const std::string& name : split_list(field, text, allowed)) {
    Algo a;
    try {
      a = parse_algo(name);
    } catch (const ConfigError&) {
      throw ConfigError(field, text, allowed);
    }
    if (std::find(out.begin(), out.end(), a) != out.end()) throw ConfigError(field, text, allowed);
    out.push_back(a);
  }
  return out;
}

void refuse_algo(const std::string& command, const std::string& text) {
  if (text == "v3")
    throw ConfigError("algo", text,
                      "not modelled for v3 in " + command + " yet: it is built for standard attention, V1 and V2 (issue "
                      "27); flashlab count/trace/run --algo v3 give V3's counts, predicted time, events and numerics, "
                      "explain --algo v3 the walk from V2 to V3");
  throw ConfigError("algo", text, "no value: " + command + " runs its own algorithms (standard, v1, v2)");
}

}  // namespace flashlab::cli
