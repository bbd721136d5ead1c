// cmd_compare.cpp — `flashlab compare`: standard attention, FlashAttention V1 and V2 side by side
// on one configuration, with the ratios standard/V2 and V1/V2. Default: one Llama-3-8B attention
// layer (32 heads, d = 128) at 8192 tokens, causal, batch 1.
#include <functional>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "algos.hpp"
#include "commands.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/time/time_model.hpp"
#include "grid_line.hpp"
#include "predicted_report.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

struct Column {
  Problem p;
  Counters k;
  TimePrediction t;  // the L2 and time models (time/time_model.hpp)
};

// Lower bounds on time from the GPU preset's datasheet rates (docs/model.md "Presets").
double hbm_seconds(const Column& c) {
  return double(c.k.cost.read_bytes() + c.k.cost.write_bytes()) / c.p.gpu.hbm_bytes_per_s;
}
double matmul_seconds(const Column& c) {
  const double rate = c.p.dtype == Dtype::fp32 ? c.p.gpu.fp32_flops : c.p.gpu.fp16_tensor_flops;
  return double(c.k.cost.flops) / rate;
}
std::uint64_t all_ops(const Counters& k) {
  std::uint64_t s = 0;
  for (int o = 0; o < kOpKindCount; ++o) s += k.cost.op(OpKind(o));
  return s;
}
std::string seconds(double s) { return seconds_text(s); }

// One row of the comparison: its label, its JSON key, its value and how to print it.
struct Row {
  std::string label, key;
  std::function<double(const Column&)> value;
  std::function<std::string(double)> show;
};

std::vector<Row> rows(const GpuSpec& g) {
  const auto bytes = [](double v) { return human_bytes(v); };
  const auto count = [](double v) { return human_count(v); };
  const auto exact = [](double v) { return group_digits(std::uint64_t(v)); };
  return {
      {"HBM read", "hbm_read_bytes", [](const Column& c) { return double(c.k.cost.read_bytes()); }, bytes},
      {"HBM written", "hbm_write_bytes", [](const Column& c) { return double(c.k.cost.write_bytes()); }, bytes},
      {"DRAM read (L2 model)", "dram_read_bytes", [](const Column& c) { return double(c.t.dram_read_bytes); }, bytes},
      {"DRAM written (L2 model)", "dram_write_bytes", [](const Column& c) { return double(c.t.dram_write_bytes); },
       bytes},
      {"HBM read + written", "hbm_total_bytes",
       [](const Column& c) { return double(c.k.cost.read_bytes() + c.k.cost.write_bytes()); }, bytes},
      {"  of which S and P", "hbm_s_p_bytes",
       [](const Column& c) {
         const Cost& k = c.k.cost;
         return double(k.bytes(Tensor::S, Dir::read) + k.bytes(Tensor::S, Dir::write) +
                       k.bytes(Tensor::P, Dir::read) + k.bytes(Tensor::P, Dir::write));
       },
       bytes},
      {"  of which O, l, m re-reads", "hbm_o_l_m_read_bytes",
       [](const Column& c) {
         const Cost& k = c.k.cost;
         return double(k.bytes(Tensor::O, Dir::read) + k.bytes(Tensor::l, Dir::read) +
                       k.bytes(Tensor::m, Dir::read));
       },
       bytes},
      {"matmul FLOPs", "flops_matmul", [](const Column& c) { return double(c.k.cost.flops); }, count},
      {"FLOPs per HBM byte", "flops_per_hbm_byte",
       [](const Column& c) { return double(c.k.cost.flops) / double(c.k.cost.read_bytes() + c.k.cost.write_bytes()); },
       [](double v) { return fmt::format("{:.1f}", v); }},
      {"exp", "ops_exp", [](const Column& c) { return double(c.k.cost.op(OpKind::exp)); }, count},
      {"non-matmul ops, all kinds", "ops_all", [](const Column& c) { return double(all_ops(c.k)); }, count},
      {"tiles visited", "tiles_visited", [](const Column& c) { return double(c.k.tiles.visited); }, exact},
      {"SRAM peak per block", "sram_peak_bytes", [](const Column& c) { return double(c.k.sram_peak_bytes); },
       bytes},
      {"grid blocks", "grid_blocks", [](const Column& c) { return double(c.k.grid_blocks); }, exact},
      {"waves on " + g.name, "grid_waves", [](const Column& c) { return double(c.k.waves); }, exact},
      {fmt::format("HBM time at {:.2f} TB/s", g.hbm_bytes_per_s / 1e12), "hbm_seconds", hbm_seconds, seconds},
      {"matmul time at peak rate", "matmul_seconds", matmul_seconds, seconds},
      {"predicted time (time model)", "predicted_seconds", [](const Column& c) { return c.t.time_s; }, seconds},
      {"predicted TFLOP/s", "predicted_tflops", [](const Column& c) { return c.t.tflops; },
       [](double v) { return fmt::format("{:.1f}", v); }},
  };
}

void print_table(const std::vector<Column>& cols, const std::string& model) {
  const Problem& p = cols.back().p;
  if (!model.empty()) std::cout << model << "\n";
  std::cout << shape_line(p) << "\n";
  // Standard attention has no tile loop (FA1 Algorithm 0): --block-skip changes nothing there.
  std::cout << fmt::format("block skip: V1 {}, V2 {}, standard does not apply (no tile loop) (counts cover all {} "
                           "(batch, head) pairs)\n\n",
                           cols[1].p.block_skip ? "on" : "off", cols[2].p.block_skip ? "on" : "off", p.bh());
  std::cout << fmt::format("{:<30}{:>14}{:>14}{:>14}{:>14}{:>10}\n", "", "standard", "V1", "V2", "standard/V2",
                           "V1/V2");
  for (const Row& r : rows(p.gpu)) {
    const double s = r.value(cols[0]), v1 = r.value(cols[1]), v2 = r.value(cols[2]);
    std::cout << fmt::format("{:<30}{:>14}{:>14}{:>14}{:>14}{:>10}\n", r.label, r.show(s), r.show(v1), r.show(v2),
                             ratio(s, v2), ratio(v1, v2));
  }
  std::cout << fmt::format("{:<30}{:>14}{:>14}{:>14}\n", "bound (time model)", to_string(cols[0].t.bound),
                           to_string(cols[1].t.bound), to_string(cols[2].t.bound));
  std::cout << "\n";
  for (const Column& c : cols)  // 0 waves above: no block fits on an SM, say why
    if (!fits_on_sm(c.k)) std::cout << to_string(c.p.algo) << ": " << grid_line(c.p, c.k) << "\n";
  std::cout << kPapersCountLine << "\n";
  std::cout << "HBM and matmul times are lower bounds from the GPU preset's datasheet rates; the predicted times use "
            << (cols.back().t.ceilings && cols.back().t.ceilings->measured ? "measured" : "datasheet")
            << " ceilings (docs/model.md \"Time model\"); exact counts: flashlab count --algo ALGO --json\n";
}

nlohmann::json to_json(const std::vector<Column>& cols, const std::string& model) {
  nlohmann::json out;
  out["model"] = model;
  for (const Column& c : cols) {
    nlohmann::json a = counters_json(c.k, c.p);
    a["config"] = problem_json(c.p);
    a["predicted"] = predicted_json(c.t);
    out["algos"][std::string(to_string(c.p.algo))] = a;
  }
  for (const Row& r : rows(cols.back().p.gpu)) {
    const double s = r.value(cols[0]), v1 = r.value(cols[1]), v2 = r.value(cols[2]);
    out["ratios"][r.key] = {{"standard/v2", v2 == 0 ? nlohmann::json() : nlohmann::json(s / v2)},
                            {"v1/v2", v2 == 0 ? nlohmann::json() : nlohmann::json(v1 / v2)}};
  }
  return out;
}

}  // namespace

void register_compare(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Standard attention, FlashAttention V1 and V2 side by side with ratios (default: Llama-3-8B layer, "
      "8192 tokens, causal)");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = "llama3-8b"});
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print one JSON object: each algorithm's config and counters, and the ratios");
  cmd->callback([flags, json] {
    const Config c = flags->build();
    std::vector<Column> cols;
    Progress progress("compare", all_algos().size());  // on stderr when it is a terminal and the work is long
    for (Algo a : all_algos()) {
      Problem p = resolve_algo(c, a);
      progress.label(std::string(to_string(a)));
      Modelled m = model_with_progress(p, progress);
      progress.tick();
      cols.push_back({std::move(p), std::move(m.counters), std::move(m.time)});
    }
    progress.clear();
    if (*json)
      std::cout << to_json(cols, flags->model()).dump(2) << "\n";
    else
      print_table(cols, flags->model_description());
  });
}

}  // namespace flashlab::cli
