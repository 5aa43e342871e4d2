// The portable CUDA backend's (LLTM_PORTABLE with liblltm_cuda) bindings to
// old glibc symbol versions for the references inside the static CUDA runtime
// (libcudart_static.a, compiled against a glibc newer than the floor, so that
// its calls of functions that glibc 2.34 moved from libpthread, libdl and
// librt into libc would bind to their 2.34 versions). The link step sends
// each to __wrap_<name> (--wrap, cmake/portable.cmake reads the list below),
// a jump to the function's oldest version on x86-64, bound by .symver to an
// alias of our own name (a name --wrap leaves alone). The old versions are the
// same functions (2.34+ keeps them in libc; before, they live in libpthread,
// libdl and librt, which cmake/portable.cmake keeps as NEEDED). A jump rather
// than a C wrapper: it passes any arguments on as they are.
// scripts/build-prebuilt.ts checks the glibc floor the result reaches.

// Each symbol and its oldest version (objdump -T of glibc's libc.so.6 lists both).
// clang-format off
#define LLTM_CUDART_COMPAT_SYMBOLS(X) \
  X(dlclose, "GLIBC_2.2.5") \
  X(dlerror, "GLIBC_2.2.5") \
  X(dlmopen, "GLIBC_2.3.4") \
  X(dlopen, "GLIBC_2.2.5") \
  X(dlsym, "GLIBC_2.2.5") \
  X(dlvsym, "GLIBC_2.2.5") \
  X(pthread_condattr_setpshared, "GLIBC_2.2.5") \
  X(pthread_detach, "GLIBC_2.2.5") \
  X(pthread_getspecific, "GLIBC_2.2.5") \
  X(pthread_join, "GLIBC_2.2.5") \
  X(pthread_key_create, "GLIBC_2.2.5") \
  X(pthread_key_delete, "GLIBC_2.2.5") \
  X(pthread_kill, "GLIBC_2.2.5") \
  X(pthread_mutex_trylock, "GLIBC_2.2.5") \
  X(pthread_mutexattr_destroy, "GLIBC_2.2.5") \
  X(pthread_mutexattr_init, "GLIBC_2.2.5") \
  X(pthread_mutexattr_setpshared, "GLIBC_2.2.5") \
  X(pthread_mutexattr_settype, "GLIBC_2.2.5") \
  X(pthread_rwlock_destroy, "GLIBC_2.2.5") \
  X(pthread_rwlock_init, "GLIBC_2.2.5") \
  X(pthread_rwlock_rdlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_timedrdlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_timedwrlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_tryrdlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_trywrlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_unlock, "GLIBC_2.2.5") \
  X(pthread_rwlock_wrlock, "GLIBC_2.2.5") \
  X(pthread_rwlockattr_destroy, "GLIBC_2.2.5") \
  X(pthread_rwlockattr_init, "GLIBC_2.2.5") \
  X(pthread_rwlockattr_setpshared, "GLIBC_2.2.5") \
  X(pthread_setspecific, "GLIBC_2.2.5") \
  X(pthread_spin_destroy, "GLIBC_2.2.5") \
  X(pthread_spin_init, "GLIBC_2.2.5") \
  X(pthread_spin_lock, "GLIBC_2.2.5") \
  X(pthread_spin_trylock, "GLIBC_2.2.5") \
  X(pthread_spin_unlock, "GLIBC_2.2.5") \
  X(sem_destroy, "GLIBC_2.2.5") \
  X(sem_init, "GLIBC_2.2.5") \
  X(sem_post, "GLIBC_2.2.5") \
  X(sem_timedwait, "GLIBC_2.2.5") \
  X(sem_trywait, "GLIBC_2.2.5") \
  X(sem_wait, "GLIBC_2.2.5") \
  X(shm_open, "GLIBC_2.2.5") \
  X(shm_unlink, "GLIBC_2.2.5")
// clang-format on

#define LLTM_CUDART_TRAMPOLINE(symbol, version)                                        \
  __asm__(".symver lltm_old_" #symbol ", " #symbol "@" version);                      \
  __asm__(".globl __wrap_" #symbol "\n.hidden __wrap_" #symbol "\n.type __wrap_" #symbol \
          ", @function\n__wrap_" #symbol ":\n\tjmp lltm_old_" #symbol "@PLT\n");
LLTM_CUDART_COMPAT_SYMBOLS(LLTM_CUDART_TRAMPOLINE)
