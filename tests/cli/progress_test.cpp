// Progress on long work (issue 9): a command that runs for more than a second draws a bar on
// stderr when stderr is a terminal — here a pseudo-terminal — and nothing when it is a file; short
// work draws nothing; standard output is the same either way.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cli.hpp"

namespace {

// Runs `flashlab <args>` with stderr on a new pseudo-terminal and stdout to a file.
CliResult run_with_tty_stderr(const std::string& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string slave = ::ptsname(master);
  char out_path[] = "/tmp/flashlab_cli_out_XXXXXX";
  const int out_fd = ::mkstemp(out_path);
  REQUIRE(out_fd >= 0);
  // Appended rather than `std::string(FLASHLAB_BIN) + " " + args`: GCC 12 at -O1 reports a false
  // -Wstringop-overflow on that temporary (its libstdc++ memcpy into the small-string buffer).
  std::string cmd = FLASHLAB_BIN;
  cmd += ' ';
  cmd += args;
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setsid();
    const int tty = ::open(slave.c_str(), O_RDWR);
    if (tty < 0) ::_exit(127);
    ::dup2(tty, STDERR_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_fd);
  CliResult r;
  char buf[4096];
  for (;;) {  // read the terminal until the child closes it (EIO)
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) r.err.append(buf, std::size_t(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(out_path);
  std::ostringstream s;
  s << f.rdbuf();
  r.out = s.str();
  std::remove(out_path);
  return r;
}

}  // namespace

TEST_CASE("count of 2^26 tiles (seconds of work): a progress bar on a terminal's stderr, none in a file") {
  const std::string args = "count --algo v2 --seq 524288 --br 64 --bc 64";
  const CliResult tty = run_with_tty_stderr(args);
  INFO(tty.err);
  REQUIRE(tty.code == 0);
  CHECK(tty.err.find("\r\033[K[") != std::string::npos);  // drawn in place
  CHECK(tty.err.find("%  count") != std::string::npos);
  CHECK(tty.err.find('#') != std::string::npos);           // it moved
  REQUIRE(tty.err.size() >= 4);
  CHECK(tty.err.substr(tty.err.size() - 4) == "\r\033[K");  // and was erased before the result
  CHECK(tty.out.find("Tiles (i, j)") != std::string::npos);
  const CliResult file = run_cli(args);  // stderr to a file: no bar
  CHECK(file.code == 0);
  CHECK(file.err.empty());
  CHECK(file.out == tty.out);
}

TEST_CASE("sweep and run show their bar on a terminal when long, short work shows none") {
  const CliResult sweep = run_with_tty_stderr("sweep --over n --values 400000,500000 --algos v2 --br 64 --bc 64");
  INFO(sweep.err);
  REQUIRE(sweep.code == 0);
  CHECK(sweep.err.find("%  sweep ") != std::string::npos);
  CHECK(sweep.err.find(": n = ") != std::string::npos);
  const CliResult run = run_with_tty_stderr("run --algo v1,v2 --seq 8192 --d 64 --br 64 --bc 64");
  INFO(run.err);
  REQUIRE(run.code == 0);
  CHECK(run.err.find("%  run ") != std::string::npos);
  const CliResult quick = run_with_tty_stderr("count");
  CHECK(quick.code == 0);
  CHECK(quick.err.empty());
}
