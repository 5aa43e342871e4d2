// Whether small jobs run sooner on the caller's thread alone ("solo") or
// shared with the pool's helpers, learned from how fast the caller's calls
// come while each mode is in use.
//
// The pool's cost model (thread_pool.cpp) decides how many parts a job has;
// it cannot know what handing parts to a helper costs right now. On the
// development VM a cache line's round trip between the two vCPUs takes
// ~100 ns in one placement of them and ~500 ns in another, switching every
// few seconds; in the second, the 16x32x128 step took 18.5 + 24 us (forward +
// backward) shared against 13.5 + 22 us on one thread (BENCHMARKS.md). Much
// of that cost falls outside the jobs themselves: the caller's reads of what
// a helper wrote, and a solo job's reads of what shared ones left in the
// other core's cache. So neither a job's own duration nor one kind of job
// alone can judge the modes: timed job by job, sharing looked faster; with
// the forward alone solo, the backward's shared parts read the forward's
// outputs across the link, and the step took 50 us against 44 shared.
// The time from job to job over a window of them, all kinds in one mode,
// can: in a training loop it is whole steps, everything the mode costs
// included.
//
// So small jobs run in windows of one mode; the last three window times of
// each mode are kept, the faster mode runs, and now and then a window goes
// to the other. Results never depend on the choice: the parts are the same
// either way, only the thread that runs each of them changes.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lltm::cpu {

enum class RunMode { solo, shared };

class RunModeChooser {
 public:
  // Jobs larger than this many multiply-adds (~200 us of one thread) always
  // run shared, outside the windows: their parts dwarf the cost of handing
  // them over.
  static constexpr double kMaxWork = 6e6;
  // A window: at least kWarmJobs that take up the mode (a sleeping helper
  // wakes, the data moves to where the mode uses it), shared ones until a
  // helper has taken a part (or kMaxWarmJobs), then kWindowJobs timed ones
  // (a multiple of every short loop's length: a training step is 3 jobs).
  static constexpr int kWarmJobs = 8;
  static constexpr int kMaxWarmJobs = 64;
  static constexpr int kWindowJobs = 48;
  // A gap between two timed jobs longer than this, or than four times the
  // usual gap, is a pause (the caller did other work): its window says
  // nothing about the mode and is dropped.
  static constexpr int64_t kMaxGapNs = 10'000'000;

  // The mode for a small job starting at `now` (nanoseconds, monotonic clock).
  RunMode choose(int64_t now) {
    const int64_t gap = now - last_start_;
    last_start_ = now;
    if (!timing_) {
      const bool warm = warm_ >= kWarmJobs && (mode_ == RunMode::solo || helped_ || warm_ >= kMaxWarmJobs);
      if (!warm) {
        ++warm_;
        return mode_;
      }
      timing_ = true;
      timed_ = 0;
      valid_ = true;
      window_start_ = now;
    } else {
      const Times& usual = mode_ == RunMode::solo ? solo_ : shared_;
      if (gap > kMaxGapNs || (usual.known() && gap > 4 * usual.estimate() / kWindowJobs)) valid_ = false;
    }
    if (timed_ < kWindowJobs) {
      ++timed_;
      return mode_;
    }
    // A trial window that beat the chosen mode is followed by another (until
    // the median agrees or a window does not), so that a change of state
    // shows within two trial windows.
    const int64_t elapsed = now - window_start_;
    const Times& chosen = mode_ == RunMode::solo ? shared_ : solo_;
    const bool won = trial_ && valid_ && chosen.known() && elapsed < chosen.estimate();
    // (The first window is not timed: it pays for first touches and the
    // helpers' start, whatever the mode.)
    if (valid_ && windows_ > 0) (mode_ == RunMode::solo ? solo_ : shared_).add(elapsed);
    if (won && best() != mode_) {
      trial_ = true;
    } else {
      trial_ = false;
      mode_ = next_mode();
    }
    timing_ = false;
    warm_ = 1;  // this job is the next window's first
    helped_ = false;
    return mode_;
  }

  // Whether a helper took a part of the shared job just chosen.
  void helped(bool any) { helped_ = helped_ || any; }

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

  // Solo only where it is a tenth faster: a wrong solo costs more (a
  // near-state forward takes 1.6x as long alone) than a wrong share.
  RunMode best() const {
    return solo_.known() && shared_.known() && solo_.estimate() * 10 < shared_.estimate() * 9 ? RunMode::solo
                                                                                             : RunMode::shared;
  }

  // The faster mode, or a trial of the other: at once while the other is
  // unmeasured, then every 16th window, every 64th while it is far behind.
  RunMode next_mode() {
    const RunMode faster = best();
    const Times& chosen = faster == RunMode::solo ? solo_ : shared_;
    const Times& other = faster == RunMode::solo ? shared_ : solo_;
    const bool far_behind = chosen.known() && other.known() && other.estimate() > chosen.estimate() * 13 / 10;
    ++windows_;
    trial_ = !other.known() || windows_ % (far_behind ? 64 : 16) == 0;
    if (!trial_) return faster;
    return faster == RunMode::solo ? RunMode::shared : RunMode::solo;
  }

  RunMode mode_ = RunMode::shared;
  bool timing_ = false;  // past the window's warm-up
  int warm_ = 0, timed_ = 0;
  bool helped_ = false;  // a helper took a part during the warm-up
  bool valid_ = true;    // no pause among the timed jobs
  bool trial_ = false;   // this window tries the mode that is not the faster
  uint32_t windows_ = 0;
  int64_t window_start_ = 0, last_start_ = 0;
  Times solo_, shared_;
};

}  // namespace lltm::cpu
