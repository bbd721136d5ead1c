// main.cpp — the `flashlab` command: builds the CLI11 app, registers each command, maps errors to
// the exit statuses of commands.hpp: 0 success; 1 diff: the traces differ; 2 bad input
// (flashlab::ConfigError, "flashlab: error: <field> = <value>: <allowed>", or a command-line parse
// error with CLI11's message); 3 numerics out of tolerance (`run`); 4 any other error.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "command_line.hpp"
#include "commands.hpp"
#include "flashlab/contract/error.hpp"

int main(int argc, char** argv) {
  using namespace flashlab::cli;
  CLI::App app{
      "flashlab — how standard attention, FlashAttention V1 and V2 move data: exact HBM traffic, FLOPs,\n"
      "non-matmul work, SRAM and parallelism per configuration, and their numerics.",
      "flashlab"};
  app.require_subcommand(1);

  // The commands, one registration each (declared in commands.hpp), and the rules every value follows.
  register_commands(app, command_line(argc, argv));
  app.footer(kExitStatusHelp);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) sub->footer(kExitStatusHelp);

  try {
    if (argc > 1 && argv[1][0] != '-') {  // an unknown command gets its name in the message
      std::string names;
      bool known = false;
      for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        known = known || sub->get_name() == argv[1];
      }
      if (!known) throw flashlab::ConfigError("command", argv[1], "one of " + names);
    }
    app.parse(argc, argv);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  } catch (const flashlab::ConfigError& e) {
    std::fprintf(stderr, "flashlab: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const CommandFailed& e) {
    std::fprintf(stderr, "flashlab: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "flashlab: error: out of memory (std::bad_alloc)\n");
    return kExitFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flashlab: error: %s\n", e.what());
    return kExitFailed;
  }
}
