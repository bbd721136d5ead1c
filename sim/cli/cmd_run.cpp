// cmd_run.cpp — `flashlab run`: the numerics of one (batch, head) — O and L of the chosen
// algorithms against the float64 dense reference, and with --steps the running m and l of one Q
// block after every step.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "algos.hpp"
#include "commands.hpp"
#include "input_flags.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "report.hpp"
#include "run_report.hpp"

namespace flashlab::cli {
namespace {

struct RunArgs {
  std::string algo = "v2", steps, rows = "4", show_rows;
  InputFlags in;
  bool json = false, show_rows_given = false;  // --show-rows given, even as ""
};

void print_steps(const Problem& p, std::int64_t block, const std::vector<StatSnapshot>& trace, std::int64_t rows) {
  const std::int64_t r0 = block * p.tiling.b_r, n = p.tiling.rows(block), shown = std::min(rows, n);
  std::cout << fmt::format("\n{}: m and l of Q block {} (rows {}..{}) after every step; rows {}..{} shown{}\n",
                           to_string(p.algo), block, r0, r0 + n - 1, r0, r0 + shown - 1,
                           shown < n ? " (--rows to show more)" : "");
  if (trace.empty()) {
    std::cout << "  (no step of this algorithm holds m and l of this block)\n";
    return;
  }
  std::string head = fmt::format("  {:>5} {:>5} |", "step", "j");
  for (std::int64_t r = 0; r < shown; ++r) head += fmt::format(" {:>11}", fmt::format("m[{}]", r0 + r));
  head += " |";
  for (std::int64_t r = 0; r < shown; ++r) head += fmt::format(" {:>11}", fmt::format("l[{}]", r0 + r));
  std::cout << head << "\n";
  for (const StatSnapshot& s : trace) {
    std::string line = fmt::format("  {:>5} {:>5} |", s.step, s.j < 0 ? std::string("-") : std::to_string(s.j));
    for (std::int64_t r = 0; r < shown; ++r) line += fmt::format(" {:>11.5g}", s.m[std::size_t(r)]);
    line += " |";
    for (std::int64_t r = 0; r < shown; ++r) line += fmt::format(" {:>11.5g}", s.l[std::size_t(r)]);
    std::cout << line << "\n";
  }
}

void run_numerics(const Config& c, const std::string& model, const RunArgs& a) {
  const std::vector<Algo> algos = parse_algo_list("algo", a.algo);
  std::vector<Problem> problems;
  for (Algo algo : algos) problems.push_back(resolve_algo(c, algo));
  check_numerics_size(problems.front());
  NumericsOptions opt;
  std::int64_t block = -1;
  if (!a.steps.empty()) {
    const std::int64_t t_r = problems.front().tiling.t_r();
    block = parse_int("steps", a.steps, fmt::format("a Q block index from 0 to {} (T_r - 1)", t_r - 1));
    if (block < 0 || block >= t_r)
      throw ConfigError("steps", a.steps, fmt::format("a Q block index from 0 to {} (T_r - 1)", t_r - 1));
    opt.trace_blocks = {block};
  }
  const std::int64_t rows = parse_int("rows", a.rows, "an integer >= 1");
  if (rows < 1) throw ConfigError("rows", a.rows, "an integer >= 1");
  const std::uint64_t seed = a.in.spec().seed;
  const Dtype dtype = problems.front().dtype;
  const Fill fq = parse_fill("q", a.in.q, dtype), fk = parse_fill("k", a.in.k, dtype), fv = parse_fill("v", a.in.v, dtype);

  const std::vector<std::int64_t> shown_rows =
      !a.show_rows_given ? std::vector<std::int64_t>{} : parse_rows(a.show_rows, problems.front().tiling.n_q);

  const Inputs in = make_inputs(problems.front(), fq, fk, fv, seed);
  const Reference ref = reference(problems.front(), in);
  nlohmann::json out;
  bool all_within = true;
  if (!a.json) {
    std::cout << shape_line(problems.front()) << "\n";
    std::cout << fmt::format("inputs Q {}, K {}, V {}, seed {}; one (batch, head); reference: float64 dense\n\n",
                             a.in.q, a.in.k, a.in.v, seed);
    std::cout << fmt::format("{:<10}{:>14}{:>20}{:>14}{:>8}{:>10}{:>10}{:>8}\n", "algo", "max|O-O_ref|",
                             "|O-O_ref|/|O_ref|", "max|L-L_ref|", "finite", "tol O", "tol L", "result");
  }
  std::vector<NumericResult> results;
  for (const Problem& p : problems) {
    results.push_back(simulate(p, in, opt));
    const NumericError e = shown_error(results.back(), ref, compare(results.back(), ref, p.algo));
    all_within = all_within && e.within;
    const std::string name(to_string(p.algo));
    if (a.json) {
      out["results"][name] = {{"max_abs_O", e.max_abs_O}, {"rel_fro_O", e.rel_fro_O},
                              {"max_abs_L", e.max_abs_L}, {"finite", e.finite},
                              {"within", e.within},       {"tolerance_O", tolerance(p.dtype)},
                              {"tolerance_L", tolerance_L(p.dtype, p.algo)},
                              {"config", config_json(p, model)}};
    } else {
      std::cout << fmt::format("{:<10}{}{}{}{:>8}{:>10.1e}{:>10.1e}{:>8}\n", name, error_text(e.max_abs_O, 14),
                               error_text(e.rel_fro_O, 20), error_text(e.max_abs_L, 14), e.finite ? "yes" : "NO",
                               tolerance(p.dtype), tolerance_L(p.dtype, p.algo), e.within ? "ok" : "FAIL");
    }
  }
  for (std::size_t k = 0; k < problems.size() && !shown_rows.empty(); ++k) {
    const std::string name(to_string(problems[k].algo));
    if (a.json) out["rows"][name] = rows_json(results[k], shown_rows);
    else print_rows(name, results[k], shown_rows);
  }
  if (block >= 0)
    for (std::size_t k = 0; k < problems.size(); ++k) {
      if (a.json) {
        nlohmann::json steps = nlohmann::json::array();
        for (const StatSnapshot& s : results[k].traces.front())
          steps.push_back({{"step", s.step}, {"j", s.j}, {"m", s.m}, {"l", s.l}});
        out["steps"][std::string(to_string(problems[k].algo))] = steps;
      } else {
        print_steps(problems[k], block, results[k].traces.front(), rows);
      }
    }
  if (a.json) {
    out["inputs"] = {{"q", a.in.q}, {"k", a.in.k}, {"v", a.in.v}, {"seed", seed}};  // as in a trace header
    std::cout << out.dump(2) << "\n";
  }
  if (!all_within) throw CommandFailed(kExitTolerance, "numerics out of tolerance (see the result column)");
}

}  // namespace

void register_run(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "run", "Numerics of one (batch, head): O and L against a float64 reference; --steps I shows m and l");
  auto flags = add_config_flags(*cmd, ConfigFlagOptions{.algo = false, .default_model = ""});
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("--algo", args->algo, "standard | v1 | v2 | all, or a list such as v1,v2 (default v2)")
      ->type_name("ALGOS");
  add_input_flags(*cmd, args->in, "Inputs");
  cmd->add_option("--steps", args->steps, "print m and l after every step for Q block I")
      ->type_name("I")
      ->group("Steps");
  cmd->add_option("--rows", args->rows, "rows of the block printed by --steps (default 4)")
      ->type_name("R")
      ->group("Steps");
  CLI::Option* show_rows = cmd->add_option("--show-rows", args->show_rows,
                  "print O[r][0..min(d,8)) and L[r] of these rows for each algorithm (JSON: \"rows\"; inf/nan as null)")
      ->type_name("R1,R2")
      ->group("Inputs");
  cmd->add_flag("--json", args->json, "print one JSON object instead of the tables");
  cmd->callback([flags, args, show_rows] {
    args->show_rows_given = show_rows->count() > 0;
    run_numerics(flags->build(), flags->model(), *args);
  });
}

}  // namespace flashlab::cli
