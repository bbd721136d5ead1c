// error.hpp — the one error type for bad input: it names the field, the value and what is allowed.
#pragma once

#include <stdexcept>
#include <string>

namespace flashlab {

/// Thrown for any invalid input (config values, model names, trace files).
/// what() reads "<field> = <value>: <allowed>", an empty value written "" (value() stays empty).
class ConfigError : public std::invalid_argument {
 public:
  ConfigError(std::string field, std::string value, std::string allowed)
      : std::invalid_argument(field + " = " + (value.empty() ? "\"\"" : value) + ": " + allowed),
        field_(std::move(field)), value_(std::move(value)), allowed_(std::move(allowed)) {}
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }

 private:
  std::string field_, value_, allowed_;
};

}  // namespace flashlab
