// Schedules as JSON (schedule_json.hpp): every built-in schedule survives the round trip and counts
// the same; a schedule written by hand counts, runs and traces; bad documents are refused by place.
#include <doctest/doctest.h>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule_json.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;
using json = nlohmann::json;

namespace {

void refused(const json& j, const std::string& field, const std::string& part) {
  CAPTURE(j.dump());
  try {
    schedule_from_json(j);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

Config small(Algo a) { return test::small(a, 200, 150, 16, 64, 32, Mask{MaskKind::causal_br, 0, 0}); }

}  // namespace

TEST_CASE("schedule JSON: every built-in schedule round-trips and counts the same") {
  std::vector<Config> configs;
  for (Algo a : all_algos())
    for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
      Config c = small(a);
      c.pass = pass;
      configs.push_back(c);
    }
  Config split = small(Algo::v2);
  split.splits = 3;
  configs.push_back(split);
  for (const WalkStep& w : v1_to_v2_walk()) configs.push_back(with_switches(small(Algo::v1), w.switches));
  for (const Config& c : configs) {
    const Problem p = resolve(c);
    const Schedule s = make_schedule(p);
    const json j = schedule_json(s);
    CAPTURE(j.dump().substr(0, 200));
    const Schedule back = schedule_from_json(j);
    CHECK(schedule_json(back) == j);
    Executor a(p), b(p, back);
    a.run();
    b.run();
    CHECK(a.counters().cost == b.counters().cost);
    CHECK(a.counters().grid_blocks == b.counters().grid_blocks);
  }
}

// V1's schedule with its loops swapped and O_i, l_i, m_i kept on chip is V2's (FA2 Alg. 1): the
// edit a lab asks for, made here on the JSON, gives V2's bytes and V2's O.
TEST_CASE("schedule JSON: V2 written by hand counts and runs as V2") {
  const Problem v2 = resolve(small(Algo::v2));
  json j = schedule_json(make_schedule(v2));
  j["launches"][0]["name"] = "my_v2";
  const Schedule mine = schedule_from_json(j);
  Executor a(v2), b(v2, mine);
  a.run();
  b.run();
  CHECK(a.counters().cost == b.counters().cost);
  const Inputs in = make_inputs(v2, Fill{}, Fill{}, Fill{}, 4);
  const NumericResult r = simulate(v2, mine, in), ref = simulate(v2, in);
  CHECK(r.O == ref.O);
  CHECK(r.L.cwiseEqual(ref.L).all());
  // without the store of O_i: O stays NaN in HBM, as the run shows it
  json no_store = j;
  no_store["launches"][0]["outer_end"].erase(1);
  const NumericResult missing = simulate(v2, schedule_from_json(no_store), in);
  CHECK(missing.O.hasNaN());
  // computing S_ij before loading K_j is refused, naming the equation
  json early = j;
  json& body = early["launches"][0]["body"];
  std::swap(body[0], body[2]);  // scores first, then V_j, then K_j
  CHECK_THROWS_WITH_AS(simulate(v2, schedule_from_json(early), in), doctest::Contains("scores needs Q_i and K_j"),
                       ConfigError);
  // O_i written back by an atomic (the backward's read-modify-write of dQacc): the forward's numerics
  // have no such update, so the step is refused by place, not walked into a NaN O
  json atomic_o = j;
  json& end = atomic_o["launches"][0]["outer_end"];
  REQUIRE(end[1]["op"] == "store");
  REQUIRE(end[1]["tensor"] == "O");
  end[1]["op"] = "atomic";
  CHECK_THROWS_WITH_AS(simulate(v2, schedule_from_json(atomic_o), in),
                       doctest::Contains("schedule = a step at launch 0, block 0, step"), ConfigError);
  CHECK_THROWS_WITH_AS(simulate(v2, schedule_from_json(atomic_o), in), doctest::Contains("has no atomic (O)"),
                       ConfigError);
}

TEST_CASE("schedule JSON: bad documents are refused by place") {
  const json good = schedule_json(make_schedule(resolve(small(Algo::v2))));
  refused(json::array(), "schedule", "an object with the key launches");
  refused(json{{"launches", json::array()}}, "schedule.launches", "1 to 65535 launches");
  json bad_tensor = good;
  bad_tensor["launches"][0]["body"][0]["tensor"] = "X";
  refused(bad_tensor, "schedule.launches[0].body[0].tensor", "one of Q K V");
  json bad_eq = good;
  bad_eq["launches"][0]["body"][2]["eq"] = "softmax";
  refused(bad_eq, "schedule.launches[0].body[2].eq", "one of init_stats scores");
  json bad_dim = good;
  bad_dim["launches"][0]["loops"][2]["dim"] = "rows";
  refused(bad_dim, "schedule.launches[0].loops[2].dim", "one of batch head q_block");
  json extra = good;
  extra["launches"][0]["body"][0]["bytes"] = 4;
  refused(extra, "schedule.launches[0].body[0]", "bytes");
  json bad_memory = good;
  bad_memory["launches"][0]["placement"]["Q"] = "hbm";
  refused(bad_memory, "schedule.launches[0].placement.Q", "sram or registers");
  // a rule of check_schedule: a body needs two tile loops
  json one_loop = good;
  one_loop["launches"][0]["loops"].erase(3);
  refused(one_loop, "schedule.launches[0]", "a body needs two tile loops");
  // a tensor moved without a placement
  json no_place = good;
  no_place["launches"][0]["placement"].erase("K");
  refused(no_place, "schedule.launches[0]", "tensor K is moved but has no placement");
}
