# LLTM_PORTABLE=ON links libstdc++ into liblltm, and into liblltm_cuda when
# it is built (for the prebuilt packages, scripts/build-prebuilt.ts): then the
# library needs only glibc and libgcc_s
# of the machine that runs it, not a libstdc++ at least as new as the build
# machine's. Its copy stays private (--exclude-libs, and a version script
# that exports lltm.h's functions alone), so that liblltm never binds to, or
# lends its symbols to, the libstdc++ that the host process (Node, Bun, Deno)
# may have loaded. libgcc stays shared: its static unwinder
# would need a newer glibc (_dl_find_object, 2.35), and --gc-sections drops
# the parts of libstdc++ that would need 2.36.
#
# The glibc floor: references are bound to the oldest versions of the symbols
# whose version glibc raised since (dlopen, pthread_create: 2.34; fstat64:
# 2.33; __libc_single_threaded: 2.32; exp, pow: 2.29), so that the library
# loads on glibc 2.18 and newer (RHEL 8, Debian 10, Ubuntu 18.04, Amazon
# Linux 2; Node's own builds need 2.28). What stays at 2.18 is
# __cxa_thread_atexit_impl, glibc's half of thread_local destructors (the
# per-thread last-error string). csrc/portable/glibc_compat.h (force-included
# into every source) and glibc_compat.cpp (wrappers for the static libstdc++'s
# references, through --wrap) say how and why, symbol by symbol;
# scripts/build-prebuilt.ts fails when the result needs a newer glibc.
option(LLTM_PORTABLE "Link libstdc++ statically into liblltm, keeping its symbols private, for glibc 2.18 and newer" OFF)
if(LLTM_PORTABLE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    message(FATAL_ERROR "lltm: LLTM_PORTABLE needs GCC on Linux")
  endif()
  if(LLTM_NATIVE_ARCH)
    message(FATAL_ERROR "lltm: LLTM_PORTABLE and LLTM_NATIVE_ARCH exclude each other: a portable library must not use -march=native")
  endif()
  # The same for each shared library: libstdc++ linked in and private, the exports of its map alone.
  function(lltm_portable_link target exports)
    target_link_options(${target} PRIVATE -static-libstdc++ -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,--as-needed
      "-Wl,--version-script=${PROJECT_SOURCE_DIR}/csrc/portable/${exports}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${PROJECT_SOURCE_DIR}/csrc/portable/${exports}")
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/csrc/portable/glibc_compat.cpp)
    target_link_options(${target} PRIVATE -Wl,--wrap=pthread_create -Wl,--wrap=pthread_once -Wl,--wrap=fstat64
      -Wl,--wrap=__isoc23_strtol -Wl,--wrap=__isoc23_strtoul -Wl,--wrap=__isoc23_strtoll -Wl,--wrap=__isoc23_strtoull)
    # Before glibc 2.34 the old dlopen and pthread_create live in these two, not
    # in libc; since 2.34 they are empty stubs. Named in full (only the
    # versioned names exist on new systems) and kept though no symbol resolves
    # to them here, which --as-needed would otherwise drop.
    target_link_libraries(${target} PRIVATE -Wl,--push-state,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0 -Wl,--pop-state)
  endfunction()
  lltm_portable_link(lltm exports.map)

  set(LLTM_GLIBC_COMPAT_HEADER "${PROJECT_SOURCE_DIR}/csrc/portable/glibc_compat.h")
  set(LLTM_GLIBC_COMPAT_TARGETS lltm_common lltm_core)
  foreach(isa ${LLTM_CPU_ISAS})
    list(APPEND LLTM_GLIBC_COMPAT_TARGETS lltm_cpu_${isa})
  endforeach()
  foreach(target ${LLTM_GLIBC_COMPAT_TARGETS})
    target_compile_options(${target} PRIVATE "SHELL:-include ${LLTM_GLIBC_COMPAT_HEADER}")
  endforeach()

  # The prebuilt CUDA backend (scripts/build-prebuilt.ts --cuda): the CUDA
  # runtime is linked statically already (cuda/CMakeLists.txt), and it opens
  # the driver's libcuda.so.1 itself, so with libstdc++ linked in too it needs
  # what liblltm needs and nothing more; it exports lltm_backend_v1 alone.
  if(TARGET lltm_cuda)
    lltm_portable_link(lltm_cuda backend_exports.map)
    target_compile_options(lltm_cuda PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcompiler=-include,${LLTM_GLIBC_COMPAT_HEADER}>"
      "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include ${LLTM_GLIBC_COMPAT_HEADER}>")
    # The static CUDA runtime's references to what glibc 2.34 moved into libc:
    # each sent by --wrap to its old version (the list is cudart_compat.cpp's).
    set(compat "${PROJECT_SOURCE_DIR}/csrc/portable/cudart_compat.cpp")
    target_sources(lltm_cuda PRIVATE "${compat}")
    file(READ "${compat}" compat_text)
    string(REGEX MATCHALL "\n  X\\([a-z_]+," compat_entries "${compat_text}")
    foreach(entry ${compat_entries})
      string(REGEX REPLACE "\n  X\\(([a-z_]+)," "\\1" symbol "${entry}")
      target_link_options(lltm_cuda PRIVATE "-Wl,--wrap=${symbol}")
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${compat}")
    # shm_open and shm_unlink live in librt before glibc 2.34.
    target_link_libraries(lltm_cuda PRIVATE -Wl,--push-state,--no-as-needed -l:librt.so.1 -Wl,--pop-state)
  endif()
endif()
