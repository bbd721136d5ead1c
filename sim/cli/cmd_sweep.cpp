// cmd_sweep.cpp — `flashlab sweep`: one axis (N, d, B_r, B_c or M) over a list of values, every
// chosen algorithm at each value, one CSV row per (value, algorithm) with the main counters.
#include <iostream>
#include <memory>
#include <sstream>

#include "algos.hpp"
#include "commands.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/executor/executor.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "sweep_axis.hpp"

namespace flashlab::cli {
namespace {

constexpr std::size_t kProgressMinRows = 16;  // fewer rows finish before a bar would be read

struct SweepArgs {
  std::string over, algos = "standard,v1,v2", output;
  ValueSpec values;
};

std::string csv_field(const std::string& s) {
  return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
}

void write_header(std::ostream& out) {
  out << "over,value,algo,n_q,n_k,d,b_r,b_c,t_r,t_c,mask,block_skip,dtype,batch,heads,sram_capacity_bytes,"
         "hbm_read_bytes,hbm_write_bytes,hbm_total_bytes";
  for (const char* dir : {"read", "write"})
    for (int t = 0; t < kTensorCount; ++t) out << "," << dir << "_" << to_string(Tensor(t));
  out << ",tiles_total,tiles_visited,tiles_full,tiles_partial,tiles_skipped,flops_matmul";
  for (int o = 0; o < kOpKindCount; ++o) out << ",ops_" << to_string(OpKind(o));
  out << ",sram_peak_bytes,grid_blocks,blocks_per_sm,waves\n";
}

void write_row(std::ostream& out, Axis axis, std::int64_t value, const Problem& p, const Counters& k) {
  const Tiling& t = p.tiling;
  out << to_string(axis) << "," << value << "," << to_string(p.algo) << "," << t.n_q << "," << t.n_k << "," << t.d
      << "," << t.b_r << "," << t.b_c << "," << t.t_r() << "," << t.t_c() << "," << csv_field(to_string(p.mask))
      << "," << (p.block_skip ? "on" : "off") << "," << to_string(p.dtype) << "," << p.batch << "," << p.heads
      << "," << p.sram_capacity << "," << k.cost.read_bytes() << "," << k.cost.write_bytes() << ","
      << k.cost.read_bytes() + k.cost.write_bytes();
  for (Dir dir : {Dir::read, Dir::write})
    for (int tn = 0; tn < kTensorCount; ++tn) out << "," << k.cost.bytes(Tensor(tn), dir);
  out << "," << k.tiles.total << "," << k.tiles.visited << "," << k.tiles.full << "," << k.tiles.partial << ","
      << k.tiles.skipped << "," << k.cost.flops;
  for (int o = 0; o < kOpKindCount; ++o) out << "," << k.cost.op(OpKind(o));
  out << "," << k.sram_peak_bytes << "," << k.grid_blocks << "," << k.blocks_per_sm << "," << k.waves << "\n";
}

void run_sweep(const Config& base, const SweepArgs& a) {
  const Axis axis = parse_axis(a.over);
  const std::vector<Algo> algos = parse_algo_list("algos", a.algos);
  const std::vector<std::int64_t> values = sweep_values(a.values);
  OutputFile file(a.output);  // fails early on an unwritable path
  std::ostringstream csv;     // nothing is written until every row is computed
  write_header(csv);
  Progress progress(values.size() * algos.size(), kProgressMinRows);
  for (std::int64_t v : values) {
    Config c = base;
    set_axis(c, axis, v);
    const std::string point = to_string(axis) + " = " + std::to_string(v);
    for (Algo algo : algos) {
      const Problem p = resolve_algo(c, algo, "sweep point " + point);
      write_row(csv, axis, v, p, count(p));
      progress.tick(point + ", " + std::string(to_string(algo)));
    }
  }
  file.stream() << csv.str();
  file.commit();
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
  option("--over", args->over, "AXIS", "the axis: n (sets N_q = N_k) | d | br | bc | sram (M, bytes)")->required();
  option("--values", args->values.values, "LIST", "comma-separated values, e.g. 512,1024,2048");
  option("--from", args->values.from, "INT", "first value of a range");
  option("--to", args->values.to, "INT", "last value of a range (included when reached)");
  option("--step", args->values.step, "INT", "linear step of a range");
  cmd->add_flag("--log2", args->values.log2, "double from --from up to --to")->group("Sweep");
  option("--algos", args->algos, "ALGOS", "algorithms: all, or a list of standard, v1, v2 (default all three)");
  option("-o,--output", args->output, "FILE", "CSV file (written to a temporary name, then renamed); default stdout");
  cmd->callback([flags, args] { run_sweep(flags->build(), *args); });
}

}  // namespace flashlab::cli
