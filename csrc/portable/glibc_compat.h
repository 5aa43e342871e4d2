// Force-included (-include) into every source of liblltm in the portable
// build only (LLTM_PORTABLE, cmake/portable.cmake), so that the prebuilt
// library runs on glibc older than the build machine's; glibc_compat.cpp holds
// the part that this header cannot reach (references from the static
// libstdc++). scripts/build-prebuilt.ts fails if the result needs a glibc newer
// than its declared floor.
//
// glibc keeps every old version of a symbol whose interface or home changed,
// and the link step binds a reference to the newest one it sees. A .symver
// directive instead binds this file's references to the oldest version, the
// architecture's first (LLTM_GLIBC_BASE), which every glibc since still
// provides with the same behaviour.
#pragma once

#if defined(__x86_64__)
#define LLTM_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define LLTM_GLIBC_BASE "GLIBC_2.17"
#else
#error "the portable build (LLTM_PORTABLE) knows glibc's first symbol versions for x86-64 and aarch64 only"
#endif

// dlopen, dlsym, dlerror and dladdr moved from libdl into libc in 2.34 and
// took a new version there; the old version is the same function (2.34+ keeps
// it in libc, and libdl.so.2 remains as an empty stub). Before 2.34 it lives
// in libdl.so.2, which cmake/portable.cmake therefore keeps as NEEDED.
__asm__(".symver dlopen, dlopen@" LLTM_GLIBC_BASE);
__asm__(".symver dlsym, dlsym@" LLTM_GLIBC_BASE);
__asm__(".symver dlerror, dlerror@" LLTM_GLIBC_BASE);
__asm__(".symver dladdr, dladdr@" LLTM_GLIBC_BASE);

// glibc 2.29 gave exp and pow a new version that sets errno itself; the old
// version wraps the very same implementation and differs only on overflow or
// underflow to zero, where it sets errno through the SVID error handler (whose
// POSIX mode returns the same HUGE_VAL or 0). The library never reads errno
// after them, so results are bit-identical; the scalar float64 paths call exp
// directly, so a .symver (no wrapper in between) keeps them as fast.
__asm__(".symver exp, exp@" LLTM_GLIBC_BASE);
__asm__(".symver pow, pow@" LLTM_GLIBC_BASE);

// glibc 2.27 (the float forms) and 2.29 (the double forms) gave the
// exponentials and logarithms new versions without the SVID error handling,
// as for exp and pow above: the old versions compute the same values and
// differ only in setting errno, which the library never reads.
__asm__(".symver expf, expf@" LLTM_GLIBC_BASE);
__asm__(".symver exp2f, exp2f@" LLTM_GLIBC_BASE);
__asm__(".symver exp2, exp2@" LLTM_GLIBC_BASE);
__asm__(".symver logf, logf@" LLTM_GLIBC_BASE);
__asm__(".symver log2f, log2f@" LLTM_GLIBC_BASE);
__asm__(".symver log, log@" LLTM_GLIBC_BASE);
__asm__(".symver log2, log2@" LLTM_GLIBC_BASE);
__asm__(".symver powf, powf@" LLTM_GLIBC_BASE);

// From glibc 2.38 the headers of a C++ (_GNU_SOURCE) build redirect the
// strto* family to C23 versions that also read "0b" prefixes; the library
// parses decimal numbers only, so the old functions give the same results.
#include <features.h>
#if __GLIBC_PREREQ(2, 38)
__asm__(".symver __isoc23_strtol, strtol@" LLTM_GLIBC_BASE);
__asm__(".symver __isoc23_strtoul, strtoul@" LLTM_GLIBC_BASE);
__asm__(".symver __isoc23_strtoll, strtoll@" LLTM_GLIBC_BASE);
__asm__(".symver __isoc23_strtoull, strtoull@" LLTM_GLIBC_BASE);
#endif
