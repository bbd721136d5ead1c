// output_file.cpp — checking an output's destination, naming its temporary file, writing it with
// every write, flush and close checked, and renaming it into place (trace/output_file.hpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_kind.hpp"
#include "flashlab/trace/output_file.hpp"
#include "flashlab/trace/temp_files.hpp"

namespace flashlab {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw ConfigError("output", path, "a regular file path (it is " + what + ")");
}

// Removes out.temp and throws "cannot write <path>: <errno text>" with errno `e`.
[[noreturn]] void discard(const OutputPath& out, int e) {
  remove_temp(out);
  throw std::runtime_error("cannot write " + out.path + ": " + std::strerror(e));
}

}  // namespace

OutputPath output_path(const std::string& path) {
  OutputPath out{path, path, ""};
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0) {
    if (S_ISLNK(link.st_mode)) {
      struct stat dest {};
      if (::stat(path.c_str(), &dest) != 0) refuse(path, "a symbolic link to a missing file");
      if (!S_ISREG(dest.st_mode)) refuse(path, std::string("a symbolic link to ") + trace_form::file_kind(dest.st_mode));
      std::error_code ec;
      const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
      if (ec) throw ConfigError("output", path, "a file path that can be created (" + ec.message() + ")");
      out.target = resolved.string();
    } else if (!S_ISREG(link.st_mode)) {
      refuse(path, trace_form::file_kind(link.st_mode));
    }
  }
  out.temp = out.target + ".tmp-" + std::to_string(::getpid());
  return out;
}

ConfigError output_create_error(const OutputPath& out, int errnum) {
  return ConfigError("output", out.path, std::string("a file path that can be created (") + std::strerror(errnum) + ")");
}

void check_creatable(const OutputPath& out) {
  const int fd = ::open(out.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) return;  // a stale temporary of this pid: the write truncates it
  if (fd < 0) throw output_create_error(out, errno);
  ::close(fd);
  ::unlink(out.temp.c_str());
}

std::FILE* open_output_temp(const OutputPath& out) {
  track_temp(out.temp);  // before it exists: a signal from here on removes it (temp_files.hpp)
  std::FILE* f = std::fopen(out.temp.c_str(), "wb");
  if (!f) {
    const int e = errno;
    forget_temp(out.temp);
    throw output_create_error(out, e);
  }
  return f;
}

void remove_temp(const OutputPath& out) {
  std::remove(out.temp.c_str());
  forget_temp(out.temp);
}

void write_output_bytes(std::FILE*& f, std::string_view bytes, const OutputPath& out) {
  if (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size()) return;
  const int e = errno;
  std::fclose(f);
  f = nullptr;
  discard(out, e);
}

void close_output_temp(std::FILE* f, const OutputPath& out) {
  errno = 0;
  const bool flushed = std::fflush(f) == 0 && !std::ferror(f);
  const int flush_errno = errno;
  errno = 0;
  const bool closed = std::fclose(f) == 0;  // the file is closed even when this fails
  if (!flushed) discard(out, flush_errno != 0 ? flush_errno : EIO);
  if (!closed) discard(out, errno != 0 ? errno : EIO);
}

void close_and_commit(std::FILE* f, const OutputPath& out) {
  close_output_temp(f, out);
  commit_output(out);
}

void write_output_file(const std::string& path, std::string_view bytes) { write_output_files({{path, bytes}}); }

void write_output_files(const std::vector<std::pair<std::string, std::string_view>>& files) {
  std::vector<OutputPath> written;  // complete temporaries, not yet renamed
  try {
    for (const auto& [path, bytes] : files) {
      const OutputPath out = output_path(path);
      std::FILE* f = open_output_temp(out);
      write_output_bytes(f, bytes, out);  // each of these removes its own temporary when it fails
      close_output_temp(f, out);
      written.push_back(out);
    }
  } catch (...) {
    for (const OutputPath& out : written) remove_temp(out);
    throw;
  }
  for (const OutputPath& out : written) commit_output(out);
}

void commit_output(const OutputPath& out) {
  if (std::rename(out.temp.c_str(), out.target.c_str()) == 0) {
    forget_temp(out.temp);
    return;
  }
  const int e = errno;
  remove_temp(out);
  throw std::runtime_error("cannot rename the temporary file to " + out.path + ": " + std::strerror(e));
}

}  // namespace flashlab
