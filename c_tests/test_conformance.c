/* Behaviours c-blosc2 3.3.5 has and programs written for it check, one named
   case each (argv[1]; argv[2]: a scratch directory). Built against both
   libraries: every case passes on c-blosc2 too. */
#include <blosc2.h>
#include <blosc2/blosc2-stdio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "test_common.h"
#include "test_portable.h"

static char dir[2048];

static const char *path(const char *name) {
  static char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  blosc2_remove_urlpath(p);
  return p;
}

#define N 1000

static blosc2_schunk *filled(const char *urlpath, bool contiguous, int nchunks) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.cparams = &cp, .contiguous = contiguous, .urlpath = (char *)urlpath};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t data[N];
  for (int c = 0; c < nchunks; c++) {
    for (int i = 0; i < N; i++) data[i] = c * N + i;
    CHECK_EQ(blosc2_schunk_append_buffer(sc, data, sizeof data), c + 1);
  }
  return sc;
}

/* Chunk positions that name no chunk are a bad parameter; a reorder that is
   not a permutation is bad data. */
static void chunk_positions(void) {
  blosc2_schunk *sc = filled(NULL, false, 2);
  uint8_t *chunk = NULL;
  bool needs_free = false;
  int32_t dst[N];
  for (int k = 0; k < 2; k++) {
    int64_t bad = k == 0 ? -1 : sc->nchunks;
    CHECK_EQ(blosc2_schunk_get_chunk(sc, bad, &chunk, &needs_free), BLOSC2_ERROR_INVALID_PARAM);
    CHECK_EQ(blosc2_schunk_get_lazychunk(sc, bad, &chunk, &needs_free), BLOSC2_ERROR_INVALID_PARAM);
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, bad, dst, sizeof dst), BLOSC2_ERROR_INVALID_PARAM);
    CHECK_EQ(blosc2_schunk_delete_chunk(sc, bad), BLOSC2_ERROR_INVALID_PARAM);
  }
  CHECK_EQ(blosc2_schunk_get_chunk(sc, 0, &chunk, &needs_free) > 0, 1);
  CHECK_EQ(blosc2_schunk_insert_chunk(sc, sc->nchunks + 1, chunk, true), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ(blosc2_schunk_update_chunk(sc, sc->nchunks, chunk, true), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ(blosc2_schunk_insert_chunk(sc, sc->nchunks, chunk, true), 3);
  if (needs_free) free(chunk);
  int64_t negative[3] = {0, -1, 2}, twice[3] = {0, 0, 1};
  CHECK_EQ(blosc2_schunk_reorder_offsets(sc, negative), BLOSC2_ERROR_DATA);
  CHECK_EQ(blosc2_schunk_reorder_offsets(sc, twice), BLOSC2_ERROR_DATA);
  CHECK_EQ(sc->nchunks, 3);
  blosc2_schunk_free(sc);
}

/* Byte ranges of getitem_bytes are whole items of the stored typesize. */
static void getitem_bytes_alignment(void) {
  int32_t src[N], out[N];
  for (int i = 0; i < N; i++) src[i] = i * 7;
  uint8_t chunk[sizeof src + BLOSC2_MAX_OVERHEAD];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_context *c = blosc2_create_cctx(cp);
  int csize = blosc2_compress_ctx(c, src, sizeof src, chunk, sizeof chunk);
  CHECK(csize > 0);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *d = blosc2_create_dctx(dp);
  CHECK_EQ(blosc2_getitem_bytes_ctx(d, chunk, csize, 8, 12, out, sizeof out), 12);
  CHECK(out[0] == 14 && out[2] == 28);
  CHECK(blosc2_getitem_bytes_ctx(d, chunk, csize, 1, 4, out, sizeof out) < 0);
  CHECK(blosc2_getitem_bytes_ctx(d, chunk, csize, 0, 3, out, sizeof out) < 0);
  CHECK_EQ(blosc2_getitem_bytes_ctx(d, chunk, csize, 0, 0, out, sizeof out), 0);
  blosc2_free_ctx(c);
  blosc2_free_ctx(d);
}

/* BLOSC_NTHREADS outside 1..32767 makes global decompression fail (compression
   goes on with the threads it had). */
static void nthreads_environment(void) {
  int32_t src[N], out[N];
  for (int i = 0; i < N; i++) src[i] = i;
  uint8_t chunk[sizeof src + BLOSC2_MAX_OVERHEAD];
  int csize = blosc1_compress(5, 1, 4, sizeof src, src, chunk, sizeof chunk);
  CHECK(csize > 0);
  setenv("BLOSC_NTHREADS", "32768", 1);
  CHECK(blosc1_decompress(chunk, out, sizeof out) < 0);
  CHECK(blosc1_compress(5, 1, 4, sizeof src, src, chunk, sizeof chunk) > 0);
  setenv("BLOSC_NTHREADS", "-1", 1);
  CHECK(blosc1_decompress(chunk, out, sizeof out) < 0);
  setenv("BLOSC_NTHREADS", "2", 1);
  CHECK_EQ(blosc1_decompress(chunk, out, sizeof out), (int)sizeof out);
  CHECK(out[N - 1] == N - 1);
  unsetenv("BLOSC_NTHREADS");
}

/* The mmap functions work on a blosc2_stdio_mmap whose mapping is given
   (no file descriptor) as long as nothing needs the file. */
static void mmap_given_mapping(void) {
  uint8_t backing[32] = {0};
  blosc2_stdio_mmap m = BLOSC2_STDIO_MMAP_DEFAULTS;
  m.addr = (char *)backing;
  m.file_size = sizeof backing;
  m.mapping_size = sizeof backing;
  uint8_t four[4] = {1, 2, 3, 4};
  CHECK_EQ(blosc2_stdio_mmap_write(four, 1, 4, 8, &m), 4);
  CHECK(memcmp(backing + 8, four, 4) == 0);
  CHECK_EQ(blosc2_stdio_mmap_write(four, INT64_MAX, 2, 0, &m), 0);
  CHECK_EQ(blosc2_stdio_mmap_write(four, 1, 1, INT64_MAX, &m), 0);
  void *p = NULL;
  CHECK_EQ(blosc2_stdio_mmap_read(&p, 1, 4, 8, &m), 4);
  CHECK(p == (void *)(backing + 8));
  CHECK_EQ(blosc2_stdio_mmap_read(&p, 1, 8, 28, &m), 0);
  CHECK(p == NULL);
}

/* A chunk file of a sparse frame cut short behind the library's back: both
   ways of getting the chunk fail with BLOSC2_ERROR_FILE_READ. */
static void truncated_chunk_file(void) {
  const char *p = path("sparse.b2frame");
  blosc2_schunk *sc = filled(p, false, 3);
  blosc2_schunk_free(sc);
  sc = blosc2_schunk_open(p);
  CHECK(sc != NULL);
  char chunkfile[4200];
  snprintf(chunkfile, sizeof chunkfile, "%s/%08X.chunk", p, 1);
  FILE *f = fopen(chunkfile, "wb");
  CHECK(f != NULL);
  if (f) fclose(f);
  uint8_t *chunk = NULL;
  bool needs_free = false;
  CHECK_EQ(blosc2_schunk_get_chunk(sc, 1, &chunk, &needs_free), BLOSC2_ERROR_FILE_READ);
  CHECK_EQ(blosc2_schunk_get_lazychunk(sc, 1, &chunk, &needs_free), BLOSC2_ERROR_FILE_READ);
  CHECK(blosc2_schunk_get_chunk(sc, 2, &chunk, &needs_free) > 0);
  if (needs_free) free(chunk);
  blosc2_schunk_free(sc);
}

/* No chunk holds part of a slice of an empty super-chunk. */
static void slice_chunks_of_empty(void) {
  blosc2_schunk *sc = filled(NULL, true, 0);
  int64_t start = 0, stop = 100, *idx = NULL;
  CHECK_EQ(blosc2_get_slice_nchunks(sc, &start, &stop, &idx), 0);
  free(idx);
  blosc2_schunk_free(sc);
}

/* A file:/// URL names the path after its prefix. */
static void file_urls(void) {
  const char *p = path("url.b2frame");
  blosc2_schunk *sc = filled(p, true, 2);
  blosc2_schunk_free(sc);
  char url[4300];
  /* file:///X names X (c-blosc2 drops the prefix, so X is relative here). */
  char cwd_rel[4200];
  snprintf(cwd_rel, sizeof cwd_rel, "%s", p);
  snprintf(url, sizeof url, "file:///%s", cwd_rel[0] == '/' ? cwd_rel + 1 : cwd_rel);
  if (cwd_rel[0] == '/') {
    CHECK(chdir("/") == 0);
  }
  sc = blosc2_schunk_open(url);
  CHECK(sc != NULL && sc->nchunks == 2);
  blosc2_schunk_free(sc);
}

/* A stored chunk smaller than its block count (2-byte blocks of a 7-byte,
   memcpyed chunk) reads lazily too. */
static void tiny_memcpyed_lazy_chunks(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.blocksize = 2;
  blosc2_storage st = {.cparams = &cp, .contiguous = true, .urlpath = (char *)path("tiny.b2frame")};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  uint8_t seven[7] = {1, 2, 3, 4, 5, 6, 7}, out[7] = {0};
  CHECK_EQ(blosc2_schunk_append_buffer(sc, seven, 7), 1);
  uint8_t *lazy = NULL;
  bool needs_free = false;
  CHECK(blosc2_schunk_get_lazychunk(sc, 0, &lazy, &needs_free) > 0);
  if (needs_free) free(lazy);
  CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 0, out, sizeof out), 7);
  CHECK(memcmp(out, seven, 7) == 0);
  blosc2_schunk_free(sc);
}

/* A super-chunk copied into a frame (blosc2_schunk_to_buffer of chunks kept
   apart) gets the default decompression threads (1) in the frame header, as
   in c-blosc2: frames written from the same data by both libraries match. */
static void copies_take_default_dparams(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 4;
  blosc2_storage st = {.cparams = &cp, .dparams = &dp, .contiguous = false};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t data[N] = {0};
  CHECK_EQ(blosc2_schunk_append_buffer(sc, data, sizeof data), 1);
  uint8_t *frame = NULL;
  bool needs_free = false;
  int64_t len = blosc2_schunk_to_buffer(sc, &frame, &needs_free);
  CHECK(len > 70 && frame != NULL);
  /* header: ... int16 tcomp (0xd1 at 62), int16 tdecomp (0xd1 at 65) */
  if (len > 70 && frame != NULL) {
    CHECK(frame[65] == 0xd1 && frame[66] == 0 && frame[67] == 1);
  }
  if (needs_free) free(frame);
  blosc2_schunk_free(sc);
}

/* User codecs and filters get the super-chunk being written or read as
   cparams->schunk / dparams->schunk, and may call the library on it (here: a
   vlmetalayer read in the middle of an append). */
static int codec_calls_with_schunk = 0;

static int xor_encoder(const uint8_t *in, int32_t len, uint8_t *out, int32_t out_len, uint8_t meta,
                       blosc2_cparams *cparams, const void *chunk) {
  (void)meta;
  (void)chunk;
  /* Keeps the low half of each 4-byte item (the data here is small), xor'ed. */
  if (cparams->schunk == NULL || len % 4 != 0 || len / 2 > out_len) return BLOSC2_ERROR_NULL_POINTER;
  uint8_t *key = NULL;
  int32_t key_len = 0;
  if (blosc2_vlmeta_get((blosc2_schunk *)cparams->schunk, "key", &key, &key_len) < 0 || key_len < 1) return -1;
  for (int32_t i = 0; i < len / 4; i++) {
    out[2 * i] = in[4 * i] ^ key[0];
    out[2 * i + 1] = in[4 * i + 1] ^ key[0];
  }
  free(key);
  codec_calls_with_schunk++;
  return len / 2;
}

static int xor_decoder(const uint8_t *in, int32_t len, uint8_t *out, int32_t out_len, uint8_t meta,
                       blosc2_dparams *dparams, const void *chunk) {
  (void)meta;
  (void)chunk;
  if (dparams->schunk == NULL || 2 * len > out_len) return BLOSC2_ERROR_NULL_POINTER;
  uint8_t *key = NULL;
  int32_t key_len = 0;
  if (blosc2_vlmeta_get((blosc2_schunk *)dparams->schunk, "key", &key, &key_len) < 0 || key_len < 1) return -1;
  for (int32_t i = 0; i < len / 2; i++) {
    out[4 * i] = in[2 * i] ^ key[0];
    out[4 * i + 1] = in[2 * i + 1] ^ key[0];
    out[4 * i + 2] = 0;
    out[4 * i + 3] = 0;
  }
  free(key);
  return 2 * len;
}

static int typesize_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta, blosc2_cparams *cparams,
                            uint8_t id) {
  (void)meta;
  (void)id;
  blosc2_schunk *sc = (blosc2_schunk *)cparams->schunk;
  if (sc == NULL || sc->typesize != 4) return BLOSC2_ERROR_FAILURE;
  memcpy(dest, src, (size_t)size);
  return BLOSC2_ERROR_SUCCESS;
}

static int typesize_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta, blosc2_dparams *dparams,
                             uint8_t id) {
  (void)meta;
  (void)id;
  blosc2_schunk *sc = (blosc2_schunk *)dparams->schunk;
  if (sc == NULL || sc->typesize != 4) return BLOSC2_ERROR_FAILURE;
  memcpy(dest, src, (size_t)size);
  return BLOSC2_ERROR_SUCCESS;
}

static void user_plugins_see_their_schunk(void) {
  blosc2_codec codec = {.compcode = 244, .complib = 244, .version = 1, .compname = (char *)"xor_key",
                        .encoder = xor_encoder, .decoder = xor_decoder};
  CHECK_EQ(blosc2_register_codec(&codec), 0);
  blosc2_filter filter = {.id = 245, .name = (char *)"typesize_check", .version = 1, .forward = typesize_forward,
                          .backward = typesize_backward};
  CHECK_EQ(blosc2_register_filter(&filter), 0);
  for (int nthreads = 1; nthreads <= 2; nthreads++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = 244;
    cp.nthreads = (int16_t)nthreads;
    cp.blocksize = 1024;
    cp.splitmode = BLOSC_NEVER_SPLIT;
    cp.filters[BLOSC2_MAX_FILTERS - 1] = 245;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = (int16_t)nthreads;
    blosc2_storage st = {.cparams = &cp, .dparams = &dp, .contiguous = true,
                         .urlpath = (char *)path(nthreads == 1 ? "ucodec1.b2frame" : "ucodec2.b2frame")};
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    uint8_t key = 0x5a;
    CHECK(blosc2_vlmeta_add(sc, "key", &key, 1, NULL) >= 0);
    int32_t data[N], back[N];
    codec_calls_with_schunk = 0;
    for (int c = 0; c < 3; c++) {
      for (int i = 0; i < N; i++) data[i] = c * N + i;
      CHECK_EQ(blosc2_schunk_append_buffer(sc, data, sizeof data), c + 1);
    }
    CHECK(codec_calls_with_schunk > 0);
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 2, back, sizeof back), (int)sizeof back);
    CHECK(back[0] == 2 * N && back[N - 1] == 3 * N - 1);
    blosc2_schunk_free(sc);
  }
}

/* A chunksize written into the public struct before the first chunk holds:
   a shorter first chunk keeps it, the frame header records it, and the
   chunk grown to that size later is followed by full chunks. */
static void chunksize_set_before_first_chunk(void) {
  for (int on_disk = 0; on_disk <= 1; on_disk++) {
    const char *p = on_disk ? path("chunksize.b2frame") : NULL;
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    blosc2_storage st = {.cparams = &cp, .contiguous = true, .urlpath = (char *)p};
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    sc->chunksize = 1024;
    int32_t data[256], back[256];
    for (int i = 0; i < 256; i++) data[i] = i;
    CHECK_EQ(blosc2_schunk_append_buffer(sc, data, 300), 1);
    CHECK_EQ(sc->chunksize, 1024);
    CHECK_EQ(sc->nbytes, 300);
    /* grow the first chunk to the full size, then add a full one */
    uint8_t chunk[1024 + BLOSC2_MAX_OVERHEAD];
    int csize = blosc2_compress_ctx(sc->cctx, data, 1024, chunk, sizeof chunk);
    CHECK(csize > 0);
    CHECK(blosc2_schunk_update_chunk(sc, 0, chunk, true) >= 0);
    CHECK_EQ(blosc2_schunk_append_buffer(sc, data, 1024), 2);
    CHECK_EQ(sc->chunksize, 1024);
    CHECK_EQ(sc->nbytes, 2048);
    if (on_disk) {
      blosc2_schunk_free(sc);
      sc = blosc2_schunk_open(p);
      CHECK(sc != NULL);
      if (sc == NULL) continue;
      CHECK_EQ(sc->chunksize, 1024);
      CHECK_EQ(sc->nchunks, 2);
    }
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 1, back, sizeof back), 1024);
    CHECK(back[255] == 255);
    blosc2_schunk_free(sc);
  }
}

static int postfilter_calls = 0;

static int add_hundred(blosc2_postfilter_params *pp) {
  postfilter_calls++;
  const int32_t *in = (const int32_t *)pp->input;
  int32_t *out = (int32_t *)pp->output;
  for (int i = 0; i < pp->size / 4; i++) out[i] = in[i] + 100;
  return 0;
}

/* Contexts the caller puts into the super-chunk (after freeing the old ones)
   are the ones it works with: a decompression context with a postfilter, and
   a compression context with other parameters. */
static void replaced_contexts(void) {
  blosc2_schunk *sc = filled(NULL, true, 2);
  int32_t back[N];
  sc->storage->dparams->postfilter = add_hundred;
  blosc2_postfilter_params pp = {0};
  sc->storage->dparams->postparams = &pp;
  blosc2_free_ctx(sc->dctx);
  sc->dctx = blosc2_create_dctx(*sc->storage->dparams);
  postfilter_calls = 0;
  CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 1, back, sizeof back), (int)sizeof back);
  CHECK(postfilter_calls > 0);
  CHECK_EQ(back[0], N + 100);
  CHECK_EQ(back[N - 1], 2 * N - 1 + 100);
  /* and again without it, in a context made right after freeing the last */
  sc->storage->dparams->postfilter = NULL;
  sc->storage->dparams->postparams = NULL;
  blosc2_free_ctx(sc->dctx);
  sc->dctx = blosc2_create_dctx(*sc->storage->dparams);
  CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 1, back, sizeof back), (int)sizeof back);
  CHECK_EQ(back[0], N);

  blosc2_cparams cp = *sc->storage->cparams;
  cp.compcode = BLOSC_ZSTD;
  cp.clevel = 3;
  blosc2_free_ctx(sc->cctx);
  sc->cctx = blosc2_create_cctx(cp);
  int32_t data[N];
  for (int i = 0; i < N; i++) data[i] = i;
  CHECK_EQ(blosc2_schunk_append_buffer(sc, data, sizeof data), 3);
  uint8_t *chunk = NULL;
  bool needs_free = false;
  CHECK(blosc2_schunk_get_chunk(sc, 2, &chunk, &needs_free) > 0);
  const char *complib = blosc2_cbuffer_complib(chunk);
  CHECK(complib != NULL && strcmp(complib, "Zstd") == 0);
  if (needs_free) free(chunk);
  CHECK_EQ(blosc2_schunk_decompress_chunk(sc, 2, back, sizeof back), (int)sizeof back);
  CHECK_EQ(back[N - 1], N - 1);
  blosc2_schunk_free(sc);
}

static int copy_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta, blosc2_cparams *cparams,
                        uint8_t id) {
  (void)meta, (void)cparams, (void)id;
  memcpy(dest, src, (size_t)size);
  return BLOSC2_ERROR_SUCCESS;
}

static int copy_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta, blosc2_dparams *dparams,
                         uint8_t id) {
  (void)meta, (void)dparams, (void)id;
  memcpy(dest, src, (size_t)size);
  return BLOSC2_ERROR_SUCCESS;
}

/* Registration: a filter given by its callbacks needs no name; a codec or a
   filter registered by name without callbacks (a plugin to load at run time)
   is accepted, and compressing with it when no such plugin is installed
   fails cleanly. */
static void plugin_registration(void) {
  blosc2_filter unnamed = {.id = 230, .name = NULL, .forward = copy_forward, .backward = copy_backward};
  CHECK_EQ(blosc2_register_filter(&unnamed), 0);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.filters[0] = 230;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int32_t data[N], back[N];
  for (int i = 0; i < N; i++) data[i] = i * 3;
  uint8_t chunk[sizeof data + BLOSC2_MAX_OVERHEAD];
  int csize = blosc2_compress_ctx(cctx, data, sizeof data, chunk, sizeof chunk);
  CHECK(csize > 0);
  blosc2_free_ctx(cctx);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, csize, back, sizeof back), (int)sizeof back);
  CHECK(memcmp(data, back, sizeof data) == 0);
  blosc2_free_ctx(dctx);

  blosc2_codec by_name = {.compcode = 231, .complib = 231, .version = 1, .compname = (char *)"b2nd_absent_codec"};
  CHECK_EQ(blosc2_register_codec(&by_name), 0);
  blosc2_filter filter_by_name = {.id = 232, .name = (char *)"b2nd_absent_filter"};
  CHECK_EQ(blosc2_register_filter(&filter_by_name), 0);
  for (int k = 0; k < 2; k++) {
    blosc2_cparams p = BLOSC2_CPARAMS_DEFAULTS;
    p.typesize = 4;
    if (k == 0) p.compcode = 231;
    else p.filters[0] = 232;
    blosc2_context *c = blosc2_create_cctx(p);
    CHECK(c != NULL);
    if (c == NULL) continue;
    CHECK(blosc2_compress_ctx(c, data, sizeof data, chunk, sizeof chunk) < 0);
    blosc2_free_ctx(c);
  }
}

/* stderr into a file while a case runs, and back. */
static int saved_stderr = -1;
static char stderr_log[4096];

static void capture_stderr(void) {
  snprintf(stderr_log, sizeof stderr_log, "%s/stderr.txt", dir);
  fflush(stderr);
  saved_stderr = dup(2);
  int fd = open(stderr_log, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(saved_stderr >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
}

static void captured_stderr(char *text, size_t size) {
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  FILE *f = fopen(stderr_log, "r");
  size_t n = f ? fread(text, 1, size - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
}

/* Under BLOSC_INFO, opening a memory-mapped file says so on stderr, with the
   mode and the mapping size (python-blosc2 checks the message). */
static void mmap_open_info(void) {
  capture_stderr();
  setenv("BLOSC_INFO", "1", 1);
  const char *p = path("info.b2frame");
  blosc2_stdio_mmap mm = BLOSC2_STDIO_MMAP_DEFAULTS;
  mm.mode = "w+";
  mm.initial_mapping_size = 1 << 20;
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM_MMAP, .name = "filesystem_mmap", .params = &mm};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  blosc2_storage st = {.cparams = &cp, .contiguous = true, .urlpath = (char *)p, .io = &io};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc) blosc2_schunk_free(sc);
  unsetenv("BLOSC_INFO");
  char text[8192];
  captured_stderr(text, sizeof text);
  CHECK(sc != NULL);
  CHECK(strstr(text, "Opened memory-mapped file") != NULL);
#ifdef _WIN32
  /* Windows: c-blosc2 lengthens the file to the mapping it asks for (and cuts
     it back at close); libb2nd maps the file as long as it is, which a crash
     cannot leave padded (docs/PORTING.md): a new file maps 0 bytes. */
  CHECK(strstr(text, "in mode w+ with an mapping size of 1048576") != NULL ||
        strstr(text, "in mode w+ with an mapping size of 0 bytes") != NULL);
#else
  CHECK(strstr(text, "in mode w+ with an mapping size of 1048576") != NULL);
#endif
}

/* Under BLOSC_TRACE a refused call explains itself on stderr; without it,
   nothing is written. */
static void trace_on_errors(void) {
  blosc2_schunk *sc = filled(NULL, false, 1);
  uint8_t *chunk = NULL;
  bool needs_free = false;
  char text[8192];
  unsetenv("BLOSC_TRACE");
  capture_stderr();
  CHECK(blosc2_schunk_get_chunk(sc, 7, &chunk, &needs_free) < 0);
  captured_stderr(text, sizeof text);
  CHECK_EQ(strlen(text), 0);
  setenv("BLOSC_TRACE", "1", 1);
  capture_stderr();
  CHECK(blosc2_schunk_get_chunk(sc, 7, &chunk, &needs_free) < 0);
  captured_stderr(text, sizeof text);
  unsetenv("BLOSC_TRACE");
  CHECK(strstr(text, "[error] - ") != NULL);
  blosc2_schunk_free(sc);
}

/* The writer of locked_reader_during_updates (this program run again with
   `--hammer PATH`): replaces chunks 300 times; its exit code says how it went. */
static int hammer(const char *p) {
  blosc2_stdio_params lp = {.locking = true};
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &lp};
  blosc2_schunk *w = blosc2_schunk_open_udio(p, &io);
  if (w == NULL) return 3;
  int32_t data[N];
  uint8_t chunk[sizeof data + BLOSC2_MAX_OVERHEAD];
  for (int it = 0; it < 300; it++) {
    int64_t nchunk = it % 4;
    int csize;
    if (it % 2 == 0) {
      csize = blosc2_chunk_uninit(*w->storage->cparams, sizeof data, chunk, sizeof chunk);
    } else {
      for (int i = 0; i < N; i++) data[i] = it;
      csize = blosc2_compress_ctx(w->cctx, data, sizeof data, chunk, sizeof chunk);
    }
    if (csize <= 0 || blosc2_schunk_update_chunk(w, nchunk, chunk, true) < 0) return 4;
  }
  blosc2_schunk_free(w);
  return 0;
}

/* A reader with locking reads every chunk while another process keeps
   replacing them (special chunks and stored ones alternately) in a sparse
   frame: no read fails, and each sees a whole chunk. */
static void locked_reader_during_updates(const char *self) {
  const char *p = path("hammer.b2frame");
  blosc2_schunk *sc = filled(p, false, 4);
  blosc2_schunk_free(sc);
  blosc2_stdio_params lp = {.locking = true};
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &lp};
  char *args[] = {(char *)self, "--hammer", (char *)p, NULL};
  child_t child = spawn_self(self, args);
  CHECK(child != -1);
  blosc2_schunk *r = blosc2_schunk_open_udio(p, &io);
  CHECK(r != NULL);
  int failures = 0, reads = 0, code = -1;
  int32_t back[N];
  while (r != NULL && child != -1) {
    int done = child_ended(child, true, &code);
    CHECK(done >= 0);
    for (int64_t c = 0; c < 4; c++) {
      uint8_t *chunk = NULL;
      bool needs_free = false;
      if (blosc2_schunk_get_chunk(r, c, &chunk, &needs_free) <= 0) failures++;
      if (needs_free) free(chunk);
      if (blosc2_schunk_decompress_chunk(r, c, back, sizeof back) != (int)sizeof back) failures++;
      reads += 2;
    }
    if (done != 0) break;
  }
  CHECK_EQ(failures, 0);
  CHECK(reads > 0);
  CHECK_EQ(code, 0);
  if (r) blosc2_schunk_free(r);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--hammer") == 0) {
    blosc2_init();
    return hammer(argv[2]);
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s CASE DIR\n", argv[0]);
    return 2;
  }
  snprintf(dir, sizeof dir, "%s", argv[2]);
  blosc2_init();
  const char *c = argv[1];
  if (strcmp(c, "chunk_positions") == 0) chunk_positions();
  else if (strcmp(c, "getitem_bytes_alignment") == 0) getitem_bytes_alignment();
  else if (strcmp(c, "nthreads_environment") == 0) nthreads_environment();
  else if (strcmp(c, "mmap_given_mapping") == 0) mmap_given_mapping();
  else if (strcmp(c, "truncated_chunk_file") == 0) truncated_chunk_file();
  else if (strcmp(c, "slice_chunks_of_empty") == 0) slice_chunks_of_empty();
  else if (strcmp(c, "file_urls") == 0) file_urls();
  else if (strcmp(c, "tiny_memcpyed_lazy_chunks") == 0) tiny_memcpyed_lazy_chunks();
  else if (strcmp(c, "copies_take_default_dparams") == 0) copies_take_default_dparams();
  else if (strcmp(c, "user_plugins_see_their_schunk") == 0) user_plugins_see_their_schunk();
  else if (strcmp(c, "chunksize_set_before_first_chunk") == 0) chunksize_set_before_first_chunk();
  else if (strcmp(c, "replaced_contexts") == 0) replaced_contexts();
  else if (strcmp(c, "plugin_registration") == 0) plugin_registration();
  else if (strcmp(c, "mmap_open_info") == 0) mmap_open_info();
  else if (strcmp(c, "trace_on_errors") == 0) trace_on_errors();
  else if (strcmp(c, "locked_reader_during_updates") == 0) locked_reader_during_updates(argv[0]);
  else {
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
  }
  blosc2_destroy();
  return report(c);
}
