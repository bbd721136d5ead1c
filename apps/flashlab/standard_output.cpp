// standard_output.cpp — std::cout through a stream buffer that remembers why a write failed, and
// the check of standard output (standard_output.hpp).
#include "standard_output.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>

namespace flashlab::cli {
namespace {

int first_errno = 0;  // errno of the first failed write or flush of standard output; 0 if none

void record_failure() {
  if (first_errno == 0) first_errno = errno != 0 ? errno : EIO;
}

// Passes std::cout's characters to C's stdout (which buffers them) and records the first failure.
class CheckedStdoutBuf final : public std::streambuf {
 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    errno = 0;
    if (std::fputc(traits_type::to_char_type(c), stdout) == EOF) {
      record_failure();
      return traits_type::eof();
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    errno = 0;
    const std::size_t written = std::fwrite(s, 1, std::size_t(n), stdout);
    if (written != std::size_t(n)) record_failure();
    return std::streamsize(written);
  }
  int sync() override {
    errno = 0;
    if (std::fflush(stdout) == 0) return 0;
    record_failure();
    return -1;
  }
};

}  // namespace

void install_standard_output() {
  // A reader that closes the pipe early (`| head -1`) makes writes fail with EPIPE, which the checks
  // below report (exit 4, naming the reason), instead of SIGPIPE killing the process (status 141).
  std::signal(SIGPIPE, SIG_IGN);
  // Never destroyed: the C++ runtime flushes std::cout after every static object is gone (the
  // ios_base::Init destructor at exit), so a static buffer would be used after its destructor ran.
  static CheckedStdoutBuf* const buf = new CheckedStdoutBuf;
  std::cout.rdbuf(buf);
}

void check_standard_output() {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0) record_failure();
  if (first_errno == 0 && !std::ferror(stdout) && std::cout.good()) return;
  if (first_errno == 0) first_errno = EIO;
  const std::string why = std::strerror(first_errno);
  first_errno = 0;  // reported once: a second check (main after a command's own) passes
  std::clearerr(stdout);
  std::cout.clear();
  throw OutputFailed("writing standard output failed (" + why + "); the output is incomplete");
}

void write_standard_output(std::string_view bytes) {
  std::cout.write(bytes.data(), std::streamsize(bytes.size()));
  check_standard_output();
}

}  // namespace flashlab::cli
