// `flashlab trace` and `flashlab diff` as a user runs them: the files they write, their exit codes.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "../../common/trace_helpers.hpp"

using namespace flashlab;

namespace {

// One folder per process: ctest runs the test cases in parallel, other builds may run them too.
const std::string kDir =
    (std::filesystem::temp_directory_path() / ("flashlab_trace_cli_test_" + std::to_string(::getpid()))).string();

int run(const std::string& args) {
  const int status = std::system((std::string(FLASHLAB_BIN) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string file(const char* name) { return kDir + "/" + name; }

const char* kConfig = "--nq 37 --nk 29 --d 8 --br 8 --bc 6 --mask causal-br --warps 3 --dtype fp32";

}  // namespace

TEST_CASE("flashlab trace writes the trace of its config, both forms, both levels") {
  std::filesystem::create_directories(kDir);
  Config c = test::small(Algo::v2, 37, 29, 8, 8, 6, Mask{MaskKind::causal_br, 0, 0});
  c.warps = 3;
  c.dtype = Dtype::fp32;
  const Problem p = resolve(c);
  for (const char* level : {"block", "warp"})
    for (const char* form : {"text", "binary"}) {
      CAPTURE(level);
      CAPTURE(form);
      const std::string out = file("t.trace");
      REQUIRE(run(std::string("trace ") + kConfig + " -o " + out + " --format " + form + " --level " + level) == 0);
      const Trace t = read_trace(out);
      CHECK(test::same_events(t.events, record_trace(p, parse_trace_level(level)).events));
      CHECK(t.header.config.warps == 3);
      CHECK(t.stats.empty());
    }
  REQUIRE(run(std::string("trace ") + kConfig + " -o " + file("s.trace") + " --stats-blocks 4,1 --seed 5") == 0);
  const Trace s = read_trace(file("s.trace"));
  REQUIRE(s.stats.size() == 2);
  CHECK(s.stats[0].i == 1);
  CHECK(s.header.inputs->seed == 5);
  std::filesystem::remove_all(kDir);
}

TEST_CASE("flashlab diff: 0 when traces agree, 1 when they differ, 2 for other configs and bad files") {
  std::filesystem::create_directories(kDir);
  const std::string a = file("a.trace"), b = file("b.txt"), w = file("w.trace"), other = file("o.trace");
  REQUIRE(run(std::string("trace ") + kConfig + " -o " + a + " --stats-blocks 2") == 0);
  REQUIRE(run(std::string("trace ") + kConfig + " -o " + w + " --level warp --format text --stats-blocks 2") == 0);
  CHECK(run("diff " + a + " " + a) == 0);
  CHECK(run("diff " + a + " " + w) == 0);  // compared at block level
  Trace t = read_trace(a);
  t.events[5].bytes += 1;
  write_trace(b, t, TraceFormat::text);
  CHECK(run("diff " + a + " " + b) == 1);
  t = read_trace(a);
  t.stats[0].snapshots.back().l[0] *= 1.00001f;  // inside fp32's 1e-5
  write_trace(b, t, TraceFormat::text);
  CHECK(run("diff " + a + " " + b) == 0);
  t.stats[0].snapshots.back().l[0] *= 1.001f;
  write_trace(b, t, TraceFormat::text);
  CHECK(run("diff " + a + " " + b) == 1);
  CHECK(run("diff " + a + " " + b + " --tol-ml 0.01") == 0);
  std::string config16 = kConfig;
  config16.replace(config16.find("--d 8"), 5, "--d 16");
  REQUIRE(run("trace " + config16 + " -o " + other) == 0);
  CHECK(run("diff " + a + " " + other) == 2);
  CHECK(run("diff " + a + " " + file("missing.trace")) == 2);
  CHECK(run(std::string("trace ") + kConfig + " -o " + file("x") + " --level thread") == 2);
  CHECK(run(std::string("trace ") + kConfig + " -o " + file("x") + " --stats-blocks 99") == 2);
  CHECK(!std::filesystem::exists(file("x")));
  std::filesystem::remove_all(kDir);
}

TEST_CASE("flashlab trace records its command line, shell-quoted, in the header, it runs again") {
  std::filesystem::create_directories(kDir);
  for (const char* form : {"text", "binary"}) {
    CAPTURE(form);
    const std::string out = kDir + "/it's here.trace";
    REQUIRE(run(std::string("trace ") + kConfig + " -o \"" + out + "\" --format " + form + " --stats-blocks 4,1") == 0);
    const Trace t = read_trace(out);
    // The program as run, each argument as one shell word: the name with a space and a ' quoted.
    const std::string expected = std::string(FLASHLAB_BIN) +
                                 " trace --nq 37 --nk 29 --d 8 --br 8 --bc 6 --mask causal-br --warps 3 --dtype fp32"
                                 " -o '" + kDir + "/it'\\''s here.trace' --format " + form + " --stats-blocks 4,1";
    CHECK(t.header.command == expected);
    std::filesystem::remove(out);
    REQUIRE(std::system((t.header.command + " >/dev/null 2>&1").c_str()) == 0);
    const Trace again = read_trace(out);
    CHECK(again.header.command == expected);
    CHECK(test::same_events(again.events, t.events));
  }
  std::filesystem::remove_all(kDir);
}
