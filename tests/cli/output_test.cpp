// Where the commands write: only regular files (or links to them) are replaced, through a
// temporary file; a bad destination is a bad input (exit 2) that names the path the user gave.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>

#include "run_cli.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kTrace = "trace --nq 20 --nk 12 --d 4 --br 8 --bc 4 --dtype fp32 --format text";
const std::string kSweep = "sweep --over n --values 16,32 --d 4 --br 8 --bc 8";

std::string contents(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

TEST_CASE("trace and sweep refuse a FIFO or a directory as output and leave it as it was") {
  const std::string dir = make_temp_dir(), fifo = dir + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& cmd : {kTrace, kSweep}) {
    CAPTURE(cmd);
    CliResult r = run_cli(cmd + " -o " + fifo);
    CHECK(r.code == 2);
    CHECK(r.err.find("output = " + fifo + ": a regular file path (it is a FIFO)") != std::string::npos);
    CHECK(is_fifo(fifo));
    r = run_cli(cmd + " -o " + dir);
    CHECK(r.code == 2);
    CHECK(r.err.find("output = " + dir + ": a regular file path (it is a directory)") != std::string::npos);
    CHECK(fs::is_directory(dir));
  }
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);  // no temporary left
  fs::remove_all(dir);
}

TEST_CASE("a symbolic link to a regular file survives: the new output replaces its target") {
  const std::string dir = make_temp_dir(), real = dir + "/real.out", link = dir + "/link.out";
  for (const std::string& cmd : {kTrace, kSweep}) {
    CAPTURE(cmd);
    std::ofstream(real) << "old contents\n";
    fs::create_symlink("real.out", link);
    const CliResult r = run_cli(cmd + " -o " + link);
    REQUIRE(r.code == 0);
    CHECK(fs::is_symlink(link));
    CHECK(fs::read_symlink(link) == "real.out");
    const std::string text = contents(real);
    CHECK(text.find("old contents") == std::string::npos);
    CHECK(text.rfind(cmd == kTrace ? "flashlab-trace text " : "over,value,algo,", 0) == 0);
    CHECK(text.size() > 20);
    fs::remove(link);
  }
  const std::string dangling = dir + "/dangling.out";
  fs::create_symlink("missing.out", dangling);
  const CliResult r = run_cli(kTrace + " -o " + dangling);
  CHECK(r.code == 2);
  CHECK(r.err.find("a symbolic link to a missing file") != std::string::npos);
  CHECK(!fs::exists(dir + "/missing.out"));
  fs::remove_all(dir);
}

TEST_CASE("an output in a missing folder is a bad input naming the path given, not the temporary file") {
  const std::string dir = make_temp_dir(), path = dir + "/no/such/x.trace";
  for (const std::string& cmd : {kTrace, kSweep}) {
    CAPTURE(cmd);
    const CliResult r = run_cli(cmd + " -o " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find("output = " + path + ": a file path that can be created (No such file or directory)") !=
          std::string::npos);
    CHECK(r.err.find(".tmp") == std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("trace refuses, before writing, a file above --max-bytes (default 2 GiB), smaller traces are written") {
  const std::string dir = make_temp_dir(), path = dir + "/big.trace";
  // V2, N = 2^21, B_r = B_c = 64: 2^30 tiles of 5 block-level events (FA2 Alg. 1: load K_j, V_j,
  // S, softmax, output) and 2^15 Q blocks of 5 (load Q_i, init, finalize, store O_i, L_i): 40 B each.
  CliResult r = run_cli("trace --seq 2097152 --br 64 --bc 64 -o " + path);
  CHECK(r.code == 2);
  CHECK(r.err.find("trace size = ") != std::string::npos);
  CHECK(r.err.find("for 5,368,872,960 events") != std::string::npos);
  CHECK(r.err.find("at most --max-bytes 2,147,483,648 B (2.00 GiB)") != std::string::npos);
  CHECK(!fs::exists(path));
  CHECK(fs::is_empty(dir));

  // 20 x 12, B_r = 8, B_c = 4: T_r = 3, T_c = 3; 9 tiles x 5 + 3 Q blocks x 5 = 60 events of 40 B.
  const std::string small = "trace --nq 20 --nk 12 --d 4 --br 8 --bc 4 -o " + path;
  r = run_cli(small);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("60 events") != std::string::npos);
  const std::uintmax_t size = fs::file_size(path);
  CHECK(size > 60 * 40);
  fs::remove(path);
  r = run_cli(small + " --max-bytes " + std::to_string(60 * 40));  // below the events alone
  CHECK(r.code == 2);
  CHECK(r.err.find("at most --max-bytes 2,400 B") != std::string::npos);
  CHECK(!fs::exists(path));
  // The header holds the command line, --max-bytes included: the exact size is taken from a run
  // whose --max-bytes value has as many digits (4) as the ones compared with it.
  CHECK(run_cli(small + " --max-bytes 9999").code == 0);
  const std::uintmax_t exact = fs::file_size(path);
  REQUIRE(exact > 1000);
  REQUIRE(exact <= 9999);
  fs::remove(path);
  CHECK(run_cli(small + " --max-bytes " + std::to_string(exact - 1)).code == 2);
  CHECK(!fs::exists(path));
  CHECK(run_cli(small + " --max-bytes " + std::to_string(exact)).code == 0);  // the bound is exact here
  CHECK(fs::file_size(path) == exact);
  CHECK(run_cli(small + " --max-bytes 0").code == 2);
  CHECK(run_cli(small + " --max-bytes 2GB").code == 2);
  fs::remove_all(dir);
}
