// output_path.cpp — see output_path.hpp.
#include "output_path.hpp"

#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "flashlab/contract/error.hpp"

namespace flashlab::viz {

namespace fs = std::filesystem;

std::string output_target(const std::string& field, const std::string& path) {
  const std::string creatable = "a file path that can be created";
  fs::path target = path;
  if (!target.has_filename()) throw ConfigError(field, path.empty() ? "\"\"" : path, creatable);
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(target, ec);
  if (fs::is_symlink(link)) {
    target = fs::canonical(target, ec);  // follows every link; fails on a dangling one
    if (ec) throw ConfigError(field, path, creatable);
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw ConfigError(field, path, creatable + ", not a directory, FIFO, socket or device");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK | X_OK) != 0)
    throw ConfigError(field, path, creatable);
  return target.string();
}

}  // namespace flashlab::viz
