// futex.h's primitive where there is no futex: one mutex and condition
// variable for every word, since sleeping is the pool's rare path. A waker
// changes the word, then takes the mutex before notifying, so a sleeper that
// saw the old value under the mutex is already waiting when the notification
// comes; the timeout is a backstop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace lltm::cpu {

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

}  // namespace lltm::cpu
