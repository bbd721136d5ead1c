// cmd_diff.cpp — `flashlab diff A B`: two traces of one config compared launch by launch, block by
// block and step by step. Exit 0 when they agree, 1 when they differ, 2 for files that are not
// readable regular trace files or traces of different configs (commands.hpp ExitStatus).
#include <cmath>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "flashlab/trace/diff.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/trace/trace_io.hpp"

namespace flashlab::cli {
namespace {

struct DiffArgs {
  std::string a, b, tol, context = "3";
};

void run_diff(const DiffArgs& args) {
  DiffOptions opt;
  if (!args.tol.empty()) {
    const std::string allowed = "a relative tolerance >= 0 (decimal and finite), e.g. 1e-3";
    const double tol = parse_number("tol-ml", args.tol, allowed);
    if (tol < 0) throw ConfigError("tol-ml", args.tol, allowed);
    opt.tol_ml = tol;
  }
  const std::int64_t context = parse_int("context", args.context, "an integer from 0 to 1000");
  if (context < 0 || context > 1000) throw ConfigError("context", args.context, "an integer from 0 to 1000");
  opt.context = std::size_t(context);
  const Trace a = read_trace(args.a), b = read_trace(args.b);
  const DiffResult r = diff_traces(a, b, opt);
  std::cout << format_diff(r, args.a, args.b);
  if (!r.agree()) throw CommandFailed(kExitDiffer, "the traces differ");
}

}  // namespace

void register_diff(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two traces of one config step by step: first divergence, differing events, m and l");
  auto args = std::make_shared<DiffArgs>();
  cmd->add_option("A", args->a, "first trace file (text or binary)")->required()->type_name("FILE");
  cmd->add_option("B", args->b, "second trace file")->required()->type_name("FILE");
  cmd->add_option("--tol-ml", args->tol,
                  "relative tolerance on m and l (default by dtype: fp32 1e-5, fp16 1e-3, bf16 8e-3)")
      ->type_name("X");
  cmd->add_option("--context", args->context, "events shown before the first divergence (default 3)")
      ->type_name("N");
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace flashlab::cli
