// The trace panel: a trace played step by step with the HBM bytes its events carried, two traces
// compared (the first divergence found and shown), a bad file refused with a message.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "headless.hpp"
#include "panels/panels.hpp"

using namespace flashlab;
using namespace flashlab::viz;
namespace fs = std::filesystem;

namespace {

Config r4() {  // shared/cases R4: N = 256, B = 64, d = 64, fp16, top-left causal; V2
  Config c;
  c.n_q = c.n_k = 256;
  c.d = 64;
  c.b_r = c.b_c = 64;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  return c;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("flashlab-viz-trace-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void draw(TracePanel& panel, const Session& s, test::RecordingTextures& tex, test::Headless& ui) {
  ui.frame([&] {
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize({500, 700});
    ImGui::Begin("traces");
    panel.draw(s, tex);
    ImGui::End();
  });
}

}  // namespace

// V2 on R4: each of the 4 Q blocks has 6 steps (load Q_i, 4 tiles, store): 24 (block, step) groups.
// Block 0 visits only tile (0, 0): K_0 and V_0, 64 x 64 fp16 = 8,192 bytes each. The whole run
// reads K_j for the 10 visited tiles (81,920 bytes), Q once (4 x 8,192), writes O (32,768) and
// L (256 rows x 4 bytes).
TEST_CASE("a trace plays by (block, step) with the bytes its load and store events carried") {
  TempDir dir;
  const Problem p = resolve(r4());
  const std::string file = (dir.path / "a.trace").string();
  write_trace(file, record_trace(p, TraceLevel::warp), TraceFormat::text);
  TracePanel panel;
  REQUIRE(panel.open(0, file));
  TraceView& a = *panel.view[0];
  CHECK(a.steps() == 24);
  CHECK(a.step_events(0).front().op == Op::load);
  CHECK(a.step_events(0).front().tensor == Tensor::Q);
  CHECK(a.bytes_before(6)[std::size_t(Tensor::K)][0] == 8192);
  CHECK(a.bytes_before(24)[std::size_t(Tensor::K)][0] == 81920);
  CHECK(a.bytes_before(24)[std::size_t(Tensor::Q)][0] == 32768);
  CHECK(a.bytes_before(24)[std::size_t(Tensor::O)][1] == 32768);
  CHECK(a.bytes_before(24)[std::size_t(Tensor::L)][1] == 1024);
  CHECK(a.bytes_before(1)[std::size_t(Tensor::K)][0] == 0);  // back to the start
  CHECK(a.find_step(0, 2, 3) == 15);
  CHECK(a.find_step(1, 2, 3) == a.steps());  // V2 has one launch

  Session s(r4());
  test::Headless ui;
  test::RecordingTextures tex;
  panel.clock.seek(10);
  draw(panel, s, tex, ui);
  CHECK(panel.clock.total() == 24);
  CHECK(tex.uploads == 1);  // the map of A's config
}

TEST_CASE("two traces: the first divergence is found and playback jumps to it") {
  TempDir dir;
  const Problem p = resolve(r4());
  Trace a = record_trace(p, TraceLevel::block);
  Trace b = a;
  // change the bytes of block 2's first K load (its step 1: tile (2, 0))
  std::size_t changed = 0;
  for (std::size_t k = 0; k < b.events.size(); ++k)
    if (b.events[k].block == 2 && b.events[k].step == 1 && b.events[k].tensor == Tensor::K) {
      b.events[k].bytes += 2;
      changed = k;
      break;
    }
  REQUIRE(changed > 0);
  const std::string fa = (dir.path / "a.trace").string(), fb = (dir.path / "b.trace").string();
  write_trace(fa, a, TraceFormat::binary);
  write_trace(fb, b, TraceFormat::text);
  TracePanel panel;
  REQUIRE(panel.open(0, fa));
  REQUIRE(panel.open(1, fb));
  REQUIRE(panel.diff);
  CHECK_FALSE(panel.diff->agree());
  REQUIRE(panel.diff->first);
  CHECK(panel.diff->first->block == 2);
  CHECK(panel.diff->first->step == 1);
  REQUIRE(panel.go_to_divergence());
  const auto group = panel.view[0]->step_events(std::size_t(panel.clock.position()) - 1);
  CHECK(group.front().block == 2);
  CHECK(group.front().step == 1);

  Session s(r4());
  test::Headless ui;
  test::RecordingTextures tex;
  draw(panel, s, tex, ui);

  REQUIRE(panel.open(1, fa));  // the same file: they agree
  CHECK(panel.diff->agree());
  CHECK_FALSE(panel.go_to_divergence());
}

TEST_CASE("a file that is not a trace is refused with a message, and the panel still draws") {
  TempDir dir;
  const std::string bad = (dir.path / "bad.trace").string();
  std::ofstream(bad) << "flashlab-trace text 1\nnot a header\n";
  TracePanel panel;
  CHECK_FALSE(panel.open(0, bad));
  CHECK(panel.view[0] == nullptr);
  CHECK_FALSE(panel.error[0].empty());
  CHECK_FALSE(panel.open(1, (dir.path / "missing.trace").string()));
  CHECK(panel.error[1].find("missing.trace") != std::string::npos);
  // a device is refused before a byte is read (it was read until memory ran out), and a header
  // nested 60,000 levels deep is refused, not a crash (issue 9 items 4 and 1)
  CHECK_FALSE(panel.open(1, "/dev/zero"));
  CHECK(panel.error[1] == "trace file = /dev/zero: a readable regular file (it is a character device)");
  const std::string deep = (dir.path / "deep.trace").string();
  std::ofstream(deep) << "flashlab-trace text 2\nheader " << std::string(60000, '[') << std::string(60000, ']') << "\n";
  CHECK_FALSE(panel.open(1, deep));
  CHECK(panel.error[1].find("nested deeper than 8 levels") != std::string::npos);
  Session s(r4());
  test::Headless ui;
  test::RecordingTextures tex;
  draw(panel, s, tex, ui);
}
