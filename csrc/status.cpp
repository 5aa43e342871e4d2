#include "status.h"

#include <cstdio>
#include <cstring>

namespace lltm {

namespace {
thread_local char t_last_error[kMaxErrorBytes];
}

void set_last_error(const char* message) noexcept { std::snprintf(t_last_error, kMaxErrorBytes, "%s", message); }

void name_last_error(const char* fn) noexcept {
  char named[kMaxErrorBytes];
  std::snprintf(named, sizeof named, "%s: %s", fn, t_last_error);
  std::memcpy(t_last_error, named, sizeof named);
}

const char* last_error() noexcept { return t_last_error; }

}  // namespace lltm
