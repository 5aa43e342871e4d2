// The single point where a runtime dtype becomes the kernels' scalar type, as
// PyTorch's AT_DISPATCH_FLOATING_TYPES does: the body is a lambda that sees
// `scalar_t`.
#pragma once

#include <string>

#include "status.h"

#define LLTM_DISPATCH_FLOATING_TYPES(DTYPE, NAME, ...)                                     \
  [&] {                                                                                    \
    switch (DTYPE) {                                                                       \
      case LLTM_FLOAT32: {                                                                 \
        using scalar_t = float;                                                            \
        return __VA_ARGS__();                                                              \
      }                                                                                    \
      case LLTM_FLOAT64: {                                                                 \
        using scalar_t = double;                                                           \
        return __VA_ARGS__();                                                              \
      }                                                                                    \
      default:                                                                             \
        ::lltm::fail(LLTM_ERR_INVALID_DTYPE,                                               \
                     std::string(NAME) + ": dtype " + std::to_string(static_cast<int>(DTYPE)) + \
                         " is not float32 (0) or float64 (1)");                            \
    }                                                                                      \
  }()
