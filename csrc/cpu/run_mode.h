// Whether a small job runs sooner on the caller's thread alone ("solo") or
// shared with the pool's helpers, learned from that job's own recent times.
//
// The pool's cost model (thread_pool.cpp) decides how many parts a job has;
// it cannot know what handing parts to a helper costs right now. On the
// development VM a cache line's round trip between the two vCPUs takes
// 75-150 ns in one placement of them and 350-390 ns in another, switching
// from one minute to the next, and on a busy machine a helper may be
// preempted: the 16x32x128 forward took 7.9 us shared against 12.5 us solo
// in the first state, and 15.3 us shared in the second (BENCHMARKS.md).
// So each kind of job (its multiply-adds and parts) keeps the last few times
// of each mode, runs in the faster one, and now and then tries the other.
//
// Results never depend on the choice: the parts are the same either way,
// only the thread that runs each of them changes.
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
  static constexpr int kProbes = 3;

  // The mode for the next job of `work` multiply-adds in `parts` parts.
  RunMode choose(double work, int parts) {
    Entry& e = entry_for(work, parts);
    last_ = &e;
    if (e.probes > 0) return RunMode::shared;
    const RunMode best = e.solo.known() && e.shared.known() && e.solo.estimate() < e.shared.estimate()
                             ? RunMode::solo
                             : RunMode::shared;
    const Times& chosen = best == RunMode::solo ? e.solo : e.shared;
    const Times& other = best == RunMode::solo ? e.shared : e.solo;
    // Try the other mode every 32nd job, every 64th while it is far behind
    // (each try costs that job the difference).
    const bool far_behind = chosen.known() && other.known() && other.estimate() > chosen.estimate() * 3 / 2;
    if (++e.jobs % (far_behind ? 64 : 32) != 0) return best;
    if (best == RunMode::shared) return RunMode::solo;
    e.probes = kProbes;
    return RunMode::shared;
  }

  // How long the job that choose() was last asked about took. A shared job
  // is `cold` when it had to wake sleeping helpers, or no helper came to
  // take a part: after a stretch of solo jobs the helpers are asleep, and
  // the first shared job measures their wake-up (tens of microseconds), not
  // sharing with helpers that are awake. So a try of the shared mode is up
  // to kProbes shared jobs in a row, and a cold one is dropped but for the
  // last; a shared job that is not a try counts as it comes (where the
  // helpers are never there in time, that is what sharing costs).
  void record(RunMode mode, int64_t nanoseconds, bool cold) {
    Entry* e = last_;
    last_ = nullptr;
    if (e == nullptr) return;
    if (mode == RunMode::shared && e->probes > 0) {
      if (cold && --e->probes > 0) return;
      e->probes = 0;
    }
    (mode == RunMode::solo ? e->solo : e->shared).add(nanoseconds);
  }

 private:
  // The last three times of one mode; their median shrugs off one outlier
  // (a preemption, a page fault) yet follows a lasting change within two jobs.
  struct Times {
    int64_t ns[3] = {0, 0, 0};
    uint32_t count = 0;
    bool known() const { return count > 0; }
    void add(int64_t t) { ns[count++ % 3] = t; }
    int64_t estimate() const {
      if (count == 1) return ns[0];
      if (count == 2) return (ns[0] + ns[1]) / 2;
      return std::max(std::min(ns[0], ns[1]), std::min(std::max(ns[0], ns[1]), ns[2]));
    }
  };

  struct Entry {
    double work = -1;
    int parts = 0;
    uint32_t jobs = 0;
    int probes = 0;  // shared jobs left in a try of the shared mode
    Times solo, shared;
  };

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
      e = Entry{};
      e.work = work;
      e.parts = parts;
    }
    return e;
  }

  Entry slots_[kSlots];
  Entry* last_ = nullptr;
};

}  // namespace lltm::cpu
