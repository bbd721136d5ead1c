// Progress on long work (issue 9): a command that runs for more than a second draws a bar on
// stderr when stderr is a terminal — here a pseudo-terminal — and nothing when it is a file; short
// work draws nothing; standard output is the same either way. "Long" is FLASHLAB_PROGRESS_AFTER
// (apps/flashlab/progress.cpp; 1 s by default): kLong sets it to 50 ms, so that a fraction of a second
// of work is long here and the tests need not count for seconds.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cli.hpp"

namespace {

// The environment in which the work below (half a second or more in the release build) is long.
const std::string kLong = "FLASHLAB_PROGRESS_AFTER=0.05";

// Runs `ENV flashlab <args>` (env: shell words VAR=value, "" for none) with stderr on a new
// pseudo-terminal and stdout to a file.
CliResult run_with_tty_stderr(const std::string& args, const std::string& env = "") {
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
  std::string cmd = env;
  cmd += ' ';
  cmd += FLASHLAB_BIN;
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

TEST_CASE("count of 2^22 tiles, long work: a progress bar on a terminal's stderr, none in a file") {
  const std::string args = "count --algo v2 --seq 131072 --br 64 --bc 64";
  const CliResult tty = run_with_tty_stderr(args, kLong);
  INFO(tty.err);
  REQUIRE(tty.code == 0);
  CHECK(tty.err.find("\r\033[K[") != std::string::npos);  // drawn in place
  CHECK(tty.err.find("%  count") != std::string::npos);
  CHECK(tty.err.find('#') != std::string::npos);           // it moved
  REQUIRE(tty.err.size() >= 4);
  CHECK(tty.err.substr(tty.err.size() - 4) == "\r\033[K");  // and was erased before the result
  CHECK(tty.out.find("Tiles (i, j)") != std::string::npos);
  const CliResult file = run_cli_env(kLong, args);  // stderr to a file: no bar (plain lines only after 10 s: below)
  CHECK(file.code == 0);
  CHECK(file.err.find('\r') == std::string::npos);
  CHECK(file.out == tty.out);
}

// The plain lines off a terminal (issue 24 item 4): every FLASHLAB_PROGRESS_EVERY seconds (10 by
// default), "flashlab WHAT: P% (done/total: label), E s elapsed, about R s left"; none with --quiet.
TEST_CASE("off a terminal, long work prints a plain progress line every interval, none with --quiet") {
  const std::string args = "count --algo v2 --seq 262144 --br 64 --bc 64";  // 2^24 tiles: over a second
  const CliResult lines = run_cli_env("FLASHLAB_PROGRESS_EVERY=0.3", args);
  REQUIRE(lines.code == 0);
  INFO(lines.err);
  const std::regex line(R"(flashlab count: (\d+)%, (\d+\.\d) s elapsed, about \d+\.\d s left)");
  std::istringstream err(lines.err);
  std::string text;
  int seen = 0, last_percent = -1;
  double last_elapsed = 0;
  while (std::getline(err, text)) {
    std::smatch m;
    REQUIRE(std::regex_match(text, m, line));
    const int percent = std::stoi(m[1]);
    const double elapsed = std::stod(m[2]);
    CHECK(percent >= last_percent);        // the work only moves forward
    CHECK(elapsed >= last_elapsed + 0.2);  // one line per interval, not more
    last_percent = percent;
    last_elapsed = elapsed;
    ++seen;
  }
  CHECK(seen >= 2);  // seconds of work at 0.3 s each
  CHECK(lines.out.find("Tiles (i, j)") != std::string::npos);

  const CliResult sweep = run_cli_env("FLASHLAB_PROGRESS_EVERY=0.2", "sweep --over n --values 100000,120000 --algos v2 --br 64 --bc 64");
  REQUIRE(sweep.code == 0);
  CHECK(std::regex_search(sweep.err, std::regex(R"(^flashlab sweep: \d+% \([12]/2: n = 1[02]0000, v2\), )")));

  const CliResult quiet = run_cli_env("FLASHLAB_PROGRESS_EVERY=0.3", args + " --quiet");
  CHECK(quiet.code == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.out == lines.out);
  const CliResult quiet_tty = run_with_tty_stderr(args + " --quiet", kLong);
  CHECK(quiet_tty.code == 0);
  CHECK(quiet_tty.err.empty());
}

TEST_CASE("sweep and run show their bar on a terminal when long, short work shows none") {
  const CliResult sweep = run_with_tty_stderr("sweep --over n --values 100000,120000 --algos v2 --br 64 --bc 64", kLong);
  INFO(sweep.err);
  REQUIRE(sweep.code == 0);
  CHECK(sweep.err.find("%  sweep ") != std::string::npos);
  CHECK(sweep.err.find(": n = ") != std::string::npos);
  const CliResult run = run_with_tty_stderr("run --algo v1,v2 --seq 4096 --d 64 --br 64 --bc 64", kLong);
  INFO(run.err);
  REQUIRE(run.code == 0);
  CHECK(run.err.find("%  run ") != std::string::npos);
  const CliResult quick = run_with_tty_stderr("count");  // a millisecond, under the default second
  CHECK(quick.code == 0);
  CHECK(quick.err.empty());
}
