// What the processor and the operating system let the CPU kernels use, read
// once when first asked, and the instruction-set levels the kernels are
// compiled for.
#pragma once

#include <string>
#include <vector>

namespace lltm::cpu {

// The kernel variants. Each is one compilation of the kernel sources
// (CMakeLists.txt, LLTM_CPU_ISA_SOURCES) into a namespace of its own; which
// of them a build has depends on its target (cmake/cpu_isa.cmake): avx512,
// avx2 and baseline on x86-64, neon on aarch64, baseline elsewhere, or
// native alone (LLTM_NATIVE_ARCH).
enum class Isa { avx512, avx2, baseline, neon, native };

const char* isa_name(Isa isa);

// The features `isa` needs that this machine lacks, comma-separated; empty
// when the kernels of `isa` can run here.
std::string missing_features(Isa isa);

// The names of the features `isa` needs that this machine lacks, for this
// processor's architecture: one definition per architecture, in
// cpu_features_<arch>.cpp (each compiled only for its own).
std::vector<const char*> missing_feature_names(Isa isa);

// Whether the processor and the operating system support AVX512_BF16's dot products (vdpbf16ps).
bool has_bf16_dot_product();

}  // namespace lltm::cpu
