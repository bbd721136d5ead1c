// algos.cpp — the three algorithms in report order, one algorithm of a multi-algorithm command, and
// per-algorithm resolution with the algorithm named in errors (config.hpp all_algos, with_algo,
// resolve_algo).
#include <algorithm>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"

namespace flashlab {

const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> algos{Algo::standard, Algo::v1, Algo::v2};
  return algos;
}

Config with_algo(Config c, Algo a, const std::vector<Algo>& algos) {
  c.algo = a;
  if (a != Algo::v2 && std::find(algos.begin(), algos.end(), Algo::v2) != algos.end())
    c.backward_form = BackwardForm::released;
  return c;
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

}  // namespace flashlab
