// The pool's choice between running small jobs solo and sharing them
// (csrc/cpu/run_mode.h), on a made-up clock: a loop of jobs whose steps take
// so long in each mode. The chooser must settle on the faster mode, keep
// trying the other, follow a change, ignore pauses, and not time the
// wake-up of a helper that comes late.
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

// A job's cost in nanoseconds: shared faster (the near vCPU state), solo faster (the far one).
int64_t near_state(RunMode m, int) { return m == RunMode::shared ? 10000 : 15000; }
int64_t far_state(RunMode m, int) { return m == RunMode::shared ? 15000 : 12000; }

struct Loop {
  RunModeChooser chooser;
  int64_t now = 0;
  int solo_in_a_row = 0;
  int cold_jobs = 1;  // shared jobs after a solo stretch that the waking helper misses
  int cold_left = 0;

  // `jobs` jobs back to back; returns how many ran solo.
  int run(int jobs, const std::function<int64_t(RunMode, int)>& cost) {
    int solo = 0;
    for (int j = 0; j < jobs; ++j) {
      const RunMode m = chooser.choose(now);
      solo += m == RunMode::solo;
      int64_t t = cost(m, j);
      // shared jobs after 8 or more solo ones wake the helper, which misses
      // the first cold_jobs of them; the caller runs those alone, late
      if (m == RunMode::shared && solo_in_a_row >= 8) cold_left = cold_jobs;
      const bool cold = m == RunMode::shared && cold_left > 0;
      if (cold) {
        t += 60000;
        --cold_left;
      }
      if (m == RunMode::shared) chooser.helped(!cold);
      solo_in_a_row = m == RunMode::solo ? solo_in_a_row + 1 : 0;
      now += t;
    }
    return solo;
  }
};

}  // namespace

int main() {
  const int kJobs = 60000;
  {
    Loop loop;
    loop.run(3000, near_state);
    const int solo = loop.run(kJobs, near_state);
    check(solo > 0 && solo < kJobs / 20, "sharing faster: shared nearly always, solo still tried");
  }
  {
    Loop loop;
    loop.run(3000, far_state);
    const int solo = loop.run(kJobs, far_state);
    check(solo > kJobs * 9 / 10 && solo < kJobs, "solo faster: solo nearly always, sharing still tried");
  }
  {
    // A step of three jobs where a mix of modes is the slowest (the
    // forward's outputs cross to the helper that runs the backward): the
    // jobs are judged together, and all go solo.
    Loop loop;
    RunMode previous = RunMode::shared;
    auto step = [&](RunMode m, int) {
      const int64_t t = (m == RunMode::solo ? 12000 : 15000) + (m != previous ? 6000 : 0);
      previous = m;
      return t;
    };
    loop.run(3000, step);
    const int solo = loop.run(kJobs, step);
    check(solo > kJobs * 9 / 10, "jobs are judged together");
  }
  {
    // The vCPUs move apart, then together again: the chooser follows each change.
    Loop loop;
    loop.run(kJobs, near_state);
    loop.run(2000, far_state);
    const int solo_far = loop.run(kJobs, far_state);
    check(solo_far > kJobs * 9 / 10, "a change to faster solo is followed");
    loop.run(6000, near_state);
    const int solo_near = loop.run(kJobs, near_state);
    check(solo_near < kJobs / 20, "a change back to faster sharing is followed");
  }
  {
    // A helper that takes 20 jobs to come back after a solo stretch: a
    // shared window is timed once it takes part, so sharing is still found
    // faster.
    Loop loop;
    loop.cold_jobs = 20;
    loop.run(3000, near_state);
    const int solo = loop.run(kJobs, near_state);
    check(solo < kJobs / 20, "a late helper's wake-up is not timed");
  }
  {
    // Sharing turns faster while solo stays as it was, so only a trial of
    // sharing can see it; a trial that wins is confirmed by the next window
    // at once, not 16 windows later.
    Loop loop;
    loop.run(6000, far_state);
    const int solo = loop.run(2000, [](RunMode m, int) { return int64_t(m == RunMode::shared ? 8000 : 12000); });
    check(solo < 950, "a winning trial is confirmed at once");
  }
  {
    // Pauses (the caller busy elsewhere for 20 ms) in solo windows only;
    // counted, they would make solo look slow where it is faster.
    Loop loop;
    loop.run(3000, far_state);
    const int solo = loop.run(kJobs, [](RunMode m, int j) {
      return far_state(m, j) + (m == RunMode::solo && j % 40 == 0 ? 20000000 : 0);
    });
    check(solo > kJobs * 9 / 10, "pauses do not count against a mode");
  }
  if (failures == 0) std::puts("run_mode_test: all checks passed");
  return failures == 0 ? 0 : 1;
}
