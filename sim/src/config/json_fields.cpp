// json_fields.cpp — strict reading of JSON object fields (json_fields.hpp).
#include "flashlab/config/json_fields.hpp"

#include <algorithm>
#include <limits>

namespace flashlab::json_fields {

using json = nlohmann::json;

void bad(const std::string& field, const std::string& value, const std::string& allowed) {
  throw ConfigError(field, shorten(value, 100), allowed);
}

std::string shorten(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : text.substr(0, n) + "...";
}

std::string describe(const json& v) {
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_string())
    return json(shorten(v.get_ref<const std::string&>())).dump(-1, ' ', false, json::error_handler_t::replace);
  return v.dump();  // a number, true, false or null
}

void check_keys(const json& obj, const std::string& object, const std::string& prefix,
                std::initializer_list<const char*> allowed, std::initializer_list<const char*> required) {
  if (!obj.is_object()) bad(object, describe(obj), "a JSON object");
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      std::string names;
      for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      bad(object, "unknown key " + describe(json(key)), "keys " + names);
    }
  }
  for (const char* r : required)
    if (!obj.contains(r)) bad(prefix + r, "missing", "a value: the key is required");
}

std::string get_string(const json& obj, const std::string& prefix, const char* key) {
  const json& v = obj.at(key);
  if (!v.is_string()) bad(prefix + key, describe(v), "a string");
  return v.get<std::string>();
}

std::int64_t get_int(const json& obj, const std::string& prefix, const char* key) {
  const json& v = obj.at(key);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
    return std::int64_t(v.get<std::uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  bad(prefix + key, describe(v), "an integer");
}

bool get_bool(const json& obj, const std::string& prefix, const char* key) {
  const json& v = obj.at(key);
  if (!v.is_boolean()) bad(prefix + key, describe(v), "true or false");
  return v.get<bool>();
}

double get_number(const json& obj, const std::string& prefix, const char* key) {
  const json& v = obj.at(key);
  if (!v.is_number()) bad(prefix + key, describe(v), "a number");
  return v.get<double>();
}

}  // namespace flashlab::json_fields
