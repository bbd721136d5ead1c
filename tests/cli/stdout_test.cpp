// Standard output is an output like any file: a command whose stdout cannot take what it prints
// (/dev/full: every write fails with ENOSPC; a closed descriptor) exits 4 (commands.hpp
// kExitFailed) with the reason on stderr, never 0 with its output cut short (issue 9 item 3).
// And `flashlab --version`.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_cli.hpp"

namespace {

// `flashlab <args>` with stdout on /dev/full: exit 4 and the reason on stderr.
void check_full(const std::string& args) {
  const CliResult r = run_cli(args + " >/dev/full");
  INFO("flashlab ", args, " >/dev/full\nstderr: ", r.err);
  CHECK(r.code == 4);
  CHECK(r.err.find("flashlab: error: writing standard output failed (No space left on device); the output is "
                   "incomplete") != std::string::npos);
}

}  // namespace

TEST_CASE("every command with stdout on /dev/full exits 4, naming standard output and the reason") {
  const std::string dir = make_temp_dir(), trace = dir + "/a.trace";
  REQUIRE(run_cli("trace --nq 20 --nk 12 --d 4 --br 8 --bc 4 -o " + trace).code == 0);
  for (const std::string& args :
       {std::string("count"), std::string("count --json"), std::string("compare"), std::string("compare --json"),
        std::string("run --seq 64 --d 8 --br 16 --bc 16"), std::string("run --seq 64 --d 8 --br 16 --bc 16 --json"),
        std::string("sweep --over n --values 64,128 --d 8 --br 16 --bc 16"), "diff " + trace + " " + trace,
        "trace --nq 20 --nk 12 --d 4 --br 8 --bc 4 -o " + dir + "/b.trace", std::string("--help"),
        std::string("count --help"), std::string("--version")})
    check_full(args);
  // a long output (120 CSV rows, many stdio buffers) fails too, and says why
  check_full("sweep --over n --from 16 --to 640 --step 16 --d 4 --br 16 --bc 16");
  // run's FAIL (exit 3) is outranked: the report itself was lost
  check_full("run --algo standard --seq 4 --d 4 --br 2 --bc 2 --q 1e30 --k 1e30 --v 1 --dtype fp32");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a closed standard output is an error too, a working one still exits 0 with nothing on stderr") {
  const CliResult closed = run_cli("count >&-");
  CHECK(closed.code == 4);
  CHECK(closed.err.find("flashlab: error: writing standard output failed (Bad file descriptor)") != std::string::npos);
  const CliResult ok = run_cli("count");
  CHECK(ok.code == 0);
  CHECK(ok.err.empty());
  CHECK(ok.out.find("Grid: ") != std::string::npos);
}

TEST_CASE("flashlab --version prints the project version of CMakeLists.txt") {
  const CliResult r = run_cli("--version");
  CHECK(r.code == 0);
  CHECK(r.out == std::string("flashlab ") + FLASHLAB_VERSION + "\n");
  CHECK(std::string(FLASHLAB_VERSION).find('.') != std::string::npos);
  CHECK(run_cli("--help").out.find("--version") != std::string::npos);
}
