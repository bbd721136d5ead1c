// schedule.cpp — schedules as Python dicts: flashlab.schedule() hands out the one a config runs
// (sim/include/flashlab/schedule/schedule_json.hpp: its JSON form), and count(), run() and trace()
// take one back, written or edited by hand (docs/model.md "Schedules"; lab 09).
#include "bindings.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/schedule_json.hpp"

namespace flashlab::python {
namespace {

py::object schedule_of(const py::object& cfg, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  if (c.problem.algo == Algo::v3)  // its JSON form has no warp roles, stage ring or deferred actions yet
    throw ConfigError("algo", "v3",
                      "standard, v1 or v2: schedule()'s dict does not hold V3's warp roles, stage ring and deferred "
                      "GEMMs yet (issue 27), so it could not be handed back");
  return to_python(schedule_json(make_schedule(c.problem)));
}

}  // namespace

std::optional<Schedule> schedule_arg(const py::object& s) {
  if (s.is_none()) return std::nullopt;
  // Python's own json module turns the dict into text: a value JSON cannot hold is its TypeError
  const std::string text = py::module_::import("json").attr("dumps")(s).cast<std::string>();
  return schedule_from_json(nlohmann::json::parse(text));
}

void bind_schedule(py::module_& m) {
  m.def("schedule", &schedule_of, py::arg("cfg") = py::none(), R"doc(
schedule(cfg=None, **kwargs) -> dict

The schedule cfg runs, as data: {"launches": [...]}, each launch a dict with its "name", its
"loops" (outermost first: {"dim": 'batch' | 'head' | 'q_block' | 'kv_block' | 'q_row' | 'kv_split',
"grid": True for a thread-block loop (the last one is blockIdx.x), "order": 'ascending' |
'descending'}), the actions of its "prologue" (a list of steps), "outer_begin", "body" (on every
visited tile (i, j)) and "outer_end", and its "placement" (tensor -> 'sram' | 'registers'). An
action is {"op": 'load' | 'store' | 'atomic', "tensor": 'Q', "region": 'q_block' | 'kv_block' |
'whole' | 'q_block_splits', "if_visited": bool} or {"op": 'compute', "eq": 'scores', ...}: the
algorithm line it runs (EQS). docs/model.md "Schedules" cites each line of FA1 Alg. 1 and FA2 Alg. 1.

Edit it (or write one) and pass it back as count(cfg, schedule=s), run(cfg, q, k, v, schedule=s)
or trace(cfg, schedule=s): the simulator walks it instead of cfg's own, on cfg's sizes and mask.
Those raise ValueError (flashlab.ConfigError) naming the place of a bad key or name
("schedule.launches[0].body[2].eq") or the rule a launch breaks, TypeError for a value that is not
JSON (dicts, lists, str, int, float, bool, None).
)doc");
}

}  // namespace flashlab::python
