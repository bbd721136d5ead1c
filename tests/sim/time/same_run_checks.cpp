// same_run_checks.cpp — see same_run_checks.hpp.
#include "same_run_checks.hpp"

#include <doctest/doctest.h>

#include <string>

#include "flashlab/trace/trace.hpp"
#include "time_data.hpp"

namespace flashlab::test {

void check_same_run_checks(const nlohmann::json& d) {
  REQUIRE(d["checks"].size() == d["ours"].size());
  for (std::size_t k = 0; k < d["checks"].size(); ++k) {
    const nlohmann::json& c = d["checks"][k];
    CAPTURE(c["checked_as"].get<std::string>());
    CHECK(c["flags"] == d["ours"][k]["flags"]);
    // events: the GPU's count equals the simulator's, the simulator's as it counts now
    CHECK(c["events"]["run"] == true);
    CHECK(c["events"]["gpu"] == c["events"]["sim"]);
    const Problem p = timefit::problem_of(c["checked_as"].get<std::string>());
    CHECK(record_trace(p, TraceLevel::block).events.size() == c["events"]["sim"].get<std::size_t>());
    // numbers: O against float64 within its dtype's tolerance, gradients within theirs
    for (const auto& h : c["numbers"]["heads"]) {
      CHECK(h["finite"] == true);
      CHECK(h["rel_fro_O"].get<double>() <= c["numbers"]["tol_O"].get<double>());
    }
    for (const auto& h : c["grads"]["heads"]) {
      CHECK(h["finite"] == true);
      for (const char* g : {"rel_fro_dQ", "rel_fro_dK", "rel_fro_dV"}) CHECK(h[g].get<double>() <= h["tol"].get<double>());
    }
    CHECK(c["numbers"]["canary_intact"] == true);
  }
}

}  // namespace flashlab::test
