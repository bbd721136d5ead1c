// cmd_run.cpp — `flashlab run`: the numerics of one (batch, head) — O and L of the chosen
// algorithms against the float64 dense reference, and with --steps the running m and l of one Q
// block after every step.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "algos.hpp"
#include "commands.hpp"
#include "input_flags.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/config/config_json.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "run_inputs.hpp"
#include "run_report.hpp"

namespace flashlab::cli {
namespace {

struct RunArgs {
  std::string algo = "v2", steps, rows = "4", show_rows, out, dO = "random";
  InputFlags in;
  bool json = false, show_rows_given = false;  // --show-rows given, even as ""
};

// The file-name suffix of algorithm q's outputs under --out: none for one algorithm, "_v1" etc. for several.
std::string out_suffix(const std::vector<Problem>& problems, const Problem& q) {
  return problems.size() > 1 ? "_" + std::string(to_string(q.algo)) : "";
}

void print_steps(const Problem& p, std::int64_t block, const std::vector<StatSnapshot>& trace, std::int64_t rows) {
  const std::int64_t r0 = block * p.tiling.b_r, n = p.tiling.rows(block), shown = std::min(rows, n);
  std::cout << fmt::format("\n{}: m and l of Q block {} (rows {}..{}) after every step; rows {}..{} shown{}\n",
                           to_string(p.algo), block, r0, r0 + n - 1, r0, r0 + shown - 1,
                           shown < n ? " (--rows to show more)" : "");
  if (trace.empty()) {
    std::cout << "  (no step of this algorithm holds m and l of this block)\n";
    return;
  }
  std::string head = fmt::format("  {:>5} {:>9} |", "step", "j");
  for (std::int64_t r = 0; r < shown; ++r) head += fmt::format(" {:>11}", fmt::format("m[{}]", r0 + r));
  head += " |";
  for (std::int64_t r = 0; r < shown; ++r) head += fmt::format(" {:>11}", fmt::format("l[{}]", r0 + r));
  std::cout << head << "\n";
  for (const StatSnapshot& s : trace) {
    // a skipped tile (i, j) names its j as skipped: the step saw no key of block j (lab 02)
    const std::string j = s.j < 0 ? std::string("-") : std::to_string(s.j) + (s.skip ? " skipped" : "");
    std::string line = fmt::format("  {:>5} {:>9} |", s.step, j);
    for (std::int64_t r = 0; r < shown; ++r) line += fmt::format(" {:>11.5g}", s.m[std::size_t(r)]);
    line += " |";
    for (std::int64_t r = 0; r < shown; ++r) line += fmt::format(" {:>11.5g}", s.l[std::size_t(r)]);
    std::cout << line << "\n";
  }
}

// What tol O and tol L are, and V1's own rounding when V1 is run (issue 9 item 9: at fine tiles V1's
// expected error is above the dtype's part, and that is the algorithm's, not a fault of the tool).
void print_tolerance_notes(const std::vector<Problem>& problems) {
  const Problem& p = problems.front();
  const double u = unit_roundoff(p.dtype);
  // fp16 and bf16: 4 u (O's store, P~'s cast); fp32: the accumulation over up to 2^20 keys (reference.cpp)
  const std::string covers = p.dtype == Dtype::fp32 ? std::string("fp32 accumulation over up to 2^20 keys")
                                                    : fmt::format("O's store and P~'s cast to {}", to_string(p.dtype));
  const std::string why = fmt::format("{:.0f} u, u = {:.1e}: {}", tolerance(p.dtype) / u, u, covers);
  std::cout << fmt::format("\ntol O: {:.1e} for {} ({}), bounds |O-O_ref|/|O_ref|; ", tolerance(p.dtype),
                           to_string(p.dtype), why)
            << "tol L: per row, 1e-4 + 2^-22 |L_ref| + (d + 2) 2^-24 B (+ u B for standard), B bounding the row's "
               "logits; the row with the largest |dL|/tol L shown (docs/model.md \"Numerics\")\n";
  for (const Problem& q : problems) {
    if (q.algo != Algo::v1) continue;
    const double n = double(v1_rounding_steps(q));
    std::cout << fmt::format("v1: tol O adds u sqrt(n) = {:.1e}: V1 rounds O_i to {} at each of its n = {} steps per "
                             "Q block (FA1 Alg. 1 line 12), an expected error of u sqrt(n)/3 = {:.1e} that is the "
                             "algorithm's own (lab 04)\n",
                             u * std::sqrt(n), to_string(q.dtype), std::int64_t(n), u * std::sqrt(n) / 3);
  }
}

// The backward's errors (--pass backward or both): dQ, dK, dV against the float64 chain rule, one
// line (or one JSON object) per algorithm. Returns whether every algorithm is within tolerance.
bool report_grads(const std::vector<Problem>& problems, const std::vector<NumericResult>& results,
                  const GradReference& ref, bool json, nlohmann::json& out, const std::string& model) {
  bool all = true;
  if (!json)
    std::cout << fmt::format("\nbackward ({}): dQ, dK, dV against the float64 chain rule (FA1 App. B.2)\n{:<10}{:>20}{:>20}{:>20}"
                             "{:>14}{:>8}{:>10}{:>8}\n",
                             "standard FA1 Alg. 3, v1 FA1 Alg. 4, v2 FA2 Alg. 2 as " +
                                 std::string(problems.front().backward_form == BackwardForm::released ? "FA2's kernels run it"
                                             : problems.front().backward_form == BackwardForm::deterministic
                                                 ? "FA2's kernels run it, deterministic"
                                                 : "the paper prints it"),
                             "algo", "|dQ-ref|/|ref|", "|dK-ref|/|ref|", "|dV-ref|/|ref|", "max|D-D_ref|", "finite",
                             "tol", "result");
  for (std::size_t k = 0; k < problems.size(); ++k) {
    const Problem& p = problems[k];
    const GradError e = compare_grads(results[k], ref, p);
    all = all && e.within;
    const std::string name(to_string(p.algo));
    if (json) {
      out["results"][name]["backward"] = {{"rel_fro_dQ", e.rel_fro_dQ}, {"rel_fro_dK", e.rel_fro_dK},
                                          {"rel_fro_dV", e.rel_fro_dV}, {"max_abs_D", e.max_abs_D},
                                          {"finite", e.finite},         {"within", e.within},
                                          {"tolerance", e.tol}};
      (void)model;
    } else {
      std::cout << fmt::format("{:<10}{}{}{}{}{:>8}{:>10.1e}{:>8}\n", name, error_text(e.rel_fro_dQ, 20),
                               error_text(e.rel_fro_dK, 20), error_text(e.rel_fro_dV, 20), error_text(e.max_abs_D, 14),
                               e.finite ? "yes" : "NO", e.tol, e.within ? "ok" : "FAIL");
    }
  }
  if (!json)
    std::cout << fmt::format("tol: {} (u = {:.1e}), plus u sqrt(n) for v1 and v2's paper form, which round dQ_i to {} "
                             "at each of n steps (docs/model.md \"Backward pass\")\n",
                             problems.front().dtype == Dtype::fp32 ? std::string("1e-4 for fp32")
                                                                   : fmt::format("8 u = {:.1e}", 8 * unit_roundoff(problems.front().dtype)),
                             unit_roundoff(problems.front().dtype), to_string(problems.front().dtype));
  return all;
}

// The Q block --steps traces (-1: none), checked against T_r.
std::int64_t traced_block(const RunArgs& a, const Problem& first) {
  std::int64_t block = -1;
  if (!a.steps.empty()) {
    const std::int64_t t_r = first.tiling.t_r();
    block = parse_int("steps", a.steps, fmt::format("a Q block index from 0 to {} (T_r - 1)", t_r - 1));
    if (block < 0 || block >= t_r)
      throw ConfigError("steps", a.steps, fmt::format("a Q block index from 0 to {} (T_r - 1)", t_r - 1));
  }
  return block;
}

// The table's head: the shape, the inputs and the column names of the forward's errors.
void print_run_header(const std::vector<Problem>& problems, const RunArgs& a, std::uint64_t seed, bool backward) {
  std::cout << shape_line(problems.front());
  if (const Problem& p = problems.front(); p.splits > 1)  // every algorithm run here splits alike (v2 only)
    std::cout << fmt::format("; split-KV, {} splits", p.splits);
  if (problems.front().kernel == Kernel::fa2) std::cout << "; kernel fa2";
  for (const Problem& p : problems)  // an algorithm on a tile of its own (V3: FA3's tile for d)
    if (const Tiling& t = p.tiling; t.b_r != problems.front().tiling.b_r || t.b_c != problems.front().tiling.b_c)
      std::cout << fmt::format("; {}: B_r = {}, B_c = {} -> T_r = {}, T_c = {}", to_string(p.algo), t.b_r, t.b_c, t.t_r(),
                               t.t_c());
  std::cout << "\n";
  std::cout << fmt::format("inputs Q {}, K {}, V {}{}, seed {}; one (batch, head); reference: float64 dense\n\n",
                           a.in.q, a.in.k, a.in.v, backward ? ", dO " + a.dO : "", seed);
  std::cout << fmt::format("{:<10}{:>14}{:>20}{:>14}{:>8}{:>10}{:>10}{:>8}\n", "algo", "max|O-O_ref|",
                           "|O-O_ref|/|O_ref|", "max|L-L_ref|", "finite", "tol O", "tol L", "result");
}

// The forward's errors of one algorithm: O and L against the float64 reference, one table line
// (or one JSON object under out["results"]). Returns whether they are within tolerance.
bool report_forward(const Problem& p, const NumericResult& r, const Reference& ref, bool json, nlohmann::json& out,
                    const std::string& model) {
  const NumericError e = shown_error(r, ref, compare(r, ref, p));
  const std::string name(to_string(p.algo));
  if (json) {
    out["results"][name] = {{"max_abs_O", e.max_abs_O}, {"rel_fro_O", e.rel_fro_O},
                            {"max_abs_L", e.max_abs_L}, {"L_over_tol", e.L_over_tol},
                            {"finite", e.finite},       {"within", e.within},
                            {"tolerance_O", e.tol_O},   {"tolerance_L", e.tol_L},
                            {"config", config_json(p, model)}};
    if (p.algo == Algo::v1) out["results"][name]["v1_rounding_steps"] = v1_rounding_steps(p);
  } else {
    std::cout << fmt::format("{:<10}{}{}{}{:>8}{:>10.1e}{:>10.1e}{:>8}\n", name, error_text(e.max_abs_O, 14),
                             error_text(e.rel_fro_O, 20), error_text(e.max_abs_L, 14), e.finite ? "yes" : "NO",
                             e.tol_O, e.tol_L, e.within ? "ok" : "FAIL");
  }
  return e.within;
}

// --steps: m and l of Q block `block` after every step, per algorithm (a table of `rows` rows, or
// JSON under out["steps"]).
void report_steps(const std::vector<Problem>& problems, const std::vector<NumericResult>& results, std::int64_t block,
                  std::int64_t rows, bool json, nlohmann::json& out) {
  for (std::size_t k = 0; k < problems.size(); ++k) {
    if (json) {
      nlohmann::json steps = nlohmann::json::array();
      for (const StatSnapshot& s : results[k].traces.front())
        steps.push_back({{"step", s.step}, {"j", s.j}, {"skip", s.skip}, {"m", s.m}, {"l", s.l}});
      out["steps"][std::string(to_string(problems[k].algo))] = steps;
    } else {
      print_steps(problems[k], block, results[k].traces.front(), rows);
    }
  }
}

// --out DIR: O and L of every algorithm as .npy files, all or none (run_inputs.hpp), listed on
// stdout and under out["files"].
void write_out_files(const RunArgs& a, const std::vector<Problem>& problems, const std::vector<NumericResult>& results,
                     bool out_created, nlohmann::json& out) {
  std::vector<OutFile> written;
  for (std::size_t k = 0; k < problems.size(); ++k)
    for (OutFile& f : run_output_files(a.out, out_suffix(problems, problems[k]), problems[k], results[k]))
      written.push_back(std::move(f));
  write_run_outputs(a.out, out_created, written);
  nlohmann::json files = nlohmann::json::array();
  for (const OutFile& f : written) {
    files.push_back(f.first);
    if (!a.json) std::cout << "wrote " << f.first << "\n";
  }
  if (!a.json) std::cout << fmt::format("(O at the input dtype {}, L in fp32)\n", to_string(problems.front().dtype));
  out["files"] = files;
}

void run_numerics(const Config& c, const std::string& model, const RunArgs& a) {
  const std::vector<Algo> algos = parse_algo_list("algo", a.algo);
  std::vector<Problem> problems;
  for (Algo algo : algos) problems.push_back(resolve_algo(with_algo(c, algo, algos), algo));  // the form is V2's
  for (const Problem& p : problems) check_numerics_size(p);
  NumericsOptions opt;
  const std::int64_t block = traced_block(a, problems.front());
  if (block >= 0) opt.trace_blocks = {block};
  const std::int64_t rows = parse_int("rows", a.rows, "an integer >= 1");
  if (rows < 1) throw ConfigError("rows", a.rows, "an integer >= 1");
  const std::uint64_t seed = a.in.spec().seed;
  const std::vector<std::int64_t> shown_rows =
      !a.show_rows_given ? std::vector<std::int64_t>{} : parse_rows(a.show_rows, problems.front().tiling.n_q);
  const Problem& first = problems.front();
  const bool backward = first.backward();
  const Inputs in = make_run_inputs(first, a.in.q, a.in.k, a.in.v, a.dO, seed);  // fills or .npy files
  bool out_created = false;  // whether --out DIR was made by this run (removed again if nothing lands in it)
  if (!a.out.empty()) {  // inputs checked, before any work: a run never computes what it cannot write
    std::vector<std::string> suffixes;
    for (const Problem& q : problems) suffixes.push_back(out_suffix(problems, q));
    out_created = prepare_out_dir(a.out, suffixes, backward);
  }
  Progress progress("run", 1 + problems.size());  // on stderr when it is a terminal and the work is long
  progress.label("float64 reference");
  const Reference ref = reference(problems.front(), in);
  const GradReference grad_ref = backward ? grad_reference(first, in) : GradReference{};
  progress.tick();
  progress.clear();
  nlohmann::json out;
  bool all_within = true;
  if (!a.json) print_run_header(problems, a, seed, backward);
  std::vector<NumericResult> results;
  for (const Problem& p : problems) {
    progress.label(std::string(to_string(p.algo)));
    results.push_back(simulate_with_progress(p, in, opt, progress));
    progress.tick();
    progress.clear();
    all_within = report_forward(p, results.back(), ref, a.json, out, model) && all_within;
  }
  if (!a.json) print_tolerance_notes(problems);
  if (backward) all_within = report_grads(problems, results, grad_ref, a.json, out, model) && all_within;
  for (std::size_t k = 0; k < problems.size() && !shown_rows.empty(); ++k) {
    const std::string name(to_string(problems[k].algo));
    if (a.json) out["rows"][name] = rows_json(results[k], shown_rows, backward);
    else print_rows(name, results[k], shown_rows, backward);
  }
  if (block >= 0) report_steps(problems, results, block, rows, a.json, out);
  if (!a.out.empty()) write_out_files(a, problems, results, out_created, out);
  if (a.json) {
    out["inputs"] = {{"q", a.in.q}, {"k", a.in.k}, {"v", a.in.v}, {"seed", seed}};  // as in a trace header
    if (backward) out["inputs"]["do"] = a.dO;
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
  cmd->add_option("--algo", args->algo, "standard | v1 | v2 | v3 | all (the first three), or a list such as v1,v2 (default v2)")
      ->type_name("ALGOS");
  add_input_flags(*cmd, args->in, "Inputs");
  // run also reads the inputs from .npy files (run_inputs.hpp), and writes O and L to --out.
  cmd->get_option("--q")->description(
      "Q input: random | zero | index (row r holds r) | a number (default random) | FILE.npy, your own (N_q, d) "
      "tensor of the dtype ('<f2' fp16, '<u2' bf16 bits, '<f4' fp32)");
  cmd->get_option("--k")->description("K input, as --q; a file holds (N_k, d)");
  cmd->get_option("--v")->description("V input, as --k");
  cmd->add_option("--do", args->dO,
                  "dO, the backward's input (with --pass backward or both): a fill as --q or FILE.npy of (N_q, d) "
                  "(default random)")
      ->type_name("FILL")
      ->group("Inputs");
  cmd->add_option("--out", args->out,
                  "write O (at the input dtype) and L (fp32) to DIR as O.npy and L.npy (several algorithms: "
                  "O_<algo>.npy, L_<algo>.npy); DIR is created if missing; all the files are written or none")
      ->type_name("DIR")
      ->group("Inputs");
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
  cmd->callback([flags, args, show_rows, cmd] {
    args->show_rows_given = show_rows->count() > 0;
    const Config c = flags->build();
    if (cmd->get_option("--rows")->count() > 0 && cmd->get_option("--steps")->count() == 0)
      throw ConfigError("rows", args->rows, "no value without --steps (--rows is how many rows of the Q block --steps I prints)");
    if (cmd->get_option("--do")->count() > 0 && c.pass == Pass::forward)
      throw ConfigError("do", args->dO, "no value with --pass forward (dO is the backward's input: --pass backward or both)");
    run_numerics(c, flags->model(), *args);
  });
}

}  // namespace flashlab::cli
