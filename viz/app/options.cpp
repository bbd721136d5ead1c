// options.cpp — see options.hpp.
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include <CLI/CLI.hpp>

#include "flashlab/flags/config_flags.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/executor/executor.hpp"
#include "output_path.hpp"

namespace flashlab::viz {
namespace {

template <class E>
E pick(const std::string& field, const std::string& text, const std::map<std::string, E>& names) {
  if (auto it = names.find(text); it != names.end()) return it->second;
  std::string allowed = "one of";
  for (const auto& [k, v] : names) allowed += " " + k;
  throw ConfigError(field, text, allowed);
}

std::int64_t int_in(const std::string& field, const std::string& text, std::int64_t lo, std::int64_t hi,
                    const std::string& what = "") {
  const std::string allowed = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + what;
  const std::int64_t v = cli::parse_int(field, text, allowed);
  if (v < lo || v > hi) throw ConfigError(field, text, allowed);
  return v;
}

double number_in(const std::string& field, const std::string& text, double lo, double hi, const std::string& what) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || !(v >= lo && v <= hi))
    throw ConfigError(field, text, what);
  return v;
}

// A tile I,J of the map: 0 <= I < T_r, 0 <= J < T_c.
TileRef parse_tile(const std::string& field, const std::string& text, const Problem& p) {
  const std::int64_t t_r = p.tiling.t_r(), t_c = p.tiling.t_c();
  const std::string allowed = "I,J: a tile's Q block and K/V block indices, 0 <= I < T_r = " + std::to_string(t_r) +
                              " and 0 <= J < T_c = " + std::to_string(t_c);
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw ConfigError(field, text, allowed);
  const TileRef t{cli::parse_int(field, text.substr(0, comma), allowed),
                  cli::parse_int(field, text.substr(comma + 1), allowed)};
  if (t.i < 0 || t.j < 0 || t.i >= t_r || t.j >= t_c) throw ConfigError(field, text, allowed);
  return t;
}

// What is left on the command line after parsing: an unknown flag or a stray argument.
void refuse_extras(const std::vector<std::string>& extras) {
  if (extras.empty()) return;
  const std::string& e = extras.front();
  if (e.size() > 1 && e[0] == '-') throw ConfigError("flag", e, "one of the flags listed by flashlab-viewer --help");
  throw ConfigError("argument", e, "none: every value follows its flag (see flashlab-viewer --help)");
}

}  // namespace

std::uint64_t playback_steps(const Config& c, Tab t) {
  if (t != Tab::compare) return count(resolve(c)).steps;
  std::uint64_t steps = 0;
  for (Algo a : {Algo::v1, Algo::v2}) {
    Config side = c;
    side.algo = a;
    try {
      steps = std::max(steps, count(resolve(side)).steps);
    } catch (const ConfigError&) {  // the compare tab shows this side's error and no track
    }
  }
  return steps;
}

ParseOutcome parse_options(int argc, const char* const* argv, AppOptions& out) {
  CLI::App app{"flashlab-viewer: the block-skip map, per-tile statistics, playback and V1 vs V2 of one "
               "attention configuration (Dear ImGui)."};
  app.allow_extras();  // refused below, naming the flag
  auto flags = cli::add_config_flags(app);
  std::string tab = "tile", map = "classes", metric = "hbm", select, hover, sweep = "block";
  std::string frames, width, height, step, speed;
  app.add_option("--frames", frames, "render N frames (1 to 1000000), print the frame-time figures (mean, median, p95), exit");
  app.add_option("--screenshot", out.screenshot, "write the window to FILE.png after the frames (default 3) and exit");
  app.add_option("--layout", out.layout, "write where the map's tiles are on screen to FILE.json (for tests)");
  app.add_option("--width", width, "window width in pixels, 400 to 8192 (default 1280)");
  app.add_option("--height", height, "window height in pixels, 300 to 8192 (default 720)");
  app.add_option("--tab", tab, "inspector tab: tile | playback | compare | sweep | traces (default tile)");
  app.add_option("--map", map, "map colours: classes | heat (default classes)");
  app.add_option("--metric", metric, "heat-map metric: hbm | flops | exp | visit (default hbm)");
  app.add_option("--select", select, "select tile I,J (0 <= I < T_r, 0 <= J < T_c)");
  app.add_option("--hover", hover, "with --frames or --screenshot: put the mouse on tile I,J of the map");
  app.add_option("--step", step, "start the playback at step K (0 to the schedule's steps)");
  app.add_flag("--play", out.play, "start playing");
  app.add_option("--speed", speed, "playback speed in steps per second, 1 to 1000000 (default 8)");
  app.add_flag("--numerics", out.numerics, "show m and l of the current Q block (playback tab)");
  app.add_option("--trace", out.traces, "open a trace file (twice: traces A and B, compared)")->expected(1)->take_all();
  app.add_option("--sweep", sweep, "HBM plot axis: block | sram (default block)");
  try {
    app.parse(argc, argv);
    refuse_extras(app.remaining());
    out.config = flags->build();
    out.model = flags->model();
    const Problem p = resolve(out.config);
    if (!frames.empty()) out.frames = int(int_in("frames", frames, 1, 1000000));
    if (!width.empty()) out.width = int(int_in("width", width, 400, 8192, " pixels"));
    if (!height.empty()) out.height = int(int_in("height", height, 300, 8192, " pixels"));
    if (!speed.empty()) out.speed = number_in("speed", speed, 1, 1e6, "a number of steps per second from 1 to 1000000");
    out.tab = pick<Tab>("tab", tab, {{"tile", Tab::tile}, {"playback", Tab::playback}, {"compare", Tab::compare}, {"sweep", Tab::sweep}, {"traces", Tab::traces}});
    out.map_mode = pick<MapMode>("map", map, {{"classes", MapMode::classes}, {"heat", MapMode::heat}});
    out.metric = pick<Metric>("metric", metric, {{"hbm", Metric::hbm_bytes}, {"flops", Metric::flops},
                                                {"exp", Metric::exp_ops}, {"visit", Metric::visit_order}});
    out.sweep_axis = pick<SweepAxis>("sweep", sweep, {{"block", SweepAxis::block}, {"sram", SweepAxis::sram}});
    if (!select.empty()) out.select = parse_tile("select", select, p);
    if (!hover.empty()) out.hover = parse_tile("hover", hover, p);
    if (!step.empty()) {
      const std::uint64_t total = playback_steps(out.config, out.tab);
      out.step = std::uint64_t(int_in("step", step, 0, std::int64_t(total), " (the steps of this config's schedule)"));
    }
    if (out.traces.size() > 2)
      throw ConfigError("trace", std::to_string(out.traces.size()) + " files", "at most two: traces A and B");
    if (app.count("--screenshot") > 0) out.screenshot = output_target("screenshot", out.screenshot);
    if (app.count("--layout") > 0) out.layout = output_target("layout", out.layout);
  } catch (const CLI::CallForHelp&) {
    return {0, app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return {0, app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::ParseError& e) {
    return {2, e.what()};
  } catch (const ConfigError& e) {
    return {2, e.what()};
  }
  return {};
}

}  // namespace flashlab::viz
