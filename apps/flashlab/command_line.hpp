// command_line.hpp — the command line as the user ran it, one string a shell can run again: what
// `flashlab trace` records in a trace header's `command` (docs/events.md "Header").
#pragma once

#include <string>
#include <string_view>

namespace flashlab::cli {

/// `word` as one POSIX shell word: unchanged when every character is in [A-Za-z0-9_@%+=:,./-] and
/// it is not empty; otherwise in single quotes, each ' written as '\''. Never throws beyond
/// std::bad_alloc.
std::string shell_quote(std::string_view word);

/// argv[0] .. argv[argc - 1], each through shell_quote, joined by single spaces ("" for argc 0).
std::string command_line(int argc, const char* const* argv);

}  // namespace flashlab::cli
