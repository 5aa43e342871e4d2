// The generic entry points of ABI 3: any op by its id.
#include <string>

#include "api/device.h"
#include "api/run.h"
#include "api/validate.h"
#include "lltm.h"
#include "ops/hooks.h"

using namespace lltm;

namespace {

const ops::OpSchema& schema_of(int32_t op, const char* fn) {
  const ops::OpSchema* schema = ops::op_schema(op);
  if (schema == nullptr)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": op " + std::to_string(op) + " is not an lltm_op");
  return *schema;
}

}  // namespace

extern "C" {

LLTM_API int32_t lltm_run(int32_t op, const lltm_call* call) {
  const ops::OpSchema* schema = ops::op_schema(op);
  const char* fn = schema != nullptr ? schema->entry : "lltm_run";
  return api::entry(fn, [&] {
    schema_of(op, fn);
    if (call == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'call' is a null pointer");
    api::run_op(fn, *schema, *call);
  });
}

LLTM_API int32_t lltm_buffer_bytes(int32_t op, const lltm_call* call, uint64_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  const char* fn = "lltm_buffer_bytes";
  return api::entry(fn, [&] {
    const ops::OpSchema& schema = schema_of(op, fn);
    if (call == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'call' is a null pointer");
    if (bytes == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'bytes' is a null pointer");
    const auto buffer_bytes = ops::op_hooks(op).buffer_bytes;
    if (buffer_bytes == nullptr)
      fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": the op has no buffer (no BYTES slot)");
    OpCall out;
    ops::Checking c(fn, *call, schema, out);
    api::bind_sizes(c);
    api::device_for(call->device_kind, call->device_index, fn);
    *bytes = buffer_bytes(out, fn);
  });
}

}  // extern "C"
