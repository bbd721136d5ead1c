// bindings.hpp — the parts of the extension flashlab._flashlab (python/README.md): the Config
// class, JSON to Python, the array functions (trace, tile_map), the numerics (run).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab::python {

namespace py = pybind11;

/// flashlab.Config: the keyword arguments as given (Python values), the model preset, the Config
/// they build (the flags' rules, flags/config_flags.hpp build_config) and the Problem it resolves
/// to. Immutable; replace() makes another.
struct PyConfig {
  py::dict kwargs;    // as given, None values dropped
  std::string model;  // canonical model preset name, "" for none
  Config config;      // before resolve(): what compare() resolves once per algorithm
  Problem problem;    // resolve(config)
};

/// Builds a PyConfig from keyword arguments (Config(...)'s rules): TypeError for an unknown
/// keyword or a value of another type than int, float, str or bool; ConfigError (a ValueError)
/// for a value the flags or resolve() refuse. `default_model` is used when no `model` is given.
PyConfig make_config(const py::dict& kwargs, const std::string& default_model = "");

/// Whether `keyword` is one of Config's keywords (the flags' fields with '_' for '-', pass_, model);
/// config_keywords() lists them, "algo, seq, nq, ..., model".
bool is_config_keyword(const std::string& keyword);
std::string config_keywords();

/// The configuration of a function taking (cfg=None, **kwargs): cfg itself, cfg.replace(**kwargs)
/// when both are given, or Config(**kwargs) (with `default_model` when kwargs has no model).
/// TypeError when cfg is neither None nor a Config.
PyConfig config_arg(const py::object& cfg, const py::kwargs& kwargs, const std::string& default_model = "");

/// A JSON value as Python: objects as dicts (keys sorted, as dump() writes them), arrays as lists, unsigned
/// and signed integers as int, numbers as float, null as None. A non-finite number becomes None,
/// as nlohmann::json's dump() writes it: the dicts equal json.loads of the command's output.
py::object to_python(const nlohmann::json& j);

/// The schedule count(), run() and trace() walk instead of the config's: None, or a dict in the
/// form of flashlab.schedule() (schedule_json.hpp), checked: ConfigError naming the bad place.
std::optional<Schedule> schedule_arg(const py::object& s);

void bind_config(py::module_& m);
void bind_schedule(py::module_& m);
void bind_sweep(py::module_& m);
void bind_arrays(py::module_& m);
void bind_run(py::module_& m);

}  // namespace flashlab::python
