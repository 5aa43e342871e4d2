// lltm_abi_constant: the constants a binding checks at open, the dtypes and
// ops taken from lltm_ops.def, and the layout of the descriptors.
#include <cstddef>
#include <cstring>
#include <string>

#include "lltm.h"
#include "status.h"

using namespace lltm;

// The layout every binding writes descriptors with: a 64-bit data pointer, then int64 fields.
static_assert(sizeof(void*) == 8, "lltm_tensor descriptors carry 64-bit addresses");
static_assert(offsetof(lltm_tensor, data) == 0 && offsetof(lltm_tensor, ndim) == 8 &&
                  offsetof(lltm_tensor, sizes) == 16 && offsetof(lltm_tensor, strides) == 16 + 8 * LLTM_MAX_DIMS &&
                  offsetof(lltm_tensor, dtype) == 16 + 16 * LLTM_MAX_DIMS,
              "lltm_tensor fields at the offsets of csrc/lltm.h");
static_assert(sizeof(lltm_tensor) == 24 + 16 * LLTM_MAX_DIMS, "lltm_tensor without padding");
static_assert(offsetof(lltm_call, scalars) == 24 && offsetof(lltm_call, tensors) == 24 + 8 * LLTM_MAX_SCALARS &&
                  sizeof(lltm_call) == offsetof(lltm_call, tensors) + LLTM_MAX_SLOTS * sizeof(lltm_tensor),
              "lltm_call without padding");

namespace {

struct AbiConstant {
  const char* name;
  int64_t value;
};

#define LLTM_CONSTANT(name) {#name, int64_t(name)}
#define LLTM_LAYOUT(type, field) {"offsetof(" #type ", " #field ")", int64_t(offsetof(type, field))}
constexpr AbiConstant kAbiConstants[] = {
    LLTM_CONSTANT(LLTM_ABI_VERSION),
    LLTM_CONSTANT(LLTM_MAX_DIMS),
    LLTM_CONSTANT(LLTM_MAX_SLOTS),
    LLTM_CONSTANT(LLTM_MAX_SCALARS),
    LLTM_CONSTANT(LLTM_OK),
    LLTM_CONSTANT(LLTM_ERR_NULL_POINTER),
    LLTM_CONSTANT(LLTM_ERR_INVALID_SHAPE),
    LLTM_CONSTANT(LLTM_ERR_SHAPE_MISMATCH),
    LLTM_CONSTANT(LLTM_ERR_INVALID_DTYPE),
    LLTM_CONSTANT(LLTM_ERR_INVALID_DEVICE),
    LLTM_CONSTANT(LLTM_ERR_BACKEND_UNAVAILABLE),
    LLTM_CONSTANT(LLTM_ERR_OUT_OF_MEMORY),
    LLTM_CONSTANT(LLTM_ERR_CUDA),
    LLTM_CONSTANT(LLTM_ERR_INTERNAL),
    LLTM_CONSTANT(LLTM_ERR_INVALID_ARGUMENT),
    LLTM_CONSTANT(LLTM_CPU),
    LLTM_CONSTANT(LLTM_CUDA),
    LLTM_CONSTANT(LLTM_BACKEND_CPU),
    LLTM_CONSTANT(LLTM_BACKEND_CUDA),
    LLTM_CONSTANT(LLTM_ACCUMULATE_PARAM_GRADS),
    LLTM_CONSTANT(LLTM_SEQUENCE_TRAINING),
    LLTM_CONSTANT(LLTM_COPY_NON_BLOCKING),
    LLTM_CONSTANT(LLTM_MATMUL_PRECISION_HIGHEST),
    LLTM_CONSTANT(LLTM_MATMUL_PRECISION_HIGH),
    LLTM_CONSTANT(LLTM_MATMUL_PRECISION_MEDIUM),
    LLTM_CONSTANT(LLTM_MEMORY_ALLOCATED),
    LLTM_CONSTANT(LLTM_MEMORY_PEAK_ALLOCATED),
    LLTM_CONSTANT(LLTM_MEMORY_RESERVED),
    LLTM_CONSTANT(LLTM_NCCL_UNIQUE_ID_BYTES),
    LLTM_CONSTANT(LLTM_NCCL_MIN_VERSION),
    LLTM_CONSTANT(LLTM_ALL_REDUCE),
    LLTM_CONSTANT(LLTM_BROADCAST),
    LLTM_CONSTANT(LLTM_ALL_GATHER),
    LLTM_CONSTANT(LLTM_REDUCE_SCATTER),
    LLTM_CONSTANT(LLTM_REDUCE_SUM),
    LLTM_CONSTANT(LLTM_REDUCE_MEAN),
    LLTM_CONSTANT(LLTM_COLLECTIVE_OVERLAP),
#define LLTM_DTYPE(ID, code, name, bytes, cls) LLTM_CONSTANT(LLTM_##ID),
#define LLTM_OP(ID, code, entry, sizes, flags) LLTM_CONSTANT(LLTM_OP_##ID),
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
    {"sizeof(lltm_tensor)", int64_t(sizeof(lltm_tensor))},
    LLTM_LAYOUT(lltm_tensor, data),
    LLTM_LAYOUT(lltm_tensor, ndim),
    LLTM_LAYOUT(lltm_tensor, sizes),
    LLTM_LAYOUT(lltm_tensor, strides),
    LLTM_LAYOUT(lltm_tensor, dtype),
    {"sizeof(lltm_call)", int64_t(sizeof(lltm_call))},
    LLTM_LAYOUT(lltm_call, device_kind),
    LLTM_LAYOUT(lltm_call, device_index),
    LLTM_LAYOUT(lltm_call, src_device_kind),
    LLTM_LAYOUT(lltm_call, src_device_index),
    LLTM_LAYOUT(lltm_call, flags),
    LLTM_LAYOUT(lltm_call, given),
    LLTM_LAYOUT(lltm_call, scalars),
    LLTM_LAYOUT(lltm_call, tensors),
};
#undef LLTM_CONSTANT
#undef LLTM_LAYOUT

}  // namespace

extern "C" LLTM_API int32_t lltm_abi_constant(const char* name, int64_t* value) {
  return guard([&] {
    if (name == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_abi_constant: 'name' is a null pointer");
    if (value == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_abi_constant: 'value' is a null pointer");
    for (const AbiConstant& c : kAbiConstants) {
      if (std::strcmp(c.name, name) == 0) {
        *value = c.value;
        return;
      }
    }
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string("lltm_abi_constant: no constant named '") + name + "'");
  });
}
