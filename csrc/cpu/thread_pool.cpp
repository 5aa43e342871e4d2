#include "thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define LLTM_PAUSE() _mm_pause()
#else
#define LLTM_PAUSE() std::this_thread::yield()
#endif

namespace lltm::cpu {

namespace {

class Pool {
 public:
  explicit Pool(int threads) : size_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int size() const { return size_; }

  void run(int parts, void (*body)(void*, int, int), void* ctx) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (parts > size_) parts = size_;
    if (!busy.owns_lock() || parts <= 1) {
      for (int p = 0; p < parts; ++p) body(ctx, p, parts);
      return;
    }
    body_ = body;
    ctx_ = ctx;
    parts_ = parts;
    pending_.store(parts - 1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    body(ctx, 0, parts);
    while (pending_.load(std::memory_order_acquire) != 0) LLTM_PAUSE();
  }

 private:
  void work(int index) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t gen = wait_for_job(seen);
      if (stopping_) return;
      seen = gen;
      if (index < parts_) {
        body_(ctx_, index, parts_);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  // Spins for a while (a training loop calls again within microseconds), then sleeps.
  uint64_t wait_for_job(uint64_t seen) {
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(2000);
    for (int i = 0;; ++i) {
      uint64_t gen = generation_.load(std::memory_order_acquire);
      if (gen != seen) return gen;
      if ((i & 255) == 255 && std::chrono::steady_clock::now() > spin_until) break;
      LLTM_PAUSE();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_acq_rel);
    wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_acq_rel);
    return generation_.load(std::memory_order_acquire);
  }

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex busy_, mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0}, sleepers_{0};
  void (*body_)(void*, int, int) = nullptr;
  void* ctx_ = nullptr;
  int parts_ = 0;
  std::atomic<bool> stopping_{false};
};

int configured_threads() {
  if (const char* env = std::getenv("LLTM_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

Pool& pool() {
  // Leaked on purpose: joining threads from a static destructor at exit can
  // deadlock when the runtime unloads libraries in an unexpected order.
  static Pool* instance = new Pool(configured_threads());
  return *instance;
}

}  // namespace

int thread_count() { return pool().size(); }

void run_parallel(int parts, void (*body)(void*, int, int), void* ctx) { pool().run(parts, body, ctx); }

}  // namespace lltm::cpu
