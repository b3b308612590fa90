/* Concurrent reads from ONE super-chunk handle.

   Usage: test_schunk_threads [-t NTHREADS] [-i ITERATIONS] [-k KIND] [SCRATCH_DIR]
   (defaults: 8 threads, 1000 iterations per thread and storage kind, all kinds, SCRATCH_DIR ".";
   KIND 0..3 = in-memory sparse, in-memory frame, file frame, directory frame).

   For each storage kind (in-memory sparse, in-memory contiguous frame, on-disk contiguous frame,
   on-disk sparse directory) and codec (LZ4, ZSTD) a super-chunk of several multi-block chunks is
   built, then NTHREADS threads read it at the same time through the same blosc2_schunk*:
   blosc2_schunk_decompress_chunk, blosc2_schunk_get_chunk (decompressed with the thread's own
   context), blosc2_schunk_get_lazychunk (decompressed and getitem'ed with the thread's own
   context, whose dparams.schunk is the super-chunk, as lazy chunks require) and
   blosc2_schunk_get_slice_buffer on random ranges.  Every result is compared with the data.

   The read functions of a super-chunk are expected to be safe to call concurrently on one
   handle.  c-blosc2 3.3.5 is not: blosc2_schunk_decompress_chunk and
   blosc2_schunk_get_slice_buffer decompress through the handle's one shared context
   (schunk->dctx); with 8 threads, every storage kind gives wrong bytes / negative codes
   (about 100-400 of 2400 reads in a run) and then dies with SIGSEGV (inside ZSTD/LZ4 or
   memcpy, under blosc2_decompress_ctx or blosc2_getitem_bytes_ctx).  get_chunk and
   get_lazychunk decompressed with per-thread contexts are fine with 8 threads (its file reader
   is serialized).  With -t 1 the program passes against 3.3.5. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blosc2.h"
#include "test_common.h"

enum { K_MEM_SPARSE, K_MEM_CFRAME, K_DISK_CFRAME, K_DISK_SFRAME, NKINDS };
static const char *kind_name[NKINDS] = {"mem-sparse", "mem-cframe", "disk-cframe", "disk-sframe"};

#define NCHUNKS 7
#define TS 4
#define CHUNK 64000      /* bytes per chunk */
#define BLOCK 16000      /* 4 blocks per chunk */
#define LAST 40000       /* the last chunk is shorter (3 blocks, the last one partial... exact) */
#define ZERO_CHUNK 3     /* a chunk of zeros (a special chunk in frames) */

static int g_iterations = 1000;

typedef struct {
  blosc2_schunk *sc;
  const uint8_t *data; /* the whole super-chunk contents */
  int64_t nbytes;
  unsigned seed;
  /* per-thread results (the CHECK counters are not thread-safe) */
  long ops, failures;
  char first_failure[256];
} worker_t;

static int32_t chunk_nbytes(int i) { return i == NCHUNKS - 1 ? LAST : CHUNK; }

static void fail(worker_t *w, const char *what, int i, long long rc) {
  if (w->failures++ == 0)
    snprintf(w->first_failure, sizeof(w->first_failure), "%s (chunk/start %d, rc %lld)", what, i, rc);
}

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffff;
}

static void *worker(void *arg) {
  worker_t *w = arg;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  dp.schunk = w->sc;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  uint8_t *buf = malloc(CHUNK * 3 + 64);
  for (int it = 0; it < g_iterations; it++) {
    unsigned r = next_rand(&w->seed);
    int op = (int)(r % 4);
    int i = (int)(next_rand(&w->seed) % NCHUNKS);
    int32_t nb = chunk_nbytes(i);
    const uint8_t *expect = w->data + (int64_t)i * CHUNK;
    w->ops++;
    switch (op) {
      case 0: {
        int rc = blosc2_schunk_decompress_chunk(w->sc, i, buf, nb);
        if (rc != nb || memcmp(buf, expect, (size_t)nb) != 0) fail(w, "decompress_chunk", i, rc);
        break;
      }
      case 1: {
        uint8_t *chunk = NULL;
        bool needs_free = false;
        int rc = blosc2_schunk_get_chunk(w->sc, i, &chunk, &needs_free);
        if (rc <= 0) {
          fail(w, "get_chunk", i, rc);
          break;
        }
        int d = blosc2_decompress_ctx(dctx, chunk, rc, buf, nb);
        if (d != nb || memcmp(buf, expect, (size_t)nb) != 0) fail(w, "get_chunk + decompress", i, d);
        if (needs_free) free(chunk);
        break;
      }
      case 2: {
        uint8_t *chunk = NULL;
        bool needs_free = false;
        int rc = blosc2_schunk_get_lazychunk(w->sc, i, &chunk, &needs_free);
        if (rc <= 0) {
          fail(w, "get_lazychunk", i, rc);
          break;
        }
        int d = blosc2_decompress_ctx(dctx, chunk, rc, buf, nb);
        if (d != nb || memcmp(buf, expect, (size_t)nb) != 0) fail(w, "get_lazychunk + decompress", i, d);
        /* one item out of a random block */
        int item = (int)(next_rand(&w->seed) % (unsigned)(nb / TS));
        uint8_t v[TS];
        d = blosc2_getitem_ctx(dctx, chunk, rc, item, 1, v, TS);
        if (d != TS || memcmp(v, expect + (int64_t)item * TS, TS) != 0) fail(w, "get_lazychunk + getitem", i, d);
        if (needs_free) free(chunk);
        break;
      }
      default: {
        int64_t nitems = w->nbytes / TS;
        int64_t len = 1 + (int64_t)(next_rand(&w->seed) % (unsigned)(CHUNK * 2 / TS));
        int64_t start = (int64_t)(next_rand(&w->seed) % (unsigned)nitems);
        if (start + len > nitems) len = nitems - start;
        int rc = blosc2_schunk_get_slice_buffer(w->sc, start, start + len, buf);
        if (rc != 0 || memcmp(buf, w->data + start * TS, (size_t)(len * TS)) != 0)
          fail(w, "get_slice_buffer", (int)start, rc);
        break;
      }
    }
  }
  free(buf);
  blosc2_free_ctx(dctx);
  return NULL;
}

static void run_kind(int kind, int codec, int nthreads, const char *dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/test_schunk_threads_%d.%s", dir, kind,
           kind == K_DISK_SFRAME ? "b2dir" : "b2frame");
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = TS;
  cp.compcode = (uint8_t)codec;
  cp.clevel = 5;
  cp.blocksize = BLOCK;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.contiguous = kind == K_MEM_CFRAME || kind == K_DISK_CFRAME;
  st.urlpath = (kind == K_DISK_CFRAME || kind == K_DISK_SFRAME) ? path : NULL;
  st.cparams = &cp;
  st.dparams = &dp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  int64_t nbytes = (int64_t)(NCHUNKS - 1) * CHUNK + LAST;
  uint8_t *data = malloc((size_t)nbytes);
  for (int i = 0; i < NCHUNKS; i++) {
    uint8_t *d = data + (int64_t)i * CHUNK;
    if (i == ZERO_CHUNK) {
      memset(d, 0, CHUNK);
      uint8_t z[BLOSC_EXTENDED_HEADER_LENGTH];
      CHECK(blosc2_chunk_zeros(cp, CHUNK, z, sizeof(z)) > 0);
      CHECK_EQ(blosc2_schunk_append_chunk(sc, z, true), i + 1);
    } else {
      fill_data(i % 3, TS, chunk_nbytes(i), d);
      CHECK_EQ(blosc2_schunk_append_buffer(sc, d, chunk_nbytes(i)), i + 1);
    }
  }
  /* check that the chunks really have several blocks */
  uint8_t *chunk;
  bool nf;
  int rc = blosc2_schunk_get_chunk(sc, 0, &chunk, &nf);
  CHECK(rc > 0);
  if (rc > 0) {
    int32_t cnb, ccb, bs;
    blosc2_cbuffer_sizes(chunk, &cnb, &ccb, &bs);
    CHECK_EQ(bs, BLOCK);
    if (nf) free(chunk);
  }
  if (kind == K_DISK_CFRAME || kind == K_DISK_SFRAME) {
    /* read through a freshly opened handle, as readers usually do */
    blosc2_schunk_free(sc);
    sc = blosc2_schunk_open(path);
    CHECK(sc != NULL);
    if (sc == NULL) {
      free(data);
      return;
    }
  }

  pthread_t th[64];
  worker_t w[64];
  for (int t = 0; t < nthreads; t++) {
    memset(&w[t], 0, sizeof(w[t]));
    w[t].sc = sc;
    w[t].data = data;
    w[t].nbytes = nbytes;
    w[t].seed = 1234u + 7919u * (unsigned)t + 31u * (unsigned)kind;
    CHECK_EQ(pthread_create(&th[t], NULL, worker, &w[t]), 0);
  }
  long ops = 0, failures = 0;
  for (int t = 0; t < nthreads; t++) {
    pthread_join(th[t], NULL);
    ops += w[t].ops;
    failures += w[t].failures;
    if (w[t].failures > 0)
      fprintf(stderr, "  %s/%s thread %d: %ld of %ld reads wrong, first: %s\n", kind_name[kind],
              codec == BLOSC_LZ4 ? "lz4" : "zstd", t, w[t].failures, w[t].ops, w[t].first_failure);
  }
  CHECK_EQ(ops, (long)nthreads * g_iterations);
  CHECK_EQ(failures, 0);
  CHECK_EQ(blosc2_schunk_free(sc), 0);
  free(data);
  if (st.urlpath != NULL) CHECK_EQ(blosc2_remove_urlpath(path), 0);
}

int main(int argc, char **argv) {
  int nthreads = 8;
  int only_kind = -1;
  const char *dir = ".";
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "-t") == 0 && a + 1 < argc) {
      nthreads = atoi(argv[++a]);
    } else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc) {
      g_iterations = atoi(argv[++a]);
    } else if (strcmp(argv[a], "-k") == 0 && a + 1 < argc) {
      only_kind = atoi(argv[++a]);
    } else {
      dir = argv[a];
    }
  }
  if (nthreads < 1 || nthreads > 64 || g_iterations < 1 || only_kind >= NKINDS) {
    fprintf(stderr, "usage: %s [-t NTHREADS (1..64)] [-i ITERATIONS] [-k KIND (0..3)] [SCRATCH_DIR]\n", argv[0]);
    return 2;
  }
  blosc2_init();
  for (int kind = 0; kind < NKINDS; kind++) {
    if (only_kind >= 0 && kind != only_kind) continue;
    run_kind(kind, BLOSC_LZ4, nthreads, dir);
    run_kind(kind, BLOSC_ZSTD, nthreads, dir);
  }
  blosc2_destroy();
  return report("test_schunk_threads");
}
