// json_fields.hpp — reading the fields of a JSON object (a trace header, a config) strictly, with
// a ConfigError that names the field, the value and what is allowed.
//
// Fields are named `prefix + key`: prefix "trace header " gives "trace header source", prefix
// "trace header config." gives "trace header config.n_q". An error about the object itself (not
// an object, an unknown key) names `object`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/contract/error.hpp"

namespace flashlab::json_fields {

/// Throws ConfigError(field, value, allowed), the value cut to 100 characters (shorten).
[[noreturn]] void bad(const std::string& field, const std::string& value, const std::string& allowed);

/// At most `n` characters of an untrusted text, for an error message ("..." marks a cut).
std::string shorten(const std::string& text, std::size_t n = 80);

/// A JSON value in an error message, short and without recursion: a scalar as written (a string
/// quoted, cut at 80 characters), an array or object by its size. Never the whole document.
std::string describe(const nlohmann::json& v);

/// `obj` must be an object whose keys are all in `allowed` and hold every key of `required`.
void check_keys(const nlohmann::json& obj, const std::string& object, const std::string& prefix,
                std::initializer_list<const char*> allowed, std::initializer_list<const char*> required);

/// obj[key] as a string / a signed 64-bit integer / a boolean / a number; ConfigError otherwise.
std::string get_string(const nlohmann::json& obj, const std::string& prefix, const char* key);
std::int64_t get_int(const nlohmann::json& obj, const std::string& prefix, const char* key);
bool get_bool(const nlohmann::json& obj, const std::string& prefix, const char* key);
double get_number(const nlohmann::json& obj, const std::string& prefix, const char* key);

/// Runs f(); a ConfigError it throws is rethrown with `field` as its field (the value and what is
/// allowed kept): parse_mask's "mask" becomes "trace header config.mask".
template <class F>
auto named(const std::string& field, F f) {
  try {
    return f();
  } catch (const ConfigError& e) {
    bad(field, e.value(), e.allowed());
  }
}

}  // namespace flashlab::json_fields
