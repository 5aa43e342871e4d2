// any_overlap on hand-made spans, on both of its paths (the vector one for
// spans within 2 GiB of each other, the scalar one beyond): outputs meeting
// inputs or each other, touching but disjoint ranges, and empty output spans,
// which meet nothing (not even themselves) and must neither hide an overlap
// nor invent one.
#include <cstdint>
#include <cstdio>
#include <initializer_list>

#include "overlap.h"

namespace {

int failures = 0;

void expect(bool got, bool want, const char* what, uintptr_t base) {
  if (got != want) {
    std::fprintf(stderr, "%s (base %#llx): expected %s\n", what, (unsigned long long)base, want ? "an overlap" : "none");
    ++failures;
  }
}

}  // namespace

int main() {
  using lltm::Span;
  using lltm::any_overlap;
  // The second base puts the last span 4 GiB away, so the scalar path judges.
  for (uintptr_t far : {uintptr_t(0), uintptr_t(1) << 32}) {
    const uintptr_t b = 0x10000;
    const Span apart[] = {{b, b + 64}, {b + 64, b + 128}, {b + 128 + far, b + 192 + far}};
    expect(any_overlap(apart, 2, 3), false, "touching, disjoint spans", far);
    const Span out_in[] = {{b, b + 64}, {b + 200, b + 264}, {b + 32 + far, b + 96 + far}};
    expect(any_overlap(out_in, 1, 3), far == 0, "an output meeting an input", far);
    const Span out_out[] = {{b, b + 64}, {b + 60, b + 100}, {b + 300 + far, b + 400 + far}};
    expect(any_overlap(out_out, 2, 3), true, "two outputs meeting", far);
    const Span inputs_only[] = {{b, b + 64}, {b + 100, b + 200}, {b + 150 + far, b + 250 + far}};
    expect(any_overlap(inputs_only, 1, 3), false, "inputs meeting each other", far);
    const Span empty_alone[] = {{b, b}, {b + 100, b + 200}, {b + 300 + far, b + 400 + far}};
    expect(any_overlap(empty_alone, 2, 3), false, "an empty output", far);
    const Span empty_and_overlap[] = {{b, b}, {b + 100, b + 200}, {b + 150, b + 250 + far}};
    expect(any_overlap(empty_and_overlap, 2, 3), true, "an empty output beside a real overlap", far);
  }
  std::printf("overlap_test: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
