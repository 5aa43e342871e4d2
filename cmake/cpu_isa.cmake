# The CPU kernels, compiled once per instruction-set variant into an object
# library of their own, each in the namespace lltm::cpu::<variant>
# (LLTM_ISA_NAMESPACE); csrc/cpu/isa_dispatch.cpp chooses one when the library
# loads, from what cpuid and xgetbv report (csrc/cpu/cpu_features.cpp checks
# the same features these flags enable). The default build has no flag tied to
# the build machine, so the library runs on any x86-64.
#
# LLTM_NATIVE_ARCH=ON instead builds one variant, `native`, with -march=native:
# tuned for this machine and unfit to be copied to another.

set(LLTM_CPU_ISA_FLAGS_avx512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c)
set(LLTM_CPU_ISA_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(LLTM_CPU_ISA_FLAGS_baseline "")
set(LLTM_CPU_ISA_FLAGS_native -march=native)

if(LLTM_NATIVE_ARCH)
  set(LLTM_CPU_ISAS native)
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
    # -ffp-contract=fast lets the GEMM's a*b+c become fused multiply-adds.
    target_compile_options(lltm_cpu_${isa} PRIVATE -ffp-contract=fast -fno-tree-loop-distribute-patterns -Wall -Wextra ${LLTM_CPU_ISA_FLAGS_${isa}})
  endif()
  string(TOUPPER ${isa} ISA)
  target_compile_definitions(lltm_core PRIVATE LLTM_CPU_ISA_${ISA})
  list(APPEND LLTM_CPU_ISA_OBJECTS $<TARGET_OBJECTS:lltm_cpu_${isa}>)
endforeach()
target_sources(lltm PRIVATE ${LLTM_CPU_ISA_OBJECTS})
message(STATUS "lltm: CPU kernels for ${LLTM_CPU_ISAS}")
