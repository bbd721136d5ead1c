// command_output.cpp — a command's output, checked before any work and written whole (command_output.hpp).
#include "command_output.hpp"

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "flashlab/contract/error.hpp"

#include "standard_output.hpp"

namespace flashlab::cli {

OutputFile::OutputFile(const std::string& path, std::string flag) : flag_(std::move(flag)) {
  if (path.empty() || path == "-") {
    out_.path = "-";
    return;
  }
  try {
    out_ = output_path(path);
    check_creatable(out_);
  } catch (const ConfigError& e) {  // output_file.hpp names the field "output": the flag's name instead
    throw ConfigError(flag_, e.value(), e.allowed());
  }
}

void OutputFile::write(std::string_view bytes) const {
  if (out_.temp.empty()) {
    write_standard_output(bytes);  // flushed and checked: OutputFailed (exit 4) naming the reason
    return;
  }
  std::FILE* f = nullptr;
  try {
    f = open_output_temp(out_);
  } catch (const ConfigError& e) {  // the directory changed since the check
    throw ConfigError(flag_, e.value(), e.allowed());
  }
  write_output_bytes(f, bytes, out_);
  close_and_commit(f, out_);
}

}  // namespace flashlab::cli
