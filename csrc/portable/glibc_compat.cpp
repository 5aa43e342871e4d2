// The portable build's (LLTM_PORTABLE) bindings to old glibc symbol versions
// for references that glibc_compat.h cannot reach: those inside the static
// libstdc++ (compiled long before, against the build machine's glibc). The
// link step redirects them here with --wrap (cmake/portable.cmake), and each
// wrapper calls the oldest version of the function, bound by .symver to an
// alias of our own name (a name --wrap leaves alone). Compiled only into the
// portable build; scripts/build-prebuilt.ts checks the glibc floor it reaches.
#include <features.h>
#include <pthread.h>
#include <sys/stat.h>

#include "glibc_compat.h"

#define LLTM_COMPAT extern "C" __attribute__((visibility("hidden")))

// pthread_create (std::thread, the thread pool's workers) and pthread_once
// (std::call_once, libstdc++'s locale set-up) moved from libpthread into libc
// in 2.34 and took a new version there; the old version is the same function
// (2.34+ keeps it in libc, and libpthread.so.0 remains as an empty stub).
// Before 2.34 it lives in libpthread.so.0, which cmake/portable.cmake
// therefore keeps as NEEDED.
extern "C" int lltm_glibc_base_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
extern "C" int lltm_glibc_base_pthread_once(pthread_once_t*, void (*)());
__asm__(".symver lltm_glibc_base_pthread_create, pthread_create@" LLTM_GLIBC_BASE);
__asm__(".symver lltm_glibc_base_pthread_once, pthread_once@" LLTM_GLIBC_BASE);

LLTM_COMPAT int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  return lltm_glibc_base_pthread_create(thread, attr, start, arg);
}

LLTM_COMPAT int __wrap_pthread_once(pthread_once_t* once, void (*init)()) {
  return lltm_glibc_base_pthread_once(once, init);
}

// fstat64 (std::filebuf, which cpu_limits_linux.cpp's std::ifstream uses to
// read the cgroup files) became a real libc function only in 2.33; before,
// <sys/stat.h> turned it into a call of __fxstat64 with the structure's
// version number, which every glibc since still exports: the struct stat64
// layout of today's headers is _STAT_VER_LINUX, 1 on x86-64, and on aarch64
// (whose struct is the kernel's own, glibc's generic port) 0. noexcept as in
// the headers of glibc before 2.33, which still declare it.
extern "C" int __fxstat64(int version, int fd, struct stat64* buf) noexcept;

LLTM_COMPAT int __wrap_fstat64(int fd, struct stat64* buf) {
#if defined(__x86_64__)
  constexpr int stat_ver_linux = 1;
#elif defined(__aarch64__)
  constexpr int stat_ver_linux = 0;
#endif
  return __fxstat64(stat_ver_linux, fd, buf);
}

// glibc 2.32 added the variable __libc_single_threaded, which libstdc++ reads
// to skip atomic operations on reference counts (std::string, std::locale,
// shared_ptr) while a process has one thread. This hidden definition takes the
// place of glibc's for liblltm and its libstdc++, with the value that is
// always safe: 0, "there may be other threads" (the library starts a thread
// pool, and its host runtime has threads of its own), so every count stays
// atomic, as it would be in any process with threads.
extern "C" {
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}

// A static libstdc++ built against glibc 2.38 or newer calls the C23 strto*
// functions (std::stoul and its kin, reading decimal text), which glibc
// 2.38 added; the base versions read decimal text alike.
#if __GLIBC_PREREQ(2, 38)
#define LLTM_BASE_STRTO(type, name)                                                        \
  extern "C" type lltm_glibc_base_##name(const char*, char**, int);                        \
  __asm__(".symver lltm_glibc_base_" #name ", " #name "@" LLTM_GLIBC_BASE);                \
  LLTM_COMPAT type __wrap___isoc23_##name(const char* text, char** end, int base) {        \
    return lltm_glibc_base_##name(text, end, base);                                        \
  }
LLTM_BASE_STRTO(long, strtol)
LLTM_BASE_STRTO(unsigned long, strtoul)
LLTM_BASE_STRTO(long long, strtoll)
LLTM_BASE_STRTO(unsigned long long, strtoull)
#undef LLTM_BASE_STRTO
#endif
