/* Side-by-side benchmark of b2nd operations, libb2nd against the reference
   c-blosc2, both dlopen'ed (RTLD_LOCAL) into this process; ours then theirs in
   every repetition; medians and the median of per-repetition speed ratios
   (ours/c-blosc2, above 1 = libb2nd faster).

   usage: bench_b2nd OURS.so REF.so [REPS] */
#include <dlfcn.h>
#include <math.h>
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

static uint8_t *g_data, *g_out;
static int g_typesize, g_nthreads;

static b2nd_context_t *make_ctx(lib_t *l) {
  /* Static: c-blosc2's context keeps pointing at the parameters it was given. */
  static blosc2_cparams cp;
  static blosc2_dparams dp;
  cp = (blosc2_cparams)BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4;
  cp.typesize = g_typesize;
  cp.nthreads = (int16_t)g_nthreads;
  dp = (blosc2_dparams)BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)g_nthreads;
  blosc2_storage st = {.cparams = &cp, .dparams = &dp};
  return l->create_ctx(&st, 3, SHAPE, CHUNKS, BLOCKS, g_typesize == 4 ? "<f4" : "<f8", 0, NULL, 0);
}

/* Read `n` boxes of side `side` at scattered places (the same for both libraries). */
static int boxes(lib_t *l, b2nd_array_t *a, int n, int side) {
  uint32_t s = 7;
  int64_t start[3], stop[3], bs[3] = {side, side, side};
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      s = s * 1664525u + 1013904223u;
      start[k] = s % (D - side + 1);
      stop[k] = start[k] + side;
    }
    if (l->get_slice_cbuffer(a, start, stop, g_out, bs, (int64_t)side * side * side * g_typesize) < 0) return -1;
  }
  return 0;
}

/* A slice one item thick across `axis`, in the middle of the array. */
static int thin(lib_t *l, b2nd_array_t *a, int axis) {
  int64_t s0[3] = {0, 0, 0}, s1[3] = {D, D, D}, bs[3] = {D, D, D};
  s0[axis] = D / 2 + 3;
  s1[axis] = s0[axis] + 1;
  bs[axis] = 1;
  return l->get_slice_cbuffer(a, s0, s1, g_out, bs, (int64_t)D * D * g_typesize);
}

enum { OP_FROM, OP_TO, OP_THIN0, OP_THIN1, OP_THIN2, OP_BOX12, OP_BOX100, OP_POINTS, OP_SET, NOPS };
static const char *op_names[NOPS] = {"from_cbuffer (whole array)", "to_cbuffer (whole array)", "thin slice [103, :, :]",
                                     "thin slice [:, 103, :]",     "thin slice [:, :, 103]",   "200 boxes of 12^3",
                                     "2 boxes of 100^3",           "1000 single items",        "set_slice 100^3"};

/* One timed operation on `a` (from_cbuffer makes and frees its own array). */
static double run(lib_t *l, b2nd_array_t *a, int op) {
  int64_t nbytes = (int64_t)D * D * D * g_typesize;
  double t0 = now();
  int rc = 0;
  switch (op) {
    case OP_FROM: {
      b2nd_context_t *ctx = make_ctx(l);
      b2nd_array_t *b = NULL;
      rc = ctx == NULL ? -1 : l->from_cbuffer(ctx, &b, g_data, nbytes);
      double t = now() - t0;
      if (b) l->free_array(b);
      if (ctx) l->free_ctx(ctx);
      return rc < 0 ? -1 : t;
    }
    case OP_TO: rc = l->to_cbuffer(a, g_out, nbytes); break;
    case OP_THIN0: case OP_THIN1: case OP_THIN2: rc = thin(l, a, op - OP_THIN0); break;
    case OP_BOX12: rc = boxes(l, a, 200, 12); break;
    case OP_BOX100: rc = boxes(l, a, 2, 100); break;
    case OP_POINTS: rc = boxes(l, a, 1000, 1); break;
    case OP_SET: {
      int64_t s0[3] = {25, 25, 25}, s1[3] = {125, 125, 125}, bs[3] = {100, 100, 100};
      rc = l->set_slice_cbuffer(g_data, bs, (int64_t)100 * 100 * 100 * g_typesize, s0, s1, a);
      break;
    }
  }
  double t = now() - t0;
  return rc < 0 ? -1 : t;
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
  g_data = malloc(n * 8);
  g_out = malloc(n * 8);
  float *f = (float *)g_data;
  double *d = (double *)g_data;
  printf("| operation | dtype | threads | ours ms | c-blosc2 ms | ours/c-blosc2 |\n|---|---|---|---|---|---|\n");
  /* geometric means: 0 = from/to buffer, 1 = thin slices, boxes and items */
  double logs[2] = {0, 0};
  int counts[2] = {0, 0};
  double worst = 1e9;
  for (int ts = 4; ts <= 8; ts += 4) {
    for (size_t i = 0; i < n; i++) {
      double v = (double)(i % 977) * 0.25 + (double)(i / 40000);
      if (ts == 4) f[i] = (float)v; else d[i] = v;
    }
    g_typesize = ts;
    for (g_nthreads = 1; g_nthreads <= 2; g_nthreads++) {
      b2nd_array_t *arr[2] = {NULL, NULL};
      b2nd_context_t *ctx[2];
      for (int k = 0; k < 2; k++) {
        ctx[k] = make_ctx(&libs[k]);
        if (!ctx[k] || libs[k].from_cbuffer(ctx[k], &arr[k], g_data, (int64_t)n * ts) < 0) {
          fprintf(stderr, "%s: from_cbuffer failed\n", libs[k].name);
          return 1;
        }
      }
      for (int op = 0; op < NOPS; op++) {
        double t[2][100], ratio[100];
        for (int r = 0; r < reps; r++) {
          for (int j = 0; j < 2; j++) {
            int k = (r % 2) ? 1 - j : j; /* alternate which library goes first */
            t[k][r] = run(&libs[k], arr[k], op);
            if (t[k][r] < 0) {
              fprintf(stderr, "%s failed: %s\n", libs[k].name, op_names[op]);
              return 1;
            }
          }
          ratio[r] = t[1][r] / t[0][r];
        }
        double a = median(t[0], reps), b = median(t[1], reps), q = median(ratio, reps);
        printf("| %s | f%d | %d | %.3f | %.3f | %.2f |\n", op_names[op], ts * 8, g_nthreads, a * 1e3, b * 1e3, q);
        fflush(stdout);
        if (op != OP_SET) {
          int g = op <= OP_TO ? 0 : 1;
          logs[g] += log(q);
          counts[g]++;
          if (q < worst) worst = q;
        }
      }
      for (int k = 0; k < 2; k++) {
        libs[k].free_array(arr[k]);
        libs[k].free_ctx(ctx[k]);
      }
    }
  }
  printf("\ngeometric means ours/c-blosc2: from/to buffer %.2f (%d cases), slices, boxes and items %.2f (%d cases); worst %.2f\n",
         exp(logs[0] / counts[0]), counts[0], exp(logs[1] / counts[1]), counts[1], worst);
  return 0;
}
