// standard_output.hpp — a failed write to standard output is an error of the command (a full disk,
// /dev/full, a closed descriptor), never a silent exit 0 with its output cut short (issue 9 item 3).
#pragma once

#include <string>
#include <string_view>

#include "commands.hpp"

namespace flashlab::cli {

/// An output that could not be written: a failed write, flush, close or rename of standard output
/// or of a file. Exit status kExitFailed (4, commands.hpp); main.cpp prints "flashlab: error: <what>".
class OutputFailed : public CommandFailed {
 public:
  explicit OutputFailed(const std::string& what) : CommandFailed(kExitFailed, what) {}
};

/// Makes std::cout write through C's stdout with a stream buffer that records the errno of the
/// first failed write (the reason check_standard_output() reports: by the end of the command the
/// errno of the failure is gone). main.cpp calls it once, before anything is printed.
void install_standard_output();

/// Flushes std::cout and C's stdout and tests both. Throws OutputFailed naming standard output and
/// the system's reason ("No space left on device") when any write to it has failed so far.
/// main.cpp calls it after every command (and after --help, --version); a command that prints a
/// long output may call it between parts to stop early.
void check_standard_output();

/// Writes `bytes` to std::cout and checks standard output at once. Throws OutputFailed.
void write_standard_output(std::string_view bytes);

}  // namespace flashlab::cli
