/* Every frame of tests/data (written by c-blosc2 2.x/3.x and python-blosc2)
   opens through blosc2_schunk_open and blosc2_schunk_from_buffer, and decodes.
   Usage: test_testdata_frames TESTDATA_DIR SCRATCH_DIR
   Built with LIBB2ND_STRICT against libb2nd: the frame with variable-size chunks is also
   read and written whole through get/set_slice_buffer (c-blosc2 3.3.5 dies there with
   SIGFPE, a division by its zero chunksize). */
#include "blosc2.h"
#include "test_common.h"

static char g_data[1024], g_scratch[1024];

/* All chunks decompressed one after the other (malloc'd, nbytes long). */
static uint8_t *decode_all(blosc2_schunk *sc) {
  uint8_t *all = malloc((size_t)sc->nbytes + 1);
  int64_t off = 0;
  for (int64_t i = 0; i < sc->nchunks; i++) {
    uint8_t *chunk;
    bool nf;
    int cb = blosc2_schunk_get_chunk(sc, i, &chunk, &nf);
    CHECK(cb > 0);
    if (cb <= 0) break;
    int32_t nbytes, cbytes;
    CHECK_EQ(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, NULL), 0);
    CHECK_EQ(cbytes, cb);
    if (nf) free(chunk);
    CHECK(off + nbytes <= sc->nbytes);
    if (off + nbytes > sc->nbytes) break;
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, all + off, nbytes), nbytes);
    off += nbytes;
  }
  CHECK_EQ(off, sc->nbytes);
  return all;
}

/* Opened from the file and from a buffer (copy and no copy): same counters and contents. */
static uint8_t *check_frame(const char *rel, int64_t nchunks, int64_t nbytes, int32_t typesize, blosc2_schunk **out) {
  char path[2048];
  snprintf(path, sizeof(path), "%s/%s", g_data, rel);
  blosc2_schunk *sc = blosc2_schunk_open(path);
  CHECK(sc != NULL);
  if (sc == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  CHECK_EQ(sc->nchunks, nchunks);
  CHECK_EQ(sc->nbytes, nbytes);
  CHECK_EQ(sc->typesize, typesize);
  uint8_t *all = decode_all(sc);
  long len = 0;
  uint8_t *buf = read_file(path, &len);
  CHECK(buf != NULL);
  for (int copy = 0; copy < 2 && buf != NULL; copy++) {
    blosc2_schunk *b = blosc2_schunk_from_buffer(buf, len, copy);
    CHECK(b != NULL);
    if (b == NULL) continue;
    CHECK_EQ(b->nchunks, nchunks);
    CHECK_EQ(b->nbytes, nbytes);
    uint8_t *again = decode_all(b);
    CHECK(memcmp(again, all, (size_t)nbytes) == 0);
    free(again);
    blosc2_schunk_free(b);
  }
  free(buf);
  if (out != NULL) {
    *out = sc;
  } else {
    blosc2_schunk_free(sc);
  }
  return all;
}

static void frames_simple(void) {
  const char *codecs[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
  uint8_t *first = NULL;
  for (int c = 0; c < 5; c++) {
    char rel[256];
    snprintf(rel, sizeof(rel), "frames/frame_simple-%s.b2frame", codecs[c]);
    uint8_t *all = check_frame(rel, 10, 2000000, 4, NULL);
    if (all == NULL) continue;
    if (first == NULL) {
      first = all;
    } else {
      CHECK(memcmp(first, all, 2000000) == 0); /* the five decode to the same bytes */
      free(all);
    }
  }
  free(first);
}

static void varchunks(void) {
  blosc2_schunk *sc = NULL;
  uint8_t *all = check_frame("compat/varchunks-lz4-3.0.0.b2frame", 5, 4321, 1, &sc);
  if (all == NULL || sc == NULL) return;
  CHECK_EQ(sc->chunksize, 0);
  int32_t sizes[5] = {1000, 500, 2000, 520, 301};
  for (int i = 0; i < 5; i++) {
    uint8_t *chunk;
    bool nf;
    CHECK(blosc2_schunk_get_chunk(sc, i, &chunk, &nf) > 0);
    int32_t nbytes;
    blosc2_cbuffer_sizes(chunk, &nbytes, NULL, NULL);
    CHECK_EQ(nbytes, sizes[i]);
    if (nf) free(chunk);
  }
#ifdef LIBB2ND_STRICT
  uint8_t slice[4321];
  CHECK_EQ(blosc2_schunk_get_slice_buffer(sc, 0, 4321, slice), 0);
  CHECK(memcmp(slice, all, 4321) == 0);
  CHECK_EQ(blosc2_schunk_get_slice_buffer(sc, 999, 1502, slice), 0);
  CHECK(memcmp(slice, all + 999, 503) == 0);
  int64_t start = 900, stop = 3700;
  int64_t *idx = NULL;
  CHECK_EQ(blosc2_get_slice_nchunks(sc, &start, &stop, &idx), 4);
  if (idx != NULL) {
    CHECK_EQ(idx[0], 0);
    CHECK_EQ(idx[3], 3);
    free(idx);
  }
  /* Write it whole (a copy in the scratch directory), and a part of it. */
  char path[2048];
  snprintf(path, sizeof(path), "%s/varchunks-copy.b2frame", g_scratch);
  blosc2_remove_urlpath(path);
  CHECK(blosc2_schunk_to_file(sc, path) > 0);
  blosc2_schunk *w = blosc2_schunk_open(path);
  CHECK(w != NULL);
  if (w != NULL) {
    uint8_t *src = malloc(4321), *back = malloc(4321);
    for (int i = 0; i < 4321; i++) src[i] = (uint8_t)(i * 7 + 3);
    CHECK_EQ(blosc2_schunk_set_slice_buffer(w, 0, 4321, src), 0);
    memcpy(src + 1200, all + 1200, 1700);
    CHECK_EQ(blosc2_schunk_set_slice_buffer(w, 1200, 2900, all + 1200), 0);
    CHECK_EQ(blosc2_schunk_get_slice_buffer(w, 0, 4321, back), 0);
    CHECK(memcmp(back, src, 4321) == 0);
    CHECK_EQ(w->nchunks, 5);
    CHECK_EQ(w->chunksize, 0);
    blosc2_schunk_free(w);
    w = blosc2_schunk_open(path);
    CHECK(w != NULL);
    if (w != NULL) {
      memset(back, 0, 4321);
      CHECK_EQ(blosc2_schunk_get_slice_buffer(w, 0, 4321, back), 0);
      CHECK(memcmp(back, src, 4321) == 0);
      blosc2_schunk_free(w);
    }
    free(src);
    free(back);
  }
  blosc2_remove_urlpath(path);
#endif
  free(all);
  blosc2_schunk_free(sc);
}

static void vlblocks(void) {
  const char *names[] = {"compat/vlblocks-lz4-fixed-3.0.0.b2frame", "compat/vlblocks-lz4-variable-3.0.0.b2frame"};
  for (int k = 0; k < 2; k++) {
    blosc2_schunk *sc = NULL;
    uint8_t *all = check_frame(names[k], 5, 10000, 1, &sc);
    if (all == NULL || sc == NULL) continue;
    CHECK(sc->flags2 & BLOSC2_VL_BLOCKS);
    int64_t off = 0;
    for (int64_t i = 0; i < sc->nchunks; i++) {
      uint8_t *chunk;
      bool nf;
      CHECK(blosc2_schunk_get_chunk(sc, i, &chunk, &nf) > 0);
      int32_t nblocks = 0;
      CHECK_EQ(blosc2_vlchunk_get_nblocks(chunk, 1 << 20, &nblocks), 0);
      if (nf) free(chunk);
      for (int32_t b = 0; b < nblocks; b++) {
        uint8_t *block;
        int32_t bsize;
        CHECK(blosc2_schunk_get_vlblock(sc, i, b, &block, &bsize) > 0);
        CHECK(off + bsize <= 10000 && memcmp(block, all + off, (size_t)bsize) == 0);
        off += bsize;
        free(block);
      }
    }
    CHECK_EQ(off, 10000);
    free(all);
    blosc2_schunk_free(sc);
  }
}

static void b2nd_files(void) {
  struct {
    const char *rel;
    int64_t nchunks, nbytes;
  } files[] = {
      {"b2nd/example_day_month_temp.b2nd", 4, 4 * 1368}, /* 4 chunks of 114 x 3 float32 */
      {"b2nd/example_item_prices.b2nd", 2 * 3 * 5, 2 * 3 * 5 * 8 * 10 * 50 * 4},
  };
  for (int k = 0; k < 2; k++) {
    blosc2_schunk *sc = NULL;
    uint8_t *all = check_frame(files[k].rel, files[k].nchunks, files[k].nbytes, 4, &sc);
    if (sc == NULL) continue;
    CHECK(blosc2_meta_exists(sc, "b2nd") >= 0);
    uint8_t *meta;
    int32_t meta_len;
    CHECK(blosc2_meta_get(sc, "b2nd", &meta, &meta_len) >= 0);
    CHECK(meta_len > 10 && meta[0] == 0x97); /* a 7-element msgpack array */
    free(meta);
    free(all);
    blosc2_schunk_free(sc);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s TESTDATA_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(g_data, sizeof(g_data), "%s", argv[1]);
  snprintf(g_scratch, sizeof(g_scratch), "%s", argv[2]);
  blosc2_init();
  frames_simple();
  varchunks();
  vlblocks();
  b2nd_files();
  blosc2_destroy();
  return report("test_testdata_frames");
}
