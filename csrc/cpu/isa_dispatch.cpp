// Chooses the CPU kernels when the library loads: the widest variant this
// build has and this machine can run, or the one LLTM_CPU_KERNELS names
// (refused, with the reason, when the machine cannot run it). The choice is
// made once, so every call of the process runs the same code.
#include <cstdlib>
#include <cstring>
#include <string>

#include "../op_slots.h"
#include "../ops/dtypes.h"
#include "../status.h"
#include "cpu_features.h"
#include "kernels.h"
#include "lltm_cpu.h"

namespace lltm::cpu {

#ifdef LLTM_CPU_ISA_NATIVE
namespace native { extern const Kernels kernels; }
#endif
#ifdef LLTM_CPU_ISA_AVX512
namespace avx512 { extern const Kernels kernels; }
#endif
#ifdef LLTM_CPU_ISA_AVX2
namespace avx2 { extern const Kernels kernels; }
#endif
#ifdef LLTM_CPU_ISA_NEON
namespace neon { extern const Kernels kernels; }
#endif
#ifdef LLTM_CPU_ISA_BASELINE
namespace baseline { extern const Kernels kernels; }
#endif

namespace {

struct Variant {
  Isa isa;
  const Kernels* kernels;
};

// Widest first: the first one the machine can run is the default.
const Variant kVariants[] = {
#ifdef LLTM_CPU_ISA_NATIVE
    {Isa::native, &native::kernels},
#endif
#ifdef LLTM_CPU_ISA_AVX512
    {Isa::avx512, &avx512::kernels},
#endif
#ifdef LLTM_CPU_ISA_AVX2
    {Isa::avx2, &avx2::kernels},
#endif
#ifdef LLTM_CPU_ISA_NEON
    {Isa::neon, &neon::kernels},
#endif
#ifdef LLTM_CPU_ISA_BASELINE
    {Isa::baseline, &baseline::kernels},
#endif
};

struct Choice {
  const Kernels* kernels = nullptr;
  const char* name = nullptr;
  std::string refusal;  // why there are no kernels, when a forced variant cannot run
};

std::string runnable_names() {
  std::string s;
  for (const Variant& v : kVariants)
    if (missing_features(v.isa).empty()) s += (s.empty() ? "" : ", ") + std::string(isa_name(v.isa));
  return s;
}

Choice choose() {
  Choice c;
  const char* forced = std::getenv("LLTM_CPU_KERNELS");
  if (forced != nullptr && *forced != '\0') {
    for (const Variant& v : kVariants) {
      if (std::strcmp(forced, isa_name(v.isa)) != 0) continue;
      const std::string missing = missing_features(v.isa);
      if (missing.empty()) {
        c.kernels = v.kernels;
        c.name = isa_name(v.isa);
      } else {
        c.refusal = "LLTM_CPU_KERNELS=" + std::string(forced) + " asks for kernels this CPU cannot run: it lacks " +
                    missing + "; it can run " + runnable_names() + " (or unset LLTM_CPU_KERNELS)";
      }
      return c;
    }
    std::string built;
    for (const Variant& v : kVariants) built += (built.empty() ? "" : ", ") + std::string(isa_name(v.isa));
    c.refusal = "LLTM_CPU_KERNELS=" + std::string(forced) + " is not one of this build's CPU kernels: " + built;
    return c;
  }
  for (const Variant& v : kVariants) {
    if (missing_features(v.isa).empty()) {
      c.kernels = v.kernels;
      c.name = isa_name(v.isa);
      return c;
    }
  }
  c.refusal = "this build has no CPU kernels this machine can run";
  return c;
}

const Choice choice = choose();

const Kernels& active(const char* fn) {
  if (choice.kernels == nullptr) fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": " + choice.refusal);
  return *choice.kernels;
}

}  // namespace

const char* kernels_name() {
  active("lltm_cpu_kernels");
  return choice.name;
}

void run(const OpCall& call, const char* fn) { active(fn).run[call.op](call); }

bool has_bf16_kernel(int32_t op, const char* fn) {
  static const bool dot_product = has_bf16_dot_product();
  return dot_product && active(fn).run_bf16[op] != nullptr;
}

uint32_t bf16_float32_slots(int32_t op, const char* fn) { return active(fn).run_bf16_float32_slots[op]; }

void run_bf16(const OpCall& call, const char* fn) { active(fn).run_bf16[call.op](call); }

void copy(const lltm_tensor& dst, const lltm_tensor& src, const char* fn) {
  OpCall call;
  call.op = LLTM_OP_COPY;
  call.compute = compute_dtype(int32_t(dst.dtype));
  call.flags = 0;
  call.tensors[slots::COPY::dst] = &dst;
  call.tensors[slots::COPY::src] = &src;
  run(call, fn);
}

}  // namespace lltm::cpu
