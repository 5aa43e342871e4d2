// liblltm_cuda through its DeviceBackend table alone, on a GPU: copies
// between every pair of float dtypes (each element against a host reference
// of round-to-nearest-even), fill in every float dtype, linear and
// linear_backward against a float64 host reference (strided operands,
// optional outputs, accumulation), the answers to ops it has no kernel
// for, and step capture (record, replay, memory kept by the graph). Exits 0 when every check passes, 1 on the first failure, 77 without a
// GPU. tests/cuda_backend.test.ts runs it with and without
// LLTM_CUDA_KERNELS=fused, so that the products take both cuBLAS and the
// library's own kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "op_slots.h"
#include "ops/dtypes.h"

extern "C" const lltm::DeviceBackend* lltm_backend_v1();

namespace {

const lltm::DeviceBackend* backend = nullptr;
int checks = 0;

[[noreturn]] void failed(const std::string& what) {
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  std::exit(1);
}

void ok(int32_t status, const char* what) {
  if (status != LLTM_OK) failed(std::string(what) + ": status " + std::to_string(status) + ": " + backend->last_error());
}

// ---- Element types on the host: every value as the double it is exactly.

int64_t bytes_of(int32_t dtype) { return lltm::dtype_info(dtype)->bytes; }
const char* name_of(int32_t dtype) { return lltm::dtype_info(dtype)->name; }

const int32_t kFloatTypes[] = {LLTM_FLOAT32, LLTM_FLOAT64, LLTM_BFLOAT16, LLTM_FLOAT16};

double decode(int32_t dtype, const unsigned char* p) {
  switch (dtype) {
    case LLTM_FLOAT32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case LLTM_FLOAT64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case LLTM_BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const double sign = (h & 0x8000) ? -1.0 : 1.0;
      const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
      if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
      if (exponent == 0) return sign * std::ldexp(mantissa, -24);
      return sign * std::ldexp(1024 + mantissa, exponent - 25);
    }
  }
}

// x rounded to nearest even with `digits` significant bits, `min_exponent`
// the exponent of the smallest normal (subnormals below it) and overflow at
// 2^(max_exponent + 1).
double round_binary(double x, int digits, int min_exponent, int max_exponent) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  const int quantum = std::max(e - digits, min_exponent - digits + 1);
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return std::fabs(r) >= std::ldexp(1.0, max_exponent + 1) ? std::copysign(INFINITY, x) : r;
}

// The value `dtype` holds for x, rounded once to nearest even.
double rounded(int32_t dtype, double x) {
  switch (dtype) {
    case LLTM_FLOAT32:
      return double(float(x));
    case LLTM_FLOAT64:
      return x;
    case LLTM_BFLOAT16:
      return round_binary(x, 8, -126, 127);
    default:
      return round_binary(x, 11, -14, 15);
  }
}

// x (already representable in dtype) as dtype's bytes.
void encode(int32_t dtype, double x, unsigned char* p) {
  switch (dtype) {
    case LLTM_FLOAT32: {
      const float f = float(x);
      std::memcpy(p, &f, 4);
      return;
    }
    case LLTM_FLOAT64:
      std::memcpy(p, &x, 8);
      return;
    case LLTM_BFLOAT16: {
      const float f = float(x);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const uint16_t h = uint16_t(bits >> 16);
      std::memcpy(p, &h, 2);
      return;
    }
    default: {
      uint16_t h = std::signbit(x) ? 0x8000 : 0;
      const double a = std::fabs(x);
      if (std::isnan(x)) {
        h = 0x7e00;
      } else if (std::isinf(x)) {
        h |= 0x7c00;
      } else if (a < std::ldexp(1.0, -14)) {
        h |= uint16_t(std::ldexp(a, 24));
      } else {
        int e;
        std::frexp(a, &e);
        h |= uint16_t((e - 1 + 15) << 10) | uint16_t(std::ldexp(a, 11 - e) - 1024);
      }
      std::memcpy(p, &h, 2);
    }
  }
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

// ---- Tensors.

lltm_tensor tensor(void* data, std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype) {
  lltm_tensor t{};
  t.data = data;
  t.ndim = int64_t(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = strides[d];
  }
  t.dtype = dtype;
  return t;
}

struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(uint64_t bytes) { ok(backend->alloc(bytes, 0, &data), "alloc"); }
  ~DeviceBuffer() { backend->free(data, 0); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// ---- Copies.

// Values a conversion must get right: signed zeros, infinities, NaN, each
// type's extremes and ties, and random values over a wide range of magnitudes.
std::vector<double> copy_values(int32_t from, size_t n, std::mt19937_64& rng) {
  std::vector<double> v = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 1.0 + std::ldexp(1.0, -8),
                           1.0 + 3 * std::ldexp(1.0, -8), 1.0 + std::ldexp(1.0, -11), 65504.0, 65519.0, 65520.0,
                           std::ldexp(1.0, -24), std::ldexp(1.0, -25), std::ldexp(3.0, -26), 3.3895313892515355e38,
                           3.4e38, 1e-40, 1e300, -1e-300, 1.0 / 3.0};
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
  while (v.size() < n) {
    if (from == LLTM_BFLOAT16 || from == LLTM_FLOAT16) {
      unsigned char raw[2];
      const uint16_t h = uint16_t(bits(rng));
      std::memcpy(raw, &h, 2);
      v.push_back(decode(from, raw));
    } else {
      v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    }
  }
  for (double& x : v) x = rounded(from, x);
  return v;
}

std::vector<unsigned char> encoded(int32_t dtype, const std::vector<double>& values) {
  std::vector<unsigned char> out(values.size() * size_t(bytes_of(dtype)));
  for (size_t i = 0; i < values.size(); ++i) encode(dtype, values[i], out.data() + i * size_t(bytes_of(dtype)));
  return out;
}

void expect_values(const std::vector<unsigned char>& got, int32_t dtype, const std::vector<double>& source,
                   const std::string& what) {
  for (size_t i = 0; i < source.size(); ++i) {
    const double expected = rounded(dtype, source[i]), actual = decode(dtype, got.data() + i * size_t(bytes_of(dtype)));
    if (!same(actual, expected))
      failed(what + ": element " + std::to_string(i) + " of " + std::to_string(source[i]) + " became " +
             std::to_string(actual) + ", expected " + std::to_string(expected));
  }
  ++checks;
}

// from -> to for every route: host to device converting, device to device
// into a strided (transposed) view, device to host converting, and strided
// device to contiguous host in one type.
void check_copies(int32_t from, int32_t to, std::mt19937_64& rng) {
  const int64_t rows = 9, cols = 13, n = rows * cols;
  const std::vector<double> values = copy_values(from, size_t(n), rng);
  const std::vector<unsigned char> host_from = encoded(from, values);
  const std::string pair = std::string(name_of(from)) + " -> " + name_of(to);
  const std::vector<int64_t> sizes = {rows, cols}, row_major = {cols, 1}, transposed = {1, rows};

  // Host (from) to contiguous device (to).
  DeviceBuffer converted(uint64_t(n * bytes_of(to)));
  const lltm_tensor host_src = tensor(const_cast<unsigned char*>(host_from.data()), sizes, row_major, from);
  const lltm_tensor dev_to = tensor(converted.data, sizes, row_major, to);
  ok(backend->copy(&dev_to, 1, 0, &host_src, 0, 0, 0), (pair + ": host to device").c_str());
  std::vector<unsigned char> back(size_t(n * bytes_of(to)));
  ok(backend->read(back.data(), converted.data, back.size(), 0), "read");
  expect_values(back, to, values, pair + ", host to device");

  // Device (from, contiguous) to a transposed device view (to).
  DeviceBuffer source(uint64_t(n * bytes_of(from))), strided(uint64_t(n * bytes_of(to)));
  ok(backend->write(source.data, host_from.data(), host_from.size(), 0), "write");
  const lltm_tensor dev_from = tensor(source.data, sizes, row_major, from);
  const lltm_tensor dev_strided = tensor(strided.data, sizes, transposed, to);
  ok(backend->copy(&dev_strided, 1, 0, &dev_from, 1, 0, 0), (pair + ": device to device").c_str());
  // The strided view back to the host in its own type (a gather on the device).
  std::vector<unsigned char> gathered(size_t(n * bytes_of(to)));
  const lltm_tensor host_to = tensor(gathered.data(), sizes, row_major, to);
  ok(backend->copy(&host_to, 0, 0, &dev_strided, 1, 0, 0), (pair + ": strided device to host").c_str());
  expect_values(gathered, to, values, pair + ", device to strided device");

  // Device (from) to host (to), converting on the way out.
  std::vector<unsigned char> out(size_t(n * bytes_of(to)));
  const lltm_tensor host_out = tensor(out.data(), sizes, row_major, to);
  ok(backend->copy(&host_out, 0, 0, &dev_from, 1, 0, 0), (pair + ": device to host").c_str());
  expect_values(out, to, values, pair + ", device to host");
}

void check_fill() {
  for (const int32_t dtype : kFloatTypes)
    for (const double value : {1.0 / 3.0, -2.5, 65520.0, 1e-8, 3.4e38}) {
      const int64_t rows = 5, cols = 6;
      DeviceBuffer buffer(uint64_t(rows * cols * bytes_of(dtype)));
      std::vector<unsigned char> zeros(size_t(rows * cols * bytes_of(dtype)), 0);
      ok(backend->write(buffer.data, zeros.data(), zeros.size(), 0), "write");
      // Every other column of a [5, 6] buffer: a [5, 3] view with strides [6, 2].
      const lltm_tensor view = tensor(buffer.data, {rows, cols / 2}, {cols, 2}, dtype);
      lltm::OpCall call{};
      call.op = LLTM_OP_FILL;
      call.compute = dtype == LLTM_FLOAT64 ? LLTM_FLOAT64 : LLTM_FLOAT32;
      call.tensors[lltm::slots::FILL::dst] = &view;
      call.scalars[lltm::scalars::FILL::value] = value;
      ok(backend->run(&call, 0), "fill");
      std::vector<unsigned char> got(zeros.size());
      ok(backend->read(got.data(), buffer.data, got.size(), 0), "read");
      for (int64_t i = 0; i < rows * cols; ++i) {
        const double expected = i % 2 == 0 ? rounded(dtype, value) : 0.0;
        if (!same(decode(dtype, got.data() + i * bytes_of(dtype)), expected))
          failed(std::string("fill ") + name_of(dtype) + " with " + std::to_string(value) + ": element " +
                 std::to_string(i));
      }
      ++checks;
    }
}

// ---- linear and linear_backward.

// A host matrix of `rows` x `cols` values at data[r * rs + c * cs] inside a
// buffer of `span` elements (the rest zeros), in float32 or float64.
struct HostMatrix {
  int64_t rows, cols, rs, cs;
  std::vector<double> values;  // row-major, the logical values
  std::vector<unsigned char> bytes;
  int32_t dtype;
};

HostMatrix host_matrix(int64_t rows, int64_t cols, bool strided, int32_t dtype, std::mt19937_64& rng) {
  HostMatrix m{rows, cols, 0, 0, {}, {}, dtype};
  // Strided: column-major with a padded leading dimension, neither layout cuBLAS takes as is for rows > 1.
  m.rs = strided ? 2 : cols;
  m.cs = strided ? 2 * rows + 3 : 1;
  const int64_t span = strided ? (cols - 1) * m.cs + (rows - 1) * m.rs + 1 : rows * cols;
  m.bytes.assign(size_t(span * bytes_of(dtype)), 0);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const double v = rounded(dtype, u(rng));
      m.values.push_back(v);
      encode(dtype, v, m.bytes.data() + (r * m.rs + c * m.cs) * bytes_of(dtype));
    }
  return m;
}

struct DeviceMatrix {
  DeviceBuffer buffer;
  lltm_tensor t;
  explicit DeviceMatrix(const HostMatrix& m) : buffer(m.bytes.size()) {
    ok(backend->write(buffer.data, m.bytes.data(), m.bytes.size(), 0), "write");
    t = tensor(buffer.data, {m.rows, m.cols}, {m.rs, m.cs}, m.dtype);
  }
  std::vector<double> values(const HostMatrix& like) const {
    std::vector<unsigned char> raw(like.bytes.size());
    ok(backend->read(raw.data(), buffer.data, raw.size(), 0), "read");
    std::vector<double> v;
    for (int64_t r = 0; r < like.rows; ++r)
      for (int64_t c = 0; c < like.cols; ++c) v.push_back(decode(like.dtype, raw.data() + (r * like.rs + c * like.cs) * bytes_of(like.dtype)));
    return v;
  }
};

void expect_close(const std::vector<double>& got, const std::vector<double>& expected, double tolerance,
                  const std::string& what) {
  double scale = 0, worst = 0;
  for (double e : expected) scale = std::max(scale, std::fabs(e));
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - expected[i]));
  if (!(worst <= tolerance * std::max(scale, 1e-30)))
    failed(what + ": max error " + std::to_string(worst) + " against a largest value of " + std::to_string(scale));
  ++checks;
}

void check_linear(int32_t dtype, int64_t N, int64_t K, int64_t M, bool strided, bool with_bias, std::mt19937_64& rng) {
  const double tolerance = dtype == LLTM_FLOAT64 ? 1e-12 : 1e-5;
  const std::string what = std::string("linear ") + name_of(dtype) + " " + std::to_string(N) + "x" +
                           std::to_string(K) + "x" + std::to_string(M) + (strided ? " strided" : "") +
                           (with_bias ? " with bias" : "");
  const HostMatrix x = host_matrix(N, K, strided, dtype, rng), w = host_matrix(M, K, strided, dtype, rng);
  const HostMatrix b = host_matrix(1, M, false, dtype, rng), y0 = host_matrix(N, M, strided, dtype, rng);
  DeviceMatrix dx(x), dw(w), db(b), dy(y0);
  const lltm_tensor bias = tensor(db.buffer.data, {M}, {1}, dtype);
  lltm::OpCall call{};
  call.op = LLTM_OP_LINEAR;
  call.compute = dtype;
  call.tensors[lltm::slots::LINEAR::x] = &dx.t;
  call.tensors[lltm::slots::LINEAR::weight] = &dw.t;
  call.tensors[lltm::slots::LINEAR::bias] = with_bias ? &bias : nullptr;
  call.tensors[lltm::slots::LINEAR::y] = &dy.t;
  call.sizes['N' - 'A'] = N;
  call.sizes['K' - 'A'] = K;
  call.sizes['M' - 'A'] = M;
  ok(backend->run(&call, 0), what.c_str());
  std::vector<double> expected(size_t(N * M));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      double s = with_bias ? b.values[size_t(m)] : 0.0;
      for (int64_t k = 0; k < K; ++k) s += x.values[size_t(n * K + k)] * w.values[size_t(m * K + k)];
      expected[size_t(n * M + m)] = s;
    }
  expect_close(dy.values(y0), expected, tolerance, what);
}

// Every output given, or one at a time; accumulating or not.
void check_linear_backward(int32_t dtype, int64_t N, int64_t K, int64_t M, bool strided, std::mt19937_64& rng) {
  const double tolerance = dtype == LLTM_FLOAT64 ? 1e-12 : 1e-5;
  for (int outputs = 0; outputs < 4; ++outputs)
    for (const bool accumulate : {false, true}) {
      const bool want_dx = outputs == 0 || outputs == 1, want_dw = outputs == 0 || outputs == 2,
                 want_db = outputs == 0 || outputs == 3;
      const std::string what = std::string("linear_backward ") + name_of(dtype) + " " + std::to_string(N) + "x" +
                               std::to_string(K) + "x" + std::to_string(M) + (strided ? " strided" : "") +
                               (accumulate ? " accumulating" : "") + " outputs " + std::to_string(outputs);
      const HostMatrix g = host_matrix(N, M, strided, dtype, rng), x = host_matrix(N, K, strided, dtype, rng),
                       w = host_matrix(M, K, strided, dtype, rng);
      const HostMatrix dx0 = host_matrix(N, K, strided, dtype, rng), dw0 = host_matrix(M, K, strided, dtype, rng),
                       db0 = host_matrix(1, M, strided, dtype, rng);
      DeviceMatrix dg(g), dxin(x), dwin(w), ddx(dx0), ddw(dw0), ddb(db0);
      // d_bias as a 1-D view of the [1, M] matrix's row.
      const lltm_tensor d_bias = tensor(ddb.buffer.data, {M}, {db0.cs}, dtype);
      lltm::OpCall call{};
      namespace s = lltm::slots::LINEAR_BACKWARD;
      call.op = LLTM_OP_LINEAR_BACKWARD;
      call.compute = dtype;
      call.flags = accumulate ? LLTM_ACCUMULATE_PARAM_GRADS : 0;
      call.tensors[s::grad_y] = &dg.t;
      call.tensors[s::x] = &dxin.t;
      call.tensors[s::weight] = &dwin.t;
      call.tensors[s::d_x] = want_dx ? &ddx.t : nullptr;
      call.tensors[s::d_weight] = want_dw ? &ddw.t : nullptr;
      call.tensors[s::d_bias] = want_db ? &d_bias : nullptr;
      call.sizes['N' - 'A'] = N;
      call.sizes['K' - 'A'] = K;
      call.sizes['M' - 'A'] = M;
      ok(backend->run(&call, 0), what.c_str());
      std::vector<double> e_dx(size_t(N * K)), e_dw(size_t(M * K)), e_db(static_cast<size_t>(M));
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) {
          double sum = 0;
          for (int64_t m = 0; m < M; ++m) sum += g.values[size_t(n * M + m)] * w.values[size_t(m * K + k)];
          e_dx[size_t(n * K + k)] = want_dx ? sum : dx0.values[size_t(n * K + k)];
        }
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t k = 0; k < K; ++k) {
          double sum = 0;
          for (int64_t n = 0; n < N; ++n) sum += g.values[size_t(n * M + m)] * x.values[size_t(n * K + k)];
          const double before = dw0.values[size_t(m * K + k)];
          e_dw[size_t(m * K + k)] = want_dw ? (accumulate ? before + sum : sum) : before;
        }
        double sum = 0;
        for (int64_t n = 0; n < N; ++n) sum += g.values[size_t(n * M + m)];
        const double before = db0.values[size_t(m)];
        e_db[size_t(m)] = want_db ? (accumulate ? before + sum : sum) : before;
      }
      // Outputs not asked for keep their contents exactly.
      expect_close(ddx.values(dx0), e_dx, want_dx ? tolerance : 0.0, what + ", d_x");
      expect_close(ddw.values(dw0), e_dw, want_dw ? tolerance : 0.0, what + ", d_weight");
      expect_close(ddb.values(db0), e_db, want_db ? tolerance : 0.0, what + ", d_bias");
    }
}

void check_refusals() {
  lltm::OpCall call{};
  call.op = 99;
  call.compute = LLTM_FLOAT32;
  if (backend->run(&call, 0) != LLTM_ERR_BACKEND_UNAVAILABLE || std::strstr(backend->last_error(), "op 99") == nullptr)
    failed(std::string("an unknown op: ") + backend->last_error());
  call.op = LLTM_OP_COPY;
  if (backend->run(&call, 0) != LLTM_ERR_INTERNAL || std::strstr(backend->last_error(), "lltm_copy") == nullptr)
    failed(std::string("copy through run: ") + backend->last_error());
  checks += 2;
}

// Step capture: an axpy recorded once and replayed three times adds three
// times; a read while capturing is refused and the capture goes on; a block
// freed while capturing is not handed to other work while the graph lives.
// Pinned memory: a non-blocking copy from a block that is freed at once, and
// a block of the same size taken and overwritten before that copy can have
// run. The pool must not hand out the first block until its copy is done, so
// the device holds the first block's values.
void check_pinned() {
  const int64_t n = int64_t(1) << 24;  // 64 MiB: a copy long enough that an early reuse would show
  const uint64_t bytes = uint64_t(n) * 4;
  void* first = nullptr;
  ok(backend->pinned_alloc(bytes, &first), "pinned_alloc");
  float* values = static_cast<float*>(first);
  for (int64_t i = 0; i < n; i++) values[i] = float(i % 1000);
  DeviceBuffer device(bytes);
  const lltm_tensor src = tensor(first, {n}, {1}, LLTM_FLOAT32), dst = tensor(device.data, {n}, {1}, LLTM_FLOAT32);
  ok(backend->copy(&dst, 1, 0, &src, 0, 0, LLTM_COPY_NON_BLOCKING), "non-blocking copy from pinned memory");
  ok(backend->pinned_free(first), "pinned_free");
  void* second = nullptr;
  ok(backend->pinned_alloc(bytes, &second), "pinned_alloc of the same size");
  std::fill_n(static_cast<float*>(second), n, -1.0f);
  ok(backend->synchronize(0), "synchronize");
  std::vector<float> back(static_cast<size_t>(n));
  ok(backend->read(back.data(), device.data, bytes, 0), "read");
  for (int64_t i = 0; i < n; i++)
    if (back[size_t(i)] != float(i % 1000)) failed("a pinned block was reused before its non-blocking copy ran");
  ok(backend->pinned_free(second), "pinned_free");
  int not_pinned = 0;
  if (backend->pinned_free(&not_pinned) != LLTM_ERR_INVALID_ARGUMENT ||
      std::strstr(backend->last_error(), "lltm_free_pinned") == nullptr)
    failed("pinned_free of memory the pool did not hand out");
}

void check_capture() {
  const int64_t n = 1000;
  std::vector<float> ones(size_t(n), 1.0f), got(static_cast<size_t>(n), 0.0f);
  DeviceBuffer y(uint64_t(n) * 4), x(uint64_t(n) * 4);
  ok(backend->write(x.data, ones.data(), uint64_t(n) * 4, 0), "write");
  std::vector<float> zeros(size_t(n), 0.0f);
  ok(backend->write(y.data, zeros.data(), uint64_t(n) * 4, 0), "write");
  const lltm_tensor ty = tensor(y.data, {n}, {1}, LLTM_FLOAT32), tx = tensor(x.data, {n}, {1}, LLTM_FLOAT32);
  lltm::OpCall call{};
  call.op = LLTM_OP_AXPY;
  call.compute = LLTM_FLOAT32;
  call.tensors[lltm::slots::AXPY::y] = &ty;
  call.tensors[lltm::slots::AXPY::x] = &tx;
  call.scalars[lltm::scalars::AXPY::alpha] = 1.0;
  ok(backend->capture_begin(0), "capture_begin");
  if (backend->capture_begin(0) == LLTM_OK) failed("a second capture_begin on a capturing device");
  ok(backend->run(&call, 0), "axpy while capturing");
  float host = 0;
  if (backend->read(&host, x.data, 4, 0) != LLTM_ERR_INVALID_ARGUMENT || std::strstr(backend->last_error(), "captured") == nullptr)
    failed(std::string("a read while capturing: ") + backend->last_error());
  void* scratch = nullptr;
  ok(backend->alloc(4096, 0, &scratch), "alloc while capturing");
  ok(backend->free(scratch, 0), "free while capturing");
  void* graph = nullptr;
  ok(backend->capture_end(0, &graph), "capture_end");
  if (graph == nullptr) failed("capture_end gave no graph");
  void* other = nullptr;
  ok(backend->alloc(4096, 0, &other), "alloc after the capture");
  if (other == scratch) failed("a block the graph keeps was handed out again");
  ok(backend->free(other, 0), "free");
  for (int i = 0; i < 3; ++i) ok(backend->graph_replay(graph, 0), "graph_replay");
  ok(backend->read(got.data(), y.data, uint64_t(n) * 4, 0), "read");
  for (int64_t i = 0; i < n; ++i)
    if (got[size_t(i)] != 3.0f) failed("replayed axpy: element " + std::to_string(i) + " is " + std::to_string(got[size_t(i)]));
  ok(backend->graph_destroy(graph, 0), "graph_destroy");
  checks += 4;
}

}  // namespace

int main() {
  backend = lltm_backend_v1();
  if (backend == nullptr || backend->api_version != LLTM_BACKEND_API_VERSION) failed("the backend's table or version");
  if (backend->device_count() == 0) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  std::mt19937_64 rng(17);
  for (const int32_t from : kFloatTypes)
    for (const int32_t to : kFloatTypes) check_copies(from, to, rng);
  check_fill();
  for (const int32_t dtype : {LLTM_FLOAT32, LLTM_FLOAT64})
    for (const bool strided : {false, true}) {
      for (const bool bias : {false, true}) {
        check_linear(dtype, 1, 1, 1, strided, bias, rng);
        check_linear(dtype, 7, 5, 3, strided, bias, rng);
        check_linear(dtype, 130, 70, 90, strided, bias, rng);
      }
      check_linear_backward(dtype, 1, 1, 1, strided, rng);
      check_linear_backward(dtype, 9, 6, 4, strided, rng);
      check_linear_backward(dtype, 300, 70, 90, strided, rng);
    }
  check_refusals();
  check_pinned();
  check_capture();
  ok(backend->synchronize(0), "synchronize");
  std::printf("%d passed, 0 failed\n", checks);
  return 0;
}
