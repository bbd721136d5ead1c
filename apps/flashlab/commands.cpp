// commands.cpp — every `flashlab` command on one app, with the value rules every flag follows.
#include "commands.hpp"

#include "flashlab/flags/values.hpp"
#include "progress.hpp"

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
  register_timeline(app);
  // the commands that report progress on long work (progress.hpp) can be silenced
  for (const char* name : {"count", "compare", "explain", "run", "sweep", "trace"})
    app.get_subcommand(name)->add_flag("--quiet", quiet_progress(),
                                       "no progress on stderr (by default: a bar on a terminal, a line every 10 s "
                                       "elsewhere, for work longer than a second)");
  refuse_empty_values(app);  // after every option exists: the rule covers each one
}

}  // namespace flashlab::cli
