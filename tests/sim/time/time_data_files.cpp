// time_data_files.cpp — the committed GPU time data sets, read once (time_data_files.hpp).
#include "time_data_files.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <map>

#include <fmt/format.h>

namespace flashlab::test {

std::string time_data_path(const std::string& name) { return std::string(FLASHLAB_TEST_DATA) + "/gpu_time/" + name; }

nlohmann::json time_data_json(const std::string& name) {
  std::ifstream in(time_data_path(name));
  REQUIRE_MESSAGE(in, "cannot read " << time_data_path(name));
  return nlohmann::json::parse(in);
}

std::string data_set_source(const nlohmann::json& m) {
  return fmt::format("`{}`, {}, {} with driver {}; kernel sources `{}`", m["command"].get<std::string>(),
                     m["date"].get<std::string>(), m["gpu"].get<std::string>(), m["driver"].get<std::string>(),
                     m["kernel_sources_sha256"].get<std::string>().substr(0, 12));
}

const std::vector<timefit::Row>& time_data_rows(const std::string& name) {
  static std::map<std::string, std::vector<timefit::Row>> walked;  // the test cases of a binary run in one thread
  auto it = walked.find(name);
  if (it == walked.end()) it = walked.emplace(name, timefit::load_rows(time_data_path(name))).first;
  return it->second;
}

}  // namespace flashlab::test
