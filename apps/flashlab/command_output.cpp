// command_output.cpp — a command's output, checked before any work and written whole (command_output.hpp).
#include "command_output.hpp"

#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "standard_output.hpp"

namespace flashlab::cli {

OutputFile::OutputFile(const std::string& path) {
  if (path.empty() || path == "-") {
    out_.path = "-";
    return;
  }
  out_ = output_path(path);
  check_creatable(out_);
}

void OutputFile::write(std::string_view bytes) const {
  if (out_.temp.empty()) {
    write_standard_output(bytes);  // flushed and checked: OutputFailed (exit 4) naming the reason
    return;
  }
  std::FILE* f = open_output_temp(out_);
  write_output_bytes(f, bytes, out_);
  close_and_commit(f, out_);
}

}  // namespace flashlab::cli
