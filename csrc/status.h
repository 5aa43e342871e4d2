// Errors inside the library are C++ exceptions carrying an lltm_status; each
// exported function converts them at its boundary with guard(), so that no
// exception crosses the C ABI and every failure leaves a message behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "lltm.h"

namespace lltm {

class Error : public std::runtime_error {
 public:
  Error(lltm_status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  lltm_status code() const { return code_; }

 private:
  lltm_status code_;
};

[[noreturn]] inline void fail(lltm_status code, const std::string& message) { throw Error(code, message); }

// The last failure's message on this thread. Storing one never allocates
// and never throws (it runs where an allocation has just failed, in
// functions that must not throw); past kMaxErrorBytes - 1 bytes it is cut.
constexpr size_t kMaxErrorBytes = 4096;
void set_last_error(const char* message) noexcept;
// Puts "fn: " in front of the last message.
void name_last_error(const char* fn) noexcept;
const char* last_error() noexcept;

template <typename F>
int32_t guard(F&& body) noexcept {
  try {
    body();
    return LLTM_OK;
  } catch (const Error& e) {
    set_last_error(e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_last_error("out of host memory");
    return LLTM_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return LLTM_ERR_INTERNAL;
  } catch (...) {
    set_last_error("unknown internal error");
    return LLTM_ERR_INTERNAL;
  }
}

}  // namespace lltm
