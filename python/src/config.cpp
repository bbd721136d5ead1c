// config.cpp — flashlab.Config: keyword arguments with the command line's names and defaults,
// validated by the library (flags/config_flags.hpp build_config, schedule/resolve.hpp resolve),
// documented by the field docs table (config/field_docs.hpp), as `flashlab --help` is.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/config/field_docs.hpp"
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

// Whether the keyword's flag is a switch, its values on | off in the field docs table: block_skip
// and V3's warp_specialize, pingpong, intra_overlap. Such a keyword also takes True / False.
bool takes_on_off(const std::string& keyword) {
  for (const FieldDoc& d : field_docs())
    if (d.flag == "--" + field_of(keyword)) return d.allowed == "on | off";
  return false;
}

// A keyword's value as the text a user would type after its flag: str as is, bool as on/off for a
// switch (takes_on_off; True/False elsewhere, which those flags refuse by name), an integer (int,
// numpy integers) in decimal, a float (float, numpy floats) as Python's repr (shortest exact form).
std::string flag_text(const std::string& keyword, const py::handle& v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::bool_>(v)) {
    const bool b = v.cast<bool>();
    if (takes_on_off(keyword)) return b ? "on" : "off";
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

// What a keyword does that its flag does not (the rest of its text is the field docs table's).
const std::map<std::string, std::string>& python_notes() {
  static const std::map<std::string, std::string> notes{
      {"pass_", "the keyword of --pass: `pass` is a Python keyword"},
      {"warp_split", "split=, its former name, still works for a release, with a DeprecationWarning"},
      {"kernel",
       "with 'fa2' for N_q = 1 and grouped heads the resolved heads are kv_heads and n_q = heads / kv_heads, "
       "query head k g + r becoming row r of head k, as FA2 reshapes q"},
  };
  return notes;
}

// `text` in lines of at most `width` characters (a longer word stands alone), each after `indent`
// spaces; the first line's indent is the caller's.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width = 100) {
  std::istringstream words(text);
  std::string out, word;
  std::size_t column = indent;
  bool line_start = true;
  while (words >> word) {
    if (!line_start && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_start = false;
  }
  return out;
}

// "  nq            N_q, query rows: an integer from 1 to 2147483647 (default: 1024)": each field of
// the table under its keyword, its text as `flashlab count --help` prints it, then any Python note.
std::string keywords_doc() {
  constexpr std::size_t kColumn = 16;
  std::string s;
  for (const FieldDoc& d : field_docs()) {
    const std::string keyword = keyword_of(d.flag.substr(2));
    std::string line = "  " + keyword;
    line += std::string(kColumn > line.size() + 1 ? kColumn - line.size() : 1, ' ');
    s += line + wrapped(field_help(d), kColumn) + "\n";
    const auto note = python_notes().find(keyword);
    if (note != python_notes().end()) s += std::string(kColumn, ' ') + wrapped("(" + note->second + ")", kColumn) + "\n";
    if (takes_on_off(keyword)) s += std::string(kColumn, ' ') + "(also True / False)\n";
  }
  return s;
}

// Config's docstring: the keywords from the field docs table, between the parts of Python's own.
const std::string& config_doc() {
  static const std::string doc = R"doc(
A validated configuration: the `flashlab` command line's configuration flags as keyword arguments,
with the same names, defaults and checks (flags/config_flags.hpp). Each keyword's text below is
its flag's --help text (the field docs table, sim/src/config/field_docs.cpp; flashlab.CONFIG_FIELDS).

Keywords (all optional; None means the default): the flag's name with _ for -. A value is the text
the flag takes (a str: 'v1', 'causal', 'auto') or an int, float or bool:
)doc" + keywords_doc() + R"doc(
Raises ValueError (flashlab.ConfigError) naming the field, the value and what is allowed, exactly
as the command line does (its field is the flag's name: 'nq', 'block-skip'); TypeError for an
unknown keyword or a value that is not an int, float, str or bool.
Attributes (read-only) are the resolved values, the keys of the config JSON (docs/output.md "Config"):
algo, n_q, n_k, d, b_r, b_c, t_r, t_c, batch, heads, kv_heads, dtype, e_in, mask, block_skip, scale, warps,
split, order, grid, rescale, preset (None for standard attention), sram_capacity_bytes, gpu, model, pass_,
backward_form (None unless V2's backward runs), splits, kernel; warp_split is split (the JSON's key for
the warp split) under its keyword's name; V3's switches warp_specialize, pingpong, intra_overlap (bool),
stages (int), scheduler (str), None unless algo is 'v3'.
)doc";
  return doc;
}

// flashlab.CONFIG_FIELDS: the field docs table as a list of dicts, one per keyword.
py::list config_fields() {
  py::list out;
  const auto or_none = [](const std::string& s) -> py::object { return s.empty() ? py::object(py::none()) : py::str(s); };
  for (const FieldDoc& d : field_docs()) {
    py::dict f;
    f["keyword"] = keyword_of(d.flag.substr(2));
    f["flag"] = d.flag;
    f["json_key"] = or_none(d.json_key);
    f["summary"] = d.summary;
    f["allowed"] = d.allowed;
    f["default"] = or_none(d.fallback);
    f["details"] = or_none(d.details);
    out.append(f);
  }
  return out;
}

// The keys of config_json (config_json.hpp), each a read-only attribute of Config.
constexpr const char* kAttributes[] = {"algo",   "n_q",   "n_k",   "d",         "b_r",     "b_c",
                                       "t_r",    "t_c",   "batch", "heads",     "kv_heads", "dtype",   "e_in",
                                       "mask",   "block_skip", "scale", "warps", "split", "order",
                                       "grid",   "rescale", "preset", "sram_capacity_bytes", "gpu", "model",
                                       "pass",   "backward_form", "splits", "kernel",
                                       // V3's switches (config_json: present for --algo v3 only, else None)
                                       "warp_specialize", "stages", "pingpong", "intra_overlap", "scheduler"};

}  // namespace

bool is_config_keyword(const std::string& keyword) {
  if (keyword == "model") return true;
  const std::vector<std::string>& fields = cli::config_flag_fields();
  return keyword.find('-') == std::string::npos &&
         std::find(fields.begin(), fields.end(), field_of(keyword)) != fields.end();
}

std::string config_keywords() { return keywords_text(); }

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
  auto cls = py::class_<PyConfig>(m, "Config", config_doc().c_str());
  m.attr("CONFIG_FIELDS") = config_fields();
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
