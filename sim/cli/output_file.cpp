// output_file.cpp — write to the destination's temporary file, rename it when complete.
#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <stdexcept>

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
    std::cout.flush();
    return;
  }
  file_.close();
  if (!file_) throw std::runtime_error("writing " + out_.path + " failed");
  commit_output(out_);
  committed_ = true;
}

}  // namespace flashlab::cli
