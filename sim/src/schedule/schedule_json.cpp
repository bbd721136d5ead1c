// schedule_json.cpp — schedules to and from JSON (schedule_json.hpp).
#include "flashlab/schedule/schedule_json.hpp"

#include <stdexcept>
#include <string_view>

#include "flashlab/config/json_fields.hpp"
#include "flashlab/contract/names.hpp"  // to_string(Tensor, Op, Eq)

namespace flashlab {
namespace {

using json = nlohmann::json;
using json_fields::bad;
using json_fields::check_keys;
using json_fields::describe;
using json_fields::get_bool;
using json_fields::get_string;

constexpr std::string_view kDims[] = {"batch", "head", "q_block", "kv_block", "q_row", "kv_split", "dq_slice"};
constexpr std::string_view kRegions[] = {"none", "whole", "q_block", "kv_block", "q_block_splits"};
static_assert(std::size(kDims) == kDimCount);

std::string_view dim_name(Dim d) { return kDims[int(d)]; }
std::string_view region_name(Region r) { return kRegions[int(r)]; }

// The value of `name` among names(k) for k < n; ConfigError listing them otherwise.
template <class E, class Names>
E by_name(const std::string& field, const std::string& name, int n, Names names, int first = 0) {
  std::string allowed;
  for (int k = first; k < n; ++k) {
    if (names(E(k)) == name) return E(k);
    allowed += (allowed.empty() ? "one of " : " ") + std::string(names(E(k)));
  }
  bad(field, describe(json(name)), allowed);
}

json action_json(const Action& a) {
  json j{{"op", to_string(a.op)}, {"if_visited", a.if_visited}};
  if (a.op == Op::compute) j["eq"] = to_string(a.eq);
  else {
    j["tensor"] = to_string(a.tensor);
    j["region"] = region_name(a.region);
    if (a.requests != 1) j["requests"] = a.requests;
    if (a.padded) j["padded"] = true;
    if (a.per_kv_head) j["per_kv_head"] = true;
  }
  return j;
}

Action action_from(const json& j, const std::string& at) {
  const std::string pre = at + ".";
  if (!j.is_object()) bad(at, describe(j), "an action: an object with op and tensor, region or eq");
  Action a;
  const std::string op = get_string(j, pre, "op");
  if (op == "compute") {
    check_keys(j, at, pre, {"op", "eq", "if_visited"}, {"op", "eq"});
    a.op = Op::compute;
    a.eq = by_name<Eq>(pre + "eq", get_string(j, pre, "eq"), kEqCount, [](Eq e) { return to_string(e); }, 1);
  } else {
    check_keys(j, at, pre, {"op", "tensor", "region", "if_visited", "requests", "padded", "per_kv_head"},
               {"op", "tensor", "region"});
    if (op == "load") a.op = Op::load;
    else if (op == "store") a.op = Op::store;
    else if (op == "atomic") a.op = Op::atomic;
    else bad(pre + "op", describe(j.at("op")), "one of load store atomic compute");
    a.tensor = by_name<Tensor>(pre + "tensor", get_string(j, pre, "tensor"), kTensorCount,
                               [](Tensor t) { return to_string(t); });
    a.region = by_name<Region>(pre + "region", get_string(j, pre, "region"), int(std::size(kRegions)), region_name, 1);
  }
  if (j.contains("if_visited")) a.if_visited = get_bool(j, pre, "if_visited");
  if (j.contains("requests")) {
    const json& r = j.at("requests");
    if (!r.is_number_integer() || r.get<std::int64_t>() < 1 || r.get<std::int64_t>() > 32)
      bad(pre + "requests", describe(r), "an integer from 1 to 32 (times the thread block requests the region)");
    a.requests = std::uint8_t(r.get<std::int64_t>());
  }
  if (j.contains("padded")) a.padded = get_bool(j, pre, "padded");
  if (j.contains("per_kv_head")) a.per_kv_head = get_bool(j, pre, "per_kv_head");
  return a;
}

json actions_json(const std::vector<Action>& acts) {
  json out = json::array();
  for (const Action& a : acts) out.push_back(action_json(a));
  return out;
}

std::vector<Action> actions_from(const json& j, const std::string& at) {
  if (!j.is_array()) bad(at, describe(j), "a list of actions");
  std::vector<Action> out;
  for (std::size_t k = 0; k < j.size(); ++k) out.push_back(action_from(j[k], at + "[" + std::to_string(k) + "]"));
  return out;
}

json launch_json(const Launch& l) {
  json loops = json::array(), prologue = json::array(), placement = json::object();
  for (const Loop& x : l.loops)
    loops.push_back({{"dim", dim_name(x.dim)}, {"grid", x.thread_block},
                     {"order", x.order == Order::ascending ? "ascending" : "descending"}});
  for (const auto& step : l.prologue) prologue.push_back(actions_json(step));
  for (const Placement& x : l.placement) placement[std::string(to_string(x.tensor))] = to_string(x.memory);
  return {{"name", l.name},
          {"loops", loops},
          {"prologue", prologue},
          {"outer_begin", actions_json(l.outer_begin)},
          {"body", actions_json(l.body)},
          {"outer_end", actions_json(l.outer_end)},
          {"placement", placement}};
}

Launch launch_from(const json& j, const std::string& at) {
  const std::string pre = at + ".";
  if (!j.is_object()) bad(at, describe(j), "a launch: an object with name, loops, prologue, outer_begin, body, outer_end, placement");
  check_keys(j, at, pre, {"name", "loops", "prologue", "outer_begin", "body", "outer_end", "placement"},
             {"name", "loops", "prologue", "outer_begin", "body", "outer_end", "placement"});
  Launch l;
  l.name = get_string(j, pre, "name");
  const json& loops = j.at("loops");
  if (!loops.is_array()) bad(pre + "loops", describe(loops), "a list of loops, outermost first");
  for (std::size_t k = 0; k < loops.size(); ++k) {
    const std::string lat = pre + "loops[" + std::to_string(k) + "]", lpre = lat + ".";
    if (!loops[k].is_object()) bad(lat, describe(loops[k]), "a loop: an object with dim, grid (and order)");
    check_keys(loops[k], lat, lpre, {"dim", "grid", "order"}, {"dim", "grid"});
    Loop x;
    x.dim = by_name<Dim>(lpre + "dim", get_string(loops[k], lpre, "dim"), kDimCount, dim_name);
    x.thread_block = get_bool(loops[k], lpre, "grid");
    if (loops[k].contains("order")) {
      const std::string o = get_string(loops[k], lpre, "order");
      if (o == "ascending") x.order = Order::ascending;
      else if (o == "descending") x.order = Order::descending;
      else bad(lpre + "order", describe(loops[k].at("order")), "one of ascending descending");
    }
    l.loops.push_back(x);
  }
  const json& prologue = j.at("prologue");
  if (!prologue.is_array()) bad(pre + "prologue", describe(prologue), "a list of steps, each a list of actions");
  for (std::size_t k = 0; k < prologue.size(); ++k)
    l.prologue.push_back(actions_from(prologue[k], pre + "prologue[" + std::to_string(k) + "]"));
  l.outer_begin = actions_from(j.at("outer_begin"), pre + "outer_begin");
  l.body = actions_from(j.at("body"), pre + "body");
  l.outer_end = actions_from(j.at("outer_end"), pre + "outer_end");
  const json& placement = j.at("placement");
  if (!placement.is_object()) bad(pre + "placement", describe(placement), "an object: tensor name -> sram or registers");
  for (const auto& [name, memory] : placement.items()) {
    const std::string field = pre + "placement." + json_fields::shorten(name);
    Placement x;
    x.tensor = by_name<Tensor>(field, name, kTensorCount, [](Tensor t) { return to_string(t); });
    if (!memory.is_string()) bad(field, describe(memory), "sram or registers");
    const std::string m = memory.get<std::string>();
    if (m == "sram") x.memory = Memory::sram;
    else if (m == "registers") x.memory = Memory::registers;
    else bad(field, describe(memory), "sram or registers");
    l.placement.push_back(x);
  }
  return l;
}

}  // namespace

json schedule_json(const Schedule& s) {
  json launches = json::array();
  for (const Launch& l : s.launches) launches.push_back(launch_json(l));
  return {{"launches", launches}};
}

Schedule schedule_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, describe(j), "an object with the key launches");
  check_keys(j, where, where + ".", {"launches"}, {"launches"});
  const json& launches = j.at("launches");
  if (!launches.is_array() || launches.empty() || launches.size() > 0xFFFF)
    bad(where + ".launches", describe(launches), "a list of 1 to 65535 launches, in launch order");
  Schedule s;
  for (std::size_t k = 0; k < launches.size(); ++k)
    s.launches.push_back(launch_from(launches[k], where + ".launches[" + std::to_string(k) + "]"));
  // what check_schedule refuses, named by the launch it names
  for (std::size_t k = 0; k < s.launches.size(); ++k) {
    try {
      check_schedule(Schedule{{s.launches[k]}});
    } catch (const std::logic_error& e) {
      std::string rule = e.what();
      const std::size_t colon = rule.find("\": ");
      if (colon != std::string::npos) rule = rule.substr(colon + 3);
      bad(where + ".launches[" + std::to_string(k) + "]", "\"" + json_fields::shorten(s.launches[k].name) + "\"",
          "a launch that can be walked; this one breaks the rule: " + rule);
    }
  }
  return s;
}

}  // namespace flashlab
