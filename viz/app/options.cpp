// options.cpp — see options.hpp.
#include "options.hpp"

#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>

#include "config_flags.hpp"
#include "flashlab/error.hpp"

namespace flashlab::viz {
namespace {

template <class E>
E pick(const std::string& field, const std::string& text, const std::map<std::string, E>& names) {
  if (auto it = names.find(text); it != names.end()) return it->second;
  std::string allowed = "one of";
  for (const auto& [k, v] : names) allowed += " " + k;
  throw ConfigError(field, text, allowed);
}

TileRef parse_tile(const std::string& field, const std::string& text) {
  const auto comma = text.find(',');
  const std::string allowed = "I,J: a tile's Q block and K/V block indices, two integers >= 0";
  if (comma == std::string::npos) throw ConfigError(field, text, allowed);
  TileRef t{cli::parse_int(field, text.substr(0, comma), allowed), cli::parse_int(field, text.substr(comma + 1), allowed)};
  if (t.i < 0 || t.j < 0) throw ConfigError(field, text, allowed);
  return t;
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, AppOptions& out) {
  CLI::App app{"flashlab-viewer: the block-skip map, per-tile statistics, playback and V1 vs V2 of one "
               "attention configuration (Dear ImGui)."};
  auto flags = cli::add_config_flags(app);
  std::string tab = "tile", map = "classes", metric = "hbm", select, hover, sweep = "block";
  app.add_option("--frames", out.frames, "render N frames, print the frame-time figures (mean, median, p95), exit")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--screenshot", out.screenshot, "write the window to FILE.png after the frames (default 3) and exit");
  app.add_option("--layout", out.layout, "write where the map's tiles are on screen to FILE.json (for tests)");
  app.add_option("--width", out.width, "window width in pixels (default 1280)")->check(CLI::Range(400, 8192));
  app.add_option("--height", out.height, "window height in pixels (default 720)")->check(CLI::Range(300, 8192));
  app.add_option("--tab", tab, "inspector tab: tile | playback | compare | sweep | traces (default tile)");
  app.add_option("--map", map, "map colours: classes | heat (default classes)");
  app.add_option("--metric", metric, "heat-map metric: hbm | flops | exp | visit (default hbm)");
  app.add_option("--select", select, "select tile I,J");
  app.add_option("--hover", hover, "with --frames or --screenshot: put the mouse on tile I,J of the map");
  app.add_option("--step", out.step, "start the playback at step K");
  app.add_flag("--play", out.play, "start playing");
  app.add_option("--speed", out.speed, "playback speed in steps per second (default 8)")->check(CLI::Range(1.0, 1e6));
  app.add_flag("--numerics", out.numerics, "show m and l of the current Q block (playback tab)");
  app.add_option("--trace", out.traces, "open a trace file (twice: traces A and B, compared)")->expected(1)->take_all();
  app.add_option("--sweep", sweep, "HBM plot axis: block | sram (default block)");
  try {
    app.parse(argc, argv);
    out.config = flags->build();
    out.model = flags->model();
    out.tab = pick<Tab>("tab", tab, {{"tile", Tab::tile}, {"playback", Tab::playback}, {"compare", Tab::compare}, {"sweep", Tab::sweep}, {"traces", Tab::traces}});
    out.map_mode = pick<MapMode>("map", map, {{"classes", MapMode::classes}, {"heat", MapMode::heat}});
    out.metric = pick<Metric>("metric", metric, {{"hbm", Metric::hbm_bytes}, {"flops", Metric::flops},
                                                {"exp", Metric::exp_ops}, {"visit", Metric::visit_order}});
    out.sweep_axis = pick<SweepAxis>("sweep", sweep, {{"block", SweepAxis::block}, {"sram", SweepAxis::sram}});
    if (!select.empty()) out.select = parse_tile("select", select);
    if (!hover.empty()) out.hover = parse_tile("hover", hover);
    if (out.traces.size() > 2)
      throw ConfigError("trace", std::to_string(out.traces.size()) + " files", "at most two: traces A and B");
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "flashlab-viewer: %s\n", e.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace flashlab::viz
