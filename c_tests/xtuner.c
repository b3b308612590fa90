/* The tuner behind tuner_id = BLOSC_BTUNE (32) and BTUNE_TRADEOFF (libb2nd's
   own; docs/PLUGINS.md, "The tuner"). Built against libb2nd, and against
   c-blosc2 3.3.5 to read what libb2nd wrote:
     write DIR   (libb2nd) compress with the tuner into DIR: contexts (with and
                 without Btune's btune_config), a super-chunk frame whose data
                 changes along it, a b2nd array
     check DIR   decompress everything DIR holds and compare with the data
     tradeoff    (libb2nd) tradeoff 1 gives a higher ratio than tradeoff 0
     env         (libb2nd) BTUNE_TRADEOFF makes new super-chunks tuned
     errors      (libb2nd) configurations out of range are refused */
#include <math.h>
#include <stdint.h>
#include "blosc2.h"
#include "b2nd.h"
#include "test_common.h"
#include "test_portable.h"

/* The head of Btune 1.2.1's btune_config (its btune.h), and its directory of
   models (PATH_MAX on Linux). */
typedef struct {
  uint32_t bandwidth;
  int perf_mode; /* 0 COMP, 1 DECOMP, 2 BALANCED, 3 AUTO */
  float tradeoff[3];
  int tradeoff_nelems;
  uint32_t nwaits_before_readapt, nsofts_before_hard, nhards_before_stop;
  int repeat_mode; /* 0 stop, 1 repeat soft, 2 repeat all */
  bool cparams_hint;
  int use_inference;
  char models_dir[4096];
} btune_config;

static btune_config config(float tradeoff, int perf_mode) {
  btune_config c;
  memset(&c, 0, sizeof(c));
  c.bandwidth = 20 * 1024 * 1024; /* kB/s */
  c.perf_mode = perf_mode;
  c.tradeoff[0] = tradeoff;
  c.tradeoff_nelems = 1;
  c.nwaits_before_readapt = 0;
  c.nsofts_before_hard = 5;
  c.nhards_before_stop = 10;
  c.repeat_mode = 0;
  c.use_inference = -1;
  return c;
}

enum { SMOOTH, RAMP, NOISE, NKINDS };
static const char *kind_names[] = {"smooth", "ramp", "noise"};

/* 8-byte items: smooth float64 with noise in the low bits, an int64 ramp, random bytes. */
static void make(int kind, int64_t first, int32_t nbytes, uint8_t *buf) {
  uint64_t s = 88172645463325252ull ^ (uint64_t)(first * 31 + kind);
  for (int32_t i = 0; i + 8 <= nbytes; i += 8) {
    int64_t k = first + i / 8;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    if (kind == SMOOTH) {
      double v = sin((double)k * 1e-3) * 1000.0 + (double)(s >> 56) * 1e-9;
      memcpy(buf + i, &v, 8);
    } else if (kind == RAMP) {
      int64_t v = k * 3 + (int64_t)(s >> 61);
      memcpy(buf + i, &v, 8);
    } else {
      memcpy(buf + i, &s, 8);
    }
  }
}

#define CTX_BYTES (1 << 20)
static const float tradeoffs[] = {0.0f, 0.5f, 1.0f};
static const int threads[] = {1, 3};

static void ctx_path(const char *dir, int t, int kind, int th, char *out, size_t n) {
  snprintf(out, n, "%s/ctx-t%d-%s-th%d.chunk", dir, t, kind_names[kind], th);
}

/* A chunk's bytes back: decompressed by this library, equal to the data. */
static int decodes_to(const uint8_t *chunk, int32_t cbytes, const uint8_t *want, int32_t nbytes) {
  uint8_t *back = malloc((size_t)nbytes + 1);
  int n = blosc2_decompress(chunk, cbytes, back, nbytes);
  int ok = n == nbytes && memcmp(back, want, (size_t)nbytes) == 0;
  free(back);
  return ok;
}

/* Super-chunk: 12 chunks of 256 KiB, smooth, then noise, then a ramp. */
#define SC_CHUNK (256 * 1024)
#define SC_N 12
static int sc_kind(int i) { return i < 4 ? SMOOTH : i < 8 ? NOISE : RAMP; }

/* Array: 300 x 400 float64 (smooth), chunks 100 x 400, blocks 25 x 400. */
static const int64_t shape[] = {300, 400};
static const int32_t chunkshape[] = {100, 400};
static const int32_t blockshape[] = {25, 400};

static int write_all(const char *dir) {
  uint8_t *src = malloc(CTX_BYTES), *dst = malloc(CTX_BYTES + BLOSC2_MAX_OVERHEAD);
  char path[512];
  /* contexts, tradeoffs given through btune_config and through nothing (0.5) */
  for (int t = 0; t < 3; t++) {
    for (int kind = 0; kind < NKINDS; kind++) {
      for (int ti = 0; ti < 2; ti++) {
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        btune_config bc = config(tradeoffs[t], t == 2 ? 1 : 0);
        cp.typesize = 8;
        cp.nthreads = (int16_t)threads[ti];
        cp.tuner_id = 32;
        cp.tuner_params = t == 1 ? NULL : &bc;
        blosc2_context *c = blosc2_create_cctx(cp);
        CHECK(c != NULL);
        if (!c) continue;
        make(kind, 0, CTX_BYTES, src);
        int n = blosc2_compress_ctx(c, src, CTX_BYTES, dst, CTX_BYTES + BLOSC2_MAX_OVERHEAD);
        CHECK(n > 0);
        if (n > 0) {
          CHECK(decodes_to(dst, n, src, CTX_BYTES));
          ctx_path(dir, t, kind, threads[ti], path, sizeof(path));
          CHECK(save_file(path, dst, (size_t)n) == 0);
        }
        blosc2_cparams got;
        CHECK(blosc2_ctx_get_cparams(c, &got) == 0 && got.tuner_id == 32);
        blosc2_free_ctx(c);
      }
    }
  }
  /* a super-chunk frame */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.nthreads = 2;
  cp.tuner_id = 32;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  snprintf(path, sizeof(path), "%s/schunk.b2frame", dir);
  blosc2_remove_urlpath(path);
  st.contiguous = true;
  st.urlpath = path;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  for (int i = 0; sc && i < SC_N; i++) {
    make(sc_kind(i), (int64_t)i * SC_CHUNK / 8, SC_CHUNK, src);
    CHECK_EQ(blosc2_schunk_append_buffer(sc, src, SC_CHUNK), i + 1);
  }
  if (sc) {
    blosc2_cparams *got = NULL;
    CHECK(blosc2_schunk_get_cparams(sc, &got) == 0 && got && got->tuner_id == 32);
    free(got);
    blosc2_schunk_free(sc);
  }
  /* a b2nd array */
  blosc2_storage ast = BLOSC2_STORAGE_DEFAULTS;
  blosc2_cparams acp = BLOSC2_CPARAMS_DEFAULTS;
  acp.tuner_id = 32;
  ast.cparams = &acp;
  b2nd_context_t *actx = b2nd_create_ctx(&ast, 2, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT, NULL, 0);
  CHECK(actx != NULL);
  int64_t an = shape[0] * shape[1] * 8;
  uint8_t *abuf = malloc((size_t)an);
  make(SMOOTH, 0, (int32_t)an, abuf);
  b2nd_array_t *arr = NULL;
  CHECK(actx && b2nd_from_cbuffer(actx, &arr, abuf, an) == 0);
  if (arr) {
    snprintf(path, sizeof(path), "%s/array.b2nd", dir);
    blosc2_remove_urlpath(path);
    CHECK(b2nd_save(arr, path) == 0);
    b2nd_free(arr);
  }
  b2nd_free_ctx(actx);
  free(abuf);
  free(src);
  free(dst);
  return report("xtuner write");
}

static int check_all(const char *dir) {
  uint8_t *src = malloc(CTX_BYTES), *back = malloc(CTX_BYTES);
  char path[512];
  int files = 0;
  for (int t = 0; t < 3; t++) {
    for (int kind = 0; kind < NKINDS; kind++) {
      for (int ti = 0; ti < 2; ti++) {
        ctx_path(dir, t, kind, threads[ti], path, sizeof(path));
        long len = 0;
        uint8_t *chunk = read_file(path, &len);
        CHECK(chunk != NULL);
        if (!chunk) continue;
        make(kind, 0, CTX_BYTES, src);
        CHECK(decodes_to(chunk, (int32_t)len, src, CTX_BYTES));
        files++;
        free(chunk);
      }
    }
  }
  snprintf(path, sizeof(path), "%s/schunk.b2frame", dir);
  blosc2_schunk *sc = blosc2_schunk_open(path);
  CHECK(sc != NULL);
  if (sc) {
    CHECK_EQ(sc->nchunks, SC_N);
    for (int i = 0; i < sc->nchunks; i++) {
      make(sc_kind(i), (int64_t)i * SC_CHUNK / 8, SC_CHUNK, src);
      CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, back, SC_CHUNK), SC_CHUNK);
      CHECK(memcmp(back, src, SC_CHUNK) == 0);
    }
    files++;
    blosc2_schunk_free(sc);
  }
  snprintf(path, sizeof(path), "%s/array.b2nd", dir);
  b2nd_array_t *arr = NULL;
  CHECK(b2nd_open(path, &arr) == 0);
  if (arr) {
    int64_t an = shape[0] * shape[1] * 8;
    uint8_t *want = malloc((size_t)an), *got = malloc((size_t)an);
    make(SMOOTH, 0, (int32_t)an, want);
    CHECK(b2nd_to_cbuffer(arr, got, an) == 0);
    CHECK(memcmp(want, got, (size_t)an) == 0);
    free(want);
    free(got);
    files++;
    b2nd_free(arr);
  }
  printf("check %s: %d files\n", dir, files);
  free(src);
  free(back);
  return report("xtuner check");
}

/* The ratio of one tuned 4 MiB chunk of smooth data at `tradeoff`. */
static double ratio_at(float tradeoff) {
  const int32_t n = 4 << 20;
  uint8_t *src = malloc((size_t)n), *dst = malloc((size_t)n + BLOSC2_MAX_OVERHEAD);
  make(SMOOTH, 0, n, src);
  btune_config bc = config(tradeoff, 0);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.tuner_id = 32;
  cp.tuner_params = &bc;
  blosc2_context *c = blosc2_create_cctx(cp);
  int cbytes = c ? blosc2_compress_ctx(c, src, n, dst, n + BLOSC2_MAX_OVERHEAD) : -1;
  CHECK(cbytes > 0);
  blosc2_free_ctx(c);
  free(src);
  free(dst);
  return cbytes > 0 ? (double)n / cbytes : 0;
}

static int tradeoff_moves(void) {
  double speed = ratio_at(0.0f), size = ratio_at(1.0f);
  printf("ratio at tradeoff 0: %.2f, at 1: %.2f\n", speed, size);
  CHECK(size > 1.1 * speed);
  return report("xtuner tradeoff");
}

/* The library of the first chunk of a new super-chunk of smooth data. */
static const char *first_chunk_lib(int *tuner_id) {
  static uint8_t src[SC_CHUNK];
  make(SMOOTH, 0, SC_CHUNK, src);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS; /* BloscLZ level 5 and shuffle */
  cp.typesize = 8;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  if (!sc) return "";
  CHECK_EQ(blosc2_schunk_append_buffer(sc, src, SC_CHUNK), 1);
  uint8_t *chunk = NULL;
  bool needs_free = false;
  CHECK(blosc2_schunk_get_chunk(sc, 0, &chunk, &needs_free) > 0);
  const char *lib = chunk ? blosc2_cbuffer_complib(chunk) : "";
  if (needs_free) free(chunk);
  blosc2_cparams *got = NULL;
  CHECK(blosc2_schunk_get_cparams(sc, &got) == 0);
  *tuner_id = got ? got->tuner_id : -1;
  free(got);
  blosc2_schunk_free(sc);
  return lib;
}

static int env_makes_tuned(void) {
  int id = -1;
  unsetenv("BTUNE_TRADEOFF");
  const char *plain = first_chunk_lib(&id);
  printf("without BTUNE_TRADEOFF: %s (tuner %d)\n", plain, id);
  CHECK(strcmp(plain, "BloscLZ") == 0);
  CHECK_EQ(id, 0);
  setenv("BTUNE_TRADEOFF", "1", 1);
  const char *tuned = first_chunk_lib(&id);
  printf("with BTUNE_TRADEOFF=1: %s (tuner %d)\n", tuned, id);
  CHECK(strcmp(tuned, "BloscLZ") != 0);
  CHECK_EQ(id, 32);
  unsetenv("BTUNE_TRADEOFF");
  return report("xtuner env");
}

static int refused(btune_config *bc) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.tuner_id = 32;
  cp.tuner_params = bc;
  blosc2_context *c = blosc2_create_cctx(cp);
  int r = c == NULL;
  blosc2_free_ctx(c);
  return r;
}

static int errors(void) {
  btune_config bc = config(2.0f, 0);
  CHECK(refused(&bc));
  bc = config(0.5f, 7);
  CHECK(refused(&bc));
  bc = config(0.5f, 0);
  bc.tradeoff_nelems = 2;
  CHECK(refused(&bc));
  bc = config(0.5f, 0);
  bc.repeat_mode = 5;
  CHECK(refused(&bc));
  /* three values must sum to 1 */
  bc = config(0.5f, 0);
  bc.tradeoff_nelems = 3;
  bc.tradeoff[1] = 0.7f;
  CHECK(refused(&bc));
  bc.tradeoff[1] = 0.5f;
  CHECK(!refused(&bc));
  setenv("BTUNE_TRADEOFF", "fast", 1);
  CHECK(refused(NULL));
  setenv("BTUNE_TRADEOFF", "0.3", 1);
  CHECK(!refused(NULL));
  unsetenv("BTUNE_TRADEOFF");
  /* the id stays c-blosc2's: a tuner plugin cannot be registered over it */
  blosc2_tuner t;
  memset(&t, 0, sizeof(t));
  t.id = 32;
  t.name = (char *)"btune";
  CHECK(blosc2_register_tuner(&t) < 0);
  return report("xtuner errors");
}

int main(int argc, char **argv) {
  blosc2_init();
  int rc = 2;
  if (argc >= 3 && strcmp(argv[1], "write") == 0) rc = write_all(argv[2]);
  else if (argc >= 3 && strcmp(argv[1], "check") == 0) rc = check_all(argv[2]);
  else if (argc >= 2 && strcmp(argv[1], "tradeoff") == 0) rc = tradeoff_moves();
  else if (argc >= 2 && strcmp(argv[1], "env") == 0) rc = env_makes_tuned();
  else if (argc >= 2 && strcmp(argv[1], "errors") == 0) rc = errors();
  else fprintf(stderr, "usage: %s write DIR | check DIR | tradeoff | env | errors\n", argv[0]);
  blosc2_destroy();
  return rc;
}
