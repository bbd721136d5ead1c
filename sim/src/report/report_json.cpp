// report_json.cpp — the JSON of `count --json` and `compare --json` (report_json.hpp).
#include "flashlab/report/report_json.hpp"

#include <cmath>
#include <string_view>

#include "flashlab/config/config_json.hpp"

namespace flashlab::report {

bool fits_on_sm(const Counters& k) { return k.blocks_per_sm > 0; }

nlohmann::json figures_json(const Figures& f, const std::string& model) {
  nlohmann::json out = metrics_json(f);
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchCounters& l : f.counters.launches)
    launches.push_back({{"name", l.name},
                        {"grid", l.grid},
                        {"read_bytes", l.cost.read_bytes()},
                        {"write_bytes", l.cost.write_bytes()},
                        {"atomic_bytes", l.cost.atomic_bytes()},
                        {"sram_peak_bytes", l.sram_peak_bytes},
                        {"blocks_per_sm", l.blocks_per_sm},
                        {"waves", l.waves}});
  out["launches"] = launches;
  out["config"] = config_json(f.problem, model);
  return out;
}

nlohmann::json predicted_json(const TimePrediction& t) {
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchTime& l : t.launches) {
    nlohmann::json unit = nlohmann::json::object(), share = nlohmann::json::object();
    for (int u = 0; u < kHwUnitCount; ++u) {
      unit[std::string(to_string(flashlab::HwUnit(u)))] = l.unit_s[std::size_t(u)];
      share[std::string(to_string(flashlab::HwUnit(u)))] = l.share[std::size_t(u)];
    }
    launches.push_back({{"name", l.name},
                        {"time_s", l.time_s},
                        {"blocks_s", l.blocks_s},
                        {"bound", to_string(l.bound)},
                        {"grid", l.grid},
                        {"waves", l.waves},
                        {"blocks_per_sm", l.occupancy.blocks_per_sm},
                        {"occupancy_limit", l.occupancy.limit},
                        {"registers_per_thread", l.occupancy.registers_per_thread},
                        {"registers_source", l.occupancy.registers_compiled ? "compiled kernel (cuobjdump)" : "accumulator rule"},
                        {"issue_source", l.issue_from_sass ? "compiled kernel's tile loop (SASS)" : "estimate from the schedule"},
                        {"sharing", l.sharing},
                        {"sm_busy", l.sm_busy},
                        {"dram_read_bytes", l.dram_read_bytes},
                        {"dram_write_bytes", l.dram_write_bytes},
                        {"unit_s", unit},
                        {"share", share}});
  }
  return {{"time_s", t.time_s},
          {"tflops", t.tflops},
          {"peak_fraction", t.peak_fraction},
          {"bound", to_string(t.bound)},
          {"dram_read_bytes", t.dram_read_bytes},
          {"dram_write_bytes", t.dram_write_bytes},
          {"ceilings", {{"kind", t.measured ? "measured" : "datasheet"},
                        {"source", t.rates_source}}},
          {"launches", launches}};
}

namespace {

// predicted_json of f, with no time where a thread block does not fit on an SM: no wave can run, so
// time_s, tflops, peak_fraction and bound are null (the per-launch figures stay, as if one block fit).
nlohmann::json predicted_of(const Figures& f) {
  if (!f.time_model)  // no time computed (Modelled::timed; every schedule is timed today)
    return {{"time_s", nullptr}, {"not_modelled", "the time model has no rules for " + std::string(to_string(f.problem.algo)) +
                                                      "'s warp roles, stage ring and asynchronous WGMMA yet"}};
  nlohmann::json j = predicted_json(f.time);
  if (!fits_on_sm(f.counters))
    for (const char* key : {"time_s", "tflops", "peak_fraction", "bound"}) j[key] = nullptr;
  return j;
}

}  // namespace

nlohmann::json count_json(const Figures& f, const std::string& model) {
  nlohmann::json out = figures_json(f, model);
  out["grid"]["fits_on_sm"] = fits_on_sm(f.counters);  // false: blocks_per_sm and waves are 0, no wave can run
  out["predicted"] = predicted_of(f);                   // the catalogue's predicted.* and per launch
  return out;
}

namespace {

// The rows of the comparison, by catalogue key (metrics.hpp); "  " marks a part of the row above.
constexpr const char* kRows[] = {
    "hbm_read_bytes",    "hbm_write_bytes",    "hbm_atomic_bytes",  "hbm_total_bytes", "  hbm_s_p_bytes",  "  hbm_o_l_m_read_bytes",
    "dram_read_bytes",   "dram_write_bytes",   "flops_matmul",    "flops_per_hbm_byte", "ops_exp",
    "ops_all",           "tiles_visited",      "sram_peak_bytes", "grid_blocks",      "waves",
    "hbm_seconds",       "matmul_seconds",     "predicted_seconds", "predicted_tflops", "warp_smem_bytes",
    "warp_barriers",     "warp_extra_ops",
};

}  // namespace

const std::vector<CompareRow>& compare_rows() {
  static const std::vector<CompareRow> rows = [] {
    std::vector<CompareRow> out;
    for (std::string_view key : kRows) {
      const bool part = key.starts_with("  ");
      out.push_back({metric(part ? key.substr(2) : key), part});
    }
    return out;
  }();
  return rows;
}

double ratio_of(const Value& a, const Value& b) {
  return a.none() || b.none() || b.as_double() == 0 ? std::nan("") : a.as_double() / b.as_double();
}

nlohmann::json compare_json(const std::vector<Figures>& cols, const std::string& model) {
  nlohmann::json out;
  out["model"] = model;
  for (const Figures& f : cols) {
    nlohmann::json a = figures_json(f, model);
    a["predicted"] = predicted_of(f);
    out["algos"][std::string(to_string(f.problem.algo))] = a;
  }
  const auto json_ratio = [](double x) { return std::isnan(x) ? nlohmann::json() : nlohmann::json(x); };
  for (const CompareRow& r : compare_rows()) {
    const Value s = r.metric.value(cols[0]), v1 = r.metric.value(cols[1]), v2 = r.metric.value(cols[2]);
    out["ratios"][r.metric.key] = {{"standard/v2", json_ratio(ratio_of(s, v2))}, {"v1/v2", json_ratio(ratio_of(v1, v2))}};
  }
  return out;
}

}  // namespace flashlab::report
