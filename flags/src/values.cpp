// values.cpp — the rules every flag value follows (values.hpp).
#include "flashlab/flags/values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <CLI/App.hpp>
#include <CLI/Option.hpp>
#include <CLI/Validators.hpp>

#include "flashlab/config/field_docs.hpp"  // integer_range: the range text the field docs use
#include "flashlab/contract/error.hpp"

namespace flashlab::cli {
namespace {

void collect(CLI::App& app, std::vector<CLI::Option*>& out) {
  for (CLI::Option* opt : app.get_options())
    if (opt->get_items_expected_max() > 0) out.push_back(opt);  // flags (--json, --help) expect none
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) collect(*sub, out);
}

// The whole text as an integer of type T (a leading '+' allowed), or ConfigError(field, text, allowed),
// "out of range: " first when the digits are fine but do not fit.
template <class T>
T parse_integer(const std::string& field, const std::string& text, const std::string& allowed) {
  T v = 0;
  const char* first = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  auto [p, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range && p == last) throw ConfigError(field, text, "out of range: " + allowed);
  if (text.empty() || ec != std::errc() || p != last) throw ConfigError(field, text, allowed);
  return v;
}

}  // namespace

std::vector<CLI::Option*> value_options(CLI::App& app) {
  std::vector<CLI::Option*> out;
  collect(app, out);
  return out;
}

std::string field_name(const CLI::Option& opt) { return opt.get_single_name(); }

std::string flag_spelling(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
  if (!opt.get_snames().empty()) return "-" + opt.get_snames().front();
  return "";
}

void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* opt : value_options(app)) {
    const CLI::Option* o = opt;  // the option outlives its validator: both belong to `app`
    opt->check(CLI::Validator(
        [o](std::string& value) -> std::string {
          if (!value.empty()) return "";
          const std::string type = o->get_type_name();
          throw ConfigError(field_name(*o), value,
                            "a non-empty value" + (type.empty() ? std::string() : " (" + type + ")") +
                                (o->get_description().empty() ? "" : ": " + o->get_description()));
        },
        "" /* no description: --help shows the type name unchanged */, "non-empty"));
  }
}

std::string int_range(std::int64_t lo, std::int64_t hi) { return integer_range(lo, hi); }

std::int64_t parse_int(const std::string& field, const std::string& text, const std::string& allowed) {
  return parse_integer<std::int64_t>(field, text, allowed);
}

std::int64_t parse_int_in(const std::string& field, const std::string& text, std::int64_t lo, std::int64_t hi,
                          const std::string& what) {
  const std::string allowed = int_range(lo, hi) + what;
  const std::int64_t v = parse_int(field, text, allowed);
  if (v < lo || v > hi) throw ConfigError(field, text, allowed);
  return v;
}

std::uint64_t parse_u64(const std::string& field, const std::string& text) {
  return parse_integer<std::uint64_t>(field, text, "an integer from 0 to 18446744073709551615 (2^64 - 1)");
}

double parse_number(const std::string& field, const std::string& text, const std::string& allowed) {
  double v = 0;
  const char* last = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), last, v, std::chars_format::general);
  if (text.empty() || ec != std::errc() || p != last || !std::isfinite(v)) throw ConfigError(field, text, allowed);
  return v;
}

std::vector<std::string> split_list(const std::string& field, const std::string& text, const std::string& allowed) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    if (items.back().empty()) throw ConfigError(field, text, allowed + "; no empty element");
    if (comma == text.size()) return items;
    start = comma + 1;
  }
}

}  // namespace flashlab::cli
