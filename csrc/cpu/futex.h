// Sleeping on a 32-bit atomic until another thread changes it, the pool's
// one blocking primitive. Each platform fills in these two functions:
//
//   futex_wait(word, expected)  sleeps while *word == expected (checked
//                               atomically with going to sleep); may return
//                               spuriously, so callers re-check in a loop.
//   futex_wake(word, count)     wakes up to `count` threads sleeping on word.
//
// Linux (any architecture) uses the futex system call (futex_linux.h);
// elsewhere a condition variable stands in (futex_condvar.h). A macOS port
// could swap the latter for os_sync_wait_on_address / __ulock_wait.
#pragma once

#include <atomic>
#include <cstdint>

namespace lltm::cpu {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is a plain 32-bit integer");

}  // namespace lltm::cpu

#if defined(__linux__)
#include "futex_linux.h"
#else
#include "futex_condvar.h"
#endif
