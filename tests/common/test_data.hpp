// test_data.hpp — a committed data file under tests/data read as JSON (the file must exist).
#pragma once

#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace flashlab::test {

/// tests/data/`relative` parsed (FLASHLAB_TEST_DATA is tests/data in every test binary).
inline nlohmann::json read_test_data(const std::string& relative) {
  std::ifstream f(std::string(FLASHLAB_TEST_DATA) + "/" + relative);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

}  // namespace flashlab::test
