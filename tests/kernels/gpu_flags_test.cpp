// flashlab-gpu's command line (kernels/host/command_line.hpp), parsed in-process (no GPU touched):
// every flag listed from the app main.cpp builds — the program's and a --configs line's — refuses
// an empty value naming the flag, the rule of every flashlab program (flags/values.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command_line.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/flags/values.hpp"

using namespace flashlab;

namespace {

// The message parsing `flag ""` gives, or "(accepted)".
template <class Flags, class Add>
std::string empty_value_error(const std::string& flag, Add add) {
  CLI::App app{"flashlab-gpu", "flashlab-gpu"};
  Flags flags;
  add(app, flags);
  try {
    app.parse(std::vector<std::string>{"", flag});  // CLI11 parses a reversed vector
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const CLI::Error& e) {
    return std::string("CLI11: ") + e.what();
  }
  return "(accepted)";
}

template <class Flags, class Add>
void walk(Add add) {
  CLI::App app{"flashlab-gpu", "flashlab-gpu"};
  Flags flags;
  add(app, flags);
  const std::vector<CLI::Option*> options = cli::value_options(app);
  CHECK(options.size() > 25);
  for (CLI::Option* opt : options) {
    const std::string flag = cli::flag_spelling(*opt);
    CAPTURE(flag);
    CHECK(empty_value_error<Flags>(flag, add).rfind(opt->get_single_name() + " = \"\": a non-empty value", 0) == 0);
  }
}

}  // namespace

TEST_CASE("flashlab-gpu: every flag, and every flag of a --configs line, refuses an empty value") {
  walk<gpu::ProgramFlags>([](CLI::App& app, gpu::ProgramFlags& f) { gpu::add_program_flags(app, f); });
  walk<gpu::RunFlags>([](CLI::App& app, gpu::RunFlags& f) { gpu::add_line_flags(app, f); });
}
