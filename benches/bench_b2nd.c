/* Side-by-side benchmark of b2nd operations, libb2nd against the reference
   c-blosc2, both dlopen'ed (RTLD_LOCAL) into this process; ours then theirs in
   every repetition; medians and the median of per-repetition speed ratios
   (ours/c-blosc2, above 1 = libb2nd faster).

   usage: bench_b2nd OURS.so REF.so [REPS] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "b2nd.h"
#include "bench_common.h"

typedef struct {
  const char *name;
  void (*init)(void);
  b2nd_context_t *(*create_ctx)(const blosc2_storage *, int8_t, const int64_t *, const int32_t *, const int32_t *,
                                const char *, int8_t, const blosc2_metalayer *, int32_t);
  int (*free_ctx)(b2nd_context_t *);
  int (*from_cbuffer)(b2nd_context_t *, b2nd_array_t **, const void *, int64_t);
  int (*to_cbuffer)(const b2nd_array_t *, void *, int64_t);
  int (*get_slice_cbuffer)(const b2nd_array_t *, const int64_t *, const int64_t *, void *, const int64_t *, int64_t);
  int (*set_slice_cbuffer)(const void *, const int64_t *, int64_t, const int64_t *, const int64_t *, b2nd_array_t *);
  int (*free_array)(b2nd_array_t *);
} lib_t;

static int load(lib_t *l, const char *path, const char *name) {
  l->name = name;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s) *(void **)(&l->f) = dlsym(h, s); if (!l->f) { fprintf(stderr, "missing %s\n", s); return -1; }
  SYM(init, "blosc2_init");
  SYM(create_ctx, "b2nd_create_ctx");
  SYM(free_ctx, "b2nd_free_ctx");
  SYM(from_cbuffer, "b2nd_from_cbuffer");
  SYM(to_cbuffer, "b2nd_to_cbuffer");
  SYM(get_slice_cbuffer, "b2nd_get_slice_cbuffer");
  SYM(set_slice_cbuffer, "b2nd_set_slice_cbuffer");
  SYM(free_array, "b2nd_free");
  l->init();
  return 0;
}

#define D 200
static const int64_t SHAPE[3] = {D, D, D};
static const int32_t CHUNKS[3] = {50, 50, 50};
static const int32_t BLOCKS[3] = {10, 10, 10};

static float *g_data, *g_out;

/* One repetition; returns seconds (negative on failure). */
static double run(lib_t *l, int op) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_storage st = {.cparams = &cp};
  b2nd_context_t *ctx = l->create_ctx(&st, 3, SHAPE, CHUNKS, BLOCKS, "<f4", 0, NULL, 0);
  b2nd_array_t *a = NULL;
  int64_t nbytes = (int64_t)D * D * D * 4;
  double t0 = now();
  if (ctx == NULL || l->from_cbuffer(ctx, &a, g_data, nbytes) < 0) return -1;
  double t = now() - t0;
  int64_t start[3] = {0, 0, 0}, stop[3] = {D, D, D};
  if (op == 1) {
    t0 = now();
    if (l->to_cbuffer(a, g_out, nbytes) < 0) return -1;
    t = now() - t0;
  } else if (op == 2) {
    /* 1000 small cubes (8^3) at scattered places */
    t0 = now();
    uint32_t s = 7;
    for (int i = 0; i < 1000; i++) {
      for (int k = 0; k < 3; k++) {
        s = s * 1664525u + 1013904223u;
        start[k] = s % (D - 8);
        stop[k] = start[k] + 8;
      }
      int64_t bs[3] = {8, 8, 8};
      if (l->get_slice_cbuffer(a, start, stop, g_out, bs, 8 * 8 * 8 * 4) < 0) return -1;
    }
    t = now() - t0;
  } else if (op == 3) {
    /* a slab across the last dimension (strided in the chunks) */
    int64_t s0[3] = {0, 0, 100}, s1[3] = {D, D, 101}, bs[3] = {D, D, 1};
    t0 = now();
    if (l->get_slice_cbuffer(a, s0, s1, g_out, bs, (int64_t)D * D * 4) < 0) return -1;
    t = now() - t0;
  } else if (op == 4) {
    /* overwrite a 100^3 corner */
    int64_t s0[3] = {25, 25, 25}, s1[3] = {125, 125, 125}, bs[3] = {100, 100, 100};
    t0 = now();
    if (l->set_slice_cbuffer(g_data, bs, 100 * 100 * 100 * 4, s0, s1, a) < 0) return -1;
    t = now() - t0;
  }
  l->free_array(a);
  l->free_ctx(ctx);
  return t;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s OURS.so REF.so [REPS]\n", argv[0]);
    return 2;
  }
  lib_t libs[2];
  if (load(&libs[0], argv[1], "ours") || load(&libs[1], argv[2], "ref")) return 1;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (reps < 1 || reps > 100) reps = 5;
  size_t n = (size_t)D * D * D;
  g_data = malloc(n * 4);
  g_out = malloc(n * 4);
  for (size_t i = 0; i < n; i++) g_data[i] = (float)(i % 977) * 0.25f + (float)(i / 40000);
  const char *ops[] = {"from_cbuffer (32 MB)", "to_cbuffer (32 MB)", "get_slice 1000 x 8^3", "get_slice 200x200x1 slab",
                       "set_slice 100^3"};
  printf("| operation | ours | c-blosc2 | ours/c-blosc2 |\n|---|---|---|---|\n");
  for (int op = 0; op < 5; op++) {
    double t[2][100], ratio[100];
    for (int r = 0; r < reps; r++) {
      for (int k = 0; k < 2; k++) {
        t[k][r] = run(&libs[k], op);
        if (t[k][r] < 0) {
          fprintf(stderr, "%s failed: %s\n", libs[k].name, ops[op]);
          return 1;
        }
      }
      ratio[r] = t[1][r] / t[0][r];
    }
    double a = median(t[0], reps), b = median(t[1], reps), q = median(ratio, reps);
    printf("| %s | %.2f ms | %.2f ms | %.2f |\n", ops[op], a * 1e3, b * 1e3, q);
    fflush(stdout);
  }
  return 0;
}
