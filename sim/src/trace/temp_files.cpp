// temp_files.cpp — the live output temporaries and the signal handlers that remove them
// (trace/temp_files.hpp). The table is fixed memory: a slot's state says whether its path may be
// read (ready) by the handler, so that the handler needs no lock and allocates nothing.
#include "flashlab/trace/temp_files.hpp"

#include <atomic>
#include <csignal>
#include <cstring>

#include <unistd.h>

namespace flashlab {
namespace {

enum : int { kFree = 0, kBusy = 1, kReady = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxTempPath];
};
Slot slots[kMaxLiveTemps];

const char* program_name = "flashlab";
int write_failed_status = 4;

void say(const char* s) { (void)!::write(2, s, std::strlen(s)); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGXFSZ: return "SIGXFSZ";
  }
  return "a signal";
}

void on_signal(int sig) {
  remove_live_temps();
  say(program_name);
  if (sig == SIGXFSZ) {
    say(": error: an output passed the file-size limit (SIGXFSZ); partial output files removed\n");
    ::_exit(write_failed_status);
  }
  say(": interrupted by ");
  say(signal_name(sig));
  say("; partial output files removed\n");
  ::_exit(128 + sig);
}

}  // namespace

void track_temp(const std::string& path) {
  if (path.size() >= std::size_t(kMaxTempPath)) return;
  for (Slot& s : slots) {
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kBusy)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.state.store(kReady);
    return;
  }
}

void forget_temp(const std::string& path) {
  for (Slot& s : slots) {
    int expected = kReady;
    if (s.state.load() != kReady || std::strcmp(s.path, path.c_str()) != 0) continue;
    if (s.state.compare_exchange_strong(expected, kBusy)) s.state.store(kFree);
  }
}

void remove_live_temps() noexcept {
  for (Slot& s : slots)
    if (s.state.load() == kReady) ::unlink(s.path);
}

void remove_temps_on_signals(const char* program, int write_failed) {
  program_name = program;
  write_failed_status = write_failed;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // inherited as ignored
    struct sigaction act {};
    act.sa_handler = on_signal;
    sigfillset(&act.sa_mask);  // no second signal runs the handler again while it removes the files
    ::sigaction(sig, &act, nullptr);
  }
}

}  // namespace flashlab
