// values.hpp — the rules every flag value of flashlab, flashlab-viewer and flashlab-gpu follows, in
// one place:
//   - an empty value ("" or '') is an error naming the flag, for every flag that takes a value
//     (refuse_empty_values, applied once to a program's whole CLI11 app);
//   - a list ("0,3", "I,J") has no empty element (split_list);
//   - a number that is not one, or is beyond what the type holds, is an error naming the flag, the
//     text and the range (parse_int, parse_int_in, parse_u64, parse_number).
// Every error is flashlab::ConfigError: "<field> = <value>: <allowed>", exit 2 in every program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/App.hpp>

namespace flashlab::cli {

/// The options of `app` and of all its subcommands (recursively) that take a value — flags such
/// as --json and --help excluded — in the order they were added, subcommands after their parent.
std::vector<CLI::Option*> value_options(CLI::App& app);

/// The name errors use for `opt`: its first long name ("frames" for --frames, "output" for
/// -o,--output), else its positional name ("A"), else its short name.
std::string field_name(const CLI::Option& opt);

/// What a user types for `opt` before its value: "--frames", "-o" (a short name only when it has
/// no long one), or "" for a positional argument.
std::string flag_spelling(const CLI::Option& opt);

/// Makes an empty value an error for every option value_options(app) lists at the time of the
/// call: parsing `--frames ""` throws ConfigError("frames", "\"\"", "a non-empty value (<TYPE>): <help>"),
/// before any option's value is converted and before any callback runs. Call once per program,
/// after every option and subcommand is added.
void refuse_empty_values(CLI::App& app);

/// "an integer from <lo> to <hi>" (config/field_docs.hpp integer_range, the text the field docs use).
std::string int_range(std::int64_t lo, std::int64_t hi);

/// Parses a decimal integer (an optional leading '+'; no hex, no spaces). Throws
/// ConfigError(field, text, allowed) when `text` is not one, and ConfigError(field, text,
/// "out of range: " + allowed) when it is an integer beyond a signed 64-bit one — give `allowed`
/// the range the flag accepts (int_range) so that the message says it.
std::int64_t parse_int(const std::string& field, const std::string& text, const std::string& allowed = "an integer");

/// parse_int, then lo <= value <= hi; allowed = int_range(lo, hi) + what (e.g. " pixels").
/// Throws ConfigError(field, text, allowed), or with "out of range: " before it for text beyond 64 bits.
std::int64_t parse_int_in(const std::string& field, const std::string& text, std::int64_t lo, std::int64_t hi,
                          const std::string& what = "");

/// An unsigned decimal integer from 0 to 2^64 - 1 (e.g. a seed: traces store 64-bit seeds).
/// Throws ConfigError(field, text, "an integer from 0 to 18446744073709551615 (2^64 - 1)"),
/// prefixed with "out of range: " for a longer integer.
std::uint64_t parse_u64(const std::string& field, const std::string& text);

/// A finite decimal number as a user writes it ("0.125", "1e-3"; no hex, inf or nan).
/// Throws ConfigError(field, text, allowed).
double parse_number(const std::string& field, const std::string& text, const std::string& allowed);

/// The comma-separated elements of `text` ("0,3" -> {"0", "3"}). Throws ConfigError(field, text,
/// allowed + "; no empty element") when `text` is empty or an element is ("", "0,", ",3", "0,,3").
std::vector<std::string> split_list(const std::string& field, const std::string& text, const std::string& allowed);

}  // namespace flashlab::cli
