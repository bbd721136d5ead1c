// Signals in the middle of an output (issue 24 item 3): SIGINT, SIGTERM and a file-size limit's
// SIGXFSZ while `flashlab trace -o` writes its temporary file must remove it and exit 130, 143
// and 4 — no file is left under any name (trace/temp_files.hpp).
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cli.hpp"

namespace fs = std::filesystem;

namespace {

// A trace of about a gigabyte (N = 16384, 16 x 16 tiles, warp level): its temporary exists from the
// walk's first step to its last, long after the signal is sent.
const std::vector<std::string> kBigTrace = {"trace", "--nq", "16384", "--nk", "16384", "--d", "64", "--br", "16",
                                            "--bc", "16", "--level", "warp", "-o"};

struct Child {
  pid_t pid = -1;
  std::string err_path;
};

// Starts flashlab with args, output to `out`, standard error to a file beside `dir`; `fsize_limit`
// bytes (0: none) as RLIMIT_FSIZE with SIGXFSZ at its default action.
Child start_command(const std::string& dir, const std::vector<std::string>& command, long fsize_limit) {
  Child c;
  c.err_path = dir + ".stderr";
  std::vector<std::string> args = {FLASHLAB_BIN};
  args.insert(args.end(), command.begin(), command.end());
  c.pid = ::fork();
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    const int err = ::open(c.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(err, 2);
    ::dup2(null, 1);
    for (int sig : {SIGINT, SIGTERM, SIGXFSZ}) std::signal(sig, SIG_DFL);
    if (fsize_limit > 0) {
      const rlimit limit{rlim_t(fsize_limit), rlim_t(fsize_limit)};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return c;
}

// `flashlab trace ... -o out` of kBigTrace.
Child start(const std::string& dir, const std::string& out, long fsize_limit) {
  std::vector<std::string> args = kBigTrace;
  args.push_back(out);
  return start_command(dir, args, fsize_limit);
}

// Waits (at most 60 s) until `path` exists.
bool appears(const std::string& path) {
  for (int k = 0; k < 60000; ++k) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

int exit_status(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));  // not killed: the handler exits with a status
  return WEXITSTATUS(status);
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM during trace -o: the temporary removed, exit 130 and 143, a line on stderr") {
  for (const auto& [sig, name, code] : {std::tuple{SIGINT, "SIGINT", 130}, std::tuple{SIGTERM, "SIGTERM", 143}}) {
    CAPTURE(name);
    const std::string dir = make_temp_dir(), out = dir + "/big.trace";
    const Child c = start(dir, out, 0);
    const std::string temp = out + ".tmp-" + std::to_string(c.pid);
    REQUIRE(appears(temp));
    ::kill(c.pid, sig);
    CHECK(exit_status(c.pid) == code);
    CHECK(fs::is_empty(dir));  // neither big.trace nor its temporary
    CHECK(contents(c.err_path) == std::string("flashlab: interrupted by ") + name + "; partial output files removed\n");
    fs::remove(c.err_path);
  }
}

TEST_CASE("a file-size limit (SIGXFSZ at its default action) during trace -o: the temporary removed, exit 4") {
  const std::string dir = make_temp_dir(), out = dir + "/big.trace";
  const Child c = start(dir, out, 1 << 20);  // 1 MiB: the trace passes it early in the walk
  CHECK(exit_status(c.pid) == 4);
  CHECK(fs::is_empty(dir));
  CHECK(contents(c.err_path) ==
        "flashlab: error: an output passed the file-size limit (SIGXFSZ); partial output files removed\n");
  fs::remove(c.err_path);
}

TEST_CASE("SIGINT during run --out NEW_DIR: no empty folder is left (was: the folder made before the work stayed)") {
  // A new user's report: Ctrl-C during `run --out outd` left an empty outd/. The float64 reference of
  // N = 8192, d = 64 (N^2 d = 2^32 multiply-adds) runs for seconds; the folder is checked and made
  // within milliseconds of the start, then (now) removed until the files are written.
  const std::string dir = make_temp_dir(), out = dir + "/new";
  const Child c = start_command(dir, {"run", "--algo", "v1", "--seq", "8192", "--d", "64", "--out", out}, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(!fs::exists(out));  // during the work
  ::kill(c.pid, SIGINT);
  CHECK(exit_status(c.pid) == 130);
  CHECK(fs::is_empty(dir));
  fs::remove(c.err_path);
  // a run that ends writes its files into the folder it makes (N = 64: O 64 x 64 fp16, L 64 fp32)
  const CliResult r = run_cli("run --seq 64 --d 64 --out " + out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::file_size(out + "/O.npy") == 128 + 64 * 64 * 2);
  CHECK(fs::file_size(out + "/L.npy") == 128 + 64 * 4);
  fs::remove_all(dir);
}
