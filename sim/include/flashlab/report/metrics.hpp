// metrics.hpp — the catalogue of metrics: every figure the tools report about a configuration,
// each with a key, a label, a unit, a one-line help and how it is computed from the counters.
//
// `flashlab count --json` places every metric at its JSON path, `flashlab sweep` writes one CSV
// column per metric, `flashlab compare`, the viewer's panels and flashlab-gpu's JSON pick metrics
// by key. A figure added here reaches all of them; docs/output.md lists the catalogue.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/time/time_model.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab::report {

/// What a metric counts; it fixes how the value is printed (format.hpp).
enum class Unit : std::uint8_t {
  bytes,    // human: binary units ("8.25 MiB")
  flops,    // human: decimal units ("268.4 M")
  ops,      // human: decimal units
  items,    // tiles, thread blocks, waves, steps, barriers: exact, digits grouped ("2,048")
  seconds,  // human: "1.234 ms"
  ratio,    // a real number, one decimal ("12.3")
};
/// "bytes", "FLOP", "operations", "count", "seconds", "ratio".
std::string_view to_string(Unit u);

/// Everything the catalogue reads about one configuration.
struct Figures {
  Problem problem;
  Counters counters;            // the executor's totals: HBM, ops, FLOPs, tiles times batch * heads
  bool warp_model = false;      // the schedule has a tile loop, which the warp model splits (V1, V2; not
                                // V3's warp roles)
  std::vector<WarpWork> warps;  // per warp, summed over every thread block, times batch * heads
  bool time_model = false;      // `time` was computed (measure(); Modelled::timed, true for every schedule)
  TimePrediction time;          // the time model's prediction (time/time_model.hpp)
};

/// Runs p's schedule once with the warp model (warps.hpp WarpCounter), the sector counter, the L2
/// model and the time model attached (time_model.hpp model()); `also`, when given, observes the
/// same walk (a progress bar).
Figures measure(const Problem& p, StepObserver* also = nullptr);
/// The same for schedule `s` instead of p's own (a schedule written by hand: schedule_json.hpp).
Figures measure(const Problem& p, const Schedule& s, StepObserver* also = nullptr);
/// The figures of a walk run to its end with `warps` attached to it, without the time model (the
/// viewer's, which must stay fast while sliders move).
Figures figures_of(const Executor& finished, const WarpCounter& warps);

/// A metric's value: an exact integer, a real number, or none — not defined for this
/// configuration (a warp figure of standard attention, a ratio over zero bytes).
struct Value {
  enum class Kind : std::uint8_t { none, integer, real };
  Kind kind = Kind::none;
  std::uint64_t integer = 0;
  double real = 0;

  static Value of(std::uint64_t v) { return {Kind::integer, v, 0}; }
  static Value of_real(double v) { return {Kind::real, 0, v}; }
  bool none() const { return kind == Kind::none; }
  /// The value as a double (NaN for none).
  double as_double() const;
};

struct Metric {
  std::string key;        // flat name: the sweep's CSV column, compare --json's ratio key
  std::string json_path;  // dotted path in count --json ("hbm.total_bytes")
  std::string label;      // for tables; "{gpu}" and "{hbm_bandwidth}" are filled by label_of()
  Unit unit = Unit::items;
  std::string help;       // one line: what it counts, with its algorithm line
  std::function<Value(const Figures&)> value;
  bool in_csv = true;  // a column of the sweep's CSV; false for a fact of the config (M, the SM
                       // count: the config columns hold them) and for the per-tensor bytes of the
                       // levels other than HBM (JSON only, or the CSV would have 54 more columns)
};

/// Every metric, in the order of the sweep's CSV columns (those with in_csv).
const std::vector<Metric>& catalogue();
/// The metric with this key; ConfigError("metric", key, every key) when there is none.
const Metric& metric(std::string_view key);
/// The metric's value on f.
Value value_of(std::string_view key, const Figures& f);

/// The label with "{gpu}" replaced by p's GPU preset name and "{hbm_bandwidth}" by its HBM
/// bandwidth ("4.80 TB/s", the datasheet's decimal unit).
std::string label_of(const Metric& m, const Problem& p);
/// For people, by the metric's unit: "8.25 MiB", "268.4 M", "2,048", "1.234 ms", "12.3"; "-" for none.
std::string human(const Metric& m, const Value& v);
/// For people, exact: integers with digit groups, bytes also in binary units ("8,650,752 B
/// (8.25 MiB)"); real numbers as human(); "-" for none.
std::string precise(const Metric& m, const Value& v);
/// For files: the exact integer ("8650752"), the real number in its shortest exact form, or ""
/// for none.
std::string exact(const Value& v);
/// For JSON: an unsigned integer, a number, or null.
nlohmann::json json_value(const Value& v);

/// Every metric of f at its JSON path: the object `flashlab count --json` prints besides the config.
nlohmann::json metrics_json(const Figures& f);

}  // namespace flashlab::report
