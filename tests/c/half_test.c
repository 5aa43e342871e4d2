/*
 * half_test: bfloat16 and float16 through liblltm's C ABI.
 *
 * Conversions (the COPY op, lltm_run): every one of the 65536 bit patterns of
 * each half type widens to float32 exactly and narrows back to itself; every
 * midpoint between two neighbours rounds to the even one, from float32 and
 * from float64, and the doubles just either side of it to the nearer one (a
 * double rounded to float32 first would land on the midpoint: double
 * rounding); values past the largest finite one round to infinity from its
 * half-ulp on; NaN stays NaN. The expected values come from decoding the bit
 * patterns here, by ldexp, independently of the library.
 *
 * A forward step with half-type tensors equals the float32 forward on the
 * same (rounded) values, rounded: the library widens half inputs exactly,
 * runs the float32 kernel and rounds each output once to nearest even, so the
 * results are bit for bit RNE(float32 result); bfloat16 activations with
 * float32 weights and state too.
 *
 * usage: half_test
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lltm.h"

static long failures;

static void fail(const char* what) {
  fprintf(stderr, "half_test: %s\n", what);
  if (++failures >= 20) exit(1);
}

static lltm_tensor vec(void* data, int64_t n, int32_t dtype) {
  lltm_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.ndim = 1;
  t.sizes[0] = n;
  t.strides[0] = 1;
  t.dtype = dtype;
  return t;
}

static int32_t copy(const lltm_tensor* dst, const lltm_tensor* src) {
  lltm_call call;
  memset(&call, 0, sizeof call);
  call.tensors[0] = *dst;
  call.tensors[1] = *src;
  call.given = 3;
  const int32_t status = lltm_run(LLTM_OP_COPY, &call);
  if (status != LLTM_OK) {
    fprintf(stderr, "half_test: copy failed: %s\n", lltm_last_error());
    exit(1);
  }
  return status;
}

/* ---- the half types, decoded here ---- */

typedef struct {
  const char* name;
  int32_t dtype;
  int exponent_bits, mantissa_bits;
} Half;

static const Half kHalves[] = {{"bfloat16", LLTM_BFLOAT16, 8, 7}, {"float16", LLTM_FLOAT16, 5, 10}};

static double decode(const Half* h, uint16_t bits) {
  const int m = h->mantissa_bits, e_max = (1 << h->exponent_bits) - 1, bias = e_max / 2;
  const int sign = bits >> 15, e = (bits >> m) & e_max;
  const uint32_t f = bits & ((1u << m) - 1);
  double v;
  if (e == e_max)
    v = f != 0 ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)f, 1 - bias - m);
  else
    v = ldexp((double)(f | (1u << m)), e - bias - m);
  return sign ? -v : v;
}

static int is_nan_bits(const Half* h, uint16_t bits) {
  const int m = h->mantissa_bits, e_max = (1 << h->exponent_bits) - 1;
  return ((bits >> m) & e_max) == e_max && (bits & ((1u << m) - 1)) != 0;
}

enum { kPatterns = 65536 };

static void check_conversions(const Half* h) {
  static float widened[kPatterns], inputs[4 * kPatterns];
  static double dinputs[4 * kPatterns];
  static uint16_t bits[kPatterns], narrowed[4 * kPatterns], expected[4 * kPatterns];
  char what[256];
  for (int i = 0; i < kPatterns; ++i) bits[i] = (uint16_t)i;
  /* Widening: exact. */
  lltm_tensor src = vec(bits, kPatterns, h->dtype), dst = vec(widened, kPatterns, LLTM_FLOAT32);
  copy(&dst, &src);
  for (int i = 0; i < kPatterns; ++i) {
    const double want = decode(h, (uint16_t)i);
    if (isnan(want) ? !isnan(widened[i]) : (double)widened[i] != want || !signbit(want) != !signbit(widened[i])) {
      snprintf(what, sizeof what, "%s 0x%04x widens to %.9g, expected %.9g", h->name, i, widened[i], want);
      fail(what);
    }
  }
  /* Narrowing from float32 and float64: each finite value to itself, the
   * midpoints (and the doubles beside them) by the rule. */
  int n = 0;
  const uint16_t max_finite = (uint16_t)((((1u << h->exponent_bits) - 1) << h->mantissa_bits) - 1);
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t b = 0; b <= max_finite; ++b) {
      const uint16_t lo = (uint16_t)(b | sign << 15), hi = (uint16_t)(lo + 1);
      const double v = decode(h, lo);
      inputs[n] = (float)v, dinputs[n] = v, expected[n++] = lo;
      /* The midpoint to the next one up in magnitude (past the largest finite value: infinity). */
      const double up = b == max_finite ? 2 * decode(h, lo) - decode(h, (uint16_t)(lo - 1)) : decode(h, hi);
      const double mid = (v + up) / 2;
      inputs[n] = (float)mid, dinputs[n] = mid, expected[n++] = (lo & 1u) ? hi : lo;
      dinputs[n] = nextafter(mid, 0), inputs[n] = (float)dinputs[n], expected[n++] = lo;
      dinputs[n] = nextafter(mid, sign ? -INFINITY : INFINITY), inputs[n] = (float)dinputs[n], expected[n++] = hi;
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    const int32_t from = pass == 0 ? LLTM_FLOAT64 : LLTM_FLOAT32;
    src = vec(pass == 0 ? (void*)dinputs : (void*)inputs, n, from);
    dst = vec(narrowed, n, h->dtype);
    copy(&dst, &src);
    for (int i = 0; i < n; ++i) {
      /* float32 cannot hold the doubles beside a float16 or bfloat16 midpoint: those cases are float64 only. */
      if (pass == 1 && (i % 4) >= 2) continue;
      if (narrowed[i] != expected[i]) {
        snprintf(what, sizeof what, "%s from %s: %.17g narrows to 0x%04x, expected 0x%04x", h->name,
                 pass == 0 ? "float64" : "float32", pass == 0 ? dinputs[i] : (double)inputs[i], narrowed[i],
                 expected[i]);
        fail(what);
      }
    }
  }
  /* NaN stays NaN (quiet), infinities stay infinite. */
  const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e38f, -1e38f};
  uint16_t out[6];
  src = vec((void*)specials, 6, LLTM_FLOAT32);
  dst = vec(out, 6, h->dtype);
  copy(&dst, &src);
  for (int i = 0; i < 6; ++i) {
    const double back = decode(h, out[i]);
    const int ok = isnan(specials[i]) ? is_nan_bits(h, out[i])
                   : isinf(specials[i]) ? back == specials[i]
                                        : (h->exponent_bits == 8 ? back == (double)specials[i] || fabs(back / specials[i] - 1) < 1e-2
                                                                 : back == (specials[i] > 0 ? INFINITY : -INFINITY));
    if (!ok) {
      snprintf(what, sizeof what, "%s: %g narrows to 0x%04x", h->name, specials[i], out[i]);
      fail(what);
    }
  }
}

/* ---- a forward step in half types ---- */

enum { B = 3, F = 5, S = 4, K = S + F, G = 3 * S };

typedef struct {
  int64_t rows, cols;
} Shape;

static const Shape kShapes[12] = {{B, F}, {G, K}, {1, G}, {B, S}, {B, S}, {B, S}, {B, S},
                                  {B, S}, {B, S}, {B, S}, {B, K}, {B, G}};

static lltm_tensor tensor_of(void* data, int k, int32_t dtype) {
  lltm_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  if (k == 2) {
    t.ndim = 1;
    t.sizes[0] = G;
    t.strides[0] = 1;
  } else {
    t.ndim = 2;
    t.sizes[0] = kShapes[k].rows;
    t.sizes[1] = kShapes[k].cols;
    t.strides[0] = kShapes[k].cols;
    t.strides[1] = 1;
  }
  return t;
}

static int64_t count(int k) { return kShapes[k].rows * kShapes[k].cols; }

/* Forward with tensor k in dtypes[k] (inputs 0-4 hold `values`, rounded to their type). */
static void forward(const int32_t* dtypes, float* const* values, float* const* results) {
  static uint16_t half_data[12][G * K];
  static float float_data[12][G * K];
  lltm_call call;
  memset(&call, 0, sizeof call);
  for (int k = 0; k < 12; ++k) {
    void* data = dtypes[k] == LLTM_FLOAT32 ? (void*)float_data[k] : (void*)half_data[k];
    call.tensors[k] = tensor_of(data, k, dtypes[k]);
    if (k < 5) {
      lltm_tensor src = vec(values[k], count(k), LLTM_FLOAT32), dst = vec(data, count(k), dtypes[k]);
      copy(&dst, &src);
    }
  }
  call.given = (1u << 12) - 1;
  if (lltm_run(LLTM_OP_FORWARD, &call) != LLTM_OK) {
    fprintf(stderr, "half_test: forward failed: %s\n", lltm_last_error());
    exit(1);
  }
  for (int k = 5; k < 12; ++k) {
    lltm_tensor dst = vec(results[k], count(k), LLTM_FLOAT32), src = vec(call.tensors[k].data, count(k), dtypes[k]);
    copy(&dst, &src);
  }
}

static void check_forward(const char* label, const int32_t* dtypes) {
  static float values[5][G * K], rounded[5][G * K], half_out[12][G * K], float_out[12][G * K], expect[12][G * K];
  static uint16_t scratch[G * K];
  char what[256];
  srand(20261125);
  for (int k = 0; k < 5; ++k)
    for (int64_t i = 0; i < count(k); ++i) values[k][i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
  /* The inputs as the half call sees them: rounded to their dtype. */
  for (int k = 0; k < 5; ++k) {
    memcpy(rounded[k], values[k], sizeof values[k]);
    if (dtypes[k] == LLTM_FLOAT32) continue;
    lltm_tensor a = vec(values[k], count(k), LLTM_FLOAT32), h = vec(scratch, count(k), dtypes[k]),
                r = vec(rounded[k], count(k), LLTM_FLOAT32);
    copy(&h, &a);
    copy(&r, &h);
  }
  float* in_rounded[5] = {rounded[0], rounded[1], rounded[2], rounded[3], rounded[4]};
  float* in_values[5] = {values[0], values[1], values[2], values[3], values[4]};
  float* hout[12], *fout[12];
  for (int k = 0; k < 12; ++k) hout[k] = half_out[k], fout[k] = float_out[k];
  const int32_t all_float[12] = {0};
  forward(dtypes, in_values, hout);
  forward(all_float, in_rounded, fout);
  for (int k = 5; k < 12; ++k) {
    /* Expected: the float32 result rounded once to the output's type (and widened back). */
    memcpy(expect[k], float_out[k], sizeof float_out[k]);
    if (dtypes[k] != LLTM_FLOAT32) {
      lltm_tensor f = vec(float_out[k], count(k), LLTM_FLOAT32), h = vec(scratch, count(k), dtypes[k]),
                  e = vec(expect[k], count(k), LLTM_FLOAT32);
      copy(&h, &f);
      copy(&e, &h);
    }
    for (int64_t i = 0; i < count(k); ++i) {
      /* Half a unit in the last place of the output's type at this value: the most rounding may move it. */
      const int bits = dtypes[k] == LLTM_BFLOAT16 ? 8 : dtypes[k] == LLTM_FLOAT16 ? 11 : 24;
      const double half_ulp = ldexp(fabs((double)float_out[k][i]) + 1e-30, -bits);
      if (half_out[k][i] != expect[k][i] || fabs((double)half_out[k][i] - float_out[k][i]) > half_ulp) {
        snprintf(what, sizeof what, "forward %s: output %d element %lld is %.9g, the float32 forward %.9g (rounded %.9g)",
                 label, k, (long long)i, half_out[k][i], float_out[k][i], expect[k][i]);
        fail(what);
      }
    }
  }
}

int main(void) {
  for (size_t h = 0; h < sizeof kHalves / sizeof kHalves[0]; ++h) check_conversions(&kHalves[h]);
  int32_t dtypes[12];
  for (int k = 0; k < 12; ++k) dtypes[k] = LLTM_BFLOAT16;
  check_forward("bfloat16", dtypes);
  for (int k = 0; k < 12; ++k) dtypes[k] = LLTM_FLOAT16;
  check_forward("float16", dtypes);
  /* bfloat16 activations and outputs beside float32 weights, bias and state. */
  for (int k = 0; k < 12; ++k) dtypes[k] = (k == 1 || k == 2 || k == 4) ? LLTM_FLOAT32 : LLTM_BFLOAT16;
  check_forward("mixed", dtypes);
  printf("half_test: %ld failures\n", failures);
  return failures == 0 ? 0 : 1;
}
