// An op's own checks beyond what its declaration in lltm_ops.def says (a
// reserve's size, a slot required by a scalar's value), and the size of its
// BYTES slot: registered from the op's file (csrc/ops/<op>.cpp) with
// LLTM_OP_HOOKS, so that no shared file lists ops.
#pragma once

#include <cstdint>
#include <string>

#include "lltm.h"
#include "op_call.h"
#include "ops/schema.h"
#include "overlap.h"

namespace lltm::ops {

// A call being validated: the generic checks have passed up to the scalars.
struct Checking {
  // spans is left unset: each span is written before the overlap check reads it.
  Checking(const char* fn, const lltm_call& given, const OpSchema& op, OpCall& call)
      : fn(fn), given(given), op(op), call(call) {}

  const char* fn;             // the entry point called, which messages name
  const lltm_call& given;     // the call as the caller wrote it
  const OpSchema& op;
  OpCall& call;               // tensors (present slots), scalars, flags, sizes, compute
  Span spans[LLTM_MAX_SLOTS]; // of the present slots
  uint32_t overlap = 0;       // the slots the overlap check covers (a hook adds its BYTES slots)
  uint32_t converted = 0;     // the FLOAT slots whose dtype is not call.compute (staged through it)
  // Called through a typed entry point of ABI 1 or 2, which passes a BYTES
  // slot as an address and a `<slot>_bytes` count: messages name that count.
  bool typed = false;
};

struct OpHooks {
  // Runs after the scalars' checks, before the overlap check.
  void (*check)(Checking& c) = nullptr;
  // The bytes the op's BYTES slot needs for call.sizes and call.compute.
  uint64_t (*buffer_bytes)(const OpCall& call, const char* fn) = nullptr;
  // The op converts between its tensors' float types itself (COPY): any of
  // them may meet in one call, and none is staged.
  bool converts = false;
};

const OpHooks& op_hooks(int32_t op);

// A training call's reserve (BYTES slot `slot`): present, a contiguous 1-D buffer of at least `need` bytes, which
// are its span for the overlap check. Messages give `sizes` ("T = 4, B = 2, S = 8") and `bytes_fn`, the entry
// point that says how many bytes.
void check_reserve(Checking& c, int slot, uint64_t need, const std::string& sizes, const char* bytes_fn);

struct RegisterHooks {
  RegisterHooks(int32_t op, OpHooks hooks);
};

}  // namespace lltm::ops

#define LLTM_OP_HOOKS(ID, ...) \
  static const ::lltm::ops::RegisterHooks register_hooks_##ID(LLTM_OP_##ID, ::lltm::ops::OpHooks{__VA_ARGS__})
