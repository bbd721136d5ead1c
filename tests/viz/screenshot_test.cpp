// The real viewer under Xvfb: a screenshot of a causal config whose pixels, sampled at the centres
// of known tiles, have the full, partial and skipped colours; a screenshot written through a link;
// a path that cannot be created refused before a window opens; writes that fail (a full file
// system, a file-size limit) reported with exit 1 and no file left; JPEG by extension; the first
// frame's time. Skipped (exit 77) without xvfb-run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "model/palette.hpp"

using namespace flashlab::viz;
namespace fs = std::filesystem;

namespace {

struct Shot {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  nlohmann::json layout;
  std::uint32_t at(double x, double y) const {
    const auto k = (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
    return rgba(rgb[k], rgb[k + 1], rgb[k + 2]);
  }
  // The pixel at the centre of tile (i, j) of the map.
  std::uint32_t tile(int i, int j) const {
    const double x0 = layout["map_x0"], y0 = layout["map_y0"], x1 = layout["map_x1"], y1 = layout["map_y1"];
    const double t_r = layout["t_r"], t_c = layout["t_c"];
    return at(x0 + (j + 0.5) * (x1 - x0) / t_c, y0 + (i + 0.5) * (y1 - y0) / t_r);
  }
};

// Runs the real viewer under Xvfb; returns std::system's status (0: exit 0). `shell` (when given)
// is a sh -c script run under xvfb-run, in which $VIEWER is the viewer with `flags`; stdout goes
// to `out` (default /dev/null).
int run_under_xvfb(const std::string& flags, const std::string& out = "/dev/null", const std::string& shell = "") {
  // Under AddressSanitizer, leak checking stays off for the app: Mesa's OpenGL driver, unloaded at
  // exit, leaves allocations LeakSanitizer cannot attribute (the panels' own leaks are checked by
  // test_viz, which runs them without a driver).
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string env = "ASAN_OPTIONS='" + std::string(asan ? asan : "") + ":detect_leaks=0' ";
  const std::string viewer = std::string(FLASHLAB_VIEWER) + " " + flags;
  const std::string run = shell.empty() ? viewer : "env VIEWER='" + viewer + "' sh -c '" + shell + "'";
  const std::string cmd = env + "xvfb-run -a -s \"-screen 0 1280x720x24\" " + run + " > " + out;
  return std::system(cmd.c_str());
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("flashlab-viz-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

Shot shoot(const std::string& name, const std::string& flags) {
  const fs::path dir = temp_dir();
  const fs::path png = dir / (name + ".png"), json = dir / (name + ".json");
  REQUIRE(run_under_xvfb(flags + " --screenshot " + png.string() + " --layout " + json.string()) == 0);
  Shot s;
  int n = 0;
  unsigned char* data = stbi_load(png.string().c_str(), &s.width, &s.height, &n, 3);
  REQUIRE(data != nullptr);
  s.rgb.assign(data, data + std::size_t(s.width) * std::size_t(s.height) * 3);
  stbi_image_free(data);
  std::ifstream(json) >> s.layout;
  fs::remove_all(dir);
  return s;
}

std::uint32_t opaque(std::uint32_t c) { return c | 0xFF000000u; }

}  // namespace

// N = 512, B_r = B_c = 64, top-left causal: 8 x 8 tiles; (i, i) partial (c - r spans [-63, 63]),
// j < i full, j > i skipped (the R4 derivation with 8 blocks).
TEST_CASE("screenshot of a causal V2 config: skipped, partial and full tiles in their colours") {
  const Shot s = shoot("v2", "--algo v2 --nq 512 --nk 512 --br 64 --bc 64 --mask causal");
  CHECK(s.width == 1280);
  CHECK(s.height == 720);
  REQUIRE(s.layout["t_r"] == 8);
  REQUIRE(s.layout["t_c"] == 8);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(s.tile(i, j) == opaque(j < i ? palette::full : j == i ? palette::partial : palette::skipped));
    }
}

// V1's dense kernel (block skip off) computes the tiles above the diagonal anyway.
TEST_CASE("screenshot of the same config under V1: skipped tiles are computed anyway") {
  const Shot s = shoot("v1", "--algo v1 --nq 512 --nk 512 --br 64 --bc 64 --mask causal");
  CHECK(s.tile(0, 7) == opaque(palette::computed_skipped));
  CHECK(s.tile(3, 3) == opaque(palette::partial));
  CHECK(s.tile(7, 0) == opaque(palette::full));
}

// A screenshot path that is a link to a regular file: the picture goes to the target, through
// "<target>.tmp-<pid>" renamed over it, and the link stays a link.
TEST_CASE("screenshot through a symlink writes the linked file") {
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "real");
  const fs::path target = dir / "real" / "shot.png", link = dir / "link.png";
  std::ofstream(target) << "not a png yet";
  fs::create_symlink(target, link);
  CHECK(run_under_xvfb("--nq 512 --nk 512 --br 64 --bc 64 --screenshot " + link.string()) == 0);
  CHECK(fs::is_symlink(link));
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load(target.string().c_str(), &w, &h, &n, 3);
  CHECK(data != nullptr);
  stbi_image_free(data);
  CHECK(w == 1280);
  CHECK(h == 720);
  CHECK(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator{}) == 1);  // no temp file left
  fs::remove_all(dir);
}

// The path is checked before any window opens: without a display the app would otherwise stop
// with exit 1 ("no display"), and under Xvfb it would render every frame first.
TEST_CASE("screenshot to a path that cannot be created exits 2 before opening a window") {
  const fs::path dir = temp_dir();
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = "env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(FLASHLAB_VIEWER) +
                          " --frames 1000000 --screenshot /nonexistent/x.png > /dev/null 2> " + err.string();
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  std::string text;
  std::getline(std::ifstream(err), text);
  CHECK(text == "flashlab-viewer: screenshot = /nonexistent/x.png: a file path that can be created (No such file or directory)");
  fs::remove_all(dir);
}

// Issue 9 item 2: on a full file system the viewer printed "wrote ...", exited 0 and left a
// truncated 4,096-byte PNG and an empty JSON. Here the folder is a 4 KiB tmpfs filled to the last
// byte (mounted in a private user and mount namespace by unshare -rm; skipped where that is not
// allowed): both writes fail, the exit is 1, each failure is named, and nothing is left.
TEST_CASE("screenshot and layout on a full file system: exit 1, the errors, no file left") {
  if (std::system("unshare -rm true > /dev/null 2>&1") != 0) {
    MESSAGE("skipped: unshare -rm (user and mount namespaces) is not allowed here");
    return;
  }
  const fs::path dir = temp_dir(), full = dir / "full", report = dir / "report";
  fs::create_directories(full);
  fs::create_directories(report);
  const std::string shell = "unshare -rm sh -c \"mount -t tmpfs -o size=4k tmpfs " + full.string() +
                            " && { cat /dev/zero > " + full.string() + "/filler 2> /dev/null; "
                            "\\$VIEWER --screenshot " + full.string() + "/x.png --layout " + full.string() +
                            "/x.json 2> " + report.string() + "/err; echo \\$? > " + report.string() +
                            "/rc; ls -A " + full.string() + " > " + report.string() + "/ls; }\"";
  run_under_xvfb("--nq 512 --nk 512 --br 64 --bc 64", (report / "out").string(), shell);
  CHECK(read_file(report / "rc") == "1\n");
  CHECK(read_file(report / "ls") == "filler\n");  // no x.png, no x.json, no temporary file
  CHECK(read_file(report / "err") ==
        "flashlab-viewer: cannot write " + (full / "x.png").string() + ": No space left on device\n"
        "flashlab-viewer: cannot write " + (full / "x.json").string() + ": No space left on device\n");
  CHECK(read_file(report / "out").find("wrote") == std::string::npos);
  fs::remove_all(dir);
}

// The same failure where no file system can be mounted: a file-size limit of 0 bytes (ulimit -f 0,
// SIGXFSZ ignored) makes every write fail with EFBIG. The viewer's stderr and exit code go through
// a pipe to a file written outside the limit.
TEST_CASE("screenshot and layout past the file-size limit: exit 1, the errors, no file left") {
  const fs::path dir = temp_dir(), out = dir / "out";
  fs::create_directories(out);
  const fs::path err = dir / "err";
  const std::string shell = "{ (trap \"\" XFSZ; ulimit -f 0; exec $VIEWER) 2>&1 > /dev/null; echo \"exit $?\"; } | cat > " +
                            err.string();
  run_under_xvfb("--nq 512 --nk 512 --br 64 --bc 64 --screenshot " + (out / "x.png").string() + " --layout " +
                     (out / "x.json").string(),
                 "/dev/null", shell);
  CHECK(read_file(err) == "flashlab-viewer: cannot write " + (out / "x.png").string() + ": File too large\n"
                          "flashlab-viewer: cannot write " + (out / "x.json").string() + ": File too large\n"
                          "exit 1\n");
  CHECK(fs::is_empty(out));
  fs::remove_all(dir);
}

// Issue 9 item 8: a .jpg name got a PNG. Now a JPEG (stb, quality 95): its magic bytes, its size,
// and the colours of known tiles within JPEG's error.
TEST_CASE("screenshot to a .jpg name writes a JPEG") {
  const fs::path dir = temp_dir(), jpg = dir / "v2.jpg", json = dir / "v2.json";
  REQUIRE(run_under_xvfb("--algo v2 --nq 512 --nk 512 --br 64 --bc 64 --mask causal --screenshot " + jpg.string() +
                         " --layout " + json.string()) == 0);
  const std::string bytes = read_file(jpg);
  REQUIRE(bytes.size() > 3);
  CHECK(bytes.substr(0, 3) == "\xFF\xD8\xFF");  // JPEG SOI + marker
  Shot s;
  int n = 0;
  unsigned char* data = stbi_load(jpg.string().c_str(), &s.width, &s.height, &n, 3);
  REQUIRE(data != nullptr);
  s.rgb.assign(data, data + std::size_t(s.width) * std::size_t(s.height) * 3);
  stbi_image_free(data);
  std::ifstream(json) >> s.layout;
  CHECK(s.width == 1280);
  CHECK(s.height == 720);
  const auto near = [](std::uint32_t got, std::uint32_t want) {
    for (int shift : {0, 8, 16}) {
      const int a = int((got >> shift) & 0xFF), b = int((want >> shift) & 0xFF);
      if (std::abs(a - b) > 12) return false;
    }
    return true;
  };
  CHECK(near(s.tile(5, 1), palette::full));
  CHECK(near(s.tile(1, 5), palette::skipped));
  fs::remove_all(dir);
}

// Issue 9 item 8: --frames 1 printed "frames 0 ... 0.0 fps" and never the first frame's time.
TEST_CASE("--frames 1 reports the first frame's time") {
  const fs::path dir = temp_dir(), out = dir / "out";
  REQUIRE(run_under_xvfb("--nq 512 --nk 512 --br 64 --bc 64 --frames 1", out.string()) == 0);
  const std::string text = read_file(out);
  CHECK(text.rfind("first frame ", 0) == 0);
  CHECK(text.find(" ms (builds the textures); no frame after it to time (--frames 2 or more)\n") != std::string::npos);
  REQUIRE(run_under_xvfb("--nq 512 --nk 512 --br 64 --bc 64 --frames 3", out.string()) == 0);
  CHECK(read_file(out).find("; the 2 frames after it: mean ") != std::string::npos);
  fs::remove_all(dir);
}

int main(int argc, char** argv) {
  if (std::system("command -v xvfb-run > /dev/null 2>&1") != 0) {
    std::printf("skipped: xvfb-run is not installed (apt-get install xvfb xauth)\n");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
