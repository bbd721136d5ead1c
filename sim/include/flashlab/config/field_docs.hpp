// field_docs.hpp — the one table of configuration field documentation: what each field of a
// Config is, the values it takes and its default, read by every place that explains a field:
// `flashlab --help` (flags/config_flags.cpp), the viewer's tooltips (viz/panels/config_panel.cpp)
// and the Python Config docstring (python/src/config.cpp).
//
// A field's text lives here only; the flag table keeps how each flag parses, the viewer may add
// what its own control shows, Python how a keyword differs from its flag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashlab {

/// One configuration field as a user meets it. The texts are plain English with the papers'
/// notation (N_q, B_r, FA2 Alg. 1); none ends with a full stop.
struct FieldDoc {
  std::string flag;      // the command-line flag, "--nq"; its field in errors is the flag without "--"
  std::string json_key;  // its key in the config JSON (config_json.hpp), "n_q"; "" for --seq (sets n_q and n_k)
  std::string summary;   // what it is, one line: "N_q, query rows"
  std::string allowed;   // the values it takes: "an integer from 1 to 2147483647", "fp16 | bf16 | fp32"
  std::string fallback;  // the default when it is not given: "1024", "on for v2, off for v1"
  std::string details;   // more, where the summary does not say it all ("" when none)
};

/// Every configuration field, in the order the flags are applied (--seq before --nq and --nk),
/// then --model: algo, seq, nq, nk, d, br, bc, sram, batch, heads, kv-heads, dtype, mask,
/// block-skip, order, grid, rescale, pass, backward-form, splits, kernel, scale, warps,
/// warp-split, gpu, model. Defaults and ranges are read from Config{} and config.hpp's limits.
const std::vector<FieldDoc>& field_docs();

/// The entry of `flag` ("--nq"). Throws std::out_of_range naming the flag when there is none:
/// a flag without documentation is a programming error, caught by tests/cli/field_docs_test.cpp.
const FieldDoc& field_doc(std::string_view flag);

/// The field's whole text, as `flashlab --help` shows it:
/// "<summary>: <allowed>[; <details>][ (default: <fallback>)]", e.g.
/// "N_q, query rows: an integer from 1 to 2147483647 (default: 1024)".
std::string field_help(const FieldDoc& doc);

/// "an integer from <lo> to <hi>": how a range reads in errors and in the table.
std::string integer_range(std::int64_t lo, std::int64_t hi);

}  // namespace flashlab
