// Whether a small job runs sooner on the caller's thread alone ("solo") or
// shared with the pool's helpers, learned from how fast the caller's calls
// come while each mode is in use.
//
// The pool's cost model (thread_pool.cpp) decides how many parts a job has;
// it cannot know what handing parts to a helper costs right now. On the
// development VM a cache line's round trip between the two vCPUs takes
// ~100 ns in one placement of them and ~500 ns in another, switching every
// few seconds; in the second, the 16x32x128 step took 20 + 26 us (forward +
// backward) shared against 14 + 22 us on one thread (BENCHMARKS.md). Much of
// that cost falls outside the job itself: the caller's next reads of what a
// helper wrote, and a solo job's reads of what the shared ones left in the
// other core's cache. So a job's own duration cannot judge the modes (an
// earlier version timed jobs and kept sharing); the time from one job of a
// kind to the next, over a window of them, can: in a training loop it is the
// whole step, everything the mode costs included.
//
// Each kind of job (its multiply-adds and parts) runs windows of jobs in one
// mode, keeps the last three window times of each mode, runs in the faster
// one and now and then gives a window to the other. Results never depend on
// the choice: the parts are the same either way, only the thread that runs
// each of them changes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace lltm::cpu {

enum class RunMode { solo, shared };

class RunModeChooser {
 public:
  // Jobs larger than this many multiply-adds (~200 us of one thread) always
  // run shared: their parts dwarf the cost of handing them over.
  static constexpr double kMaxWork = 6e6;
  // A window: kWarmJobs that take up the mode (a sleeping helper wakes, the
  // data moves to where the mode uses it), then kWindowJobs timed ones.
  static constexpr int kWarmJobs = 4;
  static constexpr int kWindowJobs = 16;
  // A gap between two jobs of a kind longer than this, or than four times
  // the kind's usual gap, is a pause (the caller did other work): its window
  // says nothing about the mode and is dropped.
  static constexpr int64_t kMaxGapNs = 10'000'000;

  // The mode for a job of `work` multiply-adds in `parts` parts starting at
  // `now` (nanoseconds on a monotonic clock).
  RunMode choose(double work, int parts, int64_t now) {
    Entry& e = entry_for(work, parts);
    if (e.jobs > 0) {
      const int64_t gap = now - e.last_start;
      const Times& usual = e.mode == RunMode::solo ? e.solo : e.shared;
      if (gap > kMaxGapNs || (usual.known() && gap > 4 * usual.estimate() / kWindowJobs)) e.valid = false;
    }
    e.last_start = now;
    ++e.jobs;
    if (e.jobs == kWarmJobs + 1) e.window_start = now;
    if (e.jobs == kWarmJobs + kWindowJobs + 1) {
      // A trial window that beat the chosen mode is followed by another
      // (until the median agrees or a window does not), so that a change of
      // state shows within two trial windows.
      const bool trial = trial_ == &e;
      const Times& chosen = e.mode == RunMode::solo ? e.shared : e.solo;
      const bool won = trial && e.valid && chosen.known() && now - e.window_start < chosen.estimate();
      // (A kind's first window is not timed: it pays for the first touch of
      // its buffers and the helpers' start, whatever the mode.)
      if (e.valid && e.windows > 0) (e.mode == RunMode::solo ? e.solo : e.shared).add(now - e.window_start);
      if (trial) trial_ = nullptr;
      e.mode = won && best(e) != e.mode ? keep_trying(e) : next_mode(e);
      e.jobs = 1;
      e.valid = true;
    }
    return e.mode;
  }

 private:
  // The last three window times of one mode; their median shrugs off one
  // outlier (a preempted window) yet follows a lasting change within two
  // (before the third, the least: an outlier is slow, never fast).
  struct Times {
    int64_t ns[3] = {0, 0, 0};
    int count = 0, next = 0;
    bool known() const { return count > 0; }
    void add(int64_t t) {
      ns[next] = t;
      next = (next + 1) % 3;
      count = std::min(count + 1, 3);
    }
    int64_t estimate() const {
      if (count == 1) return ns[0];
      if (count == 2) return std::min(ns[0], ns[1]);
      return std::max(std::min(ns[0], ns[1]), std::min(std::max(ns[0], ns[1]), ns[2]));
    }
  };

  struct Entry {
    double work = -1;
    int parts = 0;
    RunMode mode = RunMode::shared;
    int jobs = 0;             // jobs of the current window so far
    bool valid = true;        // no pause in the current window
    uint32_t windows = 0;
    int64_t window_start = 0, last_start = 0;
    Times solo, shared;
  };

  // The mode of an entry's next window: the faster, or a trial of the other
  // (at once while the other is unmeasured, then every 16th window, every
  // 64th while it is far behind). One kind at a time is on trial, so that a
  // kind's windows do not time another kind's trial.
  static RunMode best(const Entry& e) {
    return e.solo.known() && e.shared.known() && e.solo.estimate() < e.shared.estimate() ? RunMode::solo
                                                                                         : RunMode::shared;
  }

  RunMode next_mode(Entry& e) {
    const RunMode faster = best(e);
    const RunMode other = faster == RunMode::solo ? RunMode::shared : RunMode::solo;
    const Times& chosen = faster == RunMode::solo ? e.solo : e.shared;
    const Times& tried = faster == RunMode::solo ? e.shared : e.solo;
    const bool far_behind = chosen.known() && tried.known() && tried.estimate() > chosen.estimate() * 13 / 10;
    ++e.windows;
    const bool due = !tried.known() || e.windows % (far_behind ? 64 : 16) == 0;
    if (due && trial_ == nullptr) {
      trial_ = &e;
      return other;
    }
    return faster;
  }

  RunMode keep_trying(Entry& e) {
    trial_ = &e;
    return e.mode;
  }

  // A few kinds of job at once (a training step has three: the forward, the
  // backward's pointwise pass and its products); a kind that maps to a taken
  // slot replaces it and starts learning anew.
  static constexpr int kSlots = 16;

  Entry& entry_for(double work, int parts) {
    uint64_t bits;
    std::memcpy(&bits, &work, sizeof bits);
    const uint64_t h = (bits ^ (bits >> 29) ^ uint64_t(parts) * 0x9E3779B97F4A7C15u) * 0xBF58476D1CE4E5B9u;
    Entry& e = slots_[(h >> 60) % kSlots];
    if (e.work != work || e.parts != parts) {
      if (trial_ == &e) trial_ = nullptr;
      e = Entry{};
      e.work = work;
      e.parts = parts;
    }
    return e;
  }

  Entry slots_[kSlots];
  Entry* trial_ = nullptr;
};

}  // namespace lltm::cpu
