#include "status.h"

namespace lltm {

namespace {
thread_local std::string t_last_error;
}

void set_last_error(const char* message) { t_last_error = message; }

const char* last_error() { return t_last_error.c_str(); }

}  // namespace lltm
