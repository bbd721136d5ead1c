// options.cpp — see options.hpp.
#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <CLI/CLI.hpp>

#include "flashlab/contract/error.hpp"
#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/output_file.hpp"

namespace flashlab::viz {
namespace {

template <class E>
E pick(const std::string& field, const std::string& text, const std::map<std::string, E>& names) {
  if (auto it = names.find(text); it != names.end()) return it->second;
  std::string allowed = "one of";
  for (const auto& [k, v] : names) allowed += " " + k;
  throw ConfigError(field, text, allowed);
}

double number_in(const std::string& field, const std::string& text, double lo, double hi, const std::string& what) {
  const double v = cli::parse_number(field, text, what);
  if (!(v >= lo && v <= hi)) throw ConfigError(field, text, what);
  return v;
}

// A tile I,J of the map: 0 <= I < T_r, 0 <= J < T_c.
TileRef parse_tile(const std::string& field, const std::string& text, const Problem& p) {
  const std::int64_t t_r = p.tiling.t_r(), t_c = p.tiling.t_c();
  const std::string allowed = "I,J: a tile's Q block and K/V block indices, 0 <= I < T_r = " + std::to_string(t_r) +
                              " and 0 <= J < T_c = " + std::to_string(t_c);
  const std::vector<std::string> ij = cli::split_list(field, text, allowed);
  if (ij.size() != 2) throw ConfigError(field, text, allowed);
  const TileRef t{cli::parse_int(field, ij[0], allowed), cli::parse_int(field, ij[1], allowed)};
  if (t.i < 0 || t.j < 0 || t.i >= t_r || t.j >= t_c) throw ConfigError(field, text, allowed);
  return t;
}

// An output named by flag `field`: the destination checked (output_file.hpp) and its temporary
// file created and removed, so that a run never renders its frames only to fail at the end.
// Returns the file written (a symbolic link's target).
std::string output_target(const std::string& field, const std::string& path) {
  try {
    const OutputPath out = output_path(path);
    check_creatable(out);
    return out.target;
  } catch (const ConfigError& e) {
    throw ConfigError(field, e.value(), e.allowed());
  }
}

// What is left on the command line after parsing: an unknown flag or a stray argument.
void refuse_extras(const std::vector<std::string>& extras) {
  if (extras.empty()) return;
  const std::string& e = extras.front();
  if (e.size() > 1 && e[0] == '-') throw ConfigError("flag", e, "one of the flags listed by flashlab-viewer --help");
  throw ConfigError("argument", e, "none: every value follows its flag (see flashlab-viewer --help)");
}

// The viewer's command line: the configuration flags, the viewer's own, the value rules
// (flags/values.hpp) on all of them; the texts as typed, until parse_options checks them.
struct CommandLine {
  CLI::App app{"flashlab-viewer: the block-skip map, per-tile statistics, playback and V1 vs V2 of one "
               "attention configuration (Dear ImGui)."};
  std::shared_ptr<const cli::ConfigFlags> flags;
  std::string tab = "tile", map = "classes", metric = "hbm", select, hover, sweep = "block";
  std::string frames, width, height, step, speed;

  explicit CommandLine(AppOptions& out) {
    app.allow_extras();  // refused by refuse_extras, naming the flag
    flags = cli::add_config_flags(app);
    const auto option = [this](const char* name, std::string& value, const char* type, const char* help) {
      app.add_option(name, value, help)->type_name(type);
    };
    option("--frames", frames, "N", "render N frames (1 to 1000000), print the first frame's time and the frame-time figures of the others (mean, median, p95), exit");
    option("--screenshot", out.screenshot, "FILE", "write the window to FILE.png or FILE.jpg (.jpeg) after the frames (default 3) and exit");
    option("--layout", out.layout, "FILE", "write where the map's tiles are on screen to FILE.json (for tests)");
    option("--width", width, "PX", "window width in pixels, 400 to 8192 (default 1280)");
    option("--height", height, "PX", "window height in pixels, 300 to 8192 (default 720)");
    option("--tab", tab, "TAB", "inspector tab: tile | playback | compare | sweep | traces | timeline (default tile)");
    option("--map", map, "MAP", "map colours: classes | heat (default classes)");
    option("--metric", metric, "METRIC", "heat-map metric: hbm | flops | exp | visit | atomic (default hbm)");
    option("--select", select, "I,J", "select tile I,J (0 <= I < T_r, 0 <= J < T_c)");
    option("--hover", hover, "I,J", "with --frames or --screenshot: put the mouse on tile I,J of the map");
    option("--step", step, "K", "start the playback at step K (0 to the schedule's steps)");
    app.add_flag("--play", out.play, "start playing");
    option("--speed", speed, "X", "playback speed in steps per second, 1 to 1000000 (default 8)");
    app.add_flag("--numerics", out.numerics, "show m and l of the current Q block (playback tab)");
    app.add_option("--trace", out.traces, "open a trace file (twice: traces A and B, compared)")
        ->type_name("FILE")
        ->expected(1)
        ->take_all();
    option("--sweep", sweep, "AXIS", "HBM plot axis: block | sram (default block)");
    cli::refuse_empty_values(app);
  }
};

}  // namespace

std::vector<std::string> value_flags() {
  AppOptions out;
  CommandLine cl(out);
  std::vector<std::string> names;
  for (const CLI::Option* opt : cli::value_options(cl.app)) names.push_back(cli::flag_spelling(*opt));
  return names;
}

ImageFormat image_format(const std::string& field, const std::string& path) {
  const auto dot = path.find_last_of("./");
  std::string ext = dot == std::string::npos || path[dot] != '.' ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == "png") return ImageFormat::png;
  if (ext == "jpg" || ext == "jpeg") return ImageFormat::jpeg;
  throw ConfigError(field, path, "a file name ending in .png, .jpg or .jpeg (the format written)");
}

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
  CommandLine cl(out);
  CLI::App& app = cl.app;
  try {
    app.parse(argc, argv);
    refuse_extras(app.remaining());
    out.config = cl.flags->build();
    out.model = cl.flags->model();
    const Problem p = resolve(out.config);
    if (p.algo == Algo::v3)  // its tile and playback panels (warp ownership) have no V3 yet
      throw ConfigError("algo", "v3",
                        "standard, v1 or v2 in the viewer: its tile and playback panels do not model v3's warp roles "
                        "yet; --tab timeline lays V3 out beside the config's algorithm, and flashlab count/trace/run "
                        "--algo v3 give V3's counts, events and numerics");
    // Values are never empty here (refuse_empty_values): an empty text means "not given".
    if (!cl.frames.empty()) out.frames = int(cli::parse_int_in("frames", cl.frames, 1, 1000000));
    if (!cl.width.empty()) out.width = int(cli::parse_int_in("width", cl.width, 400, 8192, " pixels"));
    if (!cl.height.empty()) out.height = int(cli::parse_int_in("height", cl.height, 300, 8192, " pixels"));
    if (!cl.speed.empty())
      out.speed = number_in("speed", cl.speed, 1, 1e6, "a number of steps per second from 1 to 1000000");
    out.tab = pick<Tab>("tab", cl.tab, {{"tile", Tab::tile}, {"playback", Tab::playback}, {"compare", Tab::compare}, {"sweep", Tab::sweep}, {"traces", Tab::traces}, {"timeline", Tab::timeline}});
    out.map_mode = pick<MapMode>("map", cl.map, {{"classes", MapMode::classes}, {"heat", MapMode::heat}});
    out.metric = pick<Metric>("metric", cl.metric, {{"hbm", Metric::hbm_bytes}, {"flops", Metric::flops},
                                                   {"exp", Metric::exp_ops}, {"visit", Metric::visit_order},
                                                   {"atomic", Metric::atomic_bytes}});
    out.sweep_axis = pick<SweepAxis>("sweep", cl.sweep, {{"block", SweepAxis::block}, {"sram", SweepAxis::sram}});
    if (!cl.select.empty()) out.select = parse_tile("select", cl.select, p);
    if (!cl.hover.empty()) out.hover = parse_tile("hover", cl.hover, p);
    if (!cl.step.empty()) {
      const std::uint64_t total = playback_steps(out.config, out.tab);
      out.step = std::uint64_t(
          cli::parse_int_in("step", cl.step, 0, std::int64_t(total), " (the steps of this config's schedule)"));
    }
    if (out.traces.size() > 2)
      throw ConfigError("trace", std::to_string(out.traces.size()) + " files", "at most two: traces A and B");
    if (app.count("--screenshot") > 0) {
      out.screenshot_format = image_format("screenshot", out.screenshot);
      out.screenshot = output_target("screenshot", out.screenshot);
    }
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
