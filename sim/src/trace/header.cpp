// header.cpp — the trace header as JSON (docs/events.md "Header"), parsed strictly.
#include <algorithm>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab::trace_form {
namespace {

using json = nlohmann::json;

// "where.key", or "key" at the top level (where = "").
std::string path(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

// At most `n` characters of an untrusted text, for an error message ("..." marks a cut).
std::string shorten(const std::string& text, std::size_t n = 80) {
  return text.size() <= n ? text : text.substr(0, n) + "...";
}

[[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& allowed) {
  throw ConfigError("trace header " + key, shorten(value, 100), allowed);
}

// A JSON value in an error message, short and without recursion: a scalar as written (a string
// quoted, cut at 80 characters), an array or object by its size. Never the whole document.
std::string describe(const json& v) {
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_string())
    return json(shorten(v.get_ref<const std::string&>())).dump(-1, ' ', false, json::error_handler_t::replace);
  return v.dump();  // a number, true, false or null
}

// Parses one JSON document, refusing arrays and objects nested deeper than kMaxTraceHeaderDepth
// while it parses (the refusal names the key path where it happened, e.g. "config.nq[][]").
// Returns a discarded value for text that is not JSON.
json parse_bounded(std::string_view text) {
  std::vector<bool> is_object(1, true);  // [n]: the container at nesting level n is an object
  std::vector<std::string> keys(1);      // [n]: the last key read at nesting level n
  const json::parser_callback_t limit = [&](int depth, json::parse_event_t event, json& parsed) {
    const auto n = std::size_t(depth);
    if (event == json::parse_event_t::key) {
      keys.resize(n + 1);
      keys[n] = shorten(parsed.get<std::string>(), 40);
      for (char& c : keys[n])
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    } else if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
      if (depth >= kMaxTraceHeaderDepth) {
        std::string where;
        for (std::size_t k = 1; k <= n; ++k)
          where += is_object[k] ? (where.empty() ? "" : ".") + keys[k] : std::string("[]");
        bad(where.empty() ? "JSON" : where, "nested deeper than " + std::to_string(kMaxTraceHeaderDepth) + " levels",
            "at most " + std::to_string(kMaxTraceHeaderDepth) + " levels of arrays and objects (the header's values "
            "are at level 2: docs/events.md \"Header\")");
      }
      is_object.resize(n + 2);
      is_object[n + 1] = event == json::parse_event_t::object_start;
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), limit, false);
}

// The object's keys must all be in `allowed`, and every key of `required` must be there.
void check_keys(const json& obj, const std::string& where, std::initializer_list<const char*> allowed,
                std::initializer_list<const char*> required) {
  if (!obj.is_object()) bad(where.empty() ? "JSON" : where, describe(obj), "a JSON object");
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      std::string names;
      for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      bad(where.empty() ? "keys" : where, "unknown key " + describe(json(key)), "keys " + names);
    }
  }
  for (const char* r : required)
    if (!obj.contains(r)) bad(path(where, r), "missing", "a value (docs/events.md \"Header\")");
}

std::string get_string(const json& obj, const std::string& where, const char* key) {
  const json& v = obj.at(key);
  if (!v.is_string()) bad(path(where, key), describe(v), "a string");
  return v.get<std::string>();
}

std::int64_t get_int(const json& obj, const std::string& where, const char* key) {
  const json& v = obj.at(key);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
    return std::int64_t(v.get<std::uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  bad(path(where, key), describe(v), "an integer");
}

// Rethrows a parser's ConfigError with the header's key in front of its field.
template <class F>
auto named(const std::string& key, F f) {
  try {
    return f();
  } catch (const ConfigError& e) {
    bad(key, e.value(), e.allowed());
  }
}

json config_json(const Config& c) {
  return json{{"algo", std::string(to_string(c.algo))},
              {"nq", c.n_q},
              {"nk", c.n_k},
              {"d", c.d},
              {"br", c.b_r.value_or(0)},
              {"bc", c.b_c.value_or(0)},
              {"sram", c.sram_bytes.value_or(0)},
              {"batch", c.batch},
              {"heads", c.heads},
              {"dtype", std::string(to_string(c.dtype))},
              {"mask", to_string(c.mask)},
              {"block_skip", c.block_skip.value_or(false)},
              {"scale", c.scale.value_or(0.0)},
              {"warps", c.warps},
              {"split", std::string(to_string(c.split.value_or(WarpSplit::split_q)))},
              {"order", std::string(to_string(c.order.value_or(preset_switches(c.algo).order)))},
              {"grid", std::string(to_string(c.grid.value_or(preset_switches(c.algo).grid)))},
              {"rescale", std::string(to_string(c.rescale.value_or(preset_switches(c.algo).rescale)))},
              {"gpu", c.gpu}};
}

Config parse_config(const json& j) {
  const std::string w = "config";
  check_keys(j, w,
             {"algo", "nq", "nk", "d", "br", "bc", "sram", "batch", "heads", "dtype", "mask", "block_skip", "scale",
              "warps", "split", "order", "grid", "rescale", "gpu"},
             {"algo", "nq", "nk", "d", "br", "bc", "sram", "batch", "heads", "dtype", "mask", "block_skip", "scale",
              "warps", "split", "gpu"});
  Config c;
  c.algo = named(w + ".algo", [&] { return parse_algo(get_string(j, w, "algo")); });
  c.n_q = get_int(j, w, "nq");
  c.n_k = get_int(j, w, "nk");
  c.d = get_int(j, w, "d");
  c.b_r = get_int(j, w, "br");
  c.b_c = get_int(j, w, "bc");
  c.sram_bytes = get_int(j, w, "sram");
  c.batch = get_int(j, w, "batch");
  c.heads = get_int(j, w, "heads");
  c.dtype = named(w + ".dtype", [&] { return parse_dtype(get_string(j, w, "dtype")); });
  c.mask = named(w + ".mask", [&] { return parse_mask(get_string(j, w, "mask")); });
  if (!j.at("block_skip").is_boolean()) bad(w + ".block_skip", describe(j.at("block_skip")), "true or false");
  c.block_skip = j.at("block_skip").get<bool>();
  if (!j.at("scale").is_number()) bad(w + ".scale", describe(j.at("scale")), "a number");
  c.scale = j.at("scale").get<double>();
  const std::int64_t warps = get_int(j, w, "warps");
  if (warps < 1 || warps > 32) bad(w + ".warps", std::to_string(warps), "an integer from 1 to 32");
  c.warps = int(warps);
  c.split = named(w + ".split", [&] { return parse_split(get_string(j, w, "split")); });
  // order, grid, rescale: absent from traces written before the switches (the preset's then)
  if (j.contains("order")) c.order = named(w + ".order", [&] { return parse_order(get_string(j, w, "order")); });
  if (j.contains("grid")) c.grid = named(w + ".grid", [&] { return parse_grid(get_string(j, w, "grid")); });
  if (j.contains("rescale"))
    c.rescale = named(w + ".rescale", [&] { return parse_rescale(get_string(j, w, "rescale")); });
  c.gpu = get_string(j, w, "gpu");
  try {
    resolve(c);  // every value in range, tiles within the SRAM capacity
  } catch (const ConfigError& e) {
    bad(w + "." + e.field(), e.value(), e.allowed());
  }
  return c;
}

}  // namespace

std::string header_json(const TraceHeader& h) {
  json j{{"source", std::string(to_string(h.source))}, {"level", std::string(to_string(h.level))},
         {"config", config_json(h.config)}};
  if (h.source == TraceSource::gpu)
    j["gpu"] = json{{"device", h.gpu.device}, {"driver", h.gpu.driver}, {"commit", h.gpu.commit}};
  if (!h.command.empty()) j["command"] = h.command;
  if (h.inputs)
    j["inputs"] = json{{"q", h.inputs->q}, {"k", h.inputs->k}, {"v", h.inputs->v}, {"seed", h.inputs->seed}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

TraceHeader parse_header(std::string_view text) {
  if (text.size() > kMaxTraceHeaderBytes)
    bad("size", std::to_string(text.size()) + " bytes", "at most " + std::to_string(kMaxTraceHeaderBytes) + " bytes");
  const json j = parse_bounded(text);
  if (j.is_discarded()) bad("JSON", "not valid JSON", "one JSON object on one line (docs/events.md \"Header\")");
  check_keys(j, "", {"source", "level", "config", "gpu", "command", "inputs"}, {"source", "level", "config"});
  TraceHeader h;
  h.source = named("source", [&] { return parse_trace_source(get_string(j, "", "source")); });
  h.level = named("level", [&] { return parse_trace_level(get_string(j, "", "level")); });
  h.config = parse_config(j.at("config"));
  if (j.contains("command")) h.command = get_string(j, "", "command");
  if (h.source == TraceSource::gpu) {
    if (!j.contains("gpu")) bad("gpu", "missing", "device, driver and commit of the GPU run (source gpu)");
    const json& g = j.at("gpu");
    check_keys(g, "gpu", {"device", "driver", "commit"}, {"device", "driver", "commit"});
    h.gpu = GpuRunInfo{get_string(g, "gpu", "device"), get_string(g, "gpu", "driver"), get_string(g, "gpu", "commit")};
    for (const auto* s : {&h.gpu.device, &h.gpu.driver, &h.gpu.commit})
      if (s->empty()) bad("gpu", "an empty device, driver or commit", "non-empty strings (source gpu)");
    if (h.command.empty()) bad("command", "missing", "the command line that recorded the GPU trace");
  } else if (j.contains("gpu")) {
    bad("gpu", "present", "no gpu object in a simulator trace (source sim)");
  }
  if (j.contains("inputs")) {
    const json& in = j.at("inputs");
    check_keys(in, "inputs", {"q", "k", "v", "seed"}, {"q", "k", "v", "seed"});
    InputSpec s{get_string(in, "inputs", "q"), get_string(in, "inputs", "k"), get_string(in, "inputs", "v"), 0};
    for (const auto& fill : {std::pair{"q", &s.q}, std::pair{"k", &s.k}, std::pair{"v", &s.v}})
      named(std::string("inputs.") + fill.first, [&] { return parse_fill(fill.first, *fill.second); });
    if (!in.at("seed").is_number_unsigned()) bad("inputs.seed", describe(in.at("seed")), "an integer >= 0");
    s.seed = in.at("seed").get<std::uint64_t>();
    h.inputs = s;
  }
  return h;
}

}  // namespace flashlab::trace_form
