// The viewer's command line (viz/app/options.hpp), checked without a window: every bad value exits
// 2 with "<field> = <value>: <allowed>", tiles and steps are checked against the resolved config
// (T_r, T_c and the step count derived by hand below), and output paths against the file system.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "options.hpp"

using namespace flashlab;
using namespace flashlab::viz;
namespace fs = std::filesystem;

namespace {

ParseOutcome parse(const std::vector<std::string>& args, AppOptions& out) {
  std::vector<const char*> argv{"flashlab-viewer"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_options(int(argv.size()), argv.data(), out);
}

ParseOutcome parse(const std::vector<std::string>& args) {
  AppOptions out;
  return parse(args, out);
}

// Exit 2 with exactly `message`.
void refused(const std::vector<std::string>& args, const std::string& message) {
  const ParseOutcome r = parse(args);
  CAPTURE(args.back());
  CHECK(r.exit == std::optional<int>(2));
  CHECK(r.message == message);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("flashlab-viz-options-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// N_q = N_k = 512, B_r = B_c = 64: T_r = T_c = ceil(512 / 64) = 8.
const std::vector<std::string> k8x8 = {"--nq", "512", "--nk", "512", "--br", "64", "--bc", "64"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("viz options: valid flags are parsed into the options") {
  AppOptions o;
  const ParseOutcome r = parse(with(k8x8, {"--frames", "300", "--speed", "2.5", "--width", "800", "--height", "600",
                                           "--tab", "playback", "--select", "7,0", "--hover", "0,7", "--step", "12",
                                           "--play", "--map", "heat", "--metric", "visit"}),
                               o);
  REQUIRE(!r.exit);
  CHECK(o.config.n_q == 512);
  CHECK(o.frames == 300);
  CHECK(o.speed == 2.5);
  CHECK(o.width == 800);
  CHECK(o.height == 600);
  CHECK(o.tab == Tab::playback);
  CHECK(o.select.i == 7);
  CHECK(o.select.j == 0);
  CHECK(o.hover.i == 0);
  CHECK(o.hover.j == 7);
  CHECK(o.step == 12);
  CHECK(o.play);
  CHECK(o.map_mode == MapMode::heat);
  CHECK(o.metric == Metric::visit_order);
}

TEST_CASE("viz options: --help exits 0 with the flags' text") {
  const ParseOutcome r = parse({"--help"});
  CHECK(r.exit == std::optional<int>(0));
  CHECK(r.message.find("--screenshot") != std::string::npos);
  CHECK(r.message.find("--select") != std::string::npos);
}

TEST_CASE("viz options: unknown flags, stray arguments and bad numbers exit 2 naming the flag and value") {
  refused({"--bogus"}, "flag = --bogus: one of the flags listed by flashlab-viewer --help");
  refused({"--bogus", "3"}, "flag = --bogus: one of the flags listed by flashlab-viewer --help");
  refused({"map.png"}, "argument = map.png: none: every value follows its flag (see flashlab-viewer --help)");
  refused({"--frames", "0"}, "frames = 0: an integer from 1 to 1000000");
  refused({"--frames", "abc"}, "frames = abc: an integer from 1 to 1000000");
  refused({"--frames", "1000001"}, "frames = 1000001: an integer from 1 to 1000000");
  refused({"--speed", "-1"}, "speed = -1: a number of steps per second from 1 to 1000000");
  refused({"--speed=-1"}, "speed = -1: a number of steps per second from 1 to 1000000");
  refused({"--speed", "nan"}, "speed = nan: a number of steps per second from 1 to 1000000");
  refused({"--width", "399"}, "width = 399: an integer from 400 to 8192 pixels");
  refused({"--height", "8193"}, "height = 8193: an integer from 300 to 8192 pixels");
  refused({"--tab", "map"}, "tab = map: one of compare playback sweep tile timeline traces");
  refused({"--nq", "abc"}, "nq = abc: an integer from 1 to 2147483647");
  // A CLI11 parse error (a flag without its value) keeps CLI11's text, which starts with the flag.
  const ParseOutcome missing = parse({"--frames"});
  CHECK(missing.exit == std::optional<int>(2));
  CHECK(missing.message.rfind("--frames", 0) == 0);
}

TEST_CASE("viz options: --select and --hover name a tile of the T_r x T_c map") {
  const std::string allowed = ": I,J: a tile's Q block and K/V block indices, 0 <= I < T_r = 8 and 0 <= J < T_c = 8";
  refused(with(k8x8, {"--select", "99,99"}), "select = 99,99" + allowed);
  refused(with(k8x8, {"--select", "8,0"}), "select = 8,0" + allowed);
  refused(with(k8x8, {"--select", "0,8"}), "select = 0,8" + allowed);
  refused(with(k8x8, {"--select", "-1,0"}), "select = -1,0" + allowed);
  refused(with(k8x8, {"--hover", "3"}), "hover = 3" + allowed);
  refused(with(k8x8, {"--hover", "0,8"}), "hover = 0,8" + allowed);
  // N_q = 320, N_k = 192, B_r = B_c = 64: T_r = 5, T_c = 3.
  const std::vector<std::string> k5x3 = {"--nq", "320", "--nk", "192", "--br", "64", "--bc", "64"};
  AppOptions o;
  REQUIRE(!parse(with(k5x3, {"--select", "4,2"}), o).exit);
  CHECK(o.select.i == 4);
  CHECK(o.select.j == 2);
  refused(with(k5x3, {"--select", "2,3"}),
          "select = 2,3: I,J: a tile's Q block and K/V block indices, 0 <= I < T_r = 5 and 0 <= J < T_c = 3");
}

// V2 (FA2 Alg. 1) walks T_r Q blocks of T_c + 2 steps each (load Q_i, one step per tile (i, j),
// skipped tiles included, then store O_i and L_i): T_r (T_c + 2) steps, no prologue or epilogue.
TEST_CASE("viz options: --step is 0 to the schedule's T_r (T_c + 2) steps (V2)") {
  Config c;  // V2 by default; T_r = 320 / 64 = 5, T_c = 192 / 64 = 3
  c.n_q = 320;
  c.n_k = 192;
  c.b_r = c.b_c = 64;
  REQUIRE(c.algo == Algo::v2);
  CHECK(playback_steps(c, Tab::playback) == 5 * (3 + 2));
  const std::string allowed = ": an integer from 0 to 80 (the steps of this config's schedule)";  // 8 * (8 + 2)
  for (const std::string mask : {"none", "causal"}) {
    AppOptions o;
    REQUIRE(!parse(with(k8x8, {"--mask", mask, "--step", "80"}), o).exit);
    CHECK(o.step == 80);
    refused(with(k8x8, {"--mask", mask, "--step", "81"}), "step = 81" + allowed);
  }
  refused(with(k8x8, {"--step", "99999999"}), "step = 99999999" + allowed);
  refused(with(k8x8, {"--step", "-1"}), "step = -1" + allowed);
  refused(with(k8x8, {"--step", "x"}), "step = x" + allowed);
}

TEST_CASE("viz options: --screenshot and --layout must be file paths that can be created") {
  TempDir dir;
  const std::string missing = ": a file path that can be created (No such file or directory)";
  refused({"--screenshot", "/nonexistent/x.png"}, "screenshot = /nonexistent/x.png" + missing);
  refused({"--layout", "/nonexistent/x.json"}, "layout = /nonexistent/x.json" + missing);
  const std::string regular = ": a regular file path (it is ";  // output_path() of flashlab/trace/output_file.hpp

  const fs::path fifo = dir.path / "fifo.png";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused({"--screenshot", fifo.string()}, "screenshot = " + fifo.string() + regular + "a FIFO)");
  CHECK(fs::is_fifo(fifo));  // left as it was
  const fs::path sub = dir.path / "sub.png";
  fs::create_directories(sub);
  refused({"--screenshot", sub.string()}, "screenshot = " + sub.string() + regular + "a directory)");
  refused({"--layout", "/dev/null"}, "layout = /dev/null" + regular + "a character device)");

  const fs::path file = dir.path / "file";
  std::ofstream(file) << "x";
  const fs::path under_file = file / "x.png";  // its "directory" is a regular file
  refused({"--screenshot", under_file.string()},
          "screenshot = " + under_file.string() + ": a file path that can be created (Not a directory)");

  const fs::path dangling = dir.path / "dangling.png";
  fs::create_symlink(dir.path / "missing" / "x.png", dangling);
  refused({"--screenshot", dangling.string()}, "screenshot = " + dangling.string() + regular + "a symbolic link to a missing file)");

  AppOptions fresh;  // a new file in an existing, writable directory; nothing is left there by the check
  REQUIRE(!parse({"--screenshot", (dir.path / "new.png").string()}, fresh).exit);
  CHECK(fresh.screenshot == (dir.path / "new.png").string());
  CHECK(fresh.screenshot_format == ImageFormat::png);
  CHECK(!fs::exists(dir.path / "new.png"));

  fs::create_directories(dir.path / "real");
  const fs::path target = dir.path / "real" / "shot.png", link = dir.path / "link.png";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  AppOptions through;  // a link to a regular file is written through to its target
  REQUIRE(!parse({"--screenshot", link.string()}, through).exit);
  CHECK(through.screenshot == fs::canonical(target).string());
  CHECK(std::distance(fs::directory_iterator(dir.path / "real"), fs::directory_iterator{}) == 1);
}

// Issue 9 item 8: a .jpg name got a PNG. The extension picks the format, any other is refused.
TEST_CASE("viz options: --screenshot's extension picks PNG or JPEG, any other is refused") {
  TempDir dir;
  for (const auto& [name, format] : std::vector<std::pair<std::string, ImageFormat>>{
           {"a.png", ImageFormat::png}, {"b.PNG", ImageFormat::png}, {"c.jpg", ImageFormat::jpeg},
           {"d.jpeg", ImageFormat::jpeg}, {"e.JPG", ImageFormat::jpeg}}) {
    CAPTURE(name);
    AppOptions o;
    REQUIRE(!parse({"--screenshot", (dir.path / name).string()}, o).exit);
    CHECK(o.screenshot_format == format);
  }
  const std::string allowed = ": a file name ending in .png, .jpg or .jpeg (the format written)";
  for (const std::string name : {"x.gif", "x", "x.png.tmp", "dir.png/x"}) {
    const std::string path = (dir.path / name).string();
    refused({"--screenshot", path}, "screenshot = " + path + allowed);
  }
}

// Issue 9 item 7: one rule for every flag. The flags are listed from the app parse_options builds,
// so that a flag added later is walked too.
TEST_CASE("viz options: every flag with an empty value exits 2 naming the flag") {
  const std::vector<std::string> flags = value_flags();
  for (const char* f : {"--frames", "--width", "--select", "--hover", "--step", "--speed", "--screenshot", "--nq",
                        "--model", "--trace"})
    CHECK(std::find(flags.begin(), flags.end(), f) != flags.end());
  CHECK(flags.size() > 30);
  for (const std::string& flag : flags) {
    CAPTURE(flag);
    AppOptions o;
    const ParseOutcome r = parse(with(k8x8, {flag, ""}), o);
    CHECK(r.exit == std::optional<int>(2));
    CHECK(r.message.rfind(flag.substr(2) + " = \"\": a non-empty value", 0) == 0);
  }
  // --frames "" ran forever: now the message says what the flag takes
  CHECK(parse({"--frames", ""}).message ==
        "frames = \"\": a non-empty value (N): render N frames (1 to 1000000), print the first frame's time and "
        "the frame-time figures of the others (mean, median, p95), exit");
}

TEST_CASE("viz options: --select and --hover take exactly two indices, none empty") {
  const std::string allowed = ": I,J: a tile's Q block and K/V block indices, 0 <= I < T_r = 8 and 0 <= J < T_c = 8";
  refused(with(k8x8, {"--select", "1,2,3"}), "select = 1,2,3" + allowed);
  refused(with(k8x8, {"--hover", "1,2,3"}), "hover = 1,2,3" + allowed);
  refused(with(k8x8, {"--select", "1,"}), "select = 1," + allowed + "; no empty element");
  refused(with(k8x8, {"--select", ",1"}), "select = ,1" + allowed + "; no empty element");
}
