// to_python.cpp — nlohmann::json to Python objects (bindings.hpp to_python).
#include <cmath>

#include "bindings.hpp"

namespace flashlab::python {

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (const auto& [key, value] : j.items()) d[py::str(key)] = to_python(value);
      return d;
    }
    case nlohmann::json::value_t::array: {
      py::list l;
      for (const auto& value : j) l.append(to_python(value));
      return l;
    }
    case nlohmann::json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean: return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_float: {
      const double x = j.get<double>();
      if (!std::isfinite(x)) return py::none();  // dump() writes null
      return py::float_(x);
    }
    default: return py::none();  // null (and discarded, which no producer makes)
  }
}

}  // namespace flashlab::python
