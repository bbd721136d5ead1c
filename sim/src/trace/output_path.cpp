// output_path.cpp — checking an output's destination and naming its temporary file (trace/output_file.hpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

#include "flashlab/trace/output_file.hpp"

namespace flashlab {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw ConfigError("output", path, "a regular file path (it is " + what + ")");
}

}  // namespace

OutputPath output_path(const std::string& path) {
  OutputPath out{path, path, ""};
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0) {
    if (S_ISLNK(link.st_mode)) {
      struct stat dest {};
      if (::stat(path.c_str(), &dest) != 0) refuse(path, "a symbolic link to a missing file");
      if (!S_ISREG(dest.st_mode)) refuse(path, std::string("a symbolic link to ") + kind_of(dest.st_mode));
      std::error_code ec;
      const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
      if (ec) throw ConfigError("output", path, "a file path that can be created (" + ec.message() + ")");
      out.target = resolved.string();
    } else if (!S_ISREG(link.st_mode)) {
      refuse(path, kind_of(link.st_mode));
    }
  }
  out.temp = out.target + ".tmp-" + std::to_string(::getpid());
  return out;
}

ConfigError output_create_error(const OutputPath& out, int errnum) {
  return ConfigError("output", out.path, std::string("a file path that can be created (") + std::strerror(errnum) + ")");
}

void commit_output(const OutputPath& out) {
  if (std::rename(out.temp.c_str(), out.target.c_str()) == 0) return;
  const int e = errno;
  std::remove(out.temp.c_str());
  throw std::runtime_error("cannot rename the temporary file to " + out.path + ": " + std::strerror(e));
}

}  // namespace flashlab
