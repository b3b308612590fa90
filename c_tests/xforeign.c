/* One library changes a frame file the other wrote: built against libb2nd and against the
 * reference c-blosc2 3.3.5, so that each can change frames of the other, in particular
 * libb2nd's frames with holes (docs/FRAME_BEHAVIOUR.md 12a), which c-blosc2 changes by its
 * own rules (an update moves every later chunk, holes included).
 *
 *   xforeign change SRC DST [--holes]   copy the frame SRC to DST, check (with --holes) that
 *                                       its chunks section holds more than its chunks, then
 *                                       update, insert, delete and append chunks of DST and
 *                                       write what it must hold (the content read before,
 *                                       changed as the frame was) to DST.expected
 *   xforeign check DST                  read DST whole and compare it with DST.expected
 *
 * DST.expected: per chunk, its nbytes (int32, little-endian here) and its bytes.
 */
#include <blosc2.h>

#include "test_common.h"

/* The content of new chunk `seed` (a share of noise that depends on it: chunks of several sizes). */
static uint8_t *data_of(blosc2_schunk *sc, int seed, int32_t nbytes) {
  uint8_t *d = malloc((size_t)nbytes);
  fill_data(seed % 3, sc->typesize, nbytes, d);
  return d;
}

static uint8_t *chunk_of(blosc2_schunk *sc, const uint8_t *d, int32_t nbytes) {
  uint8_t *c = malloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
  CHECK(blosc2_compress_ctx(sc->cctx, d, nbytes, c, nbytes + BLOSC2_MAX_OVERHEAD) > 0);
  return c;
}

/* What the frame must hold: each chunk's content, changed as the frame is. */
typedef struct {
  uint8_t *data[256];
  int32_t nbytes[256];
  int n;
} model_t;

static void m_insert(model_t *m, int pos, uint8_t *d, int32_t nbytes) {
  memmove(&m->data[pos + 1], &m->data[pos], sizeof(m->data[0]) * (size_t)(m->n - pos));
  memmove(&m->nbytes[pos + 1], &m->nbytes[pos], sizeof(m->nbytes[0]) * (size_t)(m->n - pos));
  m->data[pos] = d;
  m->nbytes[pos] = nbytes;
  m->n++;
}

static void m_delete(model_t *m, int pos) {
  free(m->data[pos]);
  memmove(&m->data[pos], &m->data[pos + 1], sizeof(m->data[0]) * (size_t)(m->n - pos - 1));
  memmove(&m->nbytes[pos], &m->nbytes[pos + 1], sizeof(m->nbytes[0]) * (size_t)(m->n - pos - 1));
  m->n--;
}

/* Replace chunk `pos` (or append, pos == n) of the super-chunk and the model with new chunk `seed`. */
static void put(blosc2_schunk *sc, model_t *m, int pos, int seed, int insert) {
  int32_t nbytes = sc->chunksize > 0 ? sc->chunksize : 4000;
  uint8_t *d = data_of(sc, seed, nbytes);
  uint8_t *c = chunk_of(sc, d, nbytes);
  if (insert) {
    CHECK(blosc2_schunk_insert_chunk(sc, pos, c, true) >= 0);
    m_insert(m, pos, d, nbytes);
  } else {
    CHECK(blosc2_schunk_update_chunk(sc, pos, c, true) >= 0);
    free(m->data[pos]);
    m->data[pos] = d;
    m->nbytes[pos] = nbytes;
  }
  free(c);
}

static int copy_file(const char *src, const char *dst) {
  long len = 0;
  uint8_t *b = read_file(src, &len);
  if (b == NULL) return -1;
  FILE *f = fopen(dst, "wb");
  int ok = f != NULL && fwrite(b, 1, (size_t)len, f) == (size_t)len;
  if (f != NULL) fclose(f);
  free(b);
  return ok ? 0 : -1;
}

static int change(const char *src, const char *dst, int holes) {
  blosc2_remove_urlpath(dst);
  CHECK_EQ(copy_file(src, dst), 0);
  blosc2_schunk *sc = blosc2_schunk_open(dst);
  CHECK(sc != NULL);
  if (sc == NULL) return report("xforeign change");
  CHECK(sc->nchunks >= 4);
  if (holes) {
    int64_t stored = 0;
    for (int64_t i = 0; i < sc->nchunks; i++) {
      uint8_t *c;
      bool needs_free;
      int cb = blosc2_schunk_get_lazychunk(sc, i, &c, &needs_free);
      CHECK(cb > 0);
      int32_t nb = 0, cbytes = 0, bs = 0;
      blosc2_cbuffer_sizes(c, &nb, &cbytes, &bs);
      /* special chunks stored as offsets take no room */
      int special = (c[31] & 0x70) >> 4;
      if (special != BLOSC2_SPECIAL_ZERO && special != BLOSC2_SPECIAL_NAN && special != BLOSC2_SPECIAL_UNINIT) stored += cbytes;
      if (needs_free) free(c);
    }
    CHECK(sc->cbytes > stored); /* the frame has holes */
  }
  /* the content before the change, as this library reads it */
  model_t m = {.n = 0};
  CHECK(sc->nchunks <= 200);
  for (int64_t i = 0; i < sc->nchunks && i < 200; i++) {
    int32_t nb = 0, cb = 0, bs = 0;
    uint8_t *c;
    bool needs_free;
    CHECK(blosc2_schunk_get_lazychunk(sc, i, &c, &needs_free) > 0);
    blosc2_cbuffer_sizes(c, &nb, &cb, &bs);
    if (needs_free) free(c);
    uint8_t *d = malloc((size_t)nb + 1);
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, d, nb + 1), nb);
    m_insert(&m, (int)i, d, nb);
  }
  put(sc, &m, 1, 1, 0);
  put(sc, &m, 0, 2, 1);
  CHECK(blosc2_schunk_delete_chunk(sc, 3) >= 0);
  m_delete(&m, 3);
  put(sc, &m, m.n - 2, 3, 0);
  put(sc, &m, m.n, 4, 1);
  put(sc, &m, m.n - 1, 5, 0); /* the chunk stored last */

  char exp[4096];
  snprintf(exp, sizeof(exp), "%s.expected", dst);
  FILE *f = fopen(exp, "wb");
  CHECK(f != NULL);
  CHECK_EQ(sc->nchunks, m.n);
  for (int i = 0; f != NULL && i < m.n; i++) {
    fwrite(&m.nbytes[i], sizeof(int32_t), 1, f);
    fwrite(m.data[i], 1, (size_t)m.nbytes[i], f);
    /* and this library reads what it wrote */
    uint8_t *buf = malloc((size_t)m.nbytes[i] + 1);
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, buf, m.nbytes[i] + 1), m.nbytes[i]);
    CHECK(memcmp(buf, m.data[i], (size_t)m.nbytes[i]) == 0);
    free(buf);
    free(m.data[i]);
  }
  if (f != NULL) fclose(f);
  blosc2_schunk_free(sc);
  return report("xforeign change");
}

static int check(const char *dst) {
  char exp[4096];
  snprintf(exp, sizeof(exp), "%s.expected", dst);
  long len = 0;
  uint8_t *e = read_file(exp, &len);
  CHECK(e != NULL);
  blosc2_schunk *sc = blosc2_schunk_open(dst);
  CHECK(sc != NULL);
  if (e == NULL || sc == NULL) return report("xforeign check");
  long at = 0;
  int64_t i = 0;
  while (at + 4 <= len) {
    int32_t n;
    memcpy(&n, e + at, 4);
    at += 4;
    uint8_t *buf = malloc((size_t)n + 1);
    CHECK(i < sc->nchunks);
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, buf, n + 1), n);
    CHECK(at + n <= len && memcmp(buf, e + at, (size_t)n) == 0);
    free(buf);
    at += n;
    i++;
  }
  CHECK_EQ(i, sc->nchunks);
  blosc2_schunk_free(sc);
  free(e);
  return report("xforeign check");
}

int main(int argc, char **argv) {
  blosc2_init();
  int rc = 2;
  if (argc >= 4 && strcmp(argv[1], "change") == 0) {
    rc = change(argv[2], argv[3], argc > 4 && strcmp(argv[4], "--holes") == 0);
  } else if (argc == 3 && strcmp(argv[1], "check") == 0) {
    rc = check(argv[2]);
  } else {
    fprintf(stderr, "usage: %s change SRC DST [--holes] | check DST\n", argv[0]);
  }
  blosc2_destroy();
  return rc;
}
