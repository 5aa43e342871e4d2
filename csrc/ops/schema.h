// The op table of lltm_ops.def as data, parsed once when the library loads:
// for each op its slots with their roles and shape rules, how its named sizes
// are taken from its tensors, its scalars and flags. Validation (api/) reads
// only this, so that every op is checked by the same code.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm::ops {

// Bits of a slot's declaration (lltm_ops.def: ROLE | MODIFIERS).
namespace decl {
constexpr uint32_t IN = 1u, OUT = 2u, INOUT = IN | OUT, ACC = 4u;
constexpr uint32_t OPTIONAL = 8u, CONTIGUOUS = 16u, BYTES = 32u, SAME_VIEW = 64u, INDEX = 128u, ANY_TYPE = 256u;
constexpr uint32_t kRoles = IN | OUT | ACC;
}  // namespace decl

enum class ScalarKind { ANY, CLOSED, HALF_OPEN, INTEGER };

// constant + c0 * size[l0] + c1 * size[l1]: one dimension of a shape rule
// ("3S", "S+F", "2"); an unused part has coefficient 0.
struct Term {
  static constexpr int kMaxParts = 2;
  int64_t constant = 0;
  int parts = 0;
  int8_t letter[kMaxParts] = {};  // 0 for 'A'
  int64_t coef[kMaxParts] = {};

  int64_t eval(const int64_t* sizes) const {
    return constant + coef[0] * sizes[letter[0]] + coef[1] * sizes[letter[1]];
  }
};

enum class ShapeKind { DIMS, SAME_AS, ANY };

struct SlotSchema {
  const char* name;
  uint32_t bits;  // decl::
  ShapeKind shape;
  int rank;                         // DIMS
  Term dims[LLTM_MAX_DIMS];         // DIMS
  int same_as;                      // SAME_AS: the slot whose sizes this one has
  char symbols[64];                 // DIMS: the rule as messages print it, "(B, S+F)"
  int8_t term_of[LLTM_MAX_DIMS];    // DIMS: each dimension's term in OpSchema::terms

  bool writes() const { return (bits & (decl::OUT | decl::ACC)) != 0; }
  bool reads() const { return (bits & decl::IN) != 0; }
  bool optional() const { return (bits & decl::OPTIONAL) != 0; }
  bool bytes() const { return (bits & decl::BYTES) != 0; }
  bool index() const { return (bits & decl::INDEX) != 0; }
  bool any_type() const { return (bits & decl::ANY_TYPE) != 0; }
};

// letter = tensors[slot].sizes[dim] - minus; `solved` when minus is not 0.
struct SizeRule {
  int8_t letter;
  int slot, dim;
  bool solved;
  Term minus;
  char minus_symbols[32];  // "S"
};

struct ScalarSchema {
  const char* name;
  ScalarKind kind;
  double lo, hi;
};

struct OpSchema {
  int32_t id = 0;  // 0: no op has this code
  const char* entry = nullptr;
  const char* sizes_text = nullptr;
  uint32_t flags = 0;
  int n_slots = 0, n_scalars = 0, n_rules = 0, n_ranked = 0;
  SlotSchema slots[LLTM_MAX_SLOTS];
  ScalarSchema scalars[LLTM_MAX_SCALARS];
  SizeRule rules[26];
  int ranked[LLTM_MAX_SLOTS];  // the slots named in the sizes, in order of mention
  // The slots whose shapes are checked, in the order they are: first each
  // slot the sizes are read from that has siblings (other required inputs
  // with its shape rule) with those siblings, then the others, each group in
  // slot order; so that a spoiled size is blamed on the input beside its
  // source (old_cell beside old_h) rather than on a slot whose shape is
  // derived from it (weights).
  int shape_order[LLTM_MAX_SLOTS];
  int n_shape_order = 0;
  // The distinct terms of the op's [..] shapes, each evaluated once a call.
  static constexpr int kMaxTerms = LLTM_MAX_SLOTS * LLTM_MAX_DIMS;
  Term terms[kMaxTerms];
  int n_terms = 0;
  uint32_t required = 0;       // given bits that must be set
  uint32_t all = 0;            // given bits of the op's slots
  // Masks of slots, for the per-call checks.
  uint32_t bytes_slots = 0;      // BYTES
  uint32_t write_slots = 0;      // OUT, INOUT, ACC
  uint32_t shaped_slots = 0;     // with a rule to check: [..], =slot or CONTIGUOUS
  uint32_t same_view_slots = 0;  // SAME_VIEW
  uint32_t index_slots = 0;      // INDEX
  uint32_t any_type_slots = 0;   // ANY_TYPE
  uint32_t dims_slots = 0;       // with a [..] shape
  uint32_t plain_dims_slots = 0; // with a [..] shape and nothing more to check (not CONTIGUOUS)
};

// The op with this code, or nullptr.
const OpSchema* op_schema(int64_t op);

}  // namespace lltm::ops
