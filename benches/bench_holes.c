/* How big a frame file grows under random chunk updates, through the C API of a
   dlopen'ed library (libb2nd or the reference c-blosc2), one run per process.

   usage: bench_holes LIB.so DIR CHUNK_KB UPDATES SEED [LABEL]

   A contiguous frame DIR/holes.b2frame of 64 MiB of float64 chunks of CHUNK_KB
   (LZ4 5 + shuffle, 1 thread) is made; each chunk holds a random share (25-75%)
   of noise and ramps elsewhere, so compressed sizes vary about +-50% around their
   mean, and closed. Then it is opened again, UPDATES chunks picked at random are replaced
   with chunks of a new random share (blosc2_schunk_update_chunk), and it is closed. The file's
   size is compared with that of the same chunks repacked: the frame reopened and
   copied (blosc2_schunk_copy) to DIR/repacked.b2frame, which writes every chunk
   once, in order.

   Prints one line:  LABEL CHUNK_KB UPDATES FILE_BYTES REPACKED_BYTES RATIO SECONDS */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "blosc2.h"
#include "bench_common.h"

typedef struct {
  int (*init)(void);
  blosc2_schunk *(*schunk_new)(blosc2_storage *);
  blosc2_schunk *(*schunk_open)(const char *);
  blosc2_schunk *(*schunk_copy)(blosc2_schunk *, blosc2_storage *);
  int (*schunk_free)(blosc2_schunk *);
  int64_t (*append_buffer)(blosc2_schunk *, const void *, int32_t);
  int64_t (*update_chunk)(blosc2_schunk *, int64_t, uint8_t *, bool);
  int (*compress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  int (*remove_urlpath)(const char *);
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
  SYM(schunk_copy, "blosc2_schunk_copy");
  SYM(schunk_free, "blosc2_schunk_free");
  SYM(append_buffer, "blosc2_schunk_append_buffer");
  SYM(update_chunk, "blosc2_schunk_update_chunk");
  SYM(compress_ctx, "blosc2_compress_ctx");
  SYM(remove_urlpath, "blosc2_remove_urlpath");
#undef SYM
  L.init();
  return 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A chunk whose first `share` percent of items is noise, the rest a ramp. */
static void fill(double *v, int64_t n, int share) {
  int64_t noisy = n * share / 100;
  for (int64_t i = 0; i < n; i++) {
    if (i < noisy) {
      uint64_t r = next();
      memcpy(&v[i], &r, sizeof r);
    } else {
      v[i] = (double)i;
    }
  }
}

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s LIB.so DIR CHUNK_KB UPDATES SEED [LABEL]\n", argv[0]);
    return 2;
  }
  if (load(argv[1]) < 0) return 2;
  char path[4096], copy[4096];
  snprintf(path, sizeof path, "%s/holes.b2frame", argv[2]);
  snprintf(copy, sizeof copy, "%s/repacked.b2frame", argv[2]);
  int64_t chunk_kb = atoll(argv[3]);
  int updates = atoi(argv[4]);
  rng ^= (uint64_t)atoll(argv[5]) * 0x9E3779B97F4A7C15ull;
  const char *label = argc > 6 ? argv[6] : argv[1];
  int64_t items = chunk_kb * 1024 / 8;
  int32_t nbytes = (int32_t)(items * 8);
  int nchunks = (int)(64 * 1024 / chunk_kb);
  double *buf = malloc((size_t)nbytes);
  uint8_t *chunk = malloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
  if (!buf || !chunk) return 2;
  L.remove_urlpath(path);
  L.remove_urlpath(copy);

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.compcode = BLOSC_LZ4;
  cp.clevel = 5;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = true, .urlpath = path, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *s = L.schunk_new(&st);
  if (!s) return 2;
  for (int i = 0; i < nchunks; i++) {
    fill(buf, items, 25 + (int)(next() % 51));
    if (L.append_buffer(s, buf, nbytes) < 0) return 2;
  }
  /* a frame already on disk, as users update them */
  L.schunk_free(s);
  s = L.schunk_open(path);
  if (!s) return 2;
  double t0 = now();
  for (int u = 0; u < updates; u++) {
    fill(buf, items, 25 + (int)(next() % 51));
    int csize = L.compress_ctx(s->cctx, buf, nbytes, chunk, nbytes + BLOSC2_MAX_OVERHEAD);
    if (csize < 0) return 2;
    if (L.update_chunk(s, (int64_t)(next() % (uint64_t)nchunks), chunk, true) < 0) return 1;
  }
  L.schunk_free(s);
  double secs = now() - t0;
  long long size = file_size(path);

  blosc2_schunk *back = L.schunk_open(path);
  if (!back) return 1;
  blosc2_storage cst = {.contiguous = true, .urlpath = copy, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *packed = L.schunk_copy(back, &cst);
  if (!packed) return 1;
  L.schunk_free(packed);
  L.schunk_free(back);
  long long repacked = file_size(copy);
  printf("%s %lld %d %lld %lld %.3f %.2f\n", label, (long long)chunk_kb, updates, size, repacked,
         (double)size / (double)repacked, secs);
  L.remove_urlpath(path);
  L.remove_urlpath(copy);
  free(buf);
  free(chunk);
  return 0;
}
