// commands.cpp — every `flashlab` command on one app, with the value rules every flag follows.
#include "commands.hpp"

#include "flashlab/flags/values.hpp"

namespace flashlab::cli {

void register_commands(CLI::App& app, const std::string& command) {
  register_count(app);
  register_compare(app);
  register_explain(app);
  register_run(app);
  register_sweep(app);
  register_trace(app, command);
  register_diff(app);
  register_metrics(app);
  refuse_empty_values(app);  // after every option exists: the rule covers each one
}

}  // namespace flashlab::cli
