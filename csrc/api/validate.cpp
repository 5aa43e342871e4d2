#include "api/validate.h"

#include <cmath>
#include <optional>
#include <string>

#include "api/recall.h"
#include "api/precision.h"
#include "lltm_args.h"
#include "ops/dtypes.h"
#include "overlap.h"
#include "status.h"

namespace lltm::api {

using ops::Checking;
using ops::OpSchema;
using ops::ShapeKind;
using ops::SlotSchema;

namespace {

std::string quoted(const char* fn, const char* name) { return std::string(fn) + ": '" + name + "'"; }

std::string dtype_text(int64_t code) {
  const DtypeInfo* info = dtype_info(code);
  return info != nullptr ? info->name : std::to_string(code);
}

void check_given(const Checking& c) {
  const OpSchema& op = c.op;
  const uint32_t given = c.given.given;
  if ((given & ~op.all) != 0)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": 'given' has bits past the op's " +
                                        std::to_string(op.n_slots) + " slots: " + std::to_string(given));
  const uint32_t missing = op.required & ~given;
  if (missing != 0) fail(LLTM_ERR_NULL_POINTER, quoted(c.fn, op.slots[__builtin_ctz(missing)].name) + " is a null pointer");
  if ((c.given.flags & ~op.flags) != 0)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": unknown bits in flags " + std::to_string(c.given.flags));
}

// Dtypes as bits of a mask: the FLOAT ones, and those computed in each type.
static_assert(kDtypeCount <= 64, "dtype codes index a 64-bit mask");
constexpr uint64_t dtype_bits(bool (*keep)(int32_t, int32_t), int32_t arg) {
  uint64_t bits = 0;
  for (int32_t code = 0; code < kDtypeCount; ++code)
    if (keep(code, arg)) bits |= uint64_t(1) << code;
  return bits;
}
constexpr uint64_t kFloatDtypes = dtype_bits([](int32_t code, int32_t) { return is_float_dtype(code); }, 0);
struct ComputedIn {
  uint64_t bits[kDtypeCount];
};
constexpr ComputedIn computed_in() {
  ComputedIn c{};
  for (int32_t compute = 0; compute < kDtypeCount; ++compute)
    c.bits[compute] = dtype_bits(
        [](int32_t code, int32_t in) { return is_float_dtype(code) && compute_dtype(code) == in; }, compute);
  return c;
}
constexpr ComputedIn kComputedIn = computed_in();
// Bytes per element by code, 0 past the dtypes, for any code masked to 6 bits.
struct ElementBytes {
  int64_t bytes[64];
};
constexpr ElementBytes element_bytes() {
  ElementBytes e{};
  for (int32_t code = 0; code < kDtypeCount; ++code) e.bytes[code] = kDtypes[code].bytes;
  return e;
}
constexpr ElementBytes kElementBytes = element_bytes();

[[noreturn]] void refuse_dtype(const Checking& c, int k, int first) {
  const SlotSchema& slot = c.op.slots[k];
  const int64_t dtype = c.given.tensors[k].dtype;
  if (slot.bytes())
    fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + "; expected " +
                                     kDtypes[LLTM_UINT8].name);
  if (first < 0)
    fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) +
                                     ", which is not a float type");
  fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + " but '" +
                                   c.op.slots[first].name + "' has dtype " + dtype_text(c.given.tensors[first].dtype) +
                                   "; float64 mixes with no other type");
}

// The INDEX tensors of a call: those of INDEX slots, which must hold int32,
// and of ANY_TYPE slots holding it, whose class all ANY_TYPE tensors share.
// Returns their slots; a call of INDEX tensors only (CAT of int32) computes
// in their type.
uint32_t check_index_tensors(Checking& c, uint32_t slots) {
  const OpSchema& op = c.op;
  for (uint32_t m = slots & op.index_slots; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    const int64_t dtype = c.given.tensors[k].dtype;
    if (!is_index_dtype(dtype))
      fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, op.slots[k].name) + " has dtype " + dtype_text(dtype) + "; expected " +
                                       kDtypes[LLTM_INT32].name + " (indices)");
  }
  uint32_t index = slots & op.index_slots;
  const uint32_t any = slots & op.any_type_slots;
  if (any != 0) {
    const int first = __builtin_ctz(any);
    const int64_t first_dtype = c.given.tensors[first].dtype;
    for (uint32_t m = any; m != 0; m &= m - 1) {
      const int k = __builtin_ctz(m);
      const int64_t dtype = c.given.tensors[k].dtype;
      if (is_index_dtype(dtype) != is_index_dtype(first_dtype) || (is_index_dtype(dtype) && dtype != first_dtype))
        fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, op.slots[k].name) + " has dtype " + dtype_text(dtype) + " but '" +
                                         op.slots[first].name + "' has dtype " + dtype_text(first_dtype) +
                                         "; float and integer tensors do not mix");
      if (is_index_dtype(dtype)) index |= 1u << k;
    }
    if (is_index_dtype(first_dtype)) c.call.compute = int32_t(first_dtype);
  }
  return index;
}

// Each present tensor on its own (check_tensor), then the dtypes; the
// compute type is that of the first FLOAT slot. Messages follow that order:
// the first pass only tells whether everything passes, and where something
// does not, refuse_tensors finds the first rule broken. `index` is what
// check_index_tensors returned where the first pass got that far.
[[noreturn]] void refuse_tensors(Checking& c, uint32_t slots, bool converts, std::optional<uint32_t> index = {}) {
  const OpSchema& op = c.op;
  const uint32_t floats = slots & ~op.bytes_slots;
  for (uint32_t m = floats; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    check_tensor(&c.given.tensors[k], c.fn, op.slots[k].name, (op.write_slots >> k & 1u) != 0);
  }
  for (uint32_t m = slots & op.bytes_slots; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    if (c.given.tensors[k].dtype != LLTM_UINT8) refuse_dtype(c, k, -1);
  }
  int first = -1;
  if (!index) index = check_index_tensors(c, floats);
  for (uint32_t m = floats & ~*index; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    const int64_t dtype = c.given.tensors[k].dtype;
    if (!is_float_dtype(dtype)) refuse_dtype(c, k, -1);
    if (first < 0)
      first = k;
    else if (!converts && compute_dtype(int32_t(dtype)) != compute_dtype(int32_t(c.given.tensors[first].dtype)))
      refuse_dtype(c, k, first);
  }
  fail(LLTM_ERR_INTERNAL, std::string(c.fn) + ": a tensor was refused, then not");
}

void check_tensors(Checking& c, uint32_t slots) {
  const OpSchema& op = c.op;
  const uint32_t floats = slots & ~op.bytes_slots;
  bool ok = true;
  uint64_t seen = 0;  // the dtypes of the FLOAT slots, as bits
  for (uint32_t m = floats; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    const lltm_tensor& t = c.given.tensors[k];
    int64_t last;
    ok &= tensor_fits(t, (op.write_slots >> k & 1u) != 0, &last);
    ok &= uint64_t(t.dtype) < 64;
    seen |= uint64_t(1) << (t.dtype & 63);
    c.spans[k] = span_of(t, last, kElementBytes.bytes[t.dtype & 63]);
  }
  for (uint32_t m = slots & op.bytes_slots; m != 0; m &= m - 1) ok &= c.given.tensors[__builtin_ctz(m)].dtype == LLTM_UINT8;
  const bool converts = ops::op_hooks(op.id).converts;
  if (!ok) refuse_tensors(c, slots, converts);
  // Integer tensors (INDEX and ANY_TYPE slots) leave the float rules below.
  uint32_t index = 0;
  if ((floats & (op.index_slots | op.any_type_slots)) != 0) {
    index = check_index_tensors(c, floats);
    seen = 0;
    for (uint32_t m = floats & ~index; m != 0; m &= m - 1) seen |= uint64_t(1) << (c.given.tensors[__builtin_ctz(m)].dtype & 63);
  }
  const uint32_t reals = floats & ~index;
  if (reals == 0) return;
  if ((seen & ~kFloatDtypes) != 0) refuse_tensors(c, slots, converts, index);
  const int32_t compute = compute_dtype(int32_t(c.given.tensors[__builtin_ctz(reals)].dtype));
  if (!converts && (seen & ~kComputedIn.bits[compute]) != 0) refuse_tensors(c, slots, converts, index);
  c.call.compute = compute;
  if (converts || seen == uint64_t(1) << compute) return;
  for (uint32_t m = reals; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    if (c.given.tensors[k].dtype != compute) c.converted |= 1u << k;
  }
}

void check_ranks_and_bind(Checking& c) {
  const OpSchema& op = c.op;
  for (int r = 0; r < op.n_ranked; ++r) {
    const int k = op.ranked[r];
    const lltm_tensor& t = c.given.tensors[k];
    const int64_t rank = op.slots[k].rank;
    if (t.ndim != rank)
      fail(LLTM_ERR_SHAPE_MISMATCH, quoted(c.fn, op.slots[k].name) + " must have " + std::to_string(rank) +
                                        " dimension" + (rank == 1 ? "" : "s") + ", got " + shape_string(t));
  }
  int64_t* sizes = c.call.sizes;
  for (int r = 0; r < op.n_rules; ++r) {
    const ops::SizeRule& rule = op.rules[r];
    const lltm_tensor& t = c.given.tensors[rule.slot];
    const int64_t value = rule.solved ? t.sizes[rule.dim] - rule.minus.eval(sizes) : t.sizes[rule.dim];
    if (rule.solved && value < 1) {
      const SlotSchema& slot = op.slots[rule.slot];
      fail(LLTM_ERR_SHAPE_MISMATCH,
           quoted(c.fn, slot.name) + " must have more than " + rule.minus_symbols + " = " +
               std::to_string(rule.minus.eval(sizes)) + " " +
               (rule.dim == slot.rank - 1 ? std::string("columns") : "entries in dimension " + std::to_string(rule.dim)) +
               " (" + [&] {
                 // The dimension's own term, from the slot's symbols "(B, S+F)".
                 std::string all(slot.symbols + 1, slot.symbols + std::char_traits<char>::length(slot.symbols) - 1);
                 for (int d = 0; d < rule.dim; ++d) all = all.substr(all.find(", ") + 2);
                 return all.substr(0, all.find(", "));
               }() + "), got " + shape_string(t));
    }
    sizes[rule.letter] = value;
  }
}

// Every [..] shape in one pass that only tells whether all match; the slots
// are then checked one by one in the op's shape_order, all of them where a
// [..] shape failed (to name the first in that order), else those with more
// to check.
void check_shapes(const Checking& c, uint32_t slots) {
  const OpSchema& op = c.op;
  const int64_t* sizes = c.call.sizes;
  int64_t want[OpSchema::kMaxTerms];
  for (int i = 0; i < op.n_terms; ++i) want[i] = op.terms[i].eval(sizes);
  bool ok = true;
  for (uint32_t m = slots & op.dims_slots; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    const SlotSchema& slot = op.slots[k];
    const lltm_tensor& t = c.given.tensors[k];
    ok &= t.ndim == slot.rank;
    for (int d = 0; d < slot.rank; ++d) ok &= t.sizes[d] == want[slot.term_of[d]];
  }
  if (ok) slots &= ~op.plain_dims_slots;
  for (int i = 0; i < op.n_shape_order && (slots & op.shaped_slots) != 0; ++i) {
    const int k = op.shape_order[i];
    if ((slots >> k & 1u) == 0) continue;
    const SlotSchema& slot = op.slots[k];
    const lltm_tensor& t = c.given.tensors[k];
    if (slot.shape == ShapeKind::DIMS) {
      bool ok = t.ndim == slot.rank;
      for (int d = 0; ok && d < slot.rank; ++d) ok = t.sizes[d] == slot.dims[d].eval(sizes);
      if (!ok) {
        std::string want = "[";
        for (int d = 0; d < slot.rank; ++d) want += (d ? ", " : "") + std::to_string(slot.dims[d].eval(sizes));
        fail(LLTM_ERR_SHAPE_MISMATCH, quoted(c.fn, slot.name) + " must have shape " + want + "] " + slot.symbols +
                                          ", got " + shape_string(t));
      }
    } else if (slot.shape == ShapeKind::SAME_AS && (slots >> slot.same_as & 1u) != 0) {
      // A SAME_VIEW slot is the second operand of the first (y += alpha x, dst = src) and is
      // named second; any other is compared with the slot it copies (grad with param).
      const lltm_tensor& other = c.given.tensors[slot.same_as];
      const char* other_name = op.slots[slot.same_as].name;
      if ((slot.bits & ops::decl::SAME_VIEW) != 0)
        check_same_sizes(c.fn, &other, other_name, &t, slot.name);
      else
        check_same_sizes(c.fn, &t, slot.name, &other, other_name);
    }
    if ((slot.bits & ops::decl::CONTIGUOUS) != 0 && !is_contiguous(t))
      fail(LLTM_ERR_INVALID_SHAPE, quoted(c.fn, slot.name) + " must be contiguous");
  }
}

void check_scalars(const Checking& c) {
  const OpSchema& op = c.op;
  for (int s = 0; s < op.n_scalars; ++s) {
    const ops::ScalarSchema& scalar = op.scalars[s];
    const double v = c.given.scalars[s];
    switch (scalar.kind) {
      case ops::ScalarKind::ANY:
        break;
      case ops::ScalarKind::CLOSED:
      case ops::ScalarKind::HALF_OPEN:
        check_range(c.fn, scalar.name, v, scalar.lo, scalar.hi, scalar.kind == ops::ScalarKind::HALF_OPEN);
        break;
      case ops::ScalarKind::INTEGER:
        if (v < scalar.lo)
          fail(LLTM_ERR_INVALID_ARGUMENT, quoted(c.fn, scalar.name) + " must be at least " +
                                              std::to_string(int64_t(scalar.lo)) + ", got " +
                                              (v >= -0x1p63 ? std::to_string(int64_t(v)) : std::to_string(v)));
        if (!(v <= scalar.hi) || v != std::floor(v))
          fail(LLTM_ERR_INVALID_ARGUMENT, quoted(c.fn, scalar.name) + " must be an integer from " +
                                              std::to_string(int64_t(scalar.lo)) + " to " +
                                              std::to_string(int64_t(scalar.hi)) + ", got " + std::to_string(v));
        break;
    }
  }
}

// The scalars checked against the op's declaration, then the call's.
void bind_scalars(Checking& c) {
  check_scalars(c);
  for (int s = 0; s < c.op.n_scalars; ++s) c.call.scalars[s] = c.given.scalars[s];
}

void check_overlap(const Checking& c) {
  const OpSchema& op = c.op;
  uint32_t slots = c.overlap;
  // A SAME_VIEW slot that is the very same view as the first slot takes no part.
  for (uint32_t m = slots & op.same_view_slots; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    if (c.given.tensors[k].dtype == c.given.tensors[0].dtype && same_view(c.given.tensors[k], c.given.tensors[0]))
      slots &= ~(1u << k);
  }
  const uint32_t outputs = slots & op.write_slots;
  if (outputs == 0) return;
  Span spans[LLTM_MAX_SLOTS];
  size_t n = 0;
  for (uint32_t m = outputs; m != 0; m &= m - 1) spans[n++] = c.spans[__builtin_ctz(m)];
  const size_t n_out = n;
  for (uint32_t m = slots & ~op.write_slots; m != 0; m &= m - 1) spans[n++] = c.spans[__builtin_ctz(m)];
  if (!any_overlap(spans, n_out, n)) return;
  Named named[LLTM_MAX_SLOTS];
  n = 0;
  for (uint32_t m = outputs; m != 0; m &= m - 1) named[n++] = {&c.given.tensors[__builtin_ctz(m)], op.slots[__builtin_ctz(m)].name};
  for (uint32_t m = slots & ~op.write_slots; m != 0; m &= m - 1)
    named[n++] = {&c.given.tensors[__builtin_ctz(m)], op.slots[__builtin_ctz(m)].name};
  refuse_overlap(c.fn, named, spans, n_out, named + n_out, spans + n_out, n - n_out);
}

void start(Checking& c) {
  c.call.op = c.op.id;
  c.call.flags = c.given.flags;
  c.call.float32_matmul_precision = float32_matmul_precision();
  for (int64_t& s : c.call.sizes) s = 0;
}

}  // namespace

void validate(Checking& c) {
  const OpSchema& op = c.op;
  start(c);
  if (recall(c)) {
    check_overlap(c);
    return;
  }
  check_given(c);
  const uint32_t present = c.given.given & op.all;
  check_tensors(c, present);
  check_ranks_and_bind(c);
  check_shapes(c, present);
  bind_scalars(c);
  for (int k = 0; k < op.n_slots; ++k) c.call.tensors[k] = (present >> k & 1u) ? &c.given.tensors[k] : nullptr;
  c.overlap = present & ~op.bytes_slots;
  if (const auto check = ops::op_hooks(op.id).check) check(c);
  remember(c);
  check_overlap(c);
}

void bind_sizes(Checking& c) {
  const OpSchema& op = c.op;
  start(c);
  uint32_t ranked = 0;
  for (int r = 0; r < op.n_ranked; ++r) ranked |= 1u << op.ranked[r];
  const uint32_t missing = ranked & ~c.given.given;
  if (missing != 0) fail(LLTM_ERR_NULL_POINTER, quoted(c.fn, op.slots[__builtin_ctz(missing)].name) + " is a null pointer");
  check_tensors(c, ranked);
  check_ranks_and_bind(c);
  // A buffer's size may depend on a scalar (the stacked ops' align).
  bind_scalars(c);
}

}  // namespace lltm::api
