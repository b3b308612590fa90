/* Peak memory and time of ONE b2nd shape change / copy / concatenation on a
   large on-disk array, in a fresh process: the library (libb2nd or the
   reference c-blosc2) is dlopen'ed, so one binary drives both.

   usage: bench_reshape LIB.so OP WORKDIR SCALE [LABEL]

   The array is float64, shape {8000, 16000}/SCALE, chunks {1000, 1000}/SCALE,
   blocks {250, 1000}/SCALE, Zstd clevel 1, shuffle, 1 thread, a contiguous
   frame file; v[i][j] = i * ncols + j.  OP `create` writes WORKDIR/orig.b2nd
   (slab by slab of one chunk row); every other OP opens WORKDIR/src.b2nd (a
   copy of orig.b2nd the caller makes), does the operation (new arrays go to
   WORKDIR/out.b2nd), frees the array holding the result (both timed), then
   reopens the result file and checks 3x3 windows against the model.

   Prints one line:  OP LABEL SECONDS PEAK_MB BOUND_MB STATUS
   PEAK_MB is getrusage's ru_maxrss of the whole process; BOUND_MB is own
   buffers + 8 uncompressed chunks + 64 MB; STATUS is ok, refused (the
   operation returned an error and left the array as it was: exit 3),
   FAIL or refused-but-changed (wrong values: exit 1) or error (setup
   failed: exit 2). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "b2nd.h"
#include "bench_common.h"

typedef struct {
  int (*init)(void);
  b2nd_context_t *(*create_ctx)(const blosc2_storage *, int8_t, const int64_t *, const int32_t *, const int32_t *,
                                const char *, int8_t, const blosc2_metalayer *, int32_t);
  int (*free_ctx)(b2nd_context_t *);
  int (*empty)(b2nd_context_t *, b2nd_array_t **);
  int (*open)(const char *, b2nd_array_t **);
  int (*free_array)(b2nd_array_t *);
  int (*get_slice_cbuffer)(const b2nd_array_t *, const int64_t *, const int64_t *, void *, const int64_t *, int64_t);
  int (*set_slice_cbuffer)(const void *, const int64_t *, int64_t, const int64_t *, const int64_t *, b2nd_array_t *);
  int (*resize)(b2nd_array_t *, const int64_t *, const int64_t *);
  int (*insert)(b2nd_array_t *, const void *, int64_t, int8_t, int64_t);
  int (*append)(b2nd_array_t *, const void *, int64_t, int8_t);
  int (*delete_)(b2nd_array_t *, int8_t, int64_t, int64_t);
  int (*copy)(b2nd_context_t *, const b2nd_array_t *, b2nd_array_t **);
  int (*get_slice)(b2nd_context_t *, b2nd_array_t **, const b2nd_array_t *, const int64_t *, const int64_t *);
  int (*concatenate)(b2nd_context_t *, const b2nd_array_t *, const b2nd_array_t *, int8_t, bool, b2nd_array_t **);
} lib_t;

static lib_t L;

static int load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s)                            \
  *(void **)(&L.f) = dlsym(h, s);            \
  if (!L.f) {                                \
    fprintf(stderr, "missing %s\n", s);      \
    return -1;                               \
  }
  SYM(init, "blosc2_init");
  SYM(create_ctx, "b2nd_create_ctx");
  SYM(free_ctx, "b2nd_free_ctx");
  SYM(empty, "b2nd_empty");
  SYM(open, "b2nd_open");
  SYM(free_array, "b2nd_free");
  SYM(get_slice_cbuffer, "b2nd_get_slice_cbuffer");
  SYM(set_slice_cbuffer, "b2nd_set_slice_cbuffer");
  SYM(resize, "b2nd_resize");
  SYM(insert, "b2nd_insert");
  SYM(append, "b2nd_append");
  SYM(delete_, "b2nd_delete");
  SYM(copy, "b2nd_copy");
  SYM(get_slice, "b2nd_get_slice");
  SYM(concatenate, "b2nd_concatenate");
#undef SYM
  L.init();
  return 0;
}

/* Geometry, all divided by the scale. */
static int64_t R, C;       /* shape */
static int32_t CH0, CH1;   /* chunk shape */
static int32_t BL0, BL1;   /* block shape */
static int64_t K;          /* scale */

static int64_t sc(int64_t n) {
  int64_t v = n / K;
  return v > 0 ? v : 1;
}

/* i*C + j plus a fraction (16 bits) from a hash of the position: data that
   compresses a few times with Zstd 1 + shuffle, as real measurements do. */
static double orig(int64_t i, int64_t j) {
  uint64_t h = (uint64_t)(i * C + j) * 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  return (double)(i * C + j) + (double)((h >> 48) & 0xffff) / 65536.0;
}

/* The model: what the result holds at (i, j), for shape {n0, n1}. */
typedef struct {
  int kind;         /* see model_value */
  int axis;
  int64_t at, len;  /* place and length of the edit along axis */
  int64_t n0, n1;   /* result shape */
  int64_t aux;      /* appended columns (M_APPEND) */
} model_t;

enum { M_SAME, M_GROW_ZERO, M_INSERT_CONST, M_DELETE, M_APPEND, M_CONCAT0 };

static double append_value(int64_t i, int64_t j, int64_t ncols) { return -1.0 - (double)(i * ncols + j); }

static double model_value(const model_t *m, int64_t i, int64_t j) {
  int64_t idx[2] = {i, j};
  int64_t *p = &idx[m->axis];
  switch (m->kind) {
    case M_SAME:
      return orig(i, j);
    case M_GROW_ZERO:  /* len zeros open at `at` */
      if (*p < m->at) return orig(i, j);
      if (*p < m->at + m->len) return 0.0;
      *p -= m->len;
      return orig(idx[0], idx[1]);
    case M_INSERT_CONST:  /* len items of -1 inserted at `at` */
      if (*p < m->at) return orig(i, j);
      if (*p < m->at + m->len) return -1.0;
      *p -= m->len;
      return orig(idx[0], idx[1]);
    case M_DELETE:
      if (*p >= m->at) *p += m->len;
      return orig(idx[0], idx[1]);
    case M_APPEND:  /* axis 1, aux columns appended */
      if (j < C) return orig(i, j);
      return append_value(i, j - C, m->aux);
    case M_CONCAT0:
      return orig(i % R, j);
  }
  return 0.0;
}

/* Check a 3x3 window whose corner is near (i, j) (clamped into the array).
   Returns the number of wrong values, or -1 if reading failed. */
static int check_window(const b2nd_array_t *a, const model_t *m, int64_t i, int64_t j) {
  int64_t w0 = m->n0 < 3 ? m->n0 : 3, w1 = m->n1 < 3 ? m->n1 : 3;
  if (i < 0) i = 0;
  if (j < 0) j = 0;
  if (i > m->n0 - w0) i = m->n0 - w0;
  if (j > m->n1 - w1) j = m->n1 - w1;
  int64_t start[2] = {i, j}, stop[2] = {i + w0, j + w1}, bs[2] = {w0, w1};
  double buf[9];
  if (L.get_slice_cbuffer(a, start, stop, buf, bs, (int64_t)sizeof(double) * w0 * w1) < 0) return -1;
  int bad = 0;
  for (int64_t x = 0; x < w0; x++) {
    for (int64_t y = 0; y < w1; y++) {
      double want = model_value(m, i + x, j + y), got = buf[x * w1 + y];
      if (got != want) {
        if (bad < 3) fprintf(stderr, "(%ld, %ld): got %.17g, want %.17g\n", (long)(i + x), (long)(j + y), got, want);
        bad++;
      }
    }
  }
  return bad;
}

/* Reopen `path` and check its shape and windows at the corners, across chunk
   boundaries, in the middle and around the edit. */
static int verify(const char *path, const model_t *m) {
  b2nd_array_t *a = NULL;
  if (L.open(path, &a) < 0 || a == NULL) {
    fprintf(stderr, "cannot reopen %s\n", path);
    return -1;
  }
  if (a->ndim != 2 || a->shape[0] != m->n0 || a->shape[1] != m->n1) {
    fprintf(stderr, "shape {%ld, %ld}, want {%ld, %ld}\n", (long)a->shape[0], (long)a->shape[1], (long)m->n0,
            (long)m->n1);
    L.free_array(a);
    return -1;
  }
  int64_t pts[16][2];
  int n = 0;
#define PT(x, y) (pts[n][0] = (x), pts[n][1] = (y), n++)
  PT(0, 0);
  PT(CH0 - 1, CH1 - 1);                      /* across the first chunk corner */
  PT(m->n0 / 2 - 1, m->n1 / 2 - 1);          /* middle */
  PT(2 * CH0 - 2, m->n1 - 3 * CH1 - 1);      /* another chunk corner */
  PT(m->n0 - 3, m->n1 - 3);                  /* the end */
  PT(m->n0 - 2, 0);
  PT(0, m->n1 - 2);
  if (m->kind != M_SAME && m->kind != M_CONCAT0) {
    /* around both ends of the edit (in the result's coordinates) */
    int64_t e0 = m->at - 1, e1 = m->kind == M_DELETE ? m->at - 1 : m->at + m->len - 1;
    int64_t other = m->axis == 0 ? m->n1 / 3 : m->n0 / 3;
    for (int k = 0; k < 2; k++) {
      int64_t e = k ? e1 : e0;
      if (m->axis == 0) {
        PT(e, other);
        PT(e, m->n1 - 2);
      } else {
        PT(other, e);
        PT(m->n0 - 2, e);
      }
    }
  }
  if (m->kind == M_CONCAT0) PT(R - 1, CH1 - 1);  /* the seam */
#undef PT
  int bad = 0;
  for (int k = 0; k < n; k++) {
    int b = check_window(a, m, pts[k][0], pts[k][1]);
    if (b < 0) {
      fprintf(stderr, "reading the window at (%ld, %ld) failed\n", (long)pts[k][0], (long)pts[k][1]);
      bad = -1;
      break;
    }
    bad += b;
  }
  L.free_array(a);
  return bad;
}

static blosc2_cparams g_cp;
static blosc2_dparams g_dp;

static b2nd_context_t *make_ctx(const char *urlpath, int64_t n0, int64_t n1) {
  g_cp = BLOSC2_CPARAMS_DEFAULTS;
  g_cp.compcode = BLOSC_ZSTD;
  g_cp.clevel = 1;
  g_cp.typesize = 8;
  g_cp.nthreads = 1;
  g_cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  g_dp = BLOSC2_DPARAMS_DEFAULTS;
  g_dp.nthreads = 1;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)urlpath, .cparams = &g_cp, .dparams = &g_dp};
  int64_t shape[2] = {n0, n1};
  int32_t chunks[2] = {CH0, CH1}, blocks[2] = {BL0, BL1};
  return L.create_ctx(&st, 2, shape, chunks, blocks, "<f8", 0, NULL, 0);
}

static int create(const char *path) {
  remove(path);
  b2nd_context_t *ctx = make_ctx(path, R, C);
  b2nd_array_t *a = NULL;
  if (ctx == NULL || L.empty(ctx, &a) < 0) return -1;
  double *slab = malloc(sizeof(double) * (size_t)CH0 * (size_t)C);
  if (slab == NULL) return -1;
  for (int64_t r0 = 0; r0 < R; r0 += CH0) {
    int64_t rows = R - r0 < CH0 ? R - r0 : CH0;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < C; j++) slab[i * C + j] = orig(r0 + i, j);
    int64_t start[2] = {r0, 0}, stop[2] = {r0 + rows, C}, bs[2] = {rows, C};
    if (L.set_slice_cbuffer(slab, bs, (int64_t)sizeof(double) * rows * C, start, stop, a) < 0) return -1;
  }
  free(slab);
  L.free_array(a);
  L.free_ctx(ctx);
  return 0;
}

static double peak_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* kB on Linux */
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s LIB.so OP WORKDIR SCALE [LABEL]\n", argv[0]);
    return 2;
  }
  const char *op = argv[2], *dir = argv[3], *label = argc > 5 ? argv[5] : argv[1];
  /* check:OP reads what OP left (its result file) and checks it against the
     model, without doing OP: with the other library, a cross-check. */
  bool check_only = strncmp(op, "check:", 6) == 0;
  if (check_only) op += 6;
  K = atoi(argv[4]);
  if (K < 1 || K > 1000) {
    fprintf(stderr, "bad scale %s\n", argv[4]);
    return 2;
  }
  R = sc(8000), C = sc(16000);
  CH0 = (int32_t)sc(1000), CH1 = (int32_t)sc(1000);
  BL0 = (int32_t)sc(250), BL1 = (int32_t)sc(1000);
  if (load(argv[1]) < 0) return 2;

  char orig_path[4096], src_path[4096], out_path[4096];
  snprintf(orig_path, sizeof orig_path, "%s/orig.b2nd", dir);
  snprintf(src_path, sizeof src_path, "%s/src.b2nd", dir);
  snprintf(out_path, sizeof out_path, "%s/out.b2nd", dir);
  double chunk_mb = (double)CH0 * CH1 * 8 / 1e6;
  double own_mb = 0;  /* the benchmark's own buffers */

  if (strcmp(op, "create") == 0) {
    double t0 = now();
    int rc = create(orig_path);
    double t = now() - t0;
    model_t m = {.kind = M_SAME, .n0 = R, .n1 = C};
    int bad = rc < 0 ? -1 : verify(orig_path, &m);
    own_mb = (double)CH0 * C * 8 / 1e6;
    printf("%s %s %.4f %.1f %.1f %s\n", op, label, t, peak_mb(), own_mb + 8 * chunk_mb + 64, bad ? "FAIL" : "ok");
    return bad ? 1 : 0;
  }

  /* The operation's parameters (scaled) */
  const int64_t E = sc(1000);  /* aligned edit length: one chunk */
  model_t m = {.kind = M_SAME, .n0 = R, .n1 = C};
  double *buf = NULL;
  int64_t bufsize = 0;
  int64_t box0 = sc(2000), box1 = sc(3000);
  if (strcmp(op, "open") == 0 || strcmp(op, "copy") == 0) {
  } else if (strcmp(op, "read_box") == 0) {
    bufsize = E * E * 8;
  } else if (strcmp(op, "resize_grow0") == 0) {
    m = (model_t){.kind = M_GROW_ZERO, .axis = 0, .at = R, .len = E, .n0 = R + E, .n1 = C};
  } else if (strcmp(op, "resize_grow1") == 0) {
    m = (model_t){.kind = M_GROW_ZERO, .axis = 1, .at = C, .len = E, .n0 = R, .n1 = C + E};
  } else if (strcmp(op, "resize_shrink0") == 0) {
    m = (model_t){.kind = M_DELETE, .axis = 0, .at = R - E, .len = E, .n0 = R - E, .n1 = C};
  } else if (strcmp(op, "resize_grow1_unaligned") == 0) {
    m = (model_t){.kind = M_GROW_ZERO, .axis = 1, .at = sc(5300), .len = sc(700), .n0 = R, .n1 = C + sc(700)};
  } else if (strcmp(op, "insert_mid") == 0 || strcmp(op, "insert_mid_unaligned") == 0) {
    bool un = strcmp(op, "insert_mid_unaligned") == 0;
    int64_t len = un ? sc(300) : E;
    m = (model_t){.kind = M_INSERT_CONST, .axis = 0, .at = un ? sc(4321) : sc(4000), .len = len, .n0 = R + len, .n1 = C};
    bufsize = len * C * 8;
  } else if (strcmp(op, "append1") == 0) {
    int64_t cols = sc(100);
    m = (model_t){.kind = M_APPEND, .axis = 1, .at = C, .len = cols, .n0 = R, .n1 = C + cols, .aux = cols};
    bufsize = R * cols * 8;
  } else if (strcmp(op, "delete_rows") == 0) {
    m = (model_t){.kind = M_DELETE, .axis = 0, .at = sc(3000), .len = E, .n0 = R - E, .n1 = C};
  } else if (strcmp(op, "delete_cols") == 0) {
    m = (model_t){.kind = M_DELETE, .axis = 1, .at = sc(5000), .len = E, .n0 = R, .n1 = C - E};
  } else if (strcmp(op, "delete_unaligned") == 0) {
    m = (model_t){.kind = M_DELETE, .axis = 1, .at = sc(5300), .len = sc(700), .n0 = R, .n1 = C - sc(700)};
  } else if (strcmp(op, "get_slice") == 0) {
    m = (model_t){.kind = M_SAME, .n0 = sc(4000), .n1 = sc(8000)};
  } else if (strcmp(op, "concat") == 0) {
    m = (model_t){.kind = M_CONCAT0, .axis = 0, .n0 = 2 * R, .n1 = C};
  } else {
    fprintf(stderr, "unknown operation %s\n", op);
    return 2;
  }
  if (bufsize > 0) {
    buf = malloc((size_t)bufsize);
    if (buf == NULL) return 2;
    own_mb = (double)bufsize / 1e6;
    if (strcmp(op, "append1") == 0) {
      for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < m.aux; j++) buf[i * m.aux + j] = append_value(i, j, m.aux);
    } else {
      for (int64_t k = 0; k < bufsize / 8; k++) buf[k] = -1.0;
    }
  }
  double bound = own_mb + 8 * chunk_mb + 64;
  if (check_only) {
    bool to_out = strcmp(op, "copy") == 0 || strcmp(op, "get_slice") == 0 || strcmp(op, "concat") == 0;
    int bad = strcmp(op, "read_box") == 0 || strcmp(op, "open") == 0 ? 0 : verify(to_out ? out_path : src_path, &m);
    printf("check:%s %s %s\n", op, label, bad ? "FAIL" : "ok");
    free(buf);
    return bad ? 1 : 0;
  }
  remove(out_path);

  b2nd_array_t *a = NULL, *out = NULL;
  if (L.open(src_path, &a) < 0 || a == NULL) {
    fprintf(stderr, "cannot open %s\n", src_path);
    printf("%s %s nan %.1f %.1f error\n", op, label, peak_mb(), bound);
    return 2;
  }
  b2nd_context_t *ctx = NULL;
  if (strcmp(op, "copy") == 0) ctx = make_ctx(out_path, R, C);
  if (strcmp(op, "get_slice") == 0) ctx = make_ctx(out_path, m.n0, m.n1);
  if (strcmp(op, "concat") == 0) ctx = make_ctx(out_path, R, C);

  /* the measured part: the operation and freeing the array with the result */
  double t0 = now();
  int rc = 0;
  const char *result = src_path;
  if (strcmp(op, "open") == 0) {
  } else if (strcmp(op, "read_box") == 0) {
    int64_t start[2] = {box0, box1}, stop[2] = {box0 + E, box1 + E}, bs[2] = {E, E};
    rc = L.get_slice_cbuffer(a, start, stop, buf, bs, bufsize);
  } else if (strncmp(op, "resize_", 7) == 0) {
    int64_t shape[2] = {m.n0, m.n1};
    if (strcmp(op, "resize_grow1_unaligned") == 0) {
      int64_t start[2] = {0, m.at};
      rc = L.resize(a, shape, start);
    } else {
      rc = L.resize(a, shape, NULL);
    }
  } else if (strncmp(op, "insert_mid", 10) == 0) {
    rc = L.insert(a, buf, bufsize, 0, m.at);
  } else if (strcmp(op, "append1") == 0) {
    rc = L.append(a, buf, bufsize, 1);
  } else if (strncmp(op, "delete_", 7) == 0) {
    rc = L.delete_(a, (int8_t)m.axis, m.at, m.len);
  } else if (strcmp(op, "copy") == 0) {
    rc = ctx ? L.copy(ctx, a, &out) : -1;
    result = out_path;
  } else if (strcmp(op, "get_slice") == 0) {
    int64_t start[2] = {0, 0}, stop[2] = {m.n0, m.n1};
    rc = ctx ? L.get_slice(ctx, &out, a, start, stop) : -1;
    result = out_path;
  } else if (strcmp(op, "concat") == 0) {
    rc = ctx ? L.concatenate(ctx, a, a, 0, true, &out) : -1;
    result = out_path;
  }
  if (rc >= 0 && out != NULL) {
    L.free_array(out);
    out = NULL;
  }
  if (rc >= 0 && result == src_path) {
    L.free_array(a);
    a = NULL;
  }
  double t = now() - t0;
  if (a != NULL) L.free_array(a);
  if (ctx != NULL) L.free_ctx(ctx);
  if (rc < 0) {
    /* a refusal must leave the array as it was */
    fprintf(stderr, "%s: %s returned %d\n", label, op, rc);
    model_t same = {.kind = M_SAME, .n0 = R, .n1 = C};
    int bad = verify(src_path, &same);
    printf("%s %s %.4f %.1f %.1f %s\n", op, label, t, peak_mb(), bound, bad ? "refused-but-changed" : "refused");
    return bad ? 1 : 3;
  }

  int bad = 0;
  if (strcmp(op, "read_box") == 0) {
    for (int64_t x = 0; x < E; x++)
      for (int64_t y = 0; y < E; y++)
        if (buf[x * E + y] != orig(box0 + x, box1 + y)) bad++;
    if (bad) fprintf(stderr, "read_box: %d wrong values\n", bad);
  }
  if (bad == 0) bad = verify(result, &m);
  printf("%s %s %.4f %.1f %.1f %s\n", op, label, t, peak_mb(), bound, bad ? "FAIL" : "ok");
  free(buf);
  return bad ? 1 : 0;
}
