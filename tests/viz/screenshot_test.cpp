// The real viewer under Xvfb: a screenshot of a causal config whose pixels, sampled at the centres
// of known tiles, have the full, partial and skipped colours; a screenshot written through a link;
// a path that cannot be created refused before a window opens. Skipped (exit 77) without xvfb-run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
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

// Runs the real viewer under Xvfb; returns std::system's status (0: exit 0).
int run_under_xvfb(const std::string& flags) {
  // Under AddressSanitizer, leak checking stays off for the app: Mesa's OpenGL driver, unloaded at
  // exit, leaves allocations LeakSanitizer cannot attribute (the panels' own leaks are checked by
  // test_viz, which runs them without a driver).
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string env = "ASAN_OPTIONS='" + std::string(asan ? asan : "") + ":detect_leaks=0' ";
  const std::string cmd = env + "xvfb-run -a -s \"-screen 0 1280x720x24\" " + std::string(FLASHLAB_VIEWER) + " " +
                          flags + " > /dev/null";
  return std::system(cmd.c_str());
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
  CHECK(text == "flashlab-viewer: screenshot = /nonexistent/x.png: a file path that can be created");
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
