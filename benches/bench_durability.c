/* The cost of what a frame's changes survive: appends, updates and b2nd shape
   changes on a contiguous frame file, through the C API of a dlopen'ed library
   (libb2nd, whose durability B2ND_DURABILITY sets, or the reference c-blosc2,
   which syncs nothing), one run per process.

   usage: bench_durability LIB.so OP DIR CHUNK_KB COUNT [LABEL]

   OP append: COUNT chunks appended (blosc2_schunk_append_buffer) to a new
   frame DIR/bench.b2frame; update: a frame of 64 chunks is made and closed, then
   opened again and COUNT chunks replaced (blosc2_schunk_update_chunk, chunks
   compressed beforehand);
   b2nd_append: a 2-d float64 array whose chunks are CHUNK_KB, COUNT rows of
   chunks appended along axis 0 (b2nd_append); set_slice: an array of 8 x 4
   chunks is written whole and closed, then opened again (b2nd_open) and COUNT
   one-chunk slices written at the chunk grid (b2nd_set_slice_cbuffer). The data are
   float64 ramps with noise (Zstd 1 + shuffle compresses them about 3x). Only
   the COUNT operations are timed, each on its own; the frame is freed (closed)
   in the time of the last one.

   Prints one line:  OP LABEL CHUNK_KB COUNT MEDIAN_US MEAN_US TOTAL_S */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "b2nd.h"
#include "bench_common.h"

typedef struct {
  int (*init)(void);
  blosc2_schunk *(*schunk_new)(blosc2_storage *);
  blosc2_schunk *(*schunk_open)(const char *);
  int (*schunk_free)(blosc2_schunk *);
  int64_t (*append_buffer)(blosc2_schunk *, const void *, int32_t);
  int64_t (*update_chunk)(blosc2_schunk *, int64_t, uint8_t *, bool);
  int (*compress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  int (*remove_urlpath)(const char *);
  b2nd_context_t *(*create_ctx)(const blosc2_storage *, int8_t, const int64_t *, const int32_t *, const int32_t *,
                                const char *, int8_t, const blosc2_metalayer *, int32_t);
  int (*free_ctx)(b2nd_context_t *);
  int (*zeros)(b2nd_context_t *, b2nd_array_t **);
  int (*free_array)(b2nd_array_t *);
  int (*append)(b2nd_array_t *, const void *, int64_t, int8_t);
  int (*set_slice_cbuffer)(const void *, const int64_t *, int64_t, const int64_t *, const int64_t *, b2nd_array_t *);
  int (*b2nd_open)(const char *, b2nd_array_t **);
} lib_t;

static lib_t L;

static int load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s)                       \
  *(void **)(&L.f) = dlsym(h, s);       \
  if (!L.f) {                           \
    fprintf(stderr, "missing %s\n", s); \
    return -1;                          \
  }
  SYM(init, "blosc2_init");
  SYM(schunk_new, "blosc2_schunk_new");
  SYM(schunk_open, "blosc2_schunk_open");
  SYM(schunk_free, "blosc2_schunk_free");
  SYM(append_buffer, "blosc2_schunk_append_buffer");
  SYM(update_chunk, "blosc2_schunk_update_chunk");
  SYM(compress_ctx, "blosc2_compress_ctx");
  SYM(remove_urlpath, "blosc2_remove_urlpath");
  SYM(create_ctx, "b2nd_create_ctx");
  SYM(free_ctx, "b2nd_free_ctx");
  SYM(zeros, "b2nd_zeros");
  SYM(free_array, "b2nd_free");
  SYM(append, "b2nd_append");
  SYM(set_slice_cbuffer, "b2nd_set_slice_cbuffer");
  SYM(b2nd_open, "b2nd_open");
#undef SYM
  L.init();
  return 0;
}

static void fill(double *v, int64_t n, int64_t seed) {
  uint64_t h = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    v[i] = (double)(seed * n + i) + (double)(h & 0xffff) / 65536.0;
  }
}

static blosc2_cparams cparams(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.compcode = BLOSC_ZSTD;
  cp.clevel = 1;
  cp.nthreads = 1;
  return cp;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s LIB.so OP DIR CHUNK_KB COUNT [LABEL]\n", argv[0]);
    return 2;
  }
  if (load(argv[1]) < 0) return 2;
  const char *op = argv[2];
  char path[4096];
  snprintf(path, sizeof path, "%s/bench.b2frame", argv[3]);
  int64_t chunk_kb = atoll(argv[4]);
  int count = atoi(argv[5]);
  const char *label = argc > 6 ? argv[6] : argv[1];
  int64_t items = chunk_kb * 1024 / 8;
  double *buf = malloc((size_t)items * 8);
  double *t = malloc(sizeof(double) * (size_t)count);
  if (!buf || !t) return 2;
  L.remove_urlpath(path);

  blosc2_cparams cp = cparams();
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = true, .urlpath = path, .cparams = &cp, .dparams = &dp};
  double total0 = now();
  if (strcmp(op, "append") == 0 || strcmp(op, "update") == 0) {
    blosc2_schunk *s = L.schunk_new(&st);
    if (!s) return 2;
    uint8_t **chunks = NULL;
    if (strcmp(op, "update") == 0) {
      for (int i = 0; i < 64; i++) {
        fill(buf, items, i);
        if (L.append_buffer(s, buf, (int32_t)(items * 8)) < 0) return 2;
      }
      /* a frame already on disk, as users change them */
      L.schunk_free(s);
      s = L.schunk_open(path);
      if (!s) return 2;
      chunks = malloc(sizeof(uint8_t *) * (size_t)count);
      for (int i = 0; i < count; i++) {
        fill(buf, items, 1000 + i);
        chunks[i] = malloc((size_t)items * 8 + BLOSC2_MAX_OVERHEAD);
        if (L.compress_ctx(s->cctx, buf, (int32_t)(items * 8), chunks[i], (int32_t)(items * 8 + BLOSC2_MAX_OVERHEAD)) < 0) return 2;
      }
    }
    total0 = now();
    for (int i = 0; i < count; i++) {
      double t0 = now();
      if (chunks) {
        if (L.update_chunk(s, (i * 37) % 64, chunks[i], true) < 0) return 1;
      } else {
        fill(buf, items, i);
        if (L.append_buffer(s, buf, (int32_t)(items * 8)) < 0) return 1;
      }
      if (i == count - 1) L.schunk_free(s);
      t[i] = now() - t0;
    }
    if (chunks) {
      for (int i = 0; i < count; i++) free(chunks[i]);
      free(chunks);
    }
  } else if (strcmp(op, "b2nd_append") == 0 || strcmp(op, "set_slice") == 0) {
    /* chunks of {rows, 256} float64 */
    int32_t rows = (int32_t)(items / 256);
    int64_t nrows = strcmp(op, "set_slice") == 0 ? (int64_t)rows * 8 : 0;
    int64_t shape[2] = {nrows, 1024};
    int32_t chunkshape[2] = {rows, 256};
    int32_t blockshape[2] = {rows > 16 ? 16 : rows, 256};
    b2nd_context_t *ctx = L.create_ctx(&st, 2, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT, NULL, 0);
    b2nd_array_t *a = NULL;
    if (!ctx || L.zeros(ctx, &a) < 0) return 2;
    double *slab = malloc(sizeof(double) * (size_t)rows * 1024);
    if (!slab) return 2;
    if (nrows > 0) {
      /* an array already on disk, every chunk stored, as users change them */
      for (int64_t r0 = 0; r0 < nrows; r0 += rows) {
        fill(slab, (int64_t)rows * 1024, 500 + r0);
        int64_t start[2] = {r0, 0}, stop[2] = {r0 + rows, 1024}, bshape[2] = {rows, 1024};
        if (L.set_slice_cbuffer(slab, bshape, (int64_t)rows * 1024 * 8, start, stop, a) < 0) return 2;
      }
      L.free_array(a);
      a = NULL;
      if (L.b2nd_open(path, &a) < 0 || !a) return 2;
    }
    total0 = now();
    for (int i = 0; i < count; i++) {
      double t0 = now();
      if (nrows == 0) {
        fill(slab, (int64_t)rows * 1024, i);
        if (L.append(a, slab, (int64_t)rows * 1024 * 8, 0) < 0) return 1;
      } else {
        fill(buf, items, i);
        int64_t r0 = (int64_t)(i % 8) * rows, c0 = (int64_t)((i / 8) % 4) * 256;
        int64_t start[2] = {r0, c0}, stop[2] = {r0 + rows, c0 + 256}, bshape[2] = {rows, 256};
        if (L.set_slice_cbuffer(buf, bshape, items * 8, start, stop, a) < 0) return 1;
      }
      if (i == count - 1) L.free_array(a);
      t[i] = now() - t0;
    }
    free(slab);
    L.free_ctx(ctx);
  } else {
    fprintf(stderr, "unknown OP %s\n", op);
    return 2;
  }
  double total = now() - total0, sum = 0;
  for (int i = 0; i < count; i++) sum += t[i];
  printf("%s %s %lld %d %.1f %.1f %.4f\n", op, label, (long long)chunk_kb, count, median(t, count) * 1e6,
         sum / count * 1e6, total);
  L.remove_urlpath(path);
  free(buf);
  free(t);
  return 0;
}
