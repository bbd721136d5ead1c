// config.cpp — flashlab.Config: keyword arguments with the command line's names and defaults,
// validated by the library (flags/config_flags.hpp build_config, schedule/resolve.hpp resolve).
#include <algorithm>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/schedule/resolve.hpp"

namespace flashlab::python {
namespace {

// Keyword name -> flag field: block_skip -> block-skip, pass_ -> pass (`pass` is a Python keyword);
// the other names are the flags' own.
std::string field_of(const std::string& keyword) {
  std::string f = keyword;
  if (f == "pass_") return "pass";
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string keyword_of(const std::string& field) {
  if (field == "pass") return "pass_";
  std::string k = field;
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

// "algo, seq, nq, ..., gpu, model": the keywords Config accepts.
std::string keywords_text() {
  std::string s;
  for (const std::string& f : cli::config_flag_fields()) s += keyword_of(f) + ", ";
  return s + "model";
}

// A keyword's value as the text a user would type after its flag: str as is, bool as on/off for
// block_skip (True/False elsewhere, which those flags refuse by name), an integer (int, numpy
// integers) in decimal, a float (float, numpy floats) as Python's repr (shortest exact form).
std::string flag_text(const std::string& keyword, const py::handle& v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::bool_>(v)) {
    const bool b = v.cast<bool>();
    if (keyword == "block_skip") return b ? "on" : "off";
    return b ? "True" : "False";
  }
  if (PyType_Check(v.ptr()))  // np.float32, float: a class has __float__ too, as an unbound method
    throw py::type_error("Config(" + keyword + "=...): got the type " +
                         std::string(py::str(v.attr("__module__"))) + "." + std::string(py::str(v.attr("__name__"))) +
                         ", expected a value: an int, float, str or bool (the text of the command line's --" +
                         field_of(keyword) + " flag" + (keyword == "dtype" ? ": 'fp16', 'bf16' or 'fp32')" : ")"));
  if (PyIndex_Check(v.ptr())) return py::str(py::int_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
  if (PyFloat_Check(v.ptr()) || py::hasattr(v, "__float__"))
    return py::repr(py::float_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
  throw py::type_error("Config(" + keyword + "=...): got a " + std::string(py::str(v.get_type().attr("__name__"))) +
                       ", expected an int, float, str or bool (the text of the command line's --" +
                       field_of(keyword) + " flag)");
}

std::string config_repr(const PyConfig& c) {
  std::string s = "flashlab.Config(";
  bool first = true;
  for (const auto& [k, v] : c.kwargs) {
    if (!first) s += ", ";
    s += k.cast<std::string>();
    s += "=";
    s += py::repr(v).cast<std::string>();
    first = false;
  }
  return s + ")";
}

// The keys of config_json (config_json.hpp), each a read-only attribute of Config.
constexpr const char* kAttributes[] = {"algo",   "n_q",   "n_k",   "d",         "b_r",     "b_c",
                                       "t_r",    "t_c",   "batch", "heads",     "kv_heads", "dtype",   "e_in",
                                       "mask",   "block_skip", "scale", "warps", "split", "order",
                                       "grid",   "rescale", "preset", "sram_capacity_bytes", "gpu", "model",
                                       "pass",   "backward_form", "splits", "kernel"};

}  // namespace

PyConfig make_config(const py::dict& kwargs, const std::string& default_model) {
  PyConfig out;
  std::vector<cli::FlagText> given;
  std::string model = default_model;
  const std::vector<std::string>& fields = cli::config_flag_fields();
  for (const auto& [key, value] : kwargs) {
    std::string keyword = key.cast<std::string>();
    if (keyword == "split") {  // the former name of warp_split, read for a release
      if (PyErr_WarnEx(PyExc_DeprecationWarning, "flashlab.Config: split= is now warp_split=; split= will be removed", 1) != 0)
        throw py::error_already_set();
      keyword = "warp_split";
    }
    if (keyword == "model") {
      if (value.is_none()) model = "";
      else if (py::isinstance<py::str>(value)) model = value.cast<std::string>();
      else throw py::type_error("Config(model=...): got a " + std::string(py::str(value.get_type().attr("__name__"))) +
                                ", expected a str (a model preset name, or 'none')");
      out.kwargs[key] = value;
      continue;
    }
    if (std::find(fields.begin(), fields.end(), field_of(keyword)) == fields.end() || keyword.find('-') != std::string::npos)
      throw py::type_error("Config() got an unexpected keyword argument '" + keyword + "'; the keywords are " +
                           keywords_text());
    if (value.is_none()) continue;  // the default, as if not given
    const std::string field = field_of(keyword);
    if (std::any_of(given.begin(), given.end(), [&](const cli::FlagText& g) { return g.field == field; }))
      throw py::type_error("Config() got the same setting twice: '" + keyword + "' and '" + keyword_of(field) +
                           "' (pass_ is the keyword of --pass; 'pass' is a Python keyword)");
    given.push_back({field, flag_text(keyword, value)});
    out.kwargs[py::str(keyword_of(field))] = value;  // repr() gives keywords that eval back (pass_)
  }
  out.model = cli::model_name(model);
  out.config = cli::build_config(given, model);
  out.problem = resolve(out.config);
  return out;
}

PyConfig config_arg(const py::object& cfg, const py::kwargs& kwargs, const std::string& default_model) {
  if (cfg.is_none()) {
    if (default_model.empty() || kwargs.contains("model")) return make_config(kwargs);
    return make_config(kwargs, default_model);
  }
  if (!py::isinstance<PyConfig>(cfg))
    throw py::type_error("cfg: got a " + std::string(py::str(cfg.get_type().attr("__name__"))) +
                         ", expected a flashlab.Config or None (then the keyword arguments make one)");
  const PyConfig& c = cfg.cast<const PyConfig&>();
  if (kwargs.empty()) return c;
  py::dict merged = c.kwargs.attr("copy")();  // c stays as it is
  for (const auto& [k, v] : kwargs) {
    const std::string keyword = k.cast<std::string>();
    // the canonical keyword (pass -> pass_), so that a replacement overrides the setting it names
    merged[py::str(keyword == "model" ? keyword : keyword_of(field_of(keyword)))] = v;
  }
  return make_config(merged);
}

void bind_config(py::module_& m) {
  auto cls = py::class_<PyConfig>(m, "Config", R"doc(
A validated configuration: the `flashlab` command line's configuration flags as keyword arguments,
with the same names, defaults and checks (flags/config_flags.hpp, sim/include/flashlab/config/config.hpp).

Keywords (all optional; None means the default):
  algo        'standard' (FA1 Alg. 0) | 'v1' (FA1 Alg. 1) | 'v2' (FA2 Alg. 1); default 'v2'
  seq         N_q = N_k (nq or nk given with it override their side)
  nq, nk      N_q query rows, N_k keys (default 1024 each)
  d           head dimension (default 64)
  br, bc      B_r x B_c tile, elements: an int or 'auto' (FA1 Alg. 1 line 1 from M); default FA2's tile for d
  sram        SRAM capacity M, bytes (default: the GPU preset's shared memory per block)
  batch, heads   (default 1 each)
  kv_heads    K/V heads H_k, a divisor of heads (grouped-query attention; default heads, or the model's)
  dtype       'fp16' | 'bf16' | 'fp32' (default 'fp16'; accumulation is fp32)
  mask        'none' | 'causal' | 'causal-br' | 'window:LEFT,RIGHT' (-1: no limit on that side)
  block_skip  True/False or 'on'/'off' (default on for v2, off for v1)
  order, grid, rescale, warp_split   the switches from V1 to V2 (docs/model.md "Variants");
              warp_split: 'split-q' | 'split-k', how the warps of a thread block share a tile
  pass_       'forward' | 'backward' | 'both' (the command line's --pass; `pass` is a Python keyword)
  backward_form  'released' | 'paper' | 'deterministic': V2's backward as FA2's kernels run it, as FA2
                 Alg. 2 prints it, or as FA2's kernels run it with deterministic=True
  splits      split-KV: V2's K/V blocks in N splits (1 to 128) merged by a combine launch, or 'auto'
              (FA2's num_splits_heuristic); default 1 ('auto' with kernel='fa2')
  kernel      'flashlab' | 'fa2': what FA2's mha_fwd launches (its tile, split decision, decode folding:
              for N_q = 1 with grouped heads the resolved heads are kv_heads and n_q = heads / kv_heads,
              query head k g + r becoming row r of head k, as FA2 reshapes q)
  scale       softmax scale (default 1/sqrt(d))
  warps       warps per thread block (default 4; 8 for V2's backward on FA2's tile)
  gpu         GPU preset (default 'h200')
  model       model preset ('llama3-8b', ...): fills heads, kv_heads, d, N_q = N_k and mask (bottom-right
              causal); explicit keywords override (heads without kv_heads: one K/V head per head)

Raises ValueError (flashlab.ConfigError) naming the field, the value and what is allowed, exactly
as the command line does (its field is the flag's name: 'nq', 'block-skip'); TypeError for an
unknown keyword or a value that is not an int, float, str or bool.
Attributes (read-only) are the resolved values, the keys of the config JSON (docs/output.md "Config"):
algo, n_q, n_k, d, b_r, b_c, t_r, t_c, batch, heads, kv_heads, dtype, e_in, mask, block_skip, scale, warps,
split, order, grid, rescale, preset (None for standard attention), sram_capacity_bytes, gpu, model, pass_,
backward_form (None unless V2's backward runs), splits, kernel; warp_split is split (the JSON's key for
the warp split) under its keyword's name.
)doc");
  cls.def(py::init([](const py::kwargs& kw) { return make_config(kw); }))
      .def("to_dict", [](const PyConfig& c) { return to_python(config_json(c.problem, c.model)); },
           "The resolved configuration as a dict: the config JSON of `flashlab count --json` (docs/output.md \"Config\").")
      .def("replace", [](const PyConfig& c, const py::kwargs& kw) { return config_arg(py::cast(c), kw); },
           "A new Config: these keyword arguments over this one's (None: back to the default). Raises as Config().")
      .def_property_readonly("kwargs", [](const PyConfig& c) { return py::dict(c.kwargs.attr("copy")()); },
                             "The keyword arguments as given (a copy).")
      .def("__repr__", &config_repr)
      .def("__eq__", [](const PyConfig& a, const py::object& b) {
        return py::isinstance<PyConfig>(b) &&
               config_json(a.problem, a.model) == config_json(b.cast<const PyConfig&>().problem, b.cast<const PyConfig&>().model);
      });
  cls.attr("__hash__") = py::none();
  for (const char* key : kAttributes)
    // `pass` is a Python keyword: c.pass would not parse, so the attribute is pass_ as the keyword
    cls.def_property_readonly(std::string(key) == "pass" ? "pass_" : key, [key](const PyConfig& c) -> py::object {
      const nlohmann::json j = config_json(c.problem, c.model);
      return j.contains(key) ? to_python(j.at(key)) : py::none();
    });
  // the keyword's own name for the JSON's "split" (Config(warp_split=...).warp_split)
  cls.def_property_readonly("warp_split", [](const PyConfig& c) { return to_python(config_json(c.problem, c.model).at("split")); });
}

}  // namespace flashlab::python
