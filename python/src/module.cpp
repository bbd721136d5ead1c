// module.cpp — the extension flashlab._flashlab: the error type, count(), compare(), timeline(),
// v1_to_v2_walk() and v2_to_v3_walk(); the
// Config class (config.cpp), trace() and tile_map() (arrays.cpp) and run() (run.cpp) are bound
// from their own files. python/README.md documents the API; flashlab/__init__.py re-exports it.
#include <vector>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "flashlab/config/hopper_walk.hpp"
#include "flashlab/config/reference_tile.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/report/report_json.hpp"
#include "flashlab/report/timeline_json.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/timeline.hpp"

namespace flashlab::python {
namespace {

// flashlab.ConfigError(ValueError) carrying the library's three parts as attributes.
void bind_error(py::module_& m) {
  static py::exception<ConfigError> error(m, "ConfigError", PyExc_ValueError);
  error.doc() =
      "Bad input (a ValueError): str() reads '<field> = <value>: <allowed>', the message of the library's "
      "ConfigError (sim/include/flashlab/contract/error.hpp) and of the command line; the attributes field, "
      "value and allowed hold its parts.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      py::object instance = py::handle(error.ptr())(e.what());  // an instance (error(...) would raise)
      instance.attr("field") = e.field();
      instance.attr("value") = e.value();
      instance.attr("allowed") = e.allowed();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });
}

py::object count(const py::object& cfg, const py::object& schedule, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  const std::optional<Schedule> s = schedule_arg(schedule);
  const nlohmann::json j = without_gil([&] {  // Ctrl-C stops the walk (interrupt.hpp)
    SignalPoll poll("count");
    poll.start(c.problem);
    return report::count_json(s ? report::measure(c.problem, *s, &poll) : report::measure(c.problem, &poll), c.model);
  });
  return to_python(j);
}

py::object compare(const py::object& cfg, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs, "llama3-8b");
  if (c.problem.algo == Algo::v3)  // as `flashlab compare --algo v3`
    throw ConfigError("algo", "v3",
                      "standard, v1 or v2: compare's table reads the time model and the warp model, which does not take "
                      "V3's warp roles yet (issue 27); count(), trace() and run() give V3's counts, predicted time, "
                      "events and numerics");
  std::vector<Problem> problems;
  // each algorithm on its reference kernel's tile unless one is given (reference_tile.hpp), as `flashlab compare`
  for (Algo a : all_algos()) problems.push_back(resolve_algo(compared_config(c.config, a), a));
  const nlohmann::json j = without_gil([&] {
    SignalPoll poll("compare", problems.size());
    std::vector<report::Figures> cols;
    for (const Problem& p : problems) {
      poll.start(p);
      cols.push_back(report::measure(p, &poll));
    }
    return report::compare_json(cols, c.model);
  });
  return to_python(j);
}

py::object timeline_of(const py::object& cfg, std::int64_t sm, std::int64_t max_intervals, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  if (max_intervals < 0) throw ConfigError("max_intervals", std::to_string(max_intervals), "0 or more");
  const nlohmann::json j = without_gil([&] {
    const Schedule s = make_schedule(c.problem);
    return report::timeline_json(timeline(c.problem, s, {.sm = sm, .max_intervals = std::size_t(max_intervals)}),
                                 report::timeline_launch(s));
  });
  return to_python(j);
}

// One step of a walk as Python sees it: {"key", "what", "switches"}.
py::dict walk_step(const std::string& key, const std::string& what, const py::dict& switches) {
  py::dict step;
  step["key"] = key;
  step["what"] = what;
  step["switches"] = switches;
  return step;
}

// The steps of `flashlab explain` (v1_to_v2_walk()), each with its switches as Config keywords.
py::list walk() {
  py::list out;
  for (const WalkStep& s : v1_to_v2_walk()) {
    py::dict switches;
    switches["algo"] = "v1";  // with_switches(): every step is V1's schedule with some switches on
    switches["order"] = std::string(to_string(s.switches.order));
    switches["grid"] = std::string(to_string(s.switches.grid));
    switches["rescale"] = std::string(to_string(s.switches.rescale));
    switches["warp_split"] = std::string(to_string(s.switches.split));
    switches["block_skip"] = s.switches.block_skip;
    out.append(walk_step(s.key, s.what, switches));
  }
  return out;
}

// The steps of `flashlab explain --algo v3` (config/hopper_walk.hpp v2_to_v3_walk) for cfg's V3
// problem, each with its switches as Config keywords.
py::list hopper_walk(const py::object& cfg, const py::kwargs& kwargs) {
  const PyConfig c = config_arg(cfg, kwargs);
  if (c.problem.algo != Algo::v3)
    throw ConfigError("algo", std::string(to_string(c.problem.algo)),
                      "v3: the walk from V2 to V3 starts from the V3 configuration it ends at");
  py::list out;
  for (const HopperWalkStep& s : v2_to_v3_walk(c.problem).steps) {
    py::dict switches;
    switches["algo"] = std::string(to_string(s.algo));
    if (s.algo == Algo::v3) {
      switches["stages"] = s.hopper.stages;
      switches["warp_specialize"] = s.hopper.warp_specialize;
      switches["pingpong"] = s.hopper.pingpong;
      switches["intra_overlap"] = s.hopper.intra_overlap;
      switches["scheduler"] = std::string(to_string(s.hopper.scheduler));
    }
    out.append(walk_step(s.key, s.what, switches));
  }
  return out;
}

}  // namespace

}  // namespace flashlab::python

PYBIND11_MODULE(_flashlab, m) {
  namespace fp = flashlab::python;
  m.doc() = "flashlab's simulator library from Python (python/README.md). Import the package `flashlab`.";
  fp::bind_error(m);
  fp::bind_config(m);
  fp::bind_schedule(m);
  fp::bind_sweep(m);
  m.def("count", &fp::count, fp::py::arg("cfg") = fp::py::none(), fp::py::kw_only(),
        fp::py::arg("schedule") = fp::py::none(), R"doc(
count(cfg=None, *, schedule=None, **kwargs) -> dict

Every counter of one configuration, the dict `flashlab count --json` prints (the same keys and
values; docs/output.md lists each metric with its JSON path and unit): HBM bytes read and written
per tensor (hbm.read_bytes.Q, ... in bytes, all batch * heads pairs), tiles by class, matmul FLOPs,
non-matmul ops by kind, SRAM peak and capacity (bytes), grid and waves, memory levels, the warp
split, "launches", "config" and "predicted" (the L2/DRAM and time models: seconds, TFLOP/s).
Counting rules: docs/model.md, each with its algorithm line (FA1 Alg. 0 and 1, FA2 Alg. 1).

cfg: a flashlab.Config; keyword arguments make one (Config's keywords) or replace some of cfg's.
schedule: a schedule to walk instead of cfg's own, in the form schedule() returns (a lab's answer).
Raises ValueError (flashlab.ConfigError) for an invalid configuration or schedule, TypeError for an
unknown keyword.
)doc");
  m.def("compare", &fp::compare, fp::py::arg("cfg") = fp::py::none(), R"doc(
compare(cfg=None, **kwargs) -> dict

Standard attention, V1 and V2 on one configuration, the dict `flashlab compare --json` prints:
"model", "algos" (standard, v1, v2: count()'s figures and "predicted" each) and "ratios" (per
compared metric, "standard/v2" and "v1/v2"; None where a ratio is undefined). cfg's algo is not
used: the three are run. With no cfg and no model keyword the default is the command's, the
Llama-3-8B layer (model='llama3-8b': 32 heads, d = 128, 8192 tokens, causal).

Raises ValueError (flashlab.ConfigError) for a configuration some algorithm refuses (its field
names that algorithm, e.g. "sram (algo v1)"), TypeError for an unknown keyword.
)doc");
  m.def("timeline", &fp::timeline_of, fp::py::arg("cfg") = fp::py::none(), fp::py::kw_only(),
        fp::py::arg("sm") = -1, fp::py::arg("max_intervals") = 200'000, R"doc(
timeline(cfg=None, *, sm=-1, max_intervals=200000, **kwargs) -> dict

One SM's thread blocks laid out in time (flashlab/time/timeline.hpp, docs/model.md "Timeline, event by
event"), the dict `flashlab timeline --json FILE` writes: V3 event by event (the producer warp and each
consumer warpgroup as in-order streams, the SM's units as queues; FA3 §3.1, §3.2, Alg. 1-2), standard
attention, V1 and V2 step by step. Keys: sm, v3, time_s and analytic_s (seconds), tiles, stages,
truncated, note, lanes (name, kind), units (unit, busy, idle: fractions of time_s by cause),
critical_path, ring ([t_s, stages full]), intervals ([start_s, end_s, lane index, what, i, j, bh, tensor]),
launch (index from 1, count, name: the one launch laid out, the first whose steps walk tiles).

sm: which SM, 0 to SMs - 1, or -1 for the busiest; max_intervals: intervals kept (the first in time).
Raises ValueError (flashlab.ConfigError) for an invalid configuration, sm outside 0 .. SMs - 1 (or -1)
or a negative max_intervals.
)doc");
  m.def("v1_to_v2_walk", &fp::walk, R"doc(
v1_to_v2_walk() -> list of dict

The walk of `flashlab explain` from V1 to V2, one change at a time (docs/model.md "Variants"):
six steps, each a dict with "key" ('v1', 'order', 'grid', 'rescale', 'warp_split', 'block_skip'),
"what" (the change, as explain prints it) and "switches", the Config keywords of that step
(algo='v1', order, grid, rescale, warp_split, block_skip), so that count(cfg, **step["switches"]) is
the step's count; the last step's switches are V2's (FA2 Alg. 1).
)doc");
  m.def("v2_to_v3_walk", &fp::hopper_walk, fp::py::arg("cfg") = fp::py::none(), R"doc(
v2_to_v3_walk(cfg=None, **kwargs) -> list of dict

The walk of `flashlab explain --algo v3` from V2 to V3, one switch at a time (docs/model.md "From V2
to V3 one switch at a time"; FA3 §3.1, §3.2): V2 on FA2's tile, V3 with every switch off, then the
stage ring, warp specialization, ping-pong, intra-warpgroup overlap and the persistent scheduler as
FA3's defaults for cfg set them (a switch FA3 leaves off there, e.g. ping-pong at d > 128, is not a
step). Each step a dict with "key", "what" (as explain prints it) and "switches", the Config keywords
of that step (algo, and for V3 stages, warp_specialize, pingpong, intra_overlap, scheduler), so that
count(cfg, **step["switches"]) is the step's count; the last step's switches are FA3's.

cfg: a flashlab.Config with algo='v3' (keyword arguments make one or replace some of cfg's).
Raises ValueError (flashlab.ConfigError) for another algorithm or an invalid configuration.
)doc");
  fp::bind_arrays(m);
  fp::bind_run(m);
}
