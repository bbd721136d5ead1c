// run_report.cpp — errors with NaN shown, and rows of O and L (run_report.hpp).
#include "run_report.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/limits.hpp"
#include "flashlab/report/format.hpp"

namespace flashlab::cli {
NumericError shown_error(const NumericResult& r, const Reference& ref, NumericError e) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!r.O.allFinite()) e.max_abs_O = e.rel_fro_O = nan;
  for (Eigen::Index k = 0; k < ref.L.size() && k < r.L.size(); ++k) {
    const double got = r.L[k], want = ref.L[k];
    const bool bad = std::isinf(want) ? got != want : !std::isfinite(got);
    if (bad) e.max_abs_L = nan;
  }
  return e;
}

std::string error_text(double x, int width) {
  const std::string s = std::isnan(x) ? "nan" : std::isinf(x) ? (x > 0 ? "inf" : "-inf") : fmt::format("{:.3e}", x);
  return fmt::format("{:>{}}", s, width);
}

namespace {

// A value of O or L: 8 significant digits; "nan" without the sign bit's "-nan".
std::string value_text(double x) { return std::isnan(x) ? "nan" : fmt::format("{:.8g}", x); }

}  // namespace

std::vector<std::int64_t> parse_rows(const std::string& text, std::int64_t n_q) {
  const std::string allowed =
      fmt::format("row indices of O from 0 to {} (N_q - 1) separated by commas, each once, e.g. 0,{}", n_q - 1,
                  n_q - 1);
  std::vector<std::int64_t> rows;
  for (const std::string& item : split_list("show-rows", text, allowed)) {
    const std::int64_t r = parse_int("show-rows", item, allowed);
    if (r < 0 || r >= n_q || std::find(rows.begin(), rows.end(), r) != rows.end())
      throw ConfigError("show-rows", text, allowed);
    rows.push_back(r);
  }
  return rows;
}

namespace {

// The first `cols` values of row `row` of x, as text.
std::string row_text(const MatrixF& x, std::int64_t row, std::int64_t cols) {
  std::string line;
  for (std::int64_t c = 0; c < cols; ++c) {
    line += ' ';
    line += value_text(x(row, c));
  }
  return line;
}

}  // namespace

void print_rows(const std::string& algo, const NumericResult& r, const std::vector<std::int64_t>& rows, bool backward) {
  const std::int64_t cols = std::min<std::int64_t>(r.O.cols(), kShownColumns);
  std::cout << fmt::format("\n{}: O[r][0..{}) and L[r]{}\n", algo, cols,
                           cols < r.O.cols() ? fmt::format(" (first {} of d = {} columns)", cols, r.O.cols()) : "");
  std::cout << fmt::format("  {:>8} {:>14} | O[r][0..{})\n", "row r", "L[r]", cols);
  for (std::int64_t row : rows)
    std::cout << fmt::format("  {:>8} {:>14} |", row, value_text(r.L[row])) << row_text(r.O, row, cols) << "\n";
  if (!backward) return;
  std::cout << fmt::format("{}: dQ[r][0..{}) (query rows), dK[r] and dV[r] (key rows)\n", algo, cols);
  for (std::int64_t row : rows) {
    std::cout << fmt::format("  {:>8} dQ |", row) << row_text(r.dQ, row, cols) << "\n";
    if (row >= r.dK.rows()) continue;
    std::cout << fmt::format("  {:>8} dK |", row) << row_text(r.dK, row, cols) << "\n";
    std::cout << fmt::format("  {:>8} dV |", row) << row_text(r.dV, row, cols) << "\n";
  }
}

nlohmann::json rows_json(const NumericResult& r, const std::vector<std::int64_t>& rows, bool backward) {
  const auto value = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  const std::int64_t cols = std::min<std::int64_t>(r.O.cols(), kShownColumns);
  const auto row_of = [&](const MatrixF& x, std::int64_t row) {
    nlohmann::json o = nlohmann::json::array();
    for (std::int64_t c = 0; c < cols; ++c) o.push_back(value(x(row, c)));
    return o;
  };
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t row : rows) {
    nlohmann::json item{{"row", row}, {"O", row_of(r.O, row)}, {"L", value(r.L[row])}};
    if (backward) {
      item["dQ"] = row_of(r.dQ, row);
      if (row < r.dK.rows()) {
        item["dK"] = row_of(r.dK, row);
        item["dV"] = row_of(r.dV, row);
      }
    }
    out.push_back(item);
  }
  return out;
}

}  // namespace flashlab::cli
