// full_fs.cpp — see full_fs.hpp.
#include "full_fs.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace flashlab::test {
namespace {

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  return bool(f);
}

// Forks; the child runs `setup` then `body` and sends back what they return through a pipe.
std::string in_child(const std::function<std::string()>& setup, const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return std::string("unavailable: pipe: ") + std::strerror(errno);
  const pid_t pid = ::fork();
  if (pid < 0) return std::string("unavailable: fork: ") + std::strerror(errno);
  if (pid == 0) {
    ::close(fds[0]);
    std::string out = setup();
    if (out.empty()) {
      try {
        out = body();
      } catch (const std::exception& e) {
        out = std::string("uncaught: ") + e.what();
      }
    }
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += std::size_t(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

}  // namespace

std::string in_full_tmpfs(const std::string& dir, const std::function<std::string()>& body) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  const auto setup = [&]() -> std::string {
    const auto fail = [](const char* what) { return std::string("unavailable: ") + what + ": " + std::strerror(errno); };
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {
      // Map this user to root of the new namespace (as `unshare -r` does), so that files can be created.
      write_text("/proc/self/setgroups", "deny");
      if (!write_text("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n")) return fail("uid_map");
      if (!write_text("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) return fail("gid_map");
    } else if (uid != 0 || ::unshare(CLONE_NEWNS) != 0) {  // root without user namespaces: a mount namespace
      return fail("unshare");
    }
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("mount --make-rprivate /");
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=4k") != 0) return fail("mount tmpfs");
    // Fill it: write until the file system says it is full.
    const int fd = ::open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail("open filler");
    const std::vector<char> block(512, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    const int e = errno;
    ::close(fd);
    if (e != ENOSPC) return std::string("unavailable: the tmpfs did not fill (") + std::strerror(e) + ")";
    return "";
  };
  return in_child(setup, body);
}

std::string with_file_size_limit(long bytes, const std::function<std::string()>& body) {
  const auto setup = [bytes]() -> std::string {
    std::signal(SIGXFSZ, SIG_IGN);  // a write beyond the limit then fails with EFBIG instead of killing
    const rlimit limit{rlim_t(bytes), rlim_t(bytes)};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::string("unavailable: setrlimit: ") + std::strerror(errno);
    return "";
  };
  return in_child(setup, body);
}

std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

}  // namespace flashlab::test
