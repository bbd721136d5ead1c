// cmd_sweep.cpp — `flashlab sweep`: one axis (N, d, B_r, B_c or M) over a list of values, every
// chosen algorithm at each value, one CSV row per (value, algorithm) with every metric of the
// catalogue (flashlab/report/metrics.hpp).
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <sstream>

#include "algos.hpp"
#include "commands.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "command_output.hpp"
#include "png_output.hpp"
#include "progress.hpp"
#include "sweep_axis.hpp"
#include "sweep_plot.hpp"

namespace flashlab::cli {
namespace {

struct SweepArgs {
  std::string over, algos = "standard,v1,v2", output, plot, plot_size = "960x600";
  bool want_plot = false, want_plot_size = false;  // --plot / --plot-size given (values may be empty)
  ValueSpec values;
};

// --plot-size "WxH" -> {W, H}, each parsed by parse_int_in in [kPlotMinSide, kPlotMaxSide] pixels.
// Errors name the whole value: "plot-size = 100x600: WIDTHxHEIGHT, the width an integer from 320
// to 4096 pixels".
std::pair<int, int> parse_plot_size(const std::string& text) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos)
    throw ConfigError("plot-size", text, "WIDTHxHEIGHT in pixels, each " + int_range(kPlotMinSide, kPlotMaxSide) +
                                             ", e.g. 960x600");
  const auto side = [&text](const char* name, const std::string& part) {
    try {
      return int(parse_int_in("plot-size", part, kPlotMinSide, kPlotMaxSide, " pixels"));
    } catch (const ConfigError& e) {  // name the whole value, not the half that failed
      throw ConfigError("plot-size", text, std::string("WIDTHxHEIGHT, the ") + name + " " + e.allowed());
    }
  };
  const int w = side("width", text.substr(0, x));
  return {w, side("height", text.substr(x + 1))};
}

// The config columns after `kernel`: the warps and the switches (config_json's keys)
constexpr const char* kSwitchColumns[] = {"warps",           "split",  "order",    "grid",          "rescale",
                                          "warp_specialize", "stages", "pingpong", "intra_overlap", "scheduler"};

std::string csv_field(const std::string& s) {
  return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
}

// The sweep's config columns, then every metric of the catalogue with in_csv, in catalogue order
// (docs/output.md).
void write_header(std::ostream& out) {
  out << "over,value,algo,n_q,n_k,d,b_r,b_c,t_r,t_c,mask,block_skip,dtype,batch,heads,sram_capacity_bytes,pass,backward_form,splits,kernel";
  for (const char* key : kSwitchColumns) out << "," << key;
  for (const report::Metric& m : report::catalogue())
    if (m.in_csv) out << "," << m.key;
  out << "\n";
}

void write_row(std::ostream& out, Axis axis, std::int64_t value, const report::Figures& f) {
  const Problem& p = f.problem;
  const Tiling& t = p.tiling;
  out << to_string(axis) << "," << value << "," << to_string(p.algo) << "," << t.n_q << "," << t.n_k << "," << t.d
      << "," << t.b_r << "," << t.b_c << "," << t.t_r() << "," << t.t_c() << "," << csv_field(to_string(p.mask))
      << "," << on_off(p.block_skip) << "," << to_string(p.dtype) << "," << p.batch << "," << p.heads
      << "," << p.sram_capacity << "," << to_string(p.pass) << ","
      << (p.algo == Algo::v2 && p.backward() ? to_string(p.backward_form) : std::string_view()) << "," << p.splits
      << "," << to_string(p.kernel);
  // the warps and the switches as config_json writes them (empty where it writes none: standard
  // attention's loop switches, V3's for the others), a switch as its flag takes it
  const nlohmann::json cfg = config_json(p);
  for (const char* key : kSwitchColumns) {
    out << ",";
    if (!cfg.contains(key)) continue;
    const nlohmann::json& v = cfg.at(key);
    if (v.is_boolean()) out << on_off(v.get<bool>());
    else if (v.is_string()) out << v.get<std::string>();
    else out << v.dump();
  }
  for (const report::Metric& m : report::catalogue())
    if (m.in_csv) out << "," << report::exact(m.value(f));
  out << "\n";
}

void run_sweep(const Config& base, const SweepArgs& a) {
  const Axis axis = parse_axis(a.over);
  const std::vector<Algo> algos = parse_algo_list("algos", a.algos);
  const std::vector<std::int64_t> values = sweep_values(a.values);
  if (a.want_plot_size && !a.want_plot) throw ConfigError("plot-size", a.plot_size, "only with --plot FILE.png");
  const std::pair<int, int> plot_size = a.want_plot ? parse_plot_size(a.plot_size) : std::pair<int, int>{};
  std::optional<PngOutput> plot;  // destinations checked before any work
  if (a.want_plot) plot.emplace("plot", a.plot);
  // Every point is resolved (validated) before the first is counted: a bad point late in a long
  // sweep fails at once, naming its value, not after the work before it (issue 9 item 5).
  std::vector<Problem> problems;
  for (std::int64_t v : values) {
    Config c = base;
    set_axis(c, axis, v);
    const std::string point = to_string(axis) + " = " + std::to_string(v);
    for (Algo algo : algos) problems.push_back(resolve_algo(with_algo(c, algo, algos), algo, "sweep point " + point));
  }
  const OutputFile file(a.output);
  if (plot) check_distinct(plot->file(), file);  // -o x.png --plot x.png: one would replace the other
  std::ostringstream csv;     // nothing is written until every row is computed
  write_header(csv);
  std::vector<SweepSample> samples;
  std::optional<Problem> first;
  Progress progress("sweep", problems.size());  // on stderr when it is a terminal and the sweep is long
  std::size_t next = 0;  // problems[next]: the point (v, algo) of this row
  for (std::int64_t v : values) {
    const std::string point = to_string(axis) + " = " + std::to_string(v);
    for (Algo algo : algos) {
      const Problem& p = problems[next++];
      progress.label(point + ", " + std::string(to_string(algo)));
      const report::Figures f = report::measure(p);
      write_row(csv, axis, v, f);
      samples.push_back(sweep_sample(v, p, report::value_of("hbm_total_bytes", f).integer));
      if (!first) first = p;
      progress.tick();
    }
  }
  progress.clear();
  // The picture is drawn before anything is written, so that a failure leaves no file at all.
  const viz::Image picture =
      plot ? plot_image(sweep_plot(axis, *first, samples), plot_size.first, plot_size.second) : viz::Image{};
  if (!plot || !a.output.empty()) file.write(csv.str());  // with --plot, the CSV only where -o puts it
  if (plot) {
    plot->write(picture);
    std::cerr << "plot: wrote " << plot->path() << " (" << picture.width << " x " << picture.height << " px, "
              << samples.size() << " points)\n";
  }
}

}  // namespace

void register_sweep(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Sweep N, d, B_r, B_c or M over a list of values for several algorithms; CSV, one row per "
               "(value, algorithm)");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = ""});
  auto args = std::make_shared<SweepArgs>();
  const auto option = [cmd](const char* name, std::string& value, const char* type, const char* help) {
    return cmd->add_option(name, value, help)->type_name(type)->group("Sweep");
  };
  option("--over", args->over, "AXIS", "the axis: n or seq (sets N_q = N_k) | d | br | bc | sram (M, bytes)")->required();
  option("--values", args->values.values, "LIST", "comma-separated values, e.g. 512,1024,2048");
  option("--from", args->values.from, "INT", "first value of a range");
  option("--to", args->values.to, "INT", "last value of a range (included when reached)");
  option("--step", args->values.step, "INT", "linear step of a range");
  cmd->add_flag("--log2", args->values.log2, "double from --from up to --to")->group("Sweep");
  option("--algos", args->algos, "ALGOS", "algorithms: all (standard, v1, v2), or a list of standard, v1, v2, v3 (default all three; v3: FA3's Hopper forward, --pass forward only)");
  option("-o,--output", args->output, "FILE",
         "CSV file (written to a temporary name, then renamed), - for stdout; default stdout, none with --plot");
  CLI::Option* plot = option("--plot", args->plot, "FILE.png",
                             "plot HBM bytes against the swept value, one line per algorithm (and the "
                             "Θ(N²d²/M) curve when sweeping sram), to this PNG file");
  CLI::Option* plot_size =
      option("--plot-size", args->plot_size, "WxH", "size of the --plot picture in pixels (default 960x600)");
  cmd->callback([cmd, flags, args, plot, plot_size] {
    // A flag that the axis sets at every point would be dropped without a word: refused.
    const Axis axis = parse_axis(args->over);
    for (const std::string& name : axis_flags(axis))
      if (const CLI::Option* o = cmd->get_option_no_throw("--" + name); o && o->count() > 0)
        throw ConfigError(name, o->results().empty() ? std::string() : o->results().back(),
                          "not with --over " + args->over + ": the sweep sets it at each point (--values, or "
                          "--from/--to)");
    args->want_plot = plot->count() > 0;
    args->want_plot_size = plot_size->count() > 0;
    run_sweep(flags->build(), *args);
  });
}

}  // namespace flashlab::cli
