// `count --map FILE.png` and `sweep --plot FILE.png`: the files are real PNGs (decoded here with
// stb_image), the map's tile centres have the class colours of tile classes derived by hand (and
// by brute force over every element), and the plot's lines lie where the counts put them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/wait.h>

#include <stb_image.h>

#include "../common/mask_definition.hpp"
#include "model/palette.hpp"
#include "run_cli.hpp"

namespace fs = std::filesystem;

namespace {

struct Png {
  int width = 0, height = 0;
  std::vector<std::uint32_t> pixels;  // viz::rgba, rows top first
  std::uint32_t at(int x, int y) const { return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
};

Png load(const std::string& path) {
  Png png;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &png.width, &png.height, &channels, 4);
  INFO(path, ": ", stbi_failure_reason() ? stbi_failure_reason() : "");
  REQUIRE(data != nullptr);
  png.pixels.resize(std::size_t(png.width) * std::size_t(png.height));
  for (std::size_t k = 0; k < png.pixels.size(); ++k)
    png.pixels[k] = flashlab::viz::rgba(data[4 * k], data[4 * k + 1], data[4 * k + 2], data[4 * k + 3]);
  stbi_image_free(data);
  return png;
}

std::string hex(std::uint32_t c) {
  char s[16];
  std::snprintf(s, sizeof s, "#%02x%02x%02x", c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0xFF);
  return s;
}

// F full, P partial, S skipped (not computed), X skipped but computed: the viewer's colours.
std::uint32_t class_colour(char cls) {
  namespace pal = flashlab::viz::palette;
  switch (cls) {
    case 'F': return pal::full;
    case 'P': return pal::partial;
    case 'S': return pal::skipped;
    case 'X': return pal::computed_skipped;
  }
  FAIL("unknown class ", cls);
  return 0;
}

// The map's documented layout (map_picture.hpp): 8-pixel margin, min(40, 640 / max(T_r, T_c))
// pixels per tile; the centre of tile (i, j).
void check_map(const Png& png, const std::vector<std::string>& classes) {
  const int t_r = int(classes.size()), t_c = int(classes[0].size());
  const int cell = std::min(40, 640 / std::max(t_r, t_c));
  REQUIRE(png.width >= 16 + t_c * cell);
  REQUIRE(png.height >= 16 + t_r * cell);
  for (int i = 0; i < t_r; ++i)
    for (int j = 0; j < t_c; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const int x = 8 + j * cell + cell / 2, y = 8 + i * cell + cell / 2;
      CHECK(hex(png.at(x, y)) == hex(class_colour(classes[std::size_t(i)][std::size_t(j)])));
    }
}

std::uint64_t png_size_field(const std::string& bytes, std::size_t at) {
  return (std::uint64_t(std::uint8_t(bytes[at])) << 24) | (std::uint64_t(std::uint8_t(bytes[at + 1])) << 16) |
         (std::uint64_t(std::uint8_t(bytes[at + 2])) << 8) | std::uint64_t(std::uint8_t(bytes[at + 3]));
}

std::string contents(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  return s;
}

// Whether pixel c is colour `want` drawn over the white page with coverage a >= 1/2 (the plot's
// lines are anti-aliased: c = a * want + (1 - a) * white, channel by channel, within 12 levels).
bool near(std::uint32_t c, std::uint32_t want) {
  double dc[3], dw[3], a = 0, norm = 0;
  for (int k = 0; k < 3; ++k) {
    dc[k] = 255.0 - double((c >> (8 * k)) & 0xFF);
    dw[k] = 255.0 - double((want >> (8 * k)) & 0xFF);
    a += dc[k] * dw[k], norm += dw[k] * dw[k];
  }
  a /= norm;
  if (a < 0.5 || a > 1.05) return false;
  for (int k = 0; k < 3; ++k)
    if (std::abs(dc[k] - a * dw[k]) > 12) return false;
  return true;
}

// Rows of the plot box: the first and last rows more than half of whose pixels are the axes' ink
// (the box's top and bottom edges); text above and below the box is outside.
std::pair<int, int> box_rows(const Png& png) {
  const std::uint32_t ink = flashlab::viz::rgba(30, 30, 34);
  int top = -1, bottom = -1;
  for (int y = 0; y < png.height; ++y) {
    int n = 0;
    for (int x = 0; x < png.width; ++x) n += near(png.at(x, y), ink);
    if (n > png.width / 2) bottom = y, top = top < 0 ? y : top;
  }
  REQUIRE(top >= 0);
  REQUIRE(bottom > top + 100);
  return {top + 2, bottom - 2};
}

// Median row of the pixels near colour `want` in columns [x0, x1) inside the plot box; NaN when
// there are none.
double median_row(const Png& png, std::uint32_t want, int x0, int x1) {
  const auto [top, bottom] = box_rows(png);
  std::vector<int> rows;
  for (int y = top; y <= bottom; ++y)
    for (int x = x0; x < x1; ++x)
      if (near(png.at(x, y), want)) rows.push_back(y);
  if (rows.empty()) return NAN;
  std::nth_element(rows.begin(), rows.begin() + std::ptrdiff_t(rows.size() / 2), rows.end());
  return rows[rows.size() / 2];
}

// First and last column holding a pixel near `want` in the plot area (the left 3/4 of the picture;
// the legend is to its right).
std::pair<int, int> span(const Png& png, std::uint32_t want) {
  int first = png.width, last = -1;
  for (int x = 0; x < png.width * 3 / 4; ++x)
    for (int y = 0; y < png.height; ++y)
      if (near(png.at(x, y), want)) first = std::min(first, x), last = std::max(last, x);
  return {first, last};
}

}  // namespace

TEST_CASE("count --map: top-left causal, T_r = T_c = 4, by hand: partial diagonal, full below, skipped above") {
  const std::string dir = make_temp_dir();
  // N = 256, B = 64: tile (i, j) holds c - r in [64(j - i) - 63, 64(j - i) + 63]; visible is c <= r,
  // so j < i is full, j = i partial (c - r spans -63..63), j > i skipped.
  const std::vector<std::string> v2{"PSSS", "FPSS", "FFPS", "FFFP"};
  const CliResult r = run_cli("count --algo v2 --nq 256 --nk 256 --d 64 --br 64 --bc 64 --mask causal --map " + dir +
                              "/v2.png");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("map: wrote " + dir + "/v2.png") != std::string::npos);
  check_map(load(dir + "/v2.png"), v2);
  // V1's dense loop (block skip off by default) computes the skipped tiles anyway.
  const std::vector<std::string> v1{"PXXX", "FPXX", "FFPX", "FFFP"};
  REQUIRE(run_cli("count --algo v1 --nq 256 --nk 256 --d 64 --br 64 --bc 64 --mask causal --map " + dir + "/v1.png")
              .code == 0);
  check_map(load(dir + "/v1.png"), v1);
  // Standard attention computes all of S.
  REQUIRE(run_cli("count --algo standard --nq 256 --nk 256 --d 64 --br 64 --bc 64 --mask causal --map " + dir +
                  "/std.png")
              .code == 0);
  check_map(load(dir + "/std.png"), v1);
  fs::remove_all(dir);
}

TEST_CASE("count --map: ragged bottom-right causal (N_q = 200, N_k = 130, 64 x 32 tiles), by hand and element by element") {
  // Visible: c <= r + N_k - N_q = r - 70. Rows 64i..min(64i + 63, 199), columns 32j..min(32j + 31, 129).
  // i = 0 (rows 0..63): no column <= -7, all skipped. i = 1 (64..127, c <= -6..57): j = 0, 1 partial,
  // j >= 2 (c >= 64) skipped. i = 2 (128..191, c <= 58..121): j = 0 full (31 <= 58), j = 1..3 partial,
  // j = 4 (c >= 128) skipped. i = 3 (192..199, c <= 122..129): j = 0..2 full (95 <= 122), j = 3, 4 partial.
  const std::vector<std::string> hand{"SSSSS", "PPSSS", "FPPPS", "FFFPP"};
  const flashlab::Mask causal_br{flashlab::MaskKind::causal_br, 0, 0};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      int seen = 0, all = 0;
      for (int r = 64 * i; r < std::min(64 * i + 64, 200); ++r)
        for (int c = 32 * j; c < std::min(32 * j + 32, 130); ++c, ++all)
          seen += flashlab::test::visible_by_definition(causal_br, 200, 130, r, c);
      CHECK(hand[std::size_t(i)][std::size_t(j)] == (seen == 0 ? 'S' : seen == all ? 'F' : 'P'));
    }
  const std::string dir = make_temp_dir();
  const CliResult r = run_cli("count --algo v2 --nq 200 --nk 130 --d 64 --br 64 --bc 32 --mask causal-br --json --map " +
                              dir + "/map.png");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).is_object());  // stdout stays one JSON object
  CHECK(r.err.find("map: wrote") != std::string::npos);
  check_map(load(dir + "/map.png"), hand);
  fs::remove_all(dir);
}

TEST_CASE("count --map: the 'map: wrote' line gives the true scale, tiles per pixel above 640 tiles a side") {
  // A new user's report: 1280 x 1280 tiles on a 640-pixel map were reported as "1 px per tile".
  // map_picture.hpp: min(40, 640 / max(T_r, T_c)) px per tile up to 640 tiles a side; above it a
  // side of T tiles takes min(T, 640) pixels, each T / 640 tiles, their mean colour (at most 2^24 tiles).
  const std::string dir = make_temp_dir();
  const struct {
    const char* args;
    std::string scale;
    int map_w, map_h;  // pixels of the map itself: T * cell, or min(T, 640) above 640 tiles
    int inset = 1;     // from 8 px per tile on, each tile's last pixel column and row are background
  } cases[] = {
      {"--seq 512 --br 64 --bc 64", "8 x 8 tiles, 40 px per tile", 320, 320, 2},               // 640 / 8 = 80, at most 40
      {"--seq 20480 --br 16 --bc 16", "1280 x 1280 tiles, 2.0 x 2.0 tiles per px, each px the mean colour of its tiles",
       640, 640},                                                                                  // 20480 / 16 = 1280 = 2 x 640
      {"--nq 16 --nk 65600 --br 16 --bc 16", "1 x 4100 tiles, 1.0 x 6.4 tiles per px, each px the mean colour of its tiles",
       640, 1},                                                                                    // 4100 / 640 = 6.41
      {"--seq 10240 --br 16 --bc 16", "640 x 640 tiles, 1 px per tile", 640, 640}};
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const CliResult r = run_cli(std::string("count --quiet --mask causal ") + c.args + " --map " + dir + "/m.png");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find(", " + c.scale + ")\n") != std::string::npos);
    const Png png = load(dir + "/m.png");
    CHECK(png.width >= 16 + c.map_w);
    // the map's right and bottom edges: the last map pixel is a tile colour, the next one background
    CHECK(hex(png.at(8 + c.map_w, 8)) == "#ffffff");
    CHECK(hex(png.at(8, 8 + c.map_h)) == "#ffffff");
    CHECK(hex(png.at(8 + c.map_w - c.inset, 8 + c.map_h - c.inset)) != "#ffffff");
  }
  fs::remove_all(dir);
}

TEST_CASE("count --map: a bad name or place is refused (exit 2, naming --map) before any work, and no file is left") {
  const std::string dir = make_temp_dir();
  for (const std::string& path : {dir + "/map.jpg", dir + "/missing/map.png", std::string("''"), dir}) {
    CAPTURE(path);
    const CliResult r = run_cli("count --seq 256 --br 64 --bc 64 --map " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find("map = ") != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(fs::is_empty(dir));
  // A bad config fails before the picture: nothing is written.
  CHECK(run_cli("count --seq 0 --map " + dir + "/map.png").code == 2);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("sweep --plot: a PNG of the asked size, V1 against M follows the N^2 d^2 / M curve drawn beside it" *
          doctest::skip(!FLASHLAB_HAVE_PLPLOT)) {
  const std::string dir = make_temp_dir(), path = dir + "/sram.png";
  const CliResult r = run_cli("sweep --algos v1 --over sram --from 8192 --to 1048576 --log2 --br auto --bc auto "
                              "--dtype fp32 --seq 8192 --d 64 --plot " + path + " --plot-size 800x500");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());  // the picture only: no CSV on stdout unless -o asks for it (issue 24)
  CHECK(r.err.find("plot: wrote " + path) != std::string::npos);
  const CliResult both = run_cli("sweep --algos v1 --over sram --from 8192 --to 1048576 --log2 --br auto --bc auto "
                                 "--dtype fp32 --seq 8192 --d 64 --plot " + path + " --plot-size 800x500 -o -");
  REQUIRE(both.code == 0);
  CHECK(parse_csv(both.out).size() == 8);  // -o -: the CSV on stdout as well, 8 values of M
  // PNG signature, then IHDR's width and height (big-endian) at bytes 16 and 20.
  const std::string bytes = contents(path);
  REQUIRE(bytes.size() > 33);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  CHECK(png_size_field(bytes, 16) == 800);
  CHECK(png_size_field(bytes, 20) == 500);
  CHECK(bytes.compare(bytes.size() - 8, 4, "IEND") == 0);
  const Png png = load(path);
  REQUIRE(png.width == 800);
  REQUIRE(png.height == 500);
  // V1 (red) falls as M grows: over the horizontal span of its line inside the plot area (the left
  // 3/4; the legend is to its right), its pixels in the first fifth sit higher (smaller y) than in
  // the third fifth.
  const std::uint32_t v1 = flashlab::viz::palette::algo_colour(flashlab::Algo::v1);
  const auto [x0, x1] = span(png, v1);
  REQUIRE(x1 - x0 > 300);
  const int fifth = (x1 - x0) / 5;
  const double left = median_row(png, v1, x0, x0 + fifth), middle = median_row(png, v1, x0 + 2 * fifth, x0 + 3 * fifth);
  REQUIRE(std::isfinite(left));
  REQUIRE(std::isfinite(middle));
  CHECK(left + 50 < middle);
  // The reference curve: V1's total is 12.3 to 12.4 N^2 d^2 / M elements from 8 to 128 KiB
  // (docs/model.md), so the two curves stay within a few pixels of each other on the left half.
  // Compared in columns where V1 is a line, away from the points' circles (columns of more than
  // 3 V1 pixels, and 12 columns either side).
  const std::uint32_t ref = flashlab::viz::rgba(0, 150, 110);
  const auto [top, bottom] = box_rows(png);
  std::vector<int> count(std::size_t(png.width), 0);
  for (int x = 0; x < png.width; ++x)
    for (int y = top; y <= bottom; ++y) count[std::size_t(x)] += near(png.at(x, y), v1);
  int compared = 0;
  for (int x = x0 + 12; x < x0 + (x1 - x0) / 2; ++x) {
    bool circle = false;
    for (int k = x - 12; k <= x + 12; ++k) circle = circle || count[std::size_t(k)] > 3;
    const double a = median_row(png, v1, x, x + 1), b = median_row(png, ref, x, x + 1);
    if (circle || !std::isfinite(a) || !std::isfinite(b)) continue;
    ++compared;
    CAPTURE(x);
    CHECK(std::abs(a - b) <= 4);
  }
  CHECK(compared >= 4);
  fs::remove_all(dir);
}

TEST_CASE("sweep --plot: bytes against N, standard above V1 above V2 at the largest N" *
          doctest::skip(!FLASHLAB_HAVE_PLPLOT)) {
  // At N = 16384, d = 64, B = 64, fp16: standard 4 N^2 e ~ 2.15 GB; V1 ~ 1.7 GB; V2 ~ 1.08 GB.
  const std::string dir = make_temp_dir(), path = dir + "/n.png";
  const CliResult r = run_cli("sweep --over n --values 1024,2048,4096,8192,16384 --d 64 --br 64 --bc 64 --plot " + path);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Png png = load(path);
  CHECK(png.width == 960);  // the default size
  CHECK(png.height == 600);
  // The last points are at the right end of V2's line inside the plot area.
  const std::uint32_t v2 = flashlab::viz::palette::algo_colour(flashlab::Algo::v2);
  const int last = span(png, v2).second;
  REQUIRE(last > png.width / 2);
  const double y_std = median_row(png, flashlab::viz::rgba(110, 110, 110), last - 12, last + 1);
  const double y_v1 = median_row(png, flashlab::viz::palette::algo_colour(flashlab::Algo::v1), last - 12, last + 1);
  const double y_v2 = median_row(png, v2, last - 12, last + 1);
  CHECK(y_std < y_v1);
  CHECK(y_v1 < y_v2);
  fs::remove_all(dir);
}

TEST_CASE("sweep --plot: bad sizes and names are refused before any work (exit 2, naming the flag)") {
  const std::string dir = make_temp_dir();
  const std::string sweep = "sweep --over n --values 256,512 --d 64 --br 64 --bc 64 ";
  struct Case {
    std::string args, field;
  } cases[] = {{"--plot " + dir + "/p.png --plot-size 100x100", "plot-size = 100x100"},
               {"--plot " + dir + "/p.png --plot-size 800", "plot-size = 800"},
               {"--plot " + dir + "/p.png --plot-size 800x500x2", "plot-size = "},
               {"--plot-size 800x500", "plot-size = 800x500"},
               {"--plot " + dir + "/p.svg", "plot = "},
               {"--plot ''", "plot = "}};
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const CliResult r = run_cli(sweep + c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.field) != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

namespace {

// `flashlab ARGS` with files limited to 2 KiB (dash's `ulimit -f 4`: 512-byte blocks; SIGXFSZ
// ignored, so a write beyond the limit fails with EFBIG): its exit status and standard error.
std::pair<int, std::string> run_with_file_limit(const std::string& dir, const std::string& args) {
  const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 4; exec " + std::string(FLASHLAB_BIN) + " " + args +
                          "\" >/dev/null 2>" + dir + "/../picture_err";
  const int status = std::system(cmd.c_str());
  std::ifstream in(dir + "/../picture_err");
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(dir + "/../picture_err");
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

}  // namespace

TEST_CASE("count --map and sweep --plot write through the checked output helper: a failed write is reported "
          "with errno's text (exit 4) and leaves no file, temporary or final") {
  const std::string parent = make_temp_dir(), dir = parent + "/out";
  fs::create_directory(dir);
  // the map of 16 x 16 tiles is a PNG of several KiB, beyond the 2 KiB limit
  auto [code, err] = run_with_file_limit(dir, "count --seq 1024 --br 64 --bc 64 --map " + dir + "/map.png");
  CHECK(code == 4);
  CHECK(err == "flashlab: error: cannot write " + dir + "/map.png: File too large\n");
  CHECK(fs::is_empty(dir));
  if (FLASHLAB_HAVE_PLPLOT) {
    std::tie(code, err) =
        run_with_file_limit(dir, "sweep --over n --values 256,512 --d 64 --br 64 --bc 64 --plot " + dir + "/p.png");
    CHECK(code == 4);
    CHECK(err.find("flashlab: error: cannot write " + dir + "/p.png: File too large\n") != std::string::npos);
    CHECK(fs::is_empty(dir));
  }
  fs::remove_all(parent);
}
