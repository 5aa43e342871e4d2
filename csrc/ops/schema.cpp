#include "ops/schema.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lltm::ops {

namespace {

// A declaration lltm_ops.def's format does not allow: the build is broken,
// so the library stops when it loads rather than check calls by a wrong rule.
[[noreturn]] void bad_declaration(const char* op, const char* what, const char* text) {
  std::fprintf(stderr, "lltm: lltm_ops.def, op %s: %s: \"%s\"\n", op, what, text);
  std::abort();
}

struct Parser {
  const char* op;
  const char* text;
  const char* p;

  void skip_spaces() {
    while (*p == ' ') ++p;
  }
  int64_t integer() {
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(*p))) v = v * 10 + (*p++ - '0');
    return v;
  }
  // A sum of parts "3S", "S", "2", joined by '+' or '-', up to a character of `stops`.
  Term term(const char* stops) {
    Term t;
    int64_t sign = 1;
    for (;;) {
      skip_spaces();
      const bool digits = std::isdigit(static_cast<unsigned char>(*p)) != 0;
      const int64_t n = digits ? integer() : 1;
      if (*p >= 'A' && *p <= 'Z') {
        if (t.parts == Term::kMaxParts) bad_declaration(op, "too many sizes in one term", text);
        t.letter[t.parts] = int8_t(*p++ - 'A');
        t.coef[t.parts++] = sign * n;
      } else if (digits) {
        t.constant += sign * n;
      } else {
        bad_declaration(op, "expected a size or an integer", text);
      }
      skip_spaces();
      if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        continue;
      }
      if (std::strchr(stops, *p) == nullptr) bad_declaration(op, "unexpected character", text);
      return t;
    }
  }
};

int slot_named(const OpSchema& s, const char* name, size_t length) {
  for (int k = 0; k < s.n_slots; ++k)
    if (std::strlen(s.slots[k].name) == length && std::strncmp(s.slots[k].name, name, length) == 0) return k;
  return -1;
}

void copy_symbols(char* out, size_t capacity, const char* begin, const char* end, const char* op) {
  const size_t n = size_t(end - begin);
  if (n + 1 > capacity) bad_declaration(op, "rule too long", begin);
  std::memcpy(out, begin, n);
  out[n] = '\0';
}

void parse_shape(OpSchema& s, SlotSchema& slot, const char* shape) {
  Parser in{s.entry, shape, shape};
  if (std::strcmp(shape, "*") == 0) {
    slot.shape = ShapeKind::ANY;
    return;
  }
  if (shape[0] == '=') {
    slot.shape = ShapeKind::SAME_AS;
    slot.same_as = slot_named(s, shape + 1, std::strlen(shape + 1));
    if (slot.same_as < 0) bad_declaration(s.entry, "no earlier slot of that name", shape);
    return;
  }
  if (*in.p++ != '[') bad_declaration(s.entry, "a shape is [..], =slot or *", shape);
  slot.shape = ShapeKind::DIMS;
  for (;;) {
    if (slot.rank == LLTM_MAX_DIMS) bad_declaration(s.entry, "more than LLTM_MAX_DIMS dimensions", shape);
    slot.dims[slot.rank++] = in.term(",]");
    if (*in.p == '\0') bad_declaration(s.entry, "a shape ends with ']'", shape);
    if (*in.p++ == ']') break;
  }
  if (*in.p != '\0') bad_declaration(s.entry, "text after the shape", shape);
  // "[B, S+F]" prints as "(B, S+F)".
  copy_symbols(slot.symbols, sizeof slot.symbols, shape, in.p, s.entry);
  slot.symbols[0] = '(';
  slot.symbols[in.p - shape - 1] = ')';
}

void parse_sizes(OpSchema& s, const char* sizes) {
  Parser in{s.entry, sizes, sizes};
  for (;;) {
    in.skip_spaces();
    if (*in.p == '\0') return;
    if (!(in.p[0] >= 'A' && in.p[0] <= 'Z' && in.p[1] == '=')) bad_declaration(s.entry, "expected LETTER=slot[dim]", sizes);
    SizeRule& r = s.rules[s.n_rules++];
    r.letter = int8_t(in.p[0] - 'A');
    in.p += 2;
    const char* name = in.p;
    while (*in.p != '[' && *in.p != '\0') ++in.p;
    r.slot = slot_named(s, name, size_t(in.p - name));
    if (r.slot < 0 || *in.p != '[') bad_declaration(s.entry, "a size must come from a slot of the op", sizes);
    const SlotSchema& slot = s.slots[r.slot];
    if (slot.optional()) bad_declaration(s.entry, "a size must come from a required slot", sizes);
    ++in.p;
    r.dim = int(in.integer());
    if (*in.p++ != ']' || slot.shape != ShapeKind::DIMS || r.dim >= slot.rank)
      bad_declaration(s.entry, "a size must come from a dimension of a slot with a [..] shape", sizes);
    if (*in.p == '-') {
      ++in.p;
      const char* begin = in.p;
      r.minus = in.term(" ");
      r.solved = true;
      copy_symbols(r.minus_symbols, sizeof r.minus_symbols, begin, in.p, s.entry);
    } else if (*in.p != ' ' && *in.p != '\0') {
      bad_declaration(s.entry, "a size is slot[dim] or slot[dim]-term", sizes);
    }
    bool ranked = false;
    for (int k = 0; k < s.n_ranked; ++k) ranked = ranked || s.ranked[k] == r.slot;
    if (!ranked) s.ranked[s.n_ranked++] = r.slot;
  }
}

bool same_term(const Term& x, const Term& y) {
  if (x.constant != y.constant || x.parts != y.parts) return false;
  for (int p = 0; p < x.parts; ++p)
    if (x.letter[p] != y.letter[p] || x.coef[p] != y.coef[p]) return false;
  return true;
}

bool same_rule(const SlotSchema& a, const SlotSchema& b) {
  if (a.shape != ShapeKind::DIMS || b.shape != ShapeKind::DIMS || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (!same_term(a.dims[d], b.dims[d])) return false;
  return true;
}

void index_terms(OpSchema& s) {
  for (int k = 0; k < s.n_slots; ++k) {
    SlotSchema& slot = s.slots[k];
    if (slot.shape != ShapeKind::DIMS) continue;
    s.dims_slots |= 1u << k;
    if ((slot.bits & decl::CONTIGUOUS) == 0) s.plain_dims_slots |= 1u << k;
    for (int d = 0; d < slot.rank; ++d) {
      int i = 0;
      while (i < s.n_terms && !same_term(s.terms[i], slot.dims[d])) ++i;
      if (i == s.n_terms) s.terms[s.n_terms++] = slot.dims[d];
      slot.term_of[d] = int8_t(i);
    }
  }
}

void order_shape_checks(OpSchema& s) {
  uint32_t first = 0;
  for (int r = 0; r < s.n_ranked; ++r) {
    const int source = s.ranked[r];
    uint32_t siblings = 0;
    for (int k = 0; k < s.n_slots; ++k)
      if (k != source && (s.slots[k].bits & (decl::kRoles | decl::OPTIONAL)) == decl::IN &&
          same_rule(s.slots[k], s.slots[source]))
        siblings |= 1u << k;
    if (siblings != 0) first |= siblings | 1u << source;
  }
  for (uint32_t m = s.shaped_slots & first; m != 0; m &= m - 1) s.shape_order[s.n_shape_order++] = __builtin_ctz(m);
  for (uint32_t m = s.shaped_slots & ~first; m != 0; m &= m - 1) s.shape_order[s.n_shape_order++] = __builtin_ctz(m);
}

// What the op's lines declare, once all are read.
void finish(OpSchema& s) {
  parse_sizes(s, s.sizes_text);
  order_shape_checks(s);
  index_terms(s);
}

struct Table {
  OpSchema ops[LLTM_OP_END];
};

Table build() {
  using namespace decl;
  constexpr ScalarKind ANY = ScalarKind::ANY, CLOSED = ScalarKind::CLOSED, HALF_OPEN = ScalarKind::HALF_OPEN,
                       INTEGER = ScalarKind::INTEGER;
  Table t{};
  OpSchema* op = nullptr;
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry_name, size_rules, op_flags) \
  if (op != nullptr) finish(*op);                            \
  op = &t.ops[code];                                        \
  op->id = code;                                            \
  op->entry = entry_name;                                   \
  op->flags = op_flags;                                     \
  op->sizes_text = size_rules;
#define LLTM_SLOT(slot_name, role, shape_rule)                                                      \
  {                                                                                                 \
    if (op->n_slots == LLTM_MAX_SLOTS) bad_declaration(op->entry, "more than LLTM_MAX_SLOTS slots", #slot_name); \
    SlotSchema& slot = op->slots[op->n_slots];                                                      \
    slot.name = #slot_name;                                                                         \
    slot.bits = role;                                                                               \
    parse_shape(*op, slot, shape_rule);                                                             \
    const uint32_t bit = 1u << op->n_slots;                                                         \
    op->all |= bit;                                                                                 \
    if (!slot.optional()) op->required |= bit;                                                      \
    if (slot.bytes()) op->bytes_slots |= bit;                                                       \
    if (slot.writes()) op->write_slots |= bit;                                                      \
    if ((slot.bits & SAME_VIEW) != 0) op->same_view_slots |= bit;                                   \
    if (slot.index()) op->index_slots |= bit;                                                       \
    if (slot.any_type()) op->any_type_slots |= bit;                                                 \
    if (!slot.bytes() && (slot.shape != ShapeKind::ANY || (slot.bits & CONTIGUOUS) != 0))           \
      op->shaped_slots |= bit;                                                                      \
    ++op->n_slots;                                                                                  \
  }
#define LLTM_SCALAR(scalar_name, scalar_kind, low, high)                                            \
  {                                                                                                 \
    if (op->n_scalars == LLTM_MAX_SCALARS) bad_declaration(op->entry, "more than LLTM_MAX_SCALARS scalars", #scalar_name); \
    op->scalars[op->n_scalars++] = {#scalar_name, scalar_kind, double(low), double(high)};          \
  }
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
  if (op != nullptr) finish(*op);
  return t;
}

const Table table = build();

}  // namespace

const OpSchema* op_schema(int64_t op) {
  return op > 0 && op < LLTM_OP_END && table.ops[op].id == op ? &table.ops[op] : nullptr;
}

}  // namespace lltm::ops
