#include "thread_pool.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>
#include <vector>

#include "cpu_count.h"
#include "futex.h"
#include "run_mode.h"
#include "spin_pause.h"

namespace lltm::cpu {

namespace {

#ifdef LLTM_POOL_HOOKS
std::atomic<void (*)(int)> window_hook{nullptr};
#endif

// The job in one 64-bit word, so that seeing a job, its number of parts and
// claiming a part are one atomic step: generation (40 bits), parts (12 bits),
// next unclaimed part (12 bits). A worker that wakes late finds either its
// generation gone or every part claimed; it can never claim a part of a job
// it did not read, nor the same part twice.
constexpr int kPartBits = 12;
constexpr uint64_t kPartMask = (uint64_t(1) << kPartBits) - 1;
constexpr int kMaxThreads = int(kPartMask);
constexpr int kMaxParts = int(kPartMask);

constexpr uint64_t pack(uint64_t generation, uint64_t parts, uint64_t next) {
  return (generation << (2 * kPartBits)) | (parts << kPartBits) | next;
}
constexpr uint64_t generation_of(uint64_t s) { return s >> (2 * kPartBits); }
constexpr int parts_of(uint64_t s) { return int((s >> kPartBits) & kPartMask); }
constexpr int next_of(uint64_t s) { return int(s & kPartMask); }
constexpr bool claimable(uint64_t s) { return next_of(s) < parts_of(s); }

using Clock = std::chrono::steady_clock;

int64_t nanoseconds(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// The cost model of parts_for and of waking sleeping threads. Measured on
// the 2-core development machine (AMD EPYC, AVX-512; tests/c/pool_bench.cpp
// and bench.ts, BENCHMARKS.md has the runs):
// - a helper that is spinning starts its part ~0.4 us after the job is
//   published; a two-part job of empty parts costs the caller ~0.3 us;
// - a sleeping helper takes a futex wake-up and a trip through the
//   scheduler: tens of microseconds on an idle machine, milliseconds on a
//   loaded one;
// - the kernels do ~60k multiply-adds per microsecond per thread in float32
//   with AVX-512 (16x32x128 forward: 983k in 16 us), half that in float64 or
//   with AVX2; the model takes the lower figure, so it errs towards not
//   splitting.
constexpr double kWorkPerMicrosecond = 30000;
// A part is worth a thread when it lasts 10x a spinning helper's start (so
// the dispatch costs at most ~10%, and the caller loses little when a helper
// is late and it runs that part itself).
constexpr double kMinPartMicroseconds = 4.0;
// A sleeping helper is woken only for parts that outlast its wake-up; below
// that the caller (and any helper still spinning) does the job sooner.
constexpr double kWakeMicroseconds = 30.0;
// ...or when jobs come in a stream, each within this long of the previous
// one's end: a helper that fell asleep during a pause (a garbage collection
// in the caller's runtime) is then woken once, arrives too late for this job
// but spins in time for the next ones. Without it one pause would leave every
// later small job on the caller's thread alone.
constexpr auto kStream = std::chrono::microseconds(500);

// Pieces per thread of pieces_for: enough that a thread preempted in the
// middle of a call holds up only a small share of it (the others claim the
// rest), few enough that each piece's fixed costs stay small.
constexpr int kPiecesPerThread = 4;

// The work parts_for last sized on this thread, for the next run_parallel's
// decisions to wake sleeping helpers and to run solo or shared (the kernels
// call one right before the other); negative when unknown, and then sleepers
// are woken and the job is shared. `stream` marks expect_work's total of a
// sequence's remaining steps, which is no kind of job to learn about.
struct Sizing {
  double work = -1;
  bool stream = false;
};
thread_local Sizing sized;

// How long a waiting thread spins, then yields, before it sleeps. A training
// loop calls again within microseconds, so a short spin catches the next job;
// beyond that, yielding lets a descheduled thread (or another process) have
// the core, and sleeping stops a waiting thread from costing anything. With
// more threads than CPUs a spinning thread only delays the one it waits for,
// so spinning is skipped (as libgomp throttles GOMP_SPINCOUNT).
struct Backoff {
  std::chrono::nanoseconds spin, yield;
};

class Pool {
 public:
  Pool(ThreadCount count, int cpus) : size_(count.threads), source_(count.source) {
    const int threads = count.threads;
    const bool oversubscribed = threads > cpus;
    worker_wait_ = {std::chrono::microseconds(oversubscribed ? 0 : 50), std::chrono::microseconds(200)};
    caller_wait_ = {std::chrono::microseconds(oversubscribed ? 0 : 20), std::chrono::microseconds(1000)};
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  int size() const { return size_; }
  ThreadSource source() const { return source_; }

  void run(int parts, void (*body)(void*, int, int), void* ctx) {
    const Sizing sizing = sized;
    sized = Sizing{};
    const double work = sizing.work;
    if (parts > kMaxParts) parts = kMaxParts;
    if (parts <= 1 || size_ <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
      for (int p = 0; p < parts; ++p) body(ctx, p, parts);
      return;
    }
    const bool small = work >= 0 && work <= RunModeChooser::kMaxWork && !sizing.stream;
    std::exception_ptr error;
    if (small && modes_.choose(nanoseconds(Clock::now())) == RunMode::solo) {
      try {
        for (int p = 0; p < parts; ++p) body(ctx, p, parts);
      } catch (...) {
        error = std::current_exception();
      }
    } else {
      const bool helped = share(parts, body, ctx, work, error);
      if (small) modes_.helped(helped);
    }
    last_end_ = Clock::now();
    busy_.store(false, std::memory_order_release);
    if (error) std::rethrow_exception(error);
  }

 private:
  // Runs a job's parts on the caller's thread and the helpers', under busy_;
  // true when a helper ran any of them. A part that throws (a scratch buffer
  // that cannot be allocated) must neither end the process from a helper's
  // thread nor unwind the caller's frame while helpers still run parts of
  // it: every part's exception is caught where it runs, the job runs to its
  // end, and the first exception comes back in `error` for run() to rethrow
  // once the pool is free again.
  bool share(int parts, void (*body)(void*, int, int), void* ctx, double work, std::exception_ptr& error) {
    failed_.store(false, std::memory_order_relaxed);
    error_ = nullptr;
    // Written before the job's word is published (release), read by workers
    // before their claim; see work() for why a stale read is harmless.
    body_.store(body, std::memory_order_release);
    ctx_.store(ctx, std::memory_order_release);
    done_.store(0, std::memory_order_relaxed);
    const uint64_t generation = ++generation_;
    // The caller takes part 0 as it publishes the job.
    state_.store(pack(generation, uint64_t(parts), 1), std::memory_order_seq_cst);
    epoch_.store(uint32_t(generation), std::memory_order_seq_cst);
    const int threads = parts < size_ ? parts : size_;
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      const bool worth_waking = work < 0 || work / threads >= kWakeMicroseconds * kWorkPerMicrosecond ||
                                Clock::now() - last_end_ < kStream;
      if (worth_waking) futex_wake(&epoch_, threads - 1);
    }

    run_part(body, ctx, 0, parts);
    uint32_t ran = 1;
    for (int p; (p = claim(generation)) >= 0; ++ran) run_part(body, ctx, p, parts);
    if (done_.fetch_add(ran, std::memory_order_acq_rel) + ran != uint32_t(parts)) wait_done(uint32_t(parts));
    // The helpers' stores of error_ happen before their done_ adds, which
    // wait_done (or the add above) acquired.
    if (failed_.load(std::memory_order_relaxed)) error = error_;
    return ran < uint32_t(parts);
  }

  void run_part(void (*body)(void*, int, int), void* ctx, int part, int parts) noexcept {
    try {
      body(ctx, part, parts);
    } catch (...) {
      if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
    }
  }

  // The next part of job `generation`, or -1 when it has none left.
  int claim(uint64_t generation) {
    uint64_t s = state_.load(std::memory_order_acquire);
    while (generation_of(s) == generation && claimable(s))
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        return next_of(s);
    return -1;
  }

  // Workers live as long as the process (the pool is never destroyed).
  [[noreturn]] void work(int index) {
    uint64_t seen = 0;
    for (;;) {
      const uint64_t s = wait_for_job(seen);
      const uint64_t generation = generation_of(s);
      seen = generation;
      // body_ and ctx_ may already belong to a later job when this thread was
      // descheduled here. A later job's fields are stored (release) only
      // after every part of this one was claimed, so reading them (acquire)
      // orders that last claim before the claim below, which then fails: the
      // fields are never used.
      auto* body = body_.load(std::memory_order_acquire);
      void* ctx = ctx_.load(std::memory_order_acquire);
#ifdef LLTM_POOL_HOOKS
      if (auto* hook = window_hook.load(std::memory_order_relaxed)) hook(index);
#else
      (void)index;
#endif
      uint32_t ran = 0;
      for (int p; (p = claim(generation)) >= 0; ++ran) run_part(body, ctx, p, parts_of(s));
      if (ran == 0) continue;
      // After this add the caller may return and start the next job; only
      // the pool's own fields are touched from here on.
      const uint32_t done = done_.fetch_add(ran, std::memory_order_seq_cst) + ran;
      if (done == uint32_t(parts_of(s)) && caller_sleeping_.load(std::memory_order_seq_cst))
        futex_wake(&done_, 1);
    }
  }

  // A job newer than `seen` with parts left to claim.
  uint64_t wait_for_job(uint64_t seen) {
    auto ready = [&](uint64_t s) { return generation_of(s) != seen && claimable(s); };
    uint64_t s;
    if (backoff(worker_wait_, [&] { return ready(s = state_.load(std::memory_order_acquire)); })) return s;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      const uint32_t epoch = epoch_.load(std::memory_order_seq_cst);
      s = state_.load(std::memory_order_seq_cst);
      if (ready(s)) break;
      futex_wait(&epoch_, epoch);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return s;
  }

  // Waits until every part of the caller's job has returned.
  void wait_done(uint32_t parts) {
    auto finished = [&] { return done_.load(std::memory_order_acquire) == parts; };
    if (backoff(caller_wait_, finished)) return;
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    for (uint32_t d; (d = done_.load(std::memory_order_seq_cst)) != parts;) futex_wait(&done_, d);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  // Spins, then yields, until `ready` or the time is up; true when ready.
  template <typename Ready>
  static bool backoff(const Backoff& b, Ready&& ready) {
    const auto start = Clock::now();
    for (int i = 0;; ++i) {
      if (ready()) return true;
      if ((i & 63) == 63 && Clock::now() - start > b.spin) break;
      spin_pause();
    }
    for (;;) {
      if (ready()) return true;
      if (Clock::now() - start > b.spin + b.yield) return false;
      sched_yield();
    }
  }

  const int size_;
  const ThreadSource source_;
  Backoff worker_wait_, caller_wait_;
  std::vector<std::thread> workers_;
  std::atomic<bool> busy_{false}, caller_sleeping_{false};
  uint64_t generation_ = 0;  // the caller's, under busy_
  Clock::time_point last_end_{};  // when the last job ended, under busy_
  RunModeChooser modes_;          // under busy_
  alignas(64) std::atomic<uint64_t> state_{0};
  alignas(64) std::atomic<uint32_t> done_{0};
  alignas(64) std::atomic<uint32_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> failed_{false};  // a part of the current job threw; the first one stores error_
  std::exception_ptr error_;
  std::atomic<void (*)(void*, int, int)> body_{nullptr};
  std::atomic<void*> ctx_{nullptr};
};

Pool& pool() {
  // Leaked on purpose: joining threads from a static destructor at exit can
  // deadlock when the runtime unloads libraries in an unexpected order.
  static Pool* instance = [] {
    ThreadCount n = configured_thread_count();
    if (n.threads > kMaxThreads) n.threads = kMaxThreads;
    return new Pool(n, available_cpus());
  }();
  return *instance;
}

}  // namespace

int thread_count() { return pool().size(); }

const char* thread_count_source() {
  switch (pool().source()) {
    case ThreadSource::environment: return "environment";
    case ThreadSource::affinity: return "affinity";
    case ThreadSource::cgroup: return "cgroup";
    case ThreadSource::hardware: break;
  }
  return "hardware";
}

void run_parallel(int parts, void (*body)(void*, int, int), void* ctx) { pool().run(parts, body, ctx); }

int parts_for(double work) {
  sized = Sizing{work, false};
  const double wanted = work / (kWorkPerMicrosecond * kMinPartMicroseconds);
  const int n = thread_count();
  return wanted < 2.0 ? 1 : (wanted < n ? static_cast<int>(wanted) : n);
}

int pieces_for(double work, int64_t pieces) {
  const int threads = parts_for(work);
  if (threads <= 1) return 1;
  const int64_t most = int64_t(kPiecesPerThread) * threads;
  return int(pieces < most ? pieces : most);
}

void expect_work(double work) { sized = Sizing{work, true}; }

#ifdef LLTM_POOL_HOOKS
void set_pool_window_hook(void (*hook)(int)) { window_hook.store(hook); }
#endif

}  // namespace lltm::cpu
