// sweep_axis.cpp — the sweep's axis and value list.
#include "sweep_axis.hpp"

#include <cstdint>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"

namespace flashlab::cli {

Axis parse_axis(const std::string& t) {
  if (t == "n" || t == "seq") return Axis::n;  // seq: the flag that sets N_q = N_k (and Python's sweep keyword)
  if (t == "d") return Axis::d;
  if (t == "br") return Axis::br;
  if (t == "bc") return Axis::bc;
  if (t == "sram") return Axis::sram;
  throw ConfigError("over", t, "one of n or seq (sets N_q = N_k), d, br, bc, sram (M, bytes)");
}

std::string to_string(Axis a) {
  switch (a) {
    case Axis::n: return "n";
    case Axis::d: return "d";
    case Axis::br: return "br";
    case Axis::bc: return "bc";
    case Axis::sram: return "sram";
  }
  return "?";
}

void set_axis(Config& c, Axis a, std::int64_t v) {
  switch (a) {
    case Axis::n: c.n_q = c.n_k = v; break;
    case Axis::d: c.d = v; break;
    case Axis::br: c.b_r = v; break;
    case Axis::bc: c.b_c = v; break;
    case Axis::sram: c.sram_bytes = v; break;
  }
}

std::vector<std::string> axis_flags(Axis a) {
  switch (a) {
    case Axis::n: return {"seq", "nq", "nk"};
    case Axis::d: return {"d"};
    case Axis::br: return {"br"};
    case Axis::bc: return {"bc"};
    case Axis::sram: return {"sram"};
  }
  return {};
}

namespace {

void check_count(std::uint64_t n) {
  if (n > kMaxSweepPoints)
    throw ConfigError("values", std::to_string(n) + " points",
                      "at most " + std::to_string(kMaxSweepPoints) + " sweep points");
}

std::vector<std::int64_t> list_values(const std::string& text) {
  const std::string allowed = "a comma-separated list of integers, e.g. 512,1024,2048";
  std::vector<std::int64_t> out;
  for (const std::string& item : split_list("values", text, allowed)) {
    out.push_back(parse_int("values", item, allowed));
    check_count(out.size());
  }
  return out;
}

std::vector<std::int64_t> range_values(const ValueSpec& s) {
  const std::string how = "--from A --to B with --step S (S >= 1) or --log2 (A >= 1), A <= B";
  if (s.from.empty() || s.to.empty()) throw ConfigError(s.from.empty() ? "from" : "to", "(missing)", how);
  const std::int64_t from = parse_int("from", s.from), to = parse_int("to", s.to);
  if (to < from) throw ConfigError("to", s.to, "an integer >= --from (" + s.from + ")");
  if (s.log2 == !s.step.empty()) throw ConfigError("step", s.log2 ? "--log2 and --step" : "(missing)", how);
  std::vector<std::int64_t> out;
  if (s.log2) {
    if (from < 1) throw ConfigError("from", s.from, "an integer >= 1 with --log2");
    for (std::int64_t v = from; v <= to; v *= 2) {
      out.push_back(v);
      if (v > to / 2) break;  // v * 2 > to, and no overflow
    }
    return out;
  }
  const std::int64_t step = parse_int("step", s.step);
  if (step < 1) throw ConfigError("step", s.step, "an integer >= 1");
  const std::uint64_t last = (std::uint64_t(to) - std::uint64_t(from)) / std::uint64_t(step);  // to >= from
  check_count(last == UINT64_MAX ? last : last + 1);
  for (std::uint64_t k = 0; k <= last; ++k) out.push_back(from + std::int64_t(k) * step);
  return out;
}

}  // namespace

std::vector<std::int64_t> sweep_values(const ValueSpec& s) {
  const bool range = !s.from.empty() || !s.to.empty() || !s.step.empty() || s.log2;
  if (!s.values.empty() && range)
    throw ConfigError("values", s.values, "either --values or --from/--to/--step|--log2, not both");
  if (s.values.empty() && !range)
    throw ConfigError("values", "(missing)", "--values A,B,... or --from A --to B with --step S or --log2");
  return range ? range_values(s) : list_values(s.values);
}

}  // namespace flashlab::cli
