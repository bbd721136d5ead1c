// algos.cpp — algorithm lists and per-algorithm resolution with the algorithm named in errors.
#include "algos.hpp"

#include <algorithm>

#include "flashlab/contract/error.hpp"
#include "flashlab/flags/values.hpp"

namespace flashlab::cli {

const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> algos{Algo::standard, Algo::v1, Algo::v2};
  return algos;
}

std::vector<Algo> parse_algo_list(const std::string& field, const std::string& text) {
  if (text == "all") return all_algos();
  const std::string allowed = "all, or a comma-separated list of standard, v1, v2 without repeats";
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

namespace {

// True when resolve() rejects c under every algorithm with the same field.
bool fails_for_all(Config c, const std::string& field) {
  for (Algo b : all_algos()) {
    c.algo = b;
    try {
      resolve(c);
      return false;
    } catch (const ConfigError& e) {
      if (e.field() != field) return false;
    }
  }
  return true;
}

}  // namespace

Problem resolve_algo(Config c, Algo a, const std::string& context) {
  c.algo = a;
  try {
    return resolve(c);
  } catch (const ConfigError& e) {
    std::vector<std::string> where;
    if (!fails_for_all(c, e.field())) where.push_back("algo " + std::string(to_string(a)));
    if (!context.empty()) where.push_back(context);
    if (where.empty()) throw;
    std::string field = e.field() + " (" + where[0];
    for (std::size_t k = 1; k < where.size(); ++k) field += ", " + where[k];
    throw ConfigError(field + ")", e.value(), e.allowed());
  }
}

}  // namespace flashlab::cli
