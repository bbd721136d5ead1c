// The progress of a walk (executor/walk_fraction.hpp, the `flashlab` command's bar): it counts the
// launches of the schedule the problem runs — a backward (three launches after the forward's one)
// or split-KV (split launch and combine) is not done after its first launch.
#include <doctest/doctest.h>

#include <vector>

#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/walk_fraction.hpp"
#include "time_data.hpp"

using namespace flashlab;

namespace {

/// The fraction after each launch's last step, in launch order.
struct Recorder : StepObserver {
  explicit Recorder(const Problem& p) : f(p) {}
  void on_step(const StepView& s) override {
    if (s.launch != launch) ends.push_back(f.value()), launch = s.launch;
    f.step(s);
  }
  WalkFraction f;
  std::uint16_t launch = 0;
  std::vector<double> ends;
};

std::vector<double> launch_ends(const std::string& flags) {
  const Problem p = timefit::problem_of(flags);
  Executor e(p);
  Recorder r(p);
  e.add_observer(&r);
  e.run();
  r.ends.push_back(r.f.value());
  return r.ends;
}

}  // namespace

TEST_CASE("walk progress: launch k of n ends at (k + 1) / n, for forward, backward and split-KV runs") {
  struct Case {
    const char* flags;
    std::size_t launches;
  };
  // V2's forward: one launch; --pass both: the forward's and the backward's three (dot_do_o,
  // dq_dk_dv, convert_dq); --pass backward: the backward's three; split-KV: split and combine
  for (const Case& c : {Case{"--algo v2 --nq 256 --nk 256 --d 64", 1}, Case{"--algo v2 --pass both --nq 256 --nk 256 --d 64", 4},
                        Case{"--algo v2 --pass backward --nq 256 --nk 256 --d 64", 3},
                        Case{"--algo v2 --splits 4 --nq 64 --nk 1024 --d 64", 2},
                        // the deterministic backward and FA2's (--kernel fa2): the same three launches
                        Case{"--algo v2 --pass backward --backward-form deterministic --nq 256 --nk 256 --d 64", 3},
                        Case{"--algo v2 --kernel fa2 --pass backward --nq 256 --nk 256 --d 64", 3}}) {
    CAPTURE(c.flags);
    const std::vector<double> ends = launch_ends(c.flags);
    REQUIRE(ends.size() == c.launches);
    for (std::size_t k = 0; k < ends.size(); ++k) {
      CAPTURE(k);
      // a launch with no tile steps (the backward's dot_do_o, convert_dq; the combine) walks none
      // of its own: the fraction reached is at least k / n and at most (k + 1) / n
      CHECK(ends[k] >= double(k) / double(c.launches) - 1e-12);
      CHECK(ends[k] <= double(k + 1) / double(c.launches) + 1e-12);
    }
    CHECK(ends.back() < 1.0 + 1e-12);
  }
}
