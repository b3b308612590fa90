/* A shared library built on the safe core crate alone (tests/core-cdylib,
 * libb2nd_embed.so), in one process with the reference c-blosc2 3.3.5.
 * The program links the reference libblosc2; the core's library is loaded
 * with RTLD_GLOBAL, the worst case for symbol clashes. Then:
 * - the core's library defines none of c-blosc2's functions (dlsym on its
 *   handle finds none), and the program's blosc2_compress is the reference's;
 * - chunks go from the reference to the core's library and back;
 * - the core's library stores an array in a file and reads it back;
 * - the reference still compresses and decompresses after all that.
 * usage: test_core_cdylib LIBB2ND_EMBED.so SCRATCH_DIR */
#define _GNU_SOURCE
#include <blosc2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t (*compress_fn)(const uint8_t *, size_t, uint8_t *, size_t, int32_t);
typedef int64_t (*decompress_fn)(const uint8_t *, size_t, uint8_t *, size_t);
typedef int32_t (*roundtrip_fn)(const char *);

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

enum { N = 1 << 18 }; /* int32 items: 1 MiB */

static const char *const C_API[] = {
    "blosc2_init", "blosc2_compress", "blosc2_decompress", "blosc2_create_cctx", "blosc2_schunk_new",
    "blosc2_schunk_open", "b2nd_open", "b2nd_from_cbuffer", "blosc1_compress", "blosc_compress",
    "blosc2_register_codec", "blosc2_get_version_string",
};

static int reference_roundtrip(const int32_t *data, uint8_t *chunk, int32_t *back) {
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(int32_t), data, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD);
  if (csize <= 0) return -1;
  int dsize = blosc2_decompress(chunk, csize, back, N * 4);
  return dsize == N * 4 && memcmp(data, back, N * 4) == 0 ? csize : -2;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIBB2ND_EMBED.so SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  blosc2_init();
  int32_t *data = malloc(N * 4), *back = malloc(N * 4);
  uint8_t *chunk = malloc(N * 4 + BLOSC2_MAX_OVERHEAD);
  if (!data || !back || !chunk) return 2;
  for (int i = 0; i < N; i++) data[i] = i / 3 + (i % 7);

  void *embed = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  CHECK(embed != NULL, "dlopen %s: %s", argv[1], dlerror());
  if (embed == NULL) return 1;
  for (size_t i = 0; i < sizeof C_API / sizeof *C_API; i++) {
    CHECK(dlsym(embed, C_API[i]) == NULL, "the core's library defines %s", C_API[i]);
  }
  Dl_info where;
  CHECK(dladdr((void *)blosc2_compress, &where) && strstr(where.dli_fname, "b2nd_embed") == NULL,
        "blosc2_compress resolves into %s", where.dli_fname);
  compress_fn embed_compress = (compress_fn)dlsym(embed, "embed_compress");
  decompress_fn embed_decompress = (decompress_fn)dlsym(embed, "embed_decompress");
  roundtrip_fn embed_array_roundtrip = (roundtrip_fn)dlsym(embed, "embed_array_roundtrip");
  CHECK(embed_compress && embed_decompress && embed_array_roundtrip, "the core's library lacks its functions");
  if (!embed_compress || !embed_decompress || !embed_array_roundtrip) return 1;

  /* The reference's chunk, read by the core. */
  int csize = reference_roundtrip(data, chunk, back);
  CHECK(csize > 0, "the reference's round trip: %d", csize);
  memset(back, 0, N * 4);
  int64_t n = embed_decompress(chunk, (size_t)csize, (uint8_t *)back, N * 4);
  CHECK(n == N * 4 && memcmp(data, back, N * 4) == 0, "the core read the reference's chunk: %lld", (long long)n);

  /* The core's chunk, read by the reference. */
  int64_t esize = embed_compress((const uint8_t *)data, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD, 4);
  CHECK(esize > 0 && esize < N * 4, "the core's chunk: %lld bytes", (long long)esize);
  memset(back, 0, N * 4);
  int d = blosc2_decompress(chunk, (int32_t)esize, back, N * 4);
  CHECK(d == N * 4 && memcmp(data, back, N * 4) == 0, "the reference read the core's chunk: %d", d);
  int32_t nbytes, cbytes, blocksize;
  CHECK(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize) == 0 && nbytes == N * 4 && cbytes == esize,
        "the reference's view of the core's chunk: %d %d", nbytes, cbytes);

  /* An array stored and read back by the core, then read by the reference. */
  char path[4096];
  snprintf(path, sizeof path, "%s/core_cdylib.b2nd", argv[2]);
  int rt = embed_array_roundtrip(path);
  CHECK(rt == 0, "the core's array round trip at %s: %d", path, rt);
  blosc2_schunk *sc = blosc2_schunk_open(path);
  /* 3 x 2 chunks of 16 x 16 items (the edge chunks padded). */
  CHECK(sc != NULL && sc->nchunks == 6 && sc->nbytes == 6 * 16 * 16 * 8, "the reference opens the core's array: %p %lld %lld",
        (void *)sc, sc ? (long long)sc->nchunks : -1LL, sc ? (long long)sc->nbytes : -1LL);
  if (sc) {
    double first[16 * 16];
    CHECK(blosc2_schunk_decompress_chunk(sc, 0, first, sizeof first) == (int)sizeof first && first[1] == 0.5,
          "the reference reads the core's first chunk");
    blosc2_schunk_free(sc);
  }

  /* The reference, still itself. */
  CHECK(reference_roundtrip(data, chunk, back) > 0, "the reference after the core's library");
  dlclose(embed);
  blosc2_destroy();
  free(data);
  free(back);
  free(chunk);
  if (failures == 0) printf("core cdylib beside the reference: passed\n");
  return failures ? 1 : 0;
}
