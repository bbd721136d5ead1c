// generated_doc.hpp — the check that a docs/ page a test generates from committed data (a
// validation table) is the page committed; FLASHLAB_WRITE_DOCS=1 rewrites the page first.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

namespace flashlab::test {

/// `relative`: the page's path under the source tree ("docs/validation/x.md"); `doc`: its text as
/// the test generates it. Fails the test when the committed page differs.
inline void check_generated_doc(const std::string& relative, const std::string& doc) {
  const std::string path = std::string(FLASHLAB_SOURCE_DIR) + "/" + relative;
  if (const char* w = std::getenv("FLASHLAB_WRITE_DOCS"); w && std::string(w) == "1") std::ofstream(path) << doc;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, path);
  std::stringstream committed;
  committed << in.rdbuf();
  CHECK(committed.str() == doc);
}

}  // namespace flashlab::test
