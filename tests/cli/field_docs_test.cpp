// The configuration flags and their documentation (flashlab/config/field_docs.hpp, issue 26): the
// flag table (flags/config_flags.cpp) and the doc table name the same fields, each documented choice
// is a value its flag accepts, and `--help` shows each field's documentation on its flag's line.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flashlab/config/field_docs.hpp"
#include "flashlab/flags/config_flags.hpp"
#include "run_cli.hpp"

using namespace flashlab;

namespace {

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += " " + n;
  return s;
}

// The elements of `a` that are not in `b`.
std::set<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const auto& x : a)
    if (!b.count(x)) out.insert(x);
  return out;
}

// The values an `allowed` text lists: "none | causal (top-left) | window:LEFT,RIGHT" ->
// none, causal, window:3,4 (a form with LEFT,RIGHT filled in); "an integer ..., or auto" -> auto;
// nothing for a text that lists no names.
std::vector<std::string> listed_values(const std::string& allowed) {
  std::vector<std::string> out;
  if (allowed.rfind("an integer", 0) == 0 || allowed.rfind("a number", 0) == 0) {
    if (allowed.size() >= 9 && allowed.compare(allowed.size() - 9, 9, ", or auto") == 0) out.push_back("auto");
    return out;
  }
  std::size_t start = 0;
  while (start <= allowed.size()) {
    std::size_t end = allowed.find(" | ", start);
    if (end == std::string::npos) end = allowed.size();
    std::string value = allowed.substr(start, end - start);
    value = value.substr(0, value.find(' '));  // "causal (top-left)" -> "causal"
    if (value == "window:LEFT,RIGHT") value = "window:3,4";
    out.push_back(value);
    start = end + 3;
  }
  return out;
}

// The `--help` lines of the configuration flags: flag -> the text after its value's name.
std::vector<std::pair<std::string, std::string>> help_lines(const std::string& help) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  --", 0) != 0) continue;
    std::istringstream words(line);
    std::string flag, type;
    words >> flag >> type;
    std::string text;
    std::getline(words, text);
    out.emplace_back(flag, text.substr(text.find_first_not_of(' ')));
  }
  return out;
}

}  // namespace

TEST_CASE("every flag of the flag table has a field doc, and every field doc names a flag") {
  // the flag table's names, as build_config() knows them (no help text is read to list them)
  std::set<std::string> table_flags{"--model"};  // --model is added beside the table
  for (const std::string& field : cli::config_flag_fields()) table_flags.insert("--" + field);
  std::set<std::string> doc_flags;
  for (const FieldDoc& d : field_docs()) doc_flags.insert(d.flag);
  INFO("flags without a doc:", joined(minus(table_flags, doc_flags)));
  INFO("docs naming no flag:", joined(minus(doc_flags, table_flags)));
  CHECK(table_flags == doc_flags);
  CHECK(table_flags.size() == 31);  // V3 added five

  // the options a command gets (add_config_flags), those --help lists: the same set
  CLI::App app;
  cli::add_config_flags(app);
  std::set<std::string> options;
  for (const CLI::Option* opt : app.get_options())
    if (opt->get_group() == "Configuration") options.insert(opt->get_name());
  CHECK(options == doc_flags);
}

TEST_CASE("each choice a field doc lists is a value its flag accepts, and another is refused naming the field") {
  int checked = 0;
  for (const FieldDoc& d : field_docs()) {
    const std::string field = d.flag.substr(2);
    for (const std::string& value : listed_values(d.allowed)) {
      CAPTURE(d.flag);
      CAPTURE(value);
      if (field == "model") CHECK_NOTHROW(cli::build_config({}, value));
      else CHECK_NOTHROW(cli::build_config({{field, value}}, ""));
      ++checked;
    }
    if (d.allowed.find(" | ") == std::string::npos) continue;
    try {
      if (field == "model") cli::build_config({}, "bogus");
      else cli::build_config({{field, "bogus"}}, "");
      FAIL("bogus accepted by ", d.flag);
    } catch (const ConfigError& e) {
      CHECK(e.field() == field);
    }
  }
  CHECK(checked >= 38);  // algo 3, br, bc and splits auto 3, dtype 3, mask 4, ..., gpu 3, model 4
}

TEST_CASE("--help shows each field's documentation on its flag's line") {
  for (const char* cmd : {"count", "compare", "trace"}) {
    CAPTURE(cmd);
    const CliResult r = run_cli(std::string(cmd) + " --help");
    REQUIRE(r.code == 0);
    const auto lines = help_lines(r.out);
    for (const FieldDoc& d : field_docs()) {
      CAPTURE(d.flag);
      if (d.flag == "--algo" && std::string(cmd) == "compare") continue;  // compare runs all three
      std::string text;
      for (const auto& [flag, t] : lines)
        if (flag == d.flag) text = t;
      CHECK(text.find(d.summary + ": " + d.allowed) == 0);
      FieldDoc shown = d;
      if (d.flag == "--model" && std::string(cmd) == "compare") shown.fallback = "llama3-8b";  // its own default
      CHECK(text == field_help(shown));
    }
  }
}
