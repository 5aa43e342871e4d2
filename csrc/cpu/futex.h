// Sleeping on a 32-bit atomic until another thread changes it: the Linux
// futex, or a condition variable elsewhere. wait() may return spuriously;
// callers re-check their condition in a loop.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <chrono>
#include <condition_variable>
#include <mutex>
#endif

namespace lltm::cpu {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is a plain 32-bit integer");

#if defined(__linux__)

// Sleeps while *word == expected (checked atomically with going to sleep).
inline void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

// Wakes up to `count` threads sleeping on word.
inline void futex_wake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

#else

// One condition variable for every word: sleeping is the rare path. The
// timeout bounds the cost of a wake-up that raced past the check.
inline std::mutex& futex_mutex() {
  static std::mutex m;
  return m;
}
inline std::condition_variable& futex_condition() {
  static std::condition_variable c;
  return c;
}
inline void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  std::unique_lock<std::mutex> lock(futex_mutex());
  if (word->load() == expected) futex_condition().wait_for(lock, std::chrono::milliseconds(1));
}
inline void futex_wake(std::atomic<uint32_t>*, int) {
  { std::lock_guard<std::mutex> lock(futex_mutex()); }
  futex_condition().notify_all();
}

#endif

}  // namespace lltm::cpu
