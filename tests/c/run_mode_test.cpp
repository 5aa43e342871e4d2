// The pool's choice between running a small job solo and sharing it
// (csrc/cpu/run_mode.h), on a made-up clock: a loop of jobs whose steps take
// so long in each mode. The chooser must settle on the faster mode, keep
// trying the other, follow a change, ignore pauses, keep kinds of job apart,
// and not count the wake-up a mode's first jobs pay.
//
// usage: run_mode_test   (exit status 0 when every check passes)
#include <cstdint>
#include <cstdio>
#include <functional>

#include "cpu/run_mode.h"

using lltm::cpu::RunMode;
using lltm::cpu::RunModeChooser;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "run_mode_test: FAILED: %s\n", what);
    ++failures;
  }
}

constexpr double kForward = 983040, kBackward = 1966080;

// Step costs in nanoseconds: shared faster (the near vCPU state), solo faster (the far one).
int64_t near_state(RunMode m) { return m == RunMode::shared ? 30000 : 45000; }
int64_t far_state(RunMode m) { return m == RunMode::shared ? 46000 : 36000; }

struct Loop {
  RunModeChooser chooser;
  int64_t now = 0;
  RunMode last = RunMode::shared;
  int solo_in_a_row = 0;

  // `jobs` jobs of one kind back to back; returns how many ran solo. A
  // shared job after 8 or more solo ones pays a helper's wake-up.
  int run(int jobs, const std::function<int64_t(RunMode, int)>& cost) {
    int solo = 0;
    for (int j = 0; j < jobs; ++j) {
      const RunMode m = chooser.choose(kForward, 8, now);
      solo += m == RunMode::solo;
      int64_t t = cost(m, j);
      if (m == RunMode::shared && solo_in_a_row >= 8) t += 60000;
      solo_in_a_row = m == RunMode::solo ? solo_in_a_row + 1 : 0;
      now += t;
    }
    return solo;
  }
};

}  // namespace

int main() {
  const int kJobs = 40000;
  {
    Loop loop;
    loop.run(2000, [](RunMode m, int) { return near_state(m); });
    const int solo = loop.run(kJobs, [](RunMode m, int) { return near_state(m); });
    check(solo > 0 && solo < kJobs / 20, "sharing faster: shared nearly always, solo still tried");
  }
  {
    Loop loop;
    loop.run(2000, [](RunMode m, int) { return far_state(m); });
    const int solo = loop.run(kJobs, [](RunMode m, int) { return far_state(m); });
    check(solo > kJobs * 9 / 10 && solo < kJobs, "solo faster: solo nearly always, sharing still tried");
  }
  {
    // The vCPUs move apart, then together again: the chooser follows each
    // change within a few windows.
    Loop loop;
    loop.run(kJobs, [](RunMode m, int) { return near_state(m); });
    loop.run(400, [](RunMode m, int) { return far_state(m); });
    const int solo_far = loop.run(kJobs, [](RunMode m, int) { return far_state(m); });
    check(solo_far > kJobs * 9 / 10, "a change to faster solo is followed");
    loop.run(4000, [](RunMode m, int) { return near_state(m); });
    const int solo_near = loop.run(kJobs, [](RunMode m, int) { return near_state(m); });
    check(solo_near < kJobs / 20, "a change back to faster sharing is followed");
  }
  {
    // A trial that wins is confirmed by the next window at once, not 16
    // windows later: after the change, sharing takes over within ~200 jobs.
    Loop loop;
    loop.run(4000, [](RunMode m, int) { return far_state(m); });
    const int solo = loop.run(800, [](RunMode m, int) { return near_state(m); });
    check(solo < 300, "a winning trial is confirmed at once");
  }
  {
    // Pauses (the caller busy elsewhere for 20 ms) fall in solo windows
    // only; counted, they would make solo look slow where it is faster.
    Loop loop;
    loop.run(2000, [](RunMode m, int) { return far_state(m); });
    const int solo = loop.run(kJobs, [](RunMode m, int j) {
      return far_state(m) + (m == RunMode::solo && j % 25 == 0 ? 20000000 : 0);
    });
    check(solo > kJobs * 9 / 10, "pauses do not count against a mode");
  }
  {
    // Two kinds of job in one loop with opposite answers: the forward
    // sooner solo, the backward sooner shared; each step's time is both.
    RunModeChooser c;
    int64_t now = 0;
    int forward_solo = 0, backward_solo = 0;
    for (int j = 0; j < kJobs; ++j) {
      const RunMode f = c.choose(kForward, 8, now);
      now += f == RunMode::solo ? 14000 : 20000;
      const RunMode b = c.choose(kBackward, 2, now);
      now += b == RunMode::solo ? 38000 : 34000;
      forward_solo += f == RunMode::solo;
      backward_solo += b == RunMode::solo;
    }
    check(forward_solo > kJobs * 9 / 10 && backward_solo < kJobs / 10, "kinds of job learn apart");
  }
  if (failures == 0) std::puts("run_mode_test: all checks passed");
  return failures == 0 ? 0 : 1;
}
