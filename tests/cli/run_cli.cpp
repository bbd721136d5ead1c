// run_cli.cpp — popen the flashlab binary, stderr through a temporary file.
#include "run_cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::string slurp(std::FILE* f) {
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

}  // namespace

CliResult run_cli(const std::string& args) { return run_cli_env("", args); }

void check_refused(const std::string& args, const std::string& message) {
  const CliResult r = run_cli(args);
  INFO("flashlab ", args, "\nstderr: ", r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "flashlab: error: " + message + "\n");
}

CliResult run_cli_env(const std::string& env, const std::string& args) {
  char err_path[] = "/tmp/flashlab_cli_err_XXXXXX";
  const int fd = ::mkstemp(err_path);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string cmd = (env.empty() ? "" : env + " ") + std::string(FLASHLAB_BIN) + " " + args + " 2>" + err_path;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  CliResult r;
  r.out = slurp(p);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  std::ifstream e(err_path);
  std::ostringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::remove(err_path);
  return r;
}

nlohmann::json run_json(const std::string& args) {
  const CliResult r = run_cli(args);
  INFO("flashlab ", args, "\nstderr: ", r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

std::uint64_t u64_at(const nlohmann::json& j, const std::string& dotted) {
  std::string pointer = "/" + dotted;
  for (char& c : pointer)
    if (c == '.') c = '/';
  const nlohmann::json::json_pointer ptr(pointer);
  INFO("JSON path ", dotted);
  REQUIRE(j.contains(ptr));
  REQUIRE(j.at(ptr).is_number_unsigned());
  return j.at(ptr).get<std::uint64_t>();
}

std::vector<std::map<std::string, std::string>> parse_csv(const std::string& text) {
  const auto fields = [](const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) out.emplace_back();
      else out.back() += c;
    }
    return out;
  };
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = fields(line);
    REQUIRE(f.size() == header.size());
    auto& row = rows.emplace_back();
    for (std::size_t k = 0; k < f.size(); ++k) row[header[k]] = f[k];
  }
  return rows;
}

namespace {

// The folders make_temp_dir() made, removed with everything in them when the test binary exits
// (issue 24: tests that returned early left hundreds of flashlab_cli_dir_* folders in /tmp).
struct TempDirs {
  std::vector<std::string> paths;
  ~TempDirs() {
    for (const std::string& p : paths) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  }
};
TempDirs temp_dirs;

}  // namespace

std::string make_temp_dir() {
  const std::string pattern = (std::filesystem::temp_directory_path() / "flashlab_cli_dir_XXXXXX").string();
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  REQUIRE(::mkdtemp(path.data()) != nullptr);
  temp_dirs.paths.emplace_back(path.data());
  return path.data();
}
