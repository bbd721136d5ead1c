// output_file.cpp — write to "<path>.tmp.<pid>", rename to <path> when complete.
#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include <unistd.h>

#include "flashlab/error.hpp"

namespace flashlab::cli {

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty() || path_ == "-") return;
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  file_.open(tmp_, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!file_) {
    const std::string why = std::strerror(errno);
    throw ConfigError("output", path_, "a file path that can be created (" + why + ")");
  }
}

OutputFile::~OutputFile() {
  if (!tmp_.empty() && !committed_) {
    file_.close();
    std::remove(tmp_.c_str());
  }
}

std::ostream& OutputFile::stream() { return tmp_.empty() ? std::cout : file_; }

void OutputFile::commit() {
  if (tmp_.empty()) {
    std::cout.flush();
    return;
  }
  file_.close();
  if (!file_) throw std::runtime_error("writing " + tmp_ + " failed");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("renaming " + tmp_ + " to " + path_ + " failed: " + std::strerror(errno));
  committed_ = true;
}

}  // namespace flashlab::cli
