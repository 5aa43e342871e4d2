#include "api/validate.h"

#include <cmath>
#include <string>

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

// Each present tensor on its own, then its dtype against its slot's class
// (lltm_ops.def: FLOAT unless the slot says INDEX, ANY_TYPE or BYTES); the
// compute type is that of the first FLOAT tensor, or the INDEX type of a call
// that has none.
void check_tensors(Checking& c, uint32_t slots, int64_t* last) {
  const OpSchema& op = c.op;
  for (int k = 0; k < op.n_slots; ++k) {
    if ((slots >> k & 1u) == 0 || op.slots[k].bytes()) continue;
    last[k] = check_tensor(&c.given.tensors[k], c.fn, op.slots[k].name, op.slots[k].writes());
  }
  int first = -1, first_any = -1;
  for (int k = 0; k < op.n_slots; ++k) {
    if ((slots >> k & 1u) == 0) continue;
    const SlotSchema& slot = op.slots[k];
    const int64_t dtype = c.given.tensors[k].dtype;
    if (slot.bytes()) {
      if (dtype != LLTM_UINT8)
        fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + "; expected " +
                                         kDtypes[LLTM_UINT8].name);
      continue;
    }
    if (slot.index()) {
      if (!is_index_dtype(dtype))
        fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + "; expected " +
                                         kDtypes[LLTM_INT32].name + " (indices)");
    } else if (slot.any_type()) {
      if (!is_float_dtype(dtype) && !is_index_dtype(dtype))
        fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) +
                                         ", which is neither a float type nor " + kDtypes[LLTM_INT32].name);
      if (first_any < 0) {
        first_any = k;
      } else if (is_index_dtype(dtype) != is_index_dtype(c.given.tensors[first_any].dtype) ||
                 (is_index_dtype(dtype) && dtype != c.given.tensors[first_any].dtype)) {
        fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + " but '" +
                                         op.slots[first_any].name + "' has dtype " +
                                         dtype_text(c.given.tensors[first_any].dtype) +
                                         "; float and integer tensors do not mix");
      }
    } else if (!is_float_dtype(dtype)) {
      fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) +
                                       ", which is not a float type");
    }
    c.spans[k] = span_of(c.given.tensors[k], last[k], kDtypes[dtype].bytes);
    if (!is_float_dtype(dtype)) continue;
    if (first < 0) {
      first = k;
      c.call.compute = compute_dtype(int32_t(dtype));
    } else if (op.id != LLTM_OP_COPY && compute_dtype(int32_t(dtype)) != c.call.compute) {  // COPY converts any pair
      fail(LLTM_ERR_INVALID_DTYPE, quoted(c.fn, slot.name) + " has dtype " + dtype_text(dtype) + " but '" +
                                       op.slots[first].name + "' has dtype " +
                                       dtype_text(c.given.tensors[first].dtype) +
                                       "; float64 mixes with no other type");
    }
  }
  if (first < 0 && first_any >= 0) c.call.compute = int32_t(c.given.tensors[first_any].dtype);
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
    const int64_t value = t.sizes[rule.dim] - rule.minus.eval(sizes);
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

void check_shapes(const Checking& c, uint32_t slots) {
  const OpSchema& op = c.op;
  const int64_t* sizes = c.call.sizes;
  for (int k = 0; k < op.n_slots; ++k) {
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
      check_same_sizes(c.fn, &t, slot.name, &c.given.tensors[slot.same_as], op.slots[slot.same_as].name);
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

void check_overlap(const Checking& c) {
  const OpSchema& op = c.op;
  Named named[LLTM_MAX_SLOTS];
  Span spans[LLTM_MAX_SLOTS];
  size_t n = 0, n_out = 0;
  uint32_t slots = c.overlap;
  // A SAME_VIEW slot that is the very same view as the first slot takes no part.
  for (int k = 1; k < op.n_slots; ++k)
    if ((slots >> k & 1u) != 0 && (op.slots[k].bits & ops::decl::SAME_VIEW) != 0 &&
        c.given.tensors[k].dtype == c.given.tensors[0].dtype && same_view(c.given.tensors[k], c.given.tensors[0]))
      slots &= ~(1u << k);
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < op.n_slots; ++k) {
      if ((slots >> k & 1u) == 0 || op.slots[k].writes() != (pass == 0)) continue;
      named[n] = {&c.given.tensors[k], op.slots[k].name};
      spans[n++] = c.spans[k];
    }
    if (pass == 0) n_out = n;
  }
  if (n_out > 0 && any_overlap(spans, n_out, n))
    refuse_overlap(c.fn, named, spans, n_out, named + n_out, spans + n_out, n - n_out);
}

void start(Checking& c) {
  c.call.op = c.op.id;
  c.call.flags = c.given.flags;
  for (int64_t& s : c.call.sizes) s = 0;
}

}  // namespace

void validate(Checking& c) {
  const OpSchema& op = c.op;
  start(c);
  check_given(c);
  const uint32_t present = c.given.given & op.all;
  int64_t last[LLTM_MAX_SLOTS];
  check_tensors(c, present, last);
  check_ranks_and_bind(c);
  check_shapes(c, present);
  check_scalars(c);
  for (int k = 0; k < LLTM_MAX_SLOTS; ++k) c.call.tensors[k] = (present >> k & 1u) ? &c.given.tensors[k] : nullptr;
  for (int s = 0; s < op.n_scalars; ++s) c.call.scalars[s] = c.given.scalars[s];
  c.overlap = present;
  for (int k = 0; k < op.n_slots; ++k)
    if (op.slots[k].bytes()) c.overlap &= ~(1u << k);
  if (const auto check = ops::op_hooks(op.id).check) check(c);
  check_overlap(c);
}

void bind_sizes(Checking& c) {
  const OpSchema& op = c.op;
  start(c);
  uint32_t ranked = 0;
  for (int r = 0; r < op.n_ranked; ++r) ranked |= 1u << op.ranked[r];
  const uint32_t missing = ranked & ~c.given.given;
  if (missing != 0) fail(LLTM_ERR_NULL_POINTER, quoted(c.fn, op.slots[__builtin_ctz(missing)].name) + " is a null pointer");
  int64_t last[LLTM_MAX_SLOTS];
  check_tensors(c, ranked, last);
  check_ranks_and_bind(c);
}

}  // namespace lltm::api
