// command_output.cpp — a command's output, checked before any work and written whole (command_output.hpp).
#include "command_output.hpp"

#include <cstdio>
#include <filesystem>
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

namespace {

// The file a destination names: its directory's canonical path joined with its file name (the file
// itself need not exist yet), so that "x", "./x" and "dir/../x" compare equal.
std::filesystem::path destination_file(const std::string& target) {
  const std::filesystem::path p(target);
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::weakly_canonical(p.parent_path().empty() ? "." : p.parent_path(), ec);
  return ec ? p.lexically_normal() : dir / p.filename();
}

}  // namespace

bool OutputFile::same_destination(const OutputFile& other) const {
  if (out_.temp.empty() || other.out_.temp.empty()) return out_.temp.empty() && other.out_.temp.empty();
  return destination_file(out_.target) == destination_file(other.out_.target);
}

void check_distinct(const OutputFile& a, const OutputFile& b) {
  if (a.same_destination(b)) throw ConfigError(b.flag(), b.path(), "a destination other than --" + a.flag() + "'s");
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
