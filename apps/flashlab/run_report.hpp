// run_report.hpp — numerics in the commands (`run`, `trace --stats-blocks`): the size they accept,
// and what `run` prints about one algorithm's result: its errors against the reference (NaN shown
// as nan, never as a zero error) and chosen rows of O and L.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/numerics/numerics.hpp"

namespace flashlab::cli {

// check_numerics_size(): flashlab/numerics/numerics.hpp.

/// compare()'s error with NaN in place of a figure a non-finite result makes meaningless:
/// max|O-O_ref| and |O-O_ref|/|O_ref| when O holds a NaN or inf; max|L-L_ref| when some row's L
/// is non-finite where L_ref is finite, or is not +inf where L_ref is +inf (a row with no key).
NumericError shown_error(const NumericResult& r, const Reference& ref, NumericError e);

/// An error figure: "1.234e-05", or "nan" / "inf" / "-inf"; right-aligned in `width`.
std::string error_text(double x, int width);

/// "R1,R2,...": row indices of O in [0, N_q), in the order given, without repeats. Throws
/// ConfigError("show-rows", text, allowed).
std::vector<std::int64_t> parse_rows(const std::string& text, std::int64_t n_q);

/// O[r][0..min(d, 8)) and L[r] for each row r, one line each, under a heading naming `algo`; with
/// `backward`, dQ[r] (query row r) and dK[r], dV[r] (key row r, where r < N_k) too.
void print_rows(const std::string& algo, const NumericResult& r, const std::vector<std::int64_t>& rows,
                bool backward = false);
/// The same as JSON: [{"row": r, "O": [...], "L": x}, ...] (with `backward` also "dQ", and "dK",
/// "dV" for r < N_k); JSON has no inf or nan, so a non-finite value is null (L = +inf for a row
/// with no visible key).
nlohmann::json rows_json(const NumericResult& r, const std::vector<std::int64_t>& rows, bool backward = false);

/// Values of O shown per row: the first min(d, 8) columns.
inline constexpr std::int64_t kShownColumns = 8;

}  // namespace flashlab::cli
