// Panels under ImGui's headless context (no window, no GPU): the map's texture and hit-testing,
// hover and click on known tiles, recomputation only on change, every tab drawn, the config
// panel's tooltips.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

#include "headless.hpp"
#include "model/palette.hpp"
#include "flashlab/config/field_docs.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "panels/help.hpp"
#include "panels/viewer.hpp"

using namespace flashlab;
using namespace flashlab::viz;
using flashlab::viz::test::Headless;
using flashlab::viz::test::RecordingTextures;

namespace {

Config r4() {  // shared/cases R4: N = 256, B = 64, top-left causal (4 x 4 tiles)
  Config c;
  c.n_q = c.n_k = 256;
  c.b_r = c.b_c = 64;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  return c;
}

void map_window(BlockMapPanel& map, const Session& s, RecordingTextures& tex) {
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({600, 600});
  ImGui::Begin("map");
  map.draw(s, tex, nullptr);
  ImGui::End();
}

}  // namespace

TEST_CASE("the block map draws one texture of T_r x T_c cells and hit-tests tiles under the mouse") {
  Headless ui;
  RecordingTextures tex;
  Session s(r4());
  BlockMapPanel map;
  ImGui::GetIO().MousePos = {-1000, -1000};
  ui.frame([&] { map_window(map, s, tex); });
  REQUIRE(tex.uploads == 1);
  const auto& [id, img] = *tex.images.begin();
  CHECK(test::drawn(id));
  REQUIRE(img.width == 4);
  CHECK(img.at(0, 1) == palette::full);     // tile (1, 0)
  CHECK(img.at(2, 2) == palette::partial);  // tile (2, 2)
  CHECK(img.at(3, 0) == palette::skipped);  // tile (0, 3)
  CHECK_FALSE(map.hovered.valid());
  CHECK(map.tooltip.empty());

  // hover tile (2, 1): the panel reports it and draws its tooltip (R4, V2: tile (2, 1) is full,
  // the 5th tile visited after (0,0), (1,0), (1,1), (2,0); it loads K_1 and V_1, 8,192 bytes each)
  ImGui::GetIO().MousePos = map.layout.cell_center(2, 1);
  ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.hovered == TileRef{2, 1});
  const ImGuiWindow* tip = ImGui::FindWindowByName("##Tooltip_00");
  CHECK((tip != nullptr && tip->Active));
  const std::string& text = map.tooltip;
  CHECK(text.find("tile (2, 1): rows(i) x cols(j) = 64 x 64") != std::string::npos);
  CHECK(text.find("class: full, visit #4") != std::string::npos);
  CHECK(text.find("read 16.00 KiB, write 0 B") != std::string::npos);  // 16,384 B
  // the first whole pixel inside tile (3, 0)'s top-left corner (ImGui floors the mouse position)
  const ImVec2 corner = map.layout.cell_min(3, 0);
  ImGui::GetIO().MousePos = {std::floor(corner.x) + 1, std::floor(corner.y) + 1};
  ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.hovered == TileRef{3, 0});

  // click: press and release on tile (2, 1) selects it
  ImGui::GetIO().MousePos = map.layout.cell_center(2, 1);
  ImGui::GetIO().MouseDown[0] = true;
  ui.frame([&] { map_window(map, s, tex); });
  ImGui::GetIO().MouseDown[0] = false;
  ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.selected == TileRef{2, 1});
  CHECK(tex.uploads == 1);  // nothing changed: the picture was not rebuilt
}

TEST_CASE("the map is rebuilt when the config or the mode changes, and only then") {
  Headless ui;
  RecordingTextures tex;
  Session s(r4());
  BlockMapPanel map;
  for (int k = 0; k < 3; ++k) ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.texture.builds() == 1);
  Config c = s.config();
  c.b_r = c.b_c = 32;
  REQUIRE(s.apply(c));
  ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.texture.builds() == 2);
  CHECK(map.texture.image().width == 8);
  map.mode = MapMode::heat;
  map.metric = Metric::visit_order;
  ui.frame([&] { map_window(map, s, tex); });
  ui.frame([&] { map_window(map, s, tex); });
  CHECK(map.texture.builds() == 3);
  CHECK(map.texture.image().at(0, 0) == palette::heat(0));
}

TEST_CASE("a million-tile map is one texture no larger than the panel") {
  Headless ui;
  RecordingTextures tex;
  Config c;
  c.n_q = c.n_k = 131072;
  c.d = 128;
  c.b_r = c.b_c = 128;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  Session s(c);
  BlockMapPanel map;
  ui.frame([&] { map_window(map, s, tex); });
  const Image& img = map.texture.image();
  CHECK(img.width == map.layout.pixel_width());
  CHECK(img.height == map.layout.pixel_height());
  CHECK(img.width < 600);
  CHECK(map.layout.rows == 1024);
  CHECK(map.layout.cols == 1024);
}

TEST_CASE("the config panel shows the ConfigError of an invalid value and the figures of a valid one") {
  Headless ui({1280, 1400});
  Session s(r4());
  ConfigPanel panel;
  // a window tall enough that no line is clipped (clipped text is not rendered, nor logged)
  auto draw = [&] { return ui.text_of_window("config", {400, 1300}, [&] { panel.draw(s); }); };
  // R4: T_r = T_c = 256 / 64 = 4
  CHECK(draw().find("T_r x T_c = 4 x 4 = 16 tiles") != std::string::npos);
  Config bad = s.config();
  bad.b_r = 0;
  s.apply(bad);
  const std::string text = draw();
  CHECK(text.find("Invalid: br = 0: an integer from 1 to 65536") != std::string::npos);
  CHECK(text.find("T_r x T_c") == std::string::npos);
}

TEST_CASE("the compare tab draws the walk from V1 to V2 as bars once it has been timed") {
  Headless ui({1280, 1400});
  RecordingTextures tex;
  Session s(r4());
  ComparePanel panel;
  Playback clock;
  auto draw = [&] { return ui.text_of_window("compare", {1200, 1300}, [&] { panel.draw(s, clock, tex); }); };
  draw();
  panel.wait();
  const std::string text = draw();
  CHECK(text.find("Why V2 is faster") != std::string::npos);
  for (const WalkStep& step : v1_to_v2_walk()) CHECK(text.find(step.what) != std::string::npos);
  // V1's bar is the start; V2's carries its own predicted time, as `flashlab count --algo v2` prints it
  Config v2 = r4();
  v2.algo = Algo::v2;
  const report::Figures f = report::measure(resolve(v2));
  const std::string t = report::human(report::metric("predicted_seconds"), report::value_of("predicted_seconds", f));
  CHECK(text.find(t) != std::string::npos);
  CHECK(text.find("(V1: the walk's start)") != std::string::npos);
  // each side names its tile and grid: V1 one thread block per head, V2 one per Q block (T_r = 4)
  CHECK(text.find("tile 64 x 64 x 4, grid 1; block skip off, split-k") != std::string::npos);
  CHECK(text.find("tile 64 x 64 x 4, grid 4; block skip on, split-q") != std::string::npos);
  CHECK(text.find("(1.00x faster than V1)") == std::string::npos);  // issue 24: V1's own bar said so
  // every later step: its speed-up over V1's predicted time, as explain computes it
  Config v1 = r4();
  v1.algo = Algo::v1;
  const double t1 = report::measure(resolve(v1)).time.time_s;
  CHECK(text.find("(" + report::ratio(t1, f.time.time_s) + " faster than V1)") != std::string::npos);
}

TEST_CASE("the whole viewer draws every tab, plays, and survives an invalid config") {
  Headless ui;
  RecordingTextures tex;
  Viewer v(r4(), tex);
  v.map.selected = {3, 1};
  v.playback.numerics = true;
  for (Tab t : {Tab::tile, Tab::playback, Tab::compare, Tab::sweep}) {
    v.show(t);
    for (int k = 0; k < 3; ++k) ui.frame([&] { v.frame({1280, 720}, 1.0 / 60); });
    CHECK(v.tab() == t);
  }
  v.sweep.wait();
  v.show(Tab::playback);
  v.seek(7);
  v.playback.wait_numerics();
  ui.frame([&] { v.frame({1280, 720}, 1.0 / 60); });
  REQUIRE(v.playback.track());
  CHECK(v.playback.track()->position() == 7);
  v.playback.clock.speed = 20;
  v.playback.clock.play();
  ui.frame([&] { v.frame({1280, 720}, 0.5); });  // 10 steps of the 24 (4 Q blocks x (1 + 4 + 1))
  CHECK(v.playback.track()->position() == 17);

  Config bad = v.session.config();
  bad.d = 0;
  v.session.apply(bad);
  for (Tab t : {Tab::tile, Tab::playback, Tab::compare, Tab::sweep}) {
    v.show(t);
    ui.frame([&] { v.frame({1280, 720}, 1.0 / 60); });
  }
  CHECK(v.session.error() == "d = 0: an integer from 1 to 4096");
  CHECK(v.playback.track()->position() >= 17);  // the last valid config plays on
}

TEST_CASE("the compare tab, with no tile given, names FA2's tile both sides walk and the tile V1's kernel runs") {
  Headless ui({1280, 1400});
  RecordingTextures tex;
  Config c;  // d = 64: FA2's 128 x 128; the V1 kernel's 64 x 64 x 4 (kernels/src/tiles.hpp)
  Session s(c);
  ComparePanel panel;
  Playback clock;
  const std::string text = ui.text_of_window("compare", {1200, 1300}, [&] { panel.draw(s, clock, tex); });
  CHECK(text.find("both on FA2's tile for d = 64 (128 x 128); flashlab's V1 kernel (kernels/src/v1.cu) runs 64 x 64 x 4 "
                  "(the largest tile it compiles at d = 64): flashlab compare puts each on its own") != std::string::npos);
  panel.wait();
}

TEST_CASE("the config panel's tooltips are the fields' documentation (the table --help and Python read)") {
  Headless ui({1280, 1400});
  ConfigPanel panel;
  // every control on screen: custom tiles, a window mask, a custom SRAM size and scale; then V2's
  // backward (its form) and V2's forward (split-KV and FA2's launches)
  Config c = r4();
  c.mask = Mask{MaskKind::window, 8, 8};
  c.sram_bytes = 100000;
  c.scale = 0.5;
  std::set<std::string> shown;  // the flags whose documentation a tooltip showed
  for (Pass pass : {Pass::backward, Pass::forward}) {
    c.pass = pass;
    Session s(c);
    for (float y = 2; y < 1300; y += 4) {  // the mouse down the controls, one frame each
      ImGui::GetIO().MousePos = {60, y};
      ui.frame([&] {
        ImGui::SetNextWindowPos({0, 0});
        ImGui::SetNextWindowSize({400, 1300});
        ImGui::Begin("config");
        panel.draw(s);
        ImGui::End();
      });
      for (const FieldDoc& d : field_docs())
        if (last_tooltip().rfind(d.flag + ": " + field_help(d), 0) == 0) shown.insert(d.flag);
    }
    CHECK(s.valid());
  }
  std::set<std::string> controls;  // every field but those the panel has no control for
  for (const FieldDoc& d : field_docs()) controls.insert(d.flag);
  for (const char* none : {"--seq", "--kv-heads", "--order", "--grid", "--rescale"}) controls.erase(none);
  // V3's switches: the viewer has no V3 yet (issue 27 item 3)
  for (const char* none : {"--warp-specialize", "--stages", "--pingpong", "--intra-overlap", "--scheduler"})
    controls.erase(none);
  std::string missing;
  for (const std::string& flag : controls)
    if (!shown.count(flag)) missing += " " + flag;
  INFO("no tooltip of its documentation:", missing);
  CHECK(shown == controls);
}
