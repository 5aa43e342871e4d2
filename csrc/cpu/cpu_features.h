// What the processor and the operating system let the CPU kernels use, read
// once with cpuid and xgetbv, and the instruction-set levels the kernels are
// compiled for.
#pragma once

#include <string>

namespace lltm::cpu {

// The kernel variants, widest first. Each is one compilation of the kernel
// sources (CMakeLists.txt, LLTM_CPU_ISA_SOURCES) into a namespace of its own.
enum class Isa { avx512, avx2, baseline, native };

const char* isa_name(Isa isa);

// The features `isa` needs that this machine lacks, comma-separated; empty
// when the kernels of `isa` can run here.
std::string missing_features(Isa isa);

}  // namespace lltm::cpu
