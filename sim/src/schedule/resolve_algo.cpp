// resolve_algo.cpp — per-algorithm resolution with the algorithm named in errors (resolve.hpp
// resolve_algo).
#include <string>
#include <vector>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab {
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

}  // namespace flashlab
