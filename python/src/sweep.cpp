// sweep.cpp — flashlab.sweep(): one setting varied over a list of values, every metric of the
// catalogue (report/metrics.hpp, the columns of `flashlab sweep`'s CSV) as a NumPy column.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <pybind11/numpy.h>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::python {
namespace {

constexpr std::size_t kMaxPoints = 10000;  // as the command's sweep

// A column of one metric: int64 when every point has an integer value, float64 (NaN: undefined) else.
py::array column(const std::vector<report::Value>& v) {
  const bool integers = std::all_of(v.begin(), v.end(), [](const report::Value& x) {
    return x.kind == report::Value::Kind::integer && x.integer <= std::uint64_t(INT64_MAX);
  });
  if (integers) {
    py::array_t<std::int64_t> a(py::ssize_t(v.size()));
    for (std::size_t k = 0; k < v.size(); ++k) a.mutable_at(py::ssize_t(k)) = std::int64_t(v[k].integer);
    return a;
  }
  py::array_t<double> a(py::ssize_t(v.size()));
  for (std::size_t k = 0; k < v.size(); ++k) a.mutable_at(py::ssize_t(k)) = v[k].as_double();
  return a;
}

py::dict sweep(const py::object& cfg, const std::string& over, const py::iterable& values, const py::object& algos,
               const py::kwargs& kwargs) {
  const PyConfig base = config_arg(cfg, kwargs);
  // `over` names the setting varied: a Config keyword other than algo (algos= gives those). It was
  // passed to Config() unchecked, whose TypeError named Config(), not `over`.
  if (over == "algo" || !is_config_keyword(over))
    throw ConfigError("over", over, "a Config keyword other than algo (algos= lists the algorithms): " +
                                        config_keywords());
  std::vector<py::object> points;
  for (const py::handle v : values) points.push_back(py::reinterpret_borrow<py::object>(v));
  if (points.empty() || points.size() > kMaxPoints)
    throw ConfigError("values", std::to_string(points.size()) + " values",
                      "1 to " + std::to_string(kMaxPoints) + " values of the setting `over`");
  std::vector<std::string> names;
  if (algos.is_none()) names.push_back(std::string(to_string(base.problem.algo)));
  else
    for (const py::handle a : py::iterable(algos)) names.push_back(py::str(a).cast<std::string>());
  // every point resolved (validated) before the first is counted, as the command does
  std::vector<PyConfig> configs;
  std::vector<py::object> point_of;
  for (const py::object& v : points)
    for (const std::string& a : names) {
      py::dict change;
      change[py::str(over)] = v;
      change["algo"] = a;
      configs.push_back(config_arg(py::cast(base), change));
      point_of.push_back(v);
    }
  const std::vector<report::Metric>& cat = report::catalogue();
  std::vector<std::vector<report::Value>> metric_values(cat.size());
  without_gil([&] {  // Ctrl-C stops the sweep within its point (interrupt.hpp)
    SignalPoll poll("sweep", configs.size());
    for (const PyConfig& c : configs) {
      poll.start(c.problem);
      poll.poll();
      const report::Figures f = report::measure(c.problem, &poll);
      for (std::size_t m = 0; m < cat.size(); ++m) metric_values[m].push_back(cat[m].value(f));
    }
  });
  py::dict out;
  py::list value, algo, mask, dtype;
  std::vector<report::Value> n_q, n_k, d, b_r, b_c, batch, heads, splits;
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const Problem& p = configs[k].problem;
    value.append(point_of[k]);
    algo.append(std::string(to_string(p.algo)));
    mask.append(to_string(p.mask));
    dtype.append(std::string(to_string(p.dtype)));
    for (auto [col, x] : {std::pair{&n_q, p.tiling.n_q}, {&n_k, p.tiling.n_k}, {&d, p.tiling.d}, {&b_r, p.tiling.b_r},
                          {&b_c, p.tiling.b_c}, {&batch, p.batch}, {&heads, p.heads}, {&splits, p.splits}})
      col->push_back(report::Value::of(std::uint64_t(x)));
  }
  out["over"] = over;
  out["value"] = value;
  out["algo"] = algo;
  out["mask"] = mask;
  out["dtype"] = dtype;
  for (auto [key, col] : {std::pair{"n_q", &n_q}, {"n_k", &n_k}, {"d", &d}, {"b_r", &b_r}, {"b_c", &b_c},
                          {"batch", &batch}, {"heads", &heads}, {"splits", &splits}})
    out[key] = column(*col);
  for (std::size_t m = 0; m < cat.size(); ++m)
    if (cat[m].in_csv) out[py::str(cat[m].key)] = column(metric_values[m]);
  return out;
}

}  // namespace

void bind_sweep(py::module_& m) {
  m.def("sweep", &sweep, py::arg("cfg") = py::none(), py::kw_only(), py::arg("over"), py::arg("values"),
        py::arg("algos") = py::none(), R"doc(
sweep(cfg=None, *, over, values, algos=None, **kwargs) -> dict of columns

One setting varied, every metric counted at each point: `flashlab sweep`'s CSV as columns. `over`
is any Config keyword ('nq', 'seq', 'd', 'br', 'bc', 'sram', 'batch', 'heads', 'splits', ...) and
`values` its values (1 to 10,000); `algos` a list of algorithms to run at every point (default:
cfg's), one row each, point by point. Returns a dict: "over" (the keyword), "value" (list: the
values as given), "algo", "mask", "dtype" (lists), "n_q", "n_k", "d", "b_r", "b_c", "batch", "heads",
"splits" (int64 arrays: the resolved point), and one array per metric of the catalogue that the
CSV has (docs/output.md: key, unit, what it counts; e.g. "hbm_total_bytes", "flops_matmul",
"predicted_seconds") — int64 when every point's value is an integer, float64 otherwise (NaN where a
metric is not defined).

Every point is validated before the first is counted: a bad one raises ValueError
(flashlab.ConfigError) naming the setting, the value and what is allowed.
)doc");
}

}  // namespace flashlab::python
