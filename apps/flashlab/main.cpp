// main.cpp — the `flashlab` command: builds the CLI11 app, registers each command, maps errors to
// the exit statuses of commands.hpp: 0 success; 1 diff: the traces differ; 2 bad input
// (flashlab::ConfigError, "flashlab: error: <field> = <value>: <allowed>", or a command-line parse
// error in the same form: an unknown flag, a stray value, a flag without its value or given twice, a
// missing one; CLI11's own message for the rare others); 3 numerics out of tolerance (`run`); 4 an output that could not be
// written (standard output is checked after every command, standard_output.hpp) or any other error;
// 130, 143 (129) when SIGINT, SIGTERM (SIGHUP) stop it, 4 for SIGXFSZ, the output temporaries removed
// first (trace/temp_files.hpp).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command_line.hpp"
#include "commands.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/trace/temp_files.hpp"
#include "standard_output.hpp"

namespace {

// A message as it may reach a terminal: it can quote bytes of a corrupted input file or argument
// (a trace's field, a header key), so control bytes other than newline and tab, and bytes that are
// not valid UTF-8, are written \xNN; a terminal escape sequence is shown, never obeyed.
std::string printable(const char* text) {
  const std::string s(text);
  std::string out;
  const auto hex = [&out](unsigned char b) {
    static const char digits[] = "0123456789abcdef";
    out += "\\x";
    out += digits[b >> 4];
    out += digits[b & 15];
  };
  for (std::size_t k = 0; k < s.size();) {
    const auto b = static_cast<unsigned char>(s[k]);
    if (b < 0x80) {
      if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7f) hex(b);
      else out += char(b);
      ++k;
      continue;
    }
    // a UTF-8 sequence: a lead byte C2-F4, then 1-3 continuation bytes 80-BF
    const std::size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    bool ok = n > 0 && k + n <= s.size();
    for (std::size_t c = 1; ok && c < n; ++c) ok = (static_cast<unsigned char>(s[k + c]) & 0xC0) == 0x80;
    if (ok) {
      out.append(s, k, n);
      k += n;
    } else {
      hex(b);
      ++k;
    }
  }
  return out;
}

// The command that was parsed (the deepest subcommand given), or the app itself.
const CLI::App& parsed_command(const CLI::App& app) {
  const CLI::App* where = &app;
  for (const CLI::App* sub : app.get_subcommands()) where = sub;
  return *where;
}

// Edit distance (insertions, deletions, substitutions) of two short words, for a flag's "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The house form of CLI11's "The following arguments were not expected: 5 --Nq": the first word
// left over, what it is not, and the nearest flags of the command (same letters in another case, or
// else one edit away): "flag = --Nq: not a flag of flashlab count; did you mean --nq? (...)".
std::string unexpected_message(const CLI::App& app, const CLI::ExtrasError& e) {
  const CLI::App* where = &parsed_command(app);
  const std::vector<std::string> left = where->remaining();
  if (left.empty()) return std::string(e.what()) + " (flashlab COMMAND --help lists the flags)";
  const auto flag = std::find_if(left.begin(), left.end(), [](const std::string& w) { return w.size() > 1 && w[0] == '-'; });
  const std::string name = where == &app ? "flashlab" : "flashlab " + where->get_name();
  const std::string help = name + (where == &app ? " --help lists the commands" : " --help lists the flags");
  if (flag == left.end())
    return "argument = " + left.front() + ": not expected by " + name + " (values follow their flag, e.g. --seq 1024; " +
           help + ")";
  const std::string word = flag->substr(0, flag->find('='));
  const auto lower = [](std::string w) {
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return w;
  };
  std::string nearest;  // every flag at the least distance (0: the same letters in another case), at most 1
  std::size_t best = 2;
  for (const CLI::Option* o : where->get_options())
    for (const std::string& l : o->get_lnames()) {
      const std::string candidate = "--" + l;
      const std::size_t d = lower(candidate) == lower(word) ? 0 : edit_distance(candidate, word);
      if (d > 1) continue;
      if (d < best) nearest.clear(), best = d;
      if (d == best) nearest += (nearest.empty() ? "" : " or ") + candidate;
    }
  return "flag = " + *flag + ": not a flag of " + name + (nearest.empty() ? "" : "; did you mean " + nearest + "?") +
         " (" + help + ")";
}

// The house form of CLI11's "--nq: 1 required INT missing" (a flag without its value), "--nq: At
// Most 1 required but received 2" (a flag given twice) and "A is required" / "--over is required":
// "nq = (missing): a value after --nq (INT) ...", "nq = 5 and 6: --nq given once ...",
// "over = (missing): --over AXIS is required ...", and `flashlab` alone: "command = (missing): one
// of count, ...". Other messages keep CLI11's text.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& where = parsed_command(app);
  const std::string name = &where == &app ? "flashlab" : "flashlab " + where.get_name();
  const std::string help = " (" + name + " --help lists the flags)";
  const std::string what = e.what();
  const std::size_t colon = what.find(": ");
  const std::string suffix = " is required";
  std::string flag;
  if (colon != std::string::npos && what.rfind("--", 0) == 0) flag = what.substr(0, colon);
  else if (what.size() > suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0 &&
           what.find(' ') == what.size() - suffix.size())
    flag = what.substr(0, what.size() - suffix.size());  // "A is required", "--over is required"
  if (&where == &app && what == "A subcommand is required") {  // `flashlab` alone
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    return "command = (missing): one of " + names + " (flashlab --help says what each does)";
  }
  const CLI::Option* o = flag.empty() ? nullptr : where.get_option_no_throw(flag);
  if (o == nullptr) return what + help;
  const std::string field = flag.rfind("--", 0) == 0 ? flag.substr(2) : flag;
  if (what.find(" is required") != std::string::npos)
    return field + " = (missing): " +
           (flag.rfind("--", 0) == 0 ? flag + " " + o->get_type_name() + " is required"
                                     : o->get_type_name() + ", " + o->get_description() + ", is required") +
           help;
  if (what.find("At Most") != std::string::npos) {
    std::string values;
    for (const std::string& v : o->results()) values += (values.empty() ? "" : " and ") + v;
    return field + " = " + (values.empty() ? "(several)" : values) + ": " + flag + " given once" + help;
  }
  if (what.find(" missing") != std::string::npos)
    return field + " = (missing): a value after " + flag + " (" + o->get_type_name() + ")" + help;
  return what + help;
}

// The message of an output that could not be written, and its exit status.
int output_failed(const flashlab::cli::OutputFailed& e) {
  std::fprintf(stderr, "flashlab: error: %s\n", printable(e.what()).c_str());
  return e.exit_code();
}

// After a command ran (or --help or --version printed), standard output must have taken it all:
// a failed write outranks the command's own status (a `run` FAIL or a `diff` "differ" that the
// user never saw is an output failure first).
int checked_exit(int code) {
  try {
    flashlab::cli::check_standard_output();
    return code;
  } catch (const flashlab::cli::OutputFailed& e) {
    return output_failed(e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flashlab::cli;
  install_standard_output();
  flashlab::remove_temps_on_signals("flashlab", kExitFailed);  // Ctrl-C mid-output leaves no temporary
  CLI::App app{
      "flashlab — how standard attention and FlashAttention V1, V2 and V3 (--algo standard|v1|v2|v3; V3:\n"
      "FA3's Hopper schedule, with count, run and trace) move data: exact HBM traffic, FLOPs, non-matmul\n"
      "work, SRAM and parallelism per configuration, and their numerics.",
      "flashlab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "flashlab " FLASHLAB_VERSION, "print the version (flashlab X.Y.Z) and exit");

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
    return checked_exit(kExitOk);
  } catch (const CLI::ExtrasError& e) {  // a word no flag took: an unknown flag, or a stray value
    std::fprintf(stderr, "flashlab: error: %s\n", printable(unexpected_message(app, e).c_str()).c_str());
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    // --help and --version print to standard output and give 0
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? checked_exit(kExitOk) : kExitBadInput;
    // any other parse error (a flag given twice, one without its value, a missing one) in the house form
    std::fprintf(stderr, "flashlab: error: %s\n", printable(parse_error_message(app, e).c_str()).c_str());
    return kExitBadInput;
  } catch (const flashlab::ConfigError& e) {
    std::fprintf(stderr, "flashlab: error: %s\n", printable(e.what()).c_str());
    return kExitBadInput;
  } catch (const OutputFailed& e) {
    return output_failed(e);
  } catch (const CommandFailed& e) {
    const int code = checked_exit(e.exit_code());
    if (code == e.exit_code()) std::fprintf(stderr, "flashlab: %s\n", printable(e.what()).c_str());
    return code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "flashlab: error: out of memory (std::bad_alloc)\n");
    return kExitFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flashlab: error: %s\n", printable(e.what()).c_str());
    return kExitFailed;
  }
}
