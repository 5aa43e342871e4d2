// The pool's choice between running a small job solo and sharing it
// (csrc/cpu/run_mode.h), fed made-up times: it must settle on the faster
// mode, keep trying the other, follow a change, shrug off one outlier, keep
// kinds of job apart, and measure sharing with awake helpers only.
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

struct Counts {
  int solo = 0, shared = 0;
};

// `jobs` jobs of one kind; time(mode, job) gives each one's nanoseconds and
// cold(job) whether a shared one was cold.
Counts run(RunModeChooser& c, int jobs, double work, int parts, const std::function<int64_t(RunMode, int)>& time,
           const std::function<bool(int)>& cold = [](int) { return false; }) {
  Counts n;
  for (int j = 0; j < jobs; ++j) {
    const RunMode m = c.choose(work, parts);
    (m == RunMode::solo ? n.solo : n.shared)++;
    const int64_t t = time(m, j);  // before cold(j), which may read what time() saw
    c.record(m, t, m == RunMode::shared && cold(j));
  }
  return n;
}

int64_t fast_shared(RunMode m, int) { return m == RunMode::shared ? 8000 : 12500; }
int64_t slow_shared(RunMode m, int) { return m == RunMode::shared ? 15300 : 12500; }

}  // namespace

int main() {
  {
    RunModeChooser c;
    const Counts n = run(c, 6400, 983040, 8, fast_shared);
    check(n.shared > 6200 && n.solo > 0, "sharing faster: shared nearly always, solo still tried");
  }
  {
    RunModeChooser c;
    run(c, 200, 983040, 8, slow_shared);
    const Counts n = run(c, 6400, 983040, 8, slow_shared);
    check(n.solo > 6000 && n.shared > 0, "solo faster: solo nearly always, sharing still tried");
  }
  {
    // The VM's vCPUs come closer: sharing turns faster, and the chooser follows.
    RunModeChooser c;
    run(c, 640, 983040, 8, slow_shared);
    Counts late;
    run(c, 1280, 983040, 8, [&](RunMode m, int j) {
      if (j >= 640) (m == RunMode::solo ? late.solo : late.shared)++;
      return fast_shared(m, j);
    });
    check(late.shared > 600, "a change to faster sharing is followed within 640 jobs");
  }
  {
    // One preempted shared job among fast ones does not turn the choice.
    RunModeChooser c;
    run(c, 100, 983040, 8, fast_shared);
    const Counts n = run(c, 200, 983040, 8, [](RunMode m, int j) { return m == RunMode::shared && j == 3 ? 2000000 : fast_shared(m, j); });
    check(n.solo < 10, "one outlier does not switch to solo");
  }
  {
    // Two kinds of job with opposite answers, interleaved, each gets its own.
    RunModeChooser c;
    Counts forward, backward;
    for (int j = 0; j < 3200; ++j) {
      const RunMode a = c.choose(983040, 8);
      (a == RunMode::solo ? forward.solo : forward.shared)++;
      c.record(a, slow_shared(a, j), false);
      const RunMode b = c.choose(1966080, 2);
      (b == RunMode::solo ? backward.solo : backward.shared)++;
      c.record(b, fast_shared(b, j), false);
    }
    check(forward.solo > 2800 && backward.shared > 3000, "kinds of job learn apart");
  }
  {
    // In solo mode the helpers fall asleep (here after 8 solo jobs in a
    // row): a try of sharing whose first two jobs are cold (the woken
    // helpers come late) is judged by its first warm job, which is fast.
    RunModeChooser c;
    run(c, 640, 983040, 8, slow_shared);
    int solo_in_a_row = 100, waking = 0, shared_in_a_row = 0, longest = 0;
    const Counts n = run(
        c, 640, 983040, 8,
        [&](RunMode m, int) {
          if (m == RunMode::solo) {
            ++solo_in_a_row;
            shared_in_a_row = 0;
            return int64_t(12500);
          }
          if (solo_in_a_row >= 8) waking = 2;
          solo_in_a_row = 0;
          longest = ++shared_in_a_row > longest ? shared_in_a_row : longest;
          return int64_t(waking > 0 ? 60000 : 7000);
        },
        [&](int) { return waking > 0 && waking-- > 0; });
    check(n.shared > 500, "a try of sharing skips its cold jobs and then finds sharing faster");
    check(longest >= 3, "a try of sharing runs several shared jobs in a row");
  }
  {
    // Helpers that never come in time (a busy machine): a try ends after
    // its last cold job, which counts, and solo stays.
    RunModeChooser c;
    run(c, 640, 983040, 8, slow_shared);
    const Counts n = run(c, 640, 983040, 8, [](RunMode m, int) { return m == RunMode::shared ? 40000 : 12500; },
                         [](int) { return true; });
    check(n.solo > 580, "helpers that never come: solo stays, each try ends");
  }
  if (failures == 0) std::puts("run_mode_test: all checks passed");
  return failures == 0 ? 0 : 1;
}
