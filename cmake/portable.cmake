# LLTM_PORTABLE=ON links libstdc++ into liblltm (for the prebuilt package,
# scripts/build-prebuilt.ts): then the library needs only glibc and libgcc_s
# of the machine that runs it, not a libstdc++ at least as new as the build
# machine's. Its copy stays private (--exclude-libs), so that liblltm never
# binds to, or lends its symbols to, the libstdc++ that the host process
# (Node, Bun, Deno) may have loaded. libgcc stays shared: its static unwinder
# would need a newer glibc (_dl_find_object, 2.35) than the rest (2.34), and
# --gc-sections drops the parts of libstdc++ that would need 2.36.
option(LLTM_PORTABLE "Link libstdc++ statically into liblltm, keeping its symbols private" OFF)
if(LLTM_PORTABLE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    message(FATAL_ERROR "lltm: LLTM_PORTABLE needs GCC on Linux")
  endif()
  if(LLTM_NATIVE_ARCH)
    message(FATAL_ERROR "lltm: LLTM_PORTABLE and LLTM_NATIVE_ARCH exclude each other: a portable library must not use -march=native")
  endif()
  target_link_options(lltm PRIVATE -static-libstdc++ -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,--as-needed)
endif()
