// run_cli.hpp — runs the built `flashlab` binary (FLASHLAB_BIN) with arguments, capturing its exit
// code, stdout and stderr, and small helpers to read its JSON and CSV.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct CliResult {
  int code = -1;  // exit status; 128 + signal number when killed by a signal (a crash)
  std::string out, err;
};

/// Runs `flashlab <args>` through /bin/sh (args are shell words).
CliResult run_cli(const std::string& args);
/// Runs `ENV flashlab <args>`: env is shell words VAR=value ("" for none).
CliResult run_cli_env(const std::string& env, const std::string& args);

/// Checks that `flashlab <args>` exits 2 with nothing on stdout and exactly "flashlab: error: <message>"
/// on stderr (the house form of a refusal).
void check_refused(const std::string& args, const std::string& message);

/// Runs `flashlab <args>`, requires exit 0 and parses stdout as JSON.
nlohmann::json run_json(const std::string& args);

/// Value at a dotted path ("hbm.read_bytes.Q") of a JSON object, as an unsigned integer; fails the
/// test when the path does not resolve to one.
std::uint64_t u64_at(const nlohmann::json& j, const std::string& dotted);

/// CSV text to rows of named fields (the first line is the header; fields may be "quoted").
std::vector<std::map<std::string, std::string>> parse_csv(const std::string& text);

/// A fresh empty directory under the system temp directory ($TMPDIR, else /tmp), removed with its
/// contents when the test binary exits.
std::string make_temp_dir();
