// output_file.cpp — write to the destination's temporary file, rename it when complete.
#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "standard_output.hpp"

namespace flashlab::cli {

OutputFile::OutputFile(const std::string& path) {
  if (path.empty() || path == "-") return;
  out_ = output_path(path);
  file_.open(out_.temp, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!file_) throw output_create_error(out_, errno);
}

OutputFile::~OutputFile() {
  if (!out_.temp.empty() && !committed_) {
    file_.close();
    std::remove(out_.temp.c_str());
  }
}

std::ostream& OutputFile::stream() { return out_.temp.empty() ? std::cout : file_; }

void OutputFile::commit() {
  if (out_.temp.empty()) {
    check_standard_output();
    return;
  }
  errno = 0;
  file_.close();
  if (!file_) {
    const int e = errno;
    throw OutputFailed("writing " + out_.path + " failed" + (e != 0 ? std::string(" (") + std::strerror(e) + ")" : ""));
  }
  try {
    commit_output(out_);
  } catch (const std::runtime_error& e) {
    throw OutputFailed(e.what());
  }
  committed_ = true;
}

}  // namespace flashlab::cli
