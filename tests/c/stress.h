/*
 * Shared by the C ABI stress tests (abi_stress.c, sequence_stress.c):
 * contiguous tensor descriptors, seeded values, and a watchdog that turns a
 * hang into a failure.
 */
#pragma once

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lltm.h"

static size_t stress_element_bytes(int32_t dtype) { return dtype == LLTM_FLOAT64 ? 8 : 4; }

/* A contiguous tensor of `ndim` sizes (the dtype field set too, as lltm_run reads it). */
static lltm_tensor stress_tensor(void* data, int ndim, const int64_t* sizes, int32_t dtype) {
  lltm_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.ndim = ndim;
  t.dtype = dtype;
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = stride;
    stride *= sizes[d];
  }
  return t;
}

/* n values in [-scale, scale) of float32 or float64 from a seeded generator. */
static void stress_fill(void* p, size_t n, int32_t dtype, unsigned seed, double scale) {
  for (size_t k = 0; k < n; ++k) {
    seed = seed * 1103515245u + 12345u;
    const double v = ((double)(seed >> 8) / (double)(1u << 24) - 0.5) * 2.0 * scale;
    if (dtype == LLTM_FLOAT32) ((float*)p)[k] = (float)v;
    else ((double*)p)[k] = v;
  }
}

static int stress_timeout_s = 120;
static volatile int stress_finished = 0;

static void* stress_watchdog(void* arg) {
  (void)arg;
  for (int ms = 0; !__atomic_load_n(&stress_finished, __ATOMIC_SEQ_CST); ms += 50) {
    if (ms > stress_timeout_s * 1000) {
      fprintf(stderr, "no progress after %d s (a hang)\n", stress_timeout_s);
      _exit(2);
    }
    usleep(50000);
  }
  return NULL;
}

enum { kStressMaxThreads = 16 };
static pthread_t stress_dog;

/* The command line's [rounds per thread] [threads] [timeout seconds] (threads from 1 to kStressMaxThreads, else 4),
 * then the watchdog started. */
static void stress_begin(int argc, char** argv, int default_rounds, int* rounds, int* threads) {
  *rounds = argc > 1 ? atoi(argv[1]) : default_rounds;
  *threads = argc > 2 ? atoi(argv[2]) : 4;
  stress_timeout_s = argc > 3 ? atoi(argv[3]) : 120;
  if (*threads < 1 || *threads > kStressMaxThreads) *threads = 4;
  pthread_create(&stress_dog, NULL, stress_watchdog, NULL);
}

/* Runs worker(i) for i < threads at once and waits for them, then stops the watchdog: the seconds they took. */
static double stress_run(int threads, void* (*worker)(void*)) {
  pthread_t t[kStressMaxThreads];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, (void*)(intptr_t)i);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  __atomic_store_n(&stress_finished, 1, __ATOMIC_SEQ_CST);
  pthread_join(stress_dog, NULL);
  return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}
