// Exit statuses, one meaning each for every command (apps/flashlab/commands.hpp ExitStatus), listed by
// --help; and `flashlab diff` on inputs that are not trace files (issue 9 items 1 and 4).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cli.hpp"
#include "../common/trace_file.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kTrace = "trace --nq 20 --nk 12 --d 4 --br 8 --bc 4 --dtype fp32";

std::string contents(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

CliResult timed(const std::string& args, double& seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = run_cli(args);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

TEST_CASE("--help of flashlab and of every command lists the exit statuses") {
  for (const char* cmd : {"", "count ", "compare ", "run ", "sweep ", "trace ", "diff "}) {
    CAPTURE(cmd);
    const CliResult r = run_cli(std::string(cmd) + "--help");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("Exit status (every command):") != std::string::npos);
    for (const char* line : {"  0  success; diff: the traces agree", "  1  diff: the traces differ", "  2  bad input",
                             "  3  run: numerics out of tolerance", "  4  the work failed"})
      CHECK(r.out.find(line) != std::string::npos);
  }
}

TEST_CASE("exit statuses: 0 agree, 1 differ, 2 bad input, 4 a failed write") {
  const std::string dir = make_temp_dir(), a = dir + "/a.trace", b = dir + "/b.trace";
  REQUIRE(run_cli(kTrace + " -o " + a + " --format text").code == 0);
  CHECK(run_cli("diff " + a + " " + a).code == 0);
  std::string text = contents(a);
  const std::size_t load = text.find(" load K ");
  REQUIRE(load != std::string::npos);
  text[load + 6] = 'V';  // one event's tensor changed
  write_file(b, text);
  CliResult r = run_cli("diff " + a + " " + b);
  CHECK(r.code == 1);
  CHECK(r.err.find("the traces differ") != std::string::npos);
  CHECK(run_cli("diff " + a + " " + dir + "/missing").code == 2);
  CHECK(run_cli("count --d 0").code == 2);
  // A write that fails (the file size limit, its signal ignored): 4, and no file left behind.
  const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 4; exec " + std::string(FLASHLAB_BIN) +
                          " trace --nq 400 --nk 400 --d 4 --br 8 --bc 4 --format text -o " + dir + "/big.trace\" 2>" +
                          dir + "/err";
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 4);
  CHECK(contents(dir + "/err").find("flashlab: error: cannot write " + dir + "/big.trace") != std::string::npos);
  CHECK(!fs::exists(dir + "/big.trace"));
  fs::remove_all(dir);
}

TEST_CASE("diff refuses a device, a FIFO and a directory at once: exit 2, not a read without end") {
  // Before: `diff /dev/zero a.trace` read 2.1 GB for 18 s and ended in std::bad_alloc, exit 1.
  const std::string dir = make_temp_dir(), a = dir + "/a.trace", fifo = dir + "/fifo";
  REQUIRE(run_cli(kTrace + " -o " + a).code == 0);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const auto& [path, kind] : {std::pair{std::string("/dev/zero"), "character device"}, std::pair{fifo, "FIFO"},
                                   std::pair{dir, "directory"}}) {
    CAPTURE(path);
    double seconds = 0;
    const CliResult r = timed("diff " + path + " " + a, seconds);
    CHECK(r.code == 2);
    CHECK(seconds < 10);
    CHECK(r.err == "flashlab: error: trace file = " + path + ": a readable regular file (it is a " + kind + ")\n");
  }
  fs::remove_all(dir);
}

TEST_CASE("diff refuses a file larger than a trace of its config can be: exit 2, before reading it") {
  const std::string dir = make_temp_dir(), a = dir + "/a.trace", big = dir + "/big.trace";
  for (const char* form : {"text", "binary"}) {
    CAPTURE(form);
    REQUIRE(run_cli(kTrace + " -o " + a + " --format " + form).code == 0);
    fs::copy_file(a, big, fs::copy_options::overwrite_existing);
    REQUIRE(::truncate(big.c_str(), off_t(1) << 36) == 0);  // 64 GiB, sparse
    double seconds = 0;
    const CliResult r = timed("diff " + big + " " + a, seconds);
    CHECK(r.code == 2);
    CHECK(seconds < 10);
    CHECK(r.err.find("flashlab: error: " + big + ": trace file size = 68719476736 bytes: at most ") == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("diff on a header nested 60,000 levels deep: exit 2 naming the header, not a crash") {
  // Before: SIGSEGV (exit 139) from recursion when the error message dumped the whole header.
  const std::string dir = make_temp_dir(), a = dir + "/a.trace", deep = dir + "/deep.trace";
  for (const char* form : {"text", "binary"}) {
    CAPTURE(form);
    REQUIRE(run_cli(kTrace + " -o " + a + " --format " + form).code == 0);
    write_file(deep, flashlab::test::with_header_json(contents(a), std::string(60000, '[') + std::string(60000, ']')));
    const CliResult r = run_cli("diff " + deep + " " + a);
    CHECK(r.code == 2);
    CHECK(r.err.find(deep + ": trace header [][][][][][][][] = nested deeper than 8 levels") != std::string::npos);
    CHECK(r.err.size() < 400);
  }
  fs::remove_all(dir);
}
