// preset_table.hpp — lookup by name in a table of presets (GPU presets, model presets): one rule
// for both, and one error naming the field and every name allowed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/contract/error.hpp"

namespace flashlab {

/// The names of a table's entries (each has a `name`), in table order.
template <class Table>
std::vector<std::string> preset_names(const Table& table) {
  std::vector<std::string> v;
  for (const auto& e : table) v.push_back(e.name);
  return v;
}

/// The entry of `table` named `name`. Throws ConfigError(field, name, "one of <names>") for any other.
template <class Table>
const auto& find_preset(const Table& table, std::string_view name, const char* field) {
  for (const auto& e : table)
    if (e.name == name) return e;
  std::string allowed;
  for (const std::string& n : preset_names(table)) allowed += (allowed.empty() ? "" : ", ") + n;
  throw ConfigError(field, std::string(name), "one of " + allowed);
}

}  // namespace flashlab
