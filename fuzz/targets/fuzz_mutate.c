/* libFuzzer target, stateful: the input is a sequence of changes applied to a super-chunk in
   a frame file (contiguous or sparse, by the first byte) and to a model of it (the chunks'
   contents, the vlmetalayers): appends, inserts, updates (to stored or zero chunks),
   deletes, reorders, vlmetalayer changes, and reopening the file. A change the library
   refuses must leave it as it was; after each change every chunk must decode to the
   model's content. A difference aborts (a finding). */
#include <blosc2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXCHUNKS 24
#define MAXLEN 2048

typedef struct {
  int n;
  int32_t len[MAXCHUNKS];
  uint8_t data[MAXCHUNKS][MAXLEN];
  int nvl;
  char vlname[4][8];
  uint8_t vl[4][16];
} model_t;

static char path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  blosc2_init();
  snprintf(path, sizeof path, "/tmp/b2nd-fuzz-mutate-%d.b2frame", (int)getpid());
  return 0;
}

static void fail(const char *what, int i) {
  fprintf(stderr, "mismatch: %s (%d)\n", what, i);
  abort();
}

static void check(blosc2_schunk *sc, const model_t *m) {
  if (sc->nchunks != m->n) fail("nchunks", (int)sc->nchunks);
  uint8_t buf[MAXLEN];
  for (int i = 0; i < m->n; i++) {
    int r = blosc2_schunk_decompress_chunk(sc, i, buf, sizeof buf);
    if (r != m->len[i] || memcmp(buf, m->data[i], (size_t)m->len[i]) != 0) fail("chunk", i);
  }
  for (int i = 0; i < m->nvl; i++) {
    uint8_t *content = NULL;
    int32_t len = 0;
    if (blosc2_vlmeta_get(sc, m->vlname[i], &content, &len) < 0 || len != 16 || memcmp(content, m->vl[i], 16) != 0)
      fail("vlmeta", i);
    free(content);
  }
}

static int32_t make(uint8_t seed, uint8_t *out) {
  int32_t len = (seed & 1) ? 1024 : 512;
  for (int32_t i = 0; i < len; i++) out[i] = (uint8_t)(seed * 31 + i / 7);
  return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 400) return 0;
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = BLOSC_LZ4;
  blosc2_storage st = {.cparams = &cp, .contiguous = (data[0] & 1) == 0, .urlpath = path};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (!sc) return 0;
  static model_t m;
  memset(&m, 0, sizeof m);
  uint8_t chunk[MAXLEN + BLOSC2_MAX_OVERHEAD], buf[MAXLEN];
  for (size_t k = 1; k + 1 < size; k += 2) {
    uint8_t op = data[k] % 9, arg = data[k + 1];
    int pos = m.n ? arg % (m.n + 1) : 0;
    int rc = -1;
    switch (op) {
      case 0: /* append */
        if (m.n == MAXCHUNKS) break;
        {
          int32_t len = make(arg, buf);
          rc = (int)blosc2_schunk_append_buffer(sc, buf, len);
          if (rc >= 0) { memcpy(m.data[m.n], buf, (size_t)len); m.len[m.n++] = len; }
        }
        break;
      case 1: /* insert */
        if (m.n == MAXCHUNKS) break;
        {
          int32_t len = make(arg, buf);
          int cs = blosc2_compress_ctx(sc->cctx, buf, len, chunk, sizeof chunk);
          if (cs <= 0) break;
          rc = (int)blosc2_schunk_insert_chunk(sc, pos, chunk, true);
          if (rc >= 0) {
            memmove(&m.data[pos + 1], &m.data[pos], sizeof m.data[0] * (size_t)(m.n - pos));
            memmove(&m.len[pos + 1], &m.len[pos], sizeof m.len[0] * (size_t)(m.n - pos));
            memcpy(m.data[pos], buf, (size_t)len);
            m.len[pos] = len;
            m.n++;
          }
        }
        break;
      case 2: /* update with a stored chunk */
      case 3: /* update with zeros */
        if (m.n == 0) break;
        {
          pos = arg % m.n;
          int32_t len = make(arg >> 1, buf);
          int cs = op == 2 ? blosc2_compress_ctx(sc->cctx, buf, len, chunk, sizeof chunk)
                           : blosc2_chunk_zeros(cp, len, chunk, sizeof chunk);
          if (cs <= 0) break;
          if (op == 3) memset(buf, 0, (size_t)len);
          rc = (int)blosc2_schunk_update_chunk(sc, pos, chunk, true);
          if (rc >= 0) { memcpy(m.data[pos], buf, (size_t)len); m.len[pos] = len; }
        }
        break;
      case 4: /* delete */
        if (m.n == 0) break;
        pos = arg % m.n;
        rc = (int)blosc2_schunk_delete_chunk(sc, pos);
        if (rc >= 0) {
          memmove(&m.data[pos], &m.data[pos + 1], sizeof m.data[0] * (size_t)(m.n - pos - 1));
          memmove(&m.len[pos], &m.len[pos + 1], sizeof m.len[0] * (size_t)(m.n - pos - 1));
          m.n--;
        }
        break;
      case 5: /* reverse */
        if (m.n < 2) break;
        {
          int64_t order[MAXCHUNKS];
          for (int i = 0; i < m.n; i++) order[i] = m.n - 1 - i;
          rc = blosc2_schunk_reorder_offsets(sc, order);
          if (rc >= 0) {
            for (int i = 0; i < m.n / 2; i++) {
              memcpy(buf, m.data[i], MAXLEN);
              memcpy(m.data[i], m.data[m.n - 1 - i], MAXLEN);
              memcpy(m.data[m.n - 1 - i], buf, MAXLEN);
              int32_t t = m.len[i];
              m.len[i] = m.len[m.n - 1 - i];
              m.len[m.n - 1 - i] = t;
            }
          }
        }
        break;
      case 6: /* vlmeta add or update */
        {
          int v = arg % 4;
          char name[8];
          snprintf(name, sizeof name, "v%d", v);
          uint8_t content[16];
          memset(content, arg, sizeof content);
          int exists = -1;
          for (int i = 0; i < m.nvl; i++) if (strcmp(m.vlname[i], name) == 0) exists = i;
          rc = exists >= 0 ? blosc2_vlmeta_update(sc, name, content, 16, NULL)
                           : blosc2_vlmeta_add(sc, name, content, 16, NULL);
          if (rc >= 0) {
            int slot = exists >= 0 ? exists : m.nvl++;
            strcpy(m.vlname[slot], name);
            memcpy(m.vl[slot], content, 16);
          }
        }
        break;
      case 7: /* vlmeta delete */
        if (m.nvl == 0) break;
        {
          int v = arg % m.nvl;
          rc = blosc2_vlmeta_delete(sc, m.vlname[v]);
          if (rc >= 0) {
            memmove(&m.vlname[v], &m.vlname[v + 1], sizeof m.vlname[0] * (size_t)(m.nvl - v - 1));
            memmove(&m.vl[v], &m.vl[v + 1], sizeof m.vl[0] * (size_t)(m.nvl - v - 1));
            m.nvl--;
          }
        }
        break;
      case 8: /* reopen */
        blosc2_schunk_free(sc);
        sc = blosc2_schunk_open(path);
        if (!sc) fail("reopen", 0);
        break;
    }
    (void)rc;
    check(sc, &m);
  }
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(path);
  return 0;
}
