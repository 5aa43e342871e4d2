# The CPU kernels, compiled once per instruction-set variant into an object
# library of their own, each in the namespace lltm::cpu::<variant>
# (LLTM_ISA_NAMESPACE); csrc/cpu/isa_dispatch.cpp chooses one when the library
# loads, from what the processor reports (csrc/cpu/cpu_features_<arch>.cpp
# checks the same features these flags enable: cpuid and xgetbv on x86-64,
# the kernel's hardware capabilities on aarch64). The default build has no
# flag tied to the build machine, so the library runs on any x86-64 or aarch64.
#
# aarch64 has one variant, neon: the base architecture's 128-bit vectors.
# SVE has no variant: GCC's vector extensions need a vector length fixed at
# compile time (-msve-vector-bits), and the cores that have SVE (Neoverse V1:
# 2 x 256-bit pipes, V2 and N2: 128-bit) multiply-add no faster with it than
# with NEON (4 x 128-bit pipes on V1 and V2, 2 on N2).
#
# LLTM_NATIVE_ARCH=ON instead builds one variant, `native`, with -march=native
# (-mcpu=native on aarch64, where -march alone does not tune): tuned for this
# machine and unfit to be copied to another.

set(LLTM_CPU_ISA_FLAGS_avx512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c)
set(LLTM_CPU_ISA_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(LLTM_CPU_ISA_FLAGS_baseline "")
set(LLTM_CPU_ISA_FLAGS_neon "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(LLTM_CPU_ISA_FLAGS_native -mcpu=native)
else()
  set(LLTM_CPU_ISA_FLAGS_native -march=native)
endif()

if(LLTM_NATIVE_ARCH)
  set(LLTM_CPU_ISAS native)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(LLTM_CPU_ISAS neon)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  # Baseline first, after the library's other objects: where two objects hold
  # the same inline function or template instance (a libstdc++ helper the
  # compiler did not inline), the linker keeps the first copy it reads, and
  # every caller outside the wider variants must get one that runs anywhere.
  # tests/isa.test.ts checks the linked library for this.
  set(LLTM_CPU_ISAS baseline avx2 avx512)
else()
  set(LLTM_CPU_ISAS baseline)
endif()

set(LLTM_CPU_ISA_OBJECTS "")
foreach(isa ${LLTM_CPU_ISAS})
  add_library(lltm_cpu_${isa} OBJECT ${LLTM_CPU_ISA_SOURCES})
  target_include_directories(lltm_cpu_${isa} PRIVATE csrc)
  target_compile_definitions(lltm_cpu_${isa} PRIVATE LLTM_BUILDING LLTM_ISA_NAMESPACE=${isa})
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # -ffp-contract=fast lets the GEMM's a*b+c become fused multiply-adds. -fno-math-errno lets a
    # square root be the instruction (vectorised, as the optimizers' loops need), not a call that may set
    # errno: the kernels never read errno, and the values are the same, the square root being exact.
    target_compile_options(lltm_cpu_${isa} PRIVATE -ffp-contract=fast -fno-math-errno -fno-tree-loop-distribute-patterns -Wall -Wextra ${LLTM_CPU_ISA_FLAGS_${isa}})
  endif()
  string(TOUPPER ${isa} ISA)
  target_compile_definitions(lltm_core PRIVATE LLTM_CPU_ISA_${ISA})
  list(APPEND LLTM_CPU_ISA_OBJECTS $<TARGET_OBJECTS:lltm_cpu_${isa}>)
endforeach()
target_sources(lltm PRIVATE ${LLTM_CPU_ISA_OBJECTS})
message(STATUS "lltm: CPU kernels for ${LLTM_CPU_ISAS}")
