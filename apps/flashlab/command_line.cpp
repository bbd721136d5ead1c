// command_line.cpp — shell quoting of the command line (command_line.hpp).
#include "command_line.hpp"

#include <algorithm>

namespace flashlab::cli {

std::string shell_quote(std::string_view word) {
  const auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

std::string command_line(int argc, const char* const* argv) {
  std::string line;
  for (int k = 0; k < argc; ++k) {
    if (k > 0) line += ' ';
    line += shell_quote(argv[k]);
  }
  return line;
}

}  // namespace flashlab::cli
