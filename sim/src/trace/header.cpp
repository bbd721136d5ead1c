// header.cpp — the trace header as JSON (docs/events.md "Header"), parsed strictly.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/config/config_json.hpp"
#include "flashlab/config/json_fields.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/config_from_json.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab::trace_form {
namespace {

using json = nlohmann::json;
using namespace json_fields;

const std::string kPrefix = "trace header ";

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
        bad(kPrefix + (where.empty() ? "JSON" : where), "nested deeper than " + std::to_string(kMaxTraceHeaderDepth) + " levels",
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

}  // namespace

std::string header_json(const TraceHeader& h) {
  json j{{"source", std::string(to_string(h.source))}, {"level", std::string(to_string(h.level))},
         {"config", config_json(trace_problem(h), h.model)}};
  if (h.source == TraceSource::gpu)
    j["gpu"] = json{{"device", h.gpu.device}, {"driver", h.gpu.driver}, {"commit", h.gpu.commit}};
  if (!h.command.empty()) j["command"] = h.command;
  if (h.inputs)
    j["inputs"] = json{{"q", h.inputs->q}, {"k", h.inputs->k}, {"v", h.inputs->v}, {"seed", h.inputs->seed}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

TraceHeader parse_header(std::string_view text) {
  const std::string& pre = kPrefix;
  if (text.size() > kMaxTraceHeaderBytes)
    bad(pre + "size", std::to_string(text.size()) + " bytes",
        "at most " + std::to_string(kMaxTraceHeaderBytes) + " bytes");
  const json j = parse_bounded(text);
  if (j.is_discarded()) bad(pre + "JSON", "not valid JSON", "one JSON object on one line (docs/events.md \"Header\")");
  if (!j.is_object()) bad(pre + "JSON", describe(j), "a JSON object");
  check_keys(j, pre + "keys", pre, {"source", "level", "config", "gpu", "command", "inputs"}, {"source", "level", "config"});
  TraceHeader h;
  h.source = named(pre + "source", [&] { return parse_trace_source(get_string(j, pre, "source")); });
  h.level = named(pre + "level", [&] { return parse_trace_level(get_string(j, pre, "level")); });
  ConfigJson config = config_from_json(j.at("config"), pre + "config");
  h.config = config.config;
  h.model = config.model;
  if (j.contains("command")) h.command = get_string(j, pre, "command");
  if (h.source == TraceSource::gpu) {
    if (!j.contains("gpu")) bad(pre + "gpu", "missing", "device, driver and commit of the GPU run (source gpu)");
    const json& g = j.at("gpu");
    const std::string gpre = pre + "gpu.";
    check_keys(g, pre + "gpu", gpre, {"device", "driver", "commit"}, {"device", "driver", "commit"});
    h.gpu = GpuRunInfo{get_string(g, gpre, "device"), get_string(g, gpre, "driver"), get_string(g, gpre, "commit")};
    for (const auto* s : {&h.gpu.device, &h.gpu.driver, &h.gpu.commit})
      if (s->empty()) bad(pre + "gpu", "an empty device, driver or commit", "non-empty strings (source gpu)");
    if (h.command.empty()) bad(pre + "command", "missing", "the command line that recorded the GPU trace");
  } else if (j.contains("gpu")) {
    bad(pre + "gpu", "present", "no gpu object in a simulator trace (source sim)");
  }
  if (j.contains("inputs")) {
    const json& in = j.at("inputs");
    const std::string ipre = pre + "inputs.";
    check_keys(in, pre + "inputs", ipre, {"q", "k", "v", "seed"}, {"q", "k", "v", "seed"});
    InputSpec s{get_string(in, ipre, "q"), get_string(in, ipre, "k"), get_string(in, ipre, "v"), 0};
    for (const auto& fill : {std::pair{"q", &s.q}, std::pair{"k", &s.k}, std::pair{"v", &s.v}})
      named(ipre + fill.first, [&] { return parse_fill(fill.first, *fill.second); });
    if (!in.at("seed").is_number_unsigned()) bad(ipre + "seed", describe(in.at("seed")), "an integer >= 0");
    s.seed = in.at("seed").get<std::uint64_t>();
    h.inputs = s;
  }
  return h;
}

}  // namespace flashlab::trace_form
