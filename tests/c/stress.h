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
