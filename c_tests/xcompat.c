/* Cross-compatibility with c-blosc2: built twice from this source, once against
   libb2nd and once against the reference c-blosc2 3.3.5. `write DIR` compresses a
   matrix of buffers into DIR/<case>.chunk; `check DIR` decompresses every chunk of
   that matrix found in DIR and checks the bytes, random getitem ranges and the
   header fields. Running `check` of one library on what `write` of the other made
   tests both directions. */
#include <stdint.h>
#include "blosc2.h"
#include "test_common.h"

static const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
static const int typesizes[] = {1, 2, 4, 8, 16, 3, 12};
static const int clevels[] = {0, 1, 5, 9};
static const int32_t sizes[] = {7, 4321, 262147, 5000003};
static const int pipelines = 6; /* none, shuffle, bitshuffle, delta+shuffle, trunc_prec+shuffle, shuffle+dict */

typedef struct {
  int codec, typesize, clevel, pipeline, nthreads, splitmode;
  int32_t nbytes;
} case_t;

static void params_for(const case_t *c, blosc2_cparams *cp) {
  *cp = BLOSC2_CPARAMS_DEFAULTS;
  cp->compcode = (uint8_t)c->codec;
  cp->clevel = (uint8_t)c->clevel;
  cp->typesize = c->typesize;
  cp->nthreads = (int16_t)c->nthreads;
  cp->splitmode = c->splitmode;
  memset(cp->filters, 0, sizeof(cp->filters));
  switch (c->pipeline) {
    case 1: cp->filters[5] = BLOSC_SHUFFLE; break;
    case 2: cp->filters[5] = BLOSC_BITSHUFFLE; break;
    case 3: cp->filters[4] = BLOSC_DELTA; cp->filters[5] = BLOSC_SHUFFLE; break;
    case 4:
      cp->filters[0] = BLOSC_TRUNC_PREC; cp->filters_meta[0] = 20; cp->filters[5] = BLOSC_SHUFFLE;
      break;
    case 5: cp->filters[5] = BLOSC_SHUFFLE; cp->use_dict = 1; break;
    default: break;
  }
}

static int case_valid(const case_t *c) {
  /* trunc_prec only takes 4- and 8-byte items; delta chunks of sizes that are not a
     multiple of the typesize are not round-tripped by c-blosc2 (checked elsewhere). */
  if (c->pipeline == 4 && c->typesize != 4 && c->typesize != 8) return 0;
  if (c->pipeline == 3 && c->nbytes % c->typesize != 0) return 0;
  /* Dictionaries only for the codecs that have them, and at levels that compress. */
  if (c->pipeline == 5 && (c->codec == BLOSC_BLOSCLZ || c->codec == BLOSC_ZLIB || c->clevel == 0)) return 0;
  return 1;
}

static void case_name(const case_t *c, char *out, size_t n) {
  snprintf(out, n, "c%d-t%d-l%d-p%d-th%d-s%d-n%d", c->codec, c->typesize, c->clevel, c->pipeline,
           c->nthreads, c->splitmode, (int)c->nbytes);
}

/* The data a case compresses: floats for trunc_prec, else one of the kinds. */
static void case_data(const case_t *c, uint8_t *buf) {
  if (c->pipeline == 4) {
    for (int32_t i = 0; i + c->typesize <= c->nbytes; i += c->typesize) {
      if (c->typesize == 4) { float v = (float)(i % 1000) * 0.37f; memcpy(buf + i, &v, 4); }
      else { double v = (double)(i % 1000) * 0.37; memcpy(buf + i, &v, 8); }
    }
    for (int32_t i = c->nbytes / c->typesize * c->typesize; i < c->nbytes; i++) buf[i] = (uint8_t)i;
    return;
  }
  if (c->pipeline == 1 && (c->codec + c->clevel) % 2 == 1) {
    /* Items whose low bytes are noise and high bytes a slow ramp, as floats' mantissas
       and exponents are: split blocks store their first planes as is (libb2nd then
       writes the planes in place) and compress the others. */
    uint32_t state = 777u + (uint32_t)c->typesize;
    for (int32_t i = 0; i < c->nbytes; i++) {
      state = state * 1664525u + 1013904223u;
      int32_t item = i / c->typesize, byte = i % c->typesize;
      buf[i] = byte < (c->typesize + 1) / 2 ? (uint8_t)(state >> 24) : (uint8_t)((item >> 10) + byte);
    }
    return;
  }
  fill_data((c->codec + c->typesize + c->clevel) % 4, c->typesize, c->nbytes, buf);
}

typedef void (*case_fn)(const case_t *c, const char *dir);

static int for_each_case(case_fn fn, const char *dir) {
  int ncases = 0;
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < sizeof(typesizes) / sizeof(int); b++)
      for (size_t l = 0; l < 4; l++)
        for (int p = 0; p < pipelines; p++)
          for (size_t s = 0; s < sizeof(sizes) / sizeof(int32_t); s++) {
            case_t c = {codecs[a], typesizes[b], clevels[l], p, 1 + (int)((a + b + s) % 2),
                        BLOSC_FORWARD_COMPAT_SPLIT + 0, sizes[s]};
            if ((a + b + l + s) % 3 == 0) c.splitmode = ((a + p) % 2) ? BLOSC_ALWAYS_SPLIT : BLOSC_NEVER_SPLIT;
            if (!case_valid(&c)) continue;
            fn(&c, dir);
            ncases++;
          }
  return ncases;
}

static void write_case(const case_t *c, const char *dir) {
  uint8_t *src = malloc((size_t)c->nbytes), *dst = malloc((size_t)c->nbytes + BLOSC2_MAX_OVERHEAD);
  case_data(c, src);
  blosc2_cparams cp;
  params_for(c, &cp);
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int csize = blosc2_compress_ctx(cctx, src, c->nbytes, dst, c->nbytes + BLOSC2_MAX_OVERHEAD);
  CHECK(csize > 0);
  blosc2_free_ctx(cctx);
  char name[256], path[1024];
  case_name(c, name, sizeof(name));
  snprintf(path, sizeof(path), "%s/%s.chunk", dir, name);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fwrite(dst, 1, (size_t)csize, f);
    fclose(f);
  }
  free(src);
  free(dst);
}

static void check_case(const case_t *c, const char *dir) {
  char name[256], path[1024];
  case_name(c, name, sizeof(name));
  snprintf(path, sizeof(path), "%s/%s.chunk", dir, name);
  long len = 0;
  uint8_t *chunk = read_file(path, &len);
  CHECK(chunk != NULL);
  if (!chunk) return;
  uint8_t *expected = malloc((size_t)c->nbytes), *out = malloc((size_t)c->nbytes);
  case_data(c, expected);
  if (c->pipeline == 4) {
    /* Lossy: compare with what the library itself computes from the same chunk. */
    blosc2_cparams cp;
    params_for(c, &cp);
    uint8_t *tmp = malloc((size_t)c->nbytes + BLOSC2_MAX_OVERHEAD);
    blosc2_context *cctx = blosc2_create_cctx(cp);
    int cs = blosc2_compress_ctx(cctx, expected, c->nbytes, tmp, c->nbytes + BLOSC2_MAX_OVERHEAD);
    blosc2_free_ctx(cctx);
    blosc2_context *d0 = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
    CHECK_EQ(blosc2_decompress_ctx(d0, tmp, cs, expected, c->nbytes), c->nbytes);
    blosc2_free_ctx(d0);
    free(tmp);
  }
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)c->nthreads;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int n = blosc2_decompress_ctx(dctx, chunk, (int32_t)len, out, c->nbytes);
  CHECK_EQ(n, c->nbytes);
  /* trunc_prec leaves the bytes after the last whole item undefined in c-blosc2. */
  size_t cmp = c->pipeline == 4 ? (size_t)(c->nbytes / c->typesize * c->typesize) : (size_t)c->nbytes;
  int ok = n == c->nbytes && memcmp(out, expected, cmp) == 0;
  CHECK(ok);
  if (!ok) fprintf(stderr, "  case %s decodes wrong\n", name);
  /* getitem on three ranges (not with delta: c-blosc2 3.3.5 returns delta-encoded items there). */
  int32_t nitems = c->nbytes / c->typesize;
  if (c->pipeline != 3 && nitems > 0) {
    for (int r = 0; r < 3; r++) {
      int32_t start = (int32_t)(((int64_t)nitems * (r + 1) * 2654435761u) % nitems);
      int32_t count = (nitems - start) < 1000 ? (nitems - start) : 1000;
      int got = blosc2_getitem_ctx(dctx, chunk, (int32_t)len, start, count, out, c->nbytes);
      CHECK_EQ(got, count * c->typesize);
      int same = memcmp(out, expected + (size_t)start * c->typesize, (size_t)count * c->typesize) == 0;
      CHECK(same);
      if (!same) fprintf(stderr, "  case %s getitem(%d, %d) differs\n", name, start, count);
    }
  }
  int32_t nb, cb, bs;
  CHECK_EQ(blosc2_cbuffer_sizes(chunk, &nb, &cb, &bs), 0);
  CHECK_EQ(cb, len);
  blosc2_free_ctx(dctx);
  free(chunk);
  free(expected);
  free(out);
}

static int same_bytes = 0, different_bytes = 0;
static const char *other_dir = NULL;

static void compare_case(const case_t *c, const char *dir) {
  char name[256], p1[1024], p2[1024];
  case_name(c, name, sizeof(name));
  snprintf(p1, sizeof(p1), "%s/%s.chunk", dir, name);
  snprintf(p2, sizeof(p2), "%s/%s.chunk", other_dir, name);
  long l1 = 0, l2 = 0;
  uint8_t *a = read_file(p1, &l1), *b = read_file(p2, &l2);
  if (a && b && l1 == l2 && memcmp(a, b, (size_t)l1) == 0) same_bytes++;
  else {
    different_bytes++;
    if (getenv("XCOMPAT_VERBOSE")) fprintf(stderr, "differs: %s (%ld vs %ld bytes)\n", name, l1, l2);
  }
  free(a);
  free(b);
}

/* Special-value chunks: written by `write`, checked by `check`. */
static void special_path(const char *dir, const char *kind, int typesize, char *out, size_t n) {
  snprintf(out, n, "%s/special-%s-t%d.chunk", dir, kind, typesize);
}

static void write_specials(const char *dir) {
  const int tss[] = {1, 4, 8, 12};
  for (int i = 0; i < 4; i++) {
    int ts = tss[i];
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = ts;
    uint8_t chunk[BLOSC_EXTENDED_HEADER_LENGTH + 16];
    uint8_t value[16];
    for (int k = 0; k < 16; k++) value[k] = (uint8_t)(k * 29 + 3);
    const char *kinds[] = {"zeros", "nans", "repeat", "uninit"};
    for (int k = 0; k < 4; k++) {
      int32_t nbytes = ts * 100003;
      int cs;
      switch (k) {
        case 0: cs = blosc2_chunk_zeros(cp, nbytes, chunk, sizeof(chunk)); break;
        case 1: cs = (ts == 4 || ts == 8) ? blosc2_chunk_nans(cp, nbytes, chunk, sizeof(chunk)) : -1; break;
        case 2: cs = blosc2_chunk_repeatval(cp, nbytes, chunk, sizeof(chunk), value); break;
        default: cs = blosc2_chunk_uninit(cp, nbytes, chunk, sizeof(chunk));
      }
      if (k == 1 && ts != 4 && ts != 8) continue;
      CHECK(cs > 0);
      char path[1024];
      special_path(dir, kinds[k], ts, path, sizeof(path));
      FILE *f = fopen(path, "wb");
      if (f && cs > 0) fwrite(chunk, 1, (size_t)cs, f);
      if (f) fclose(f);
    }
  }
}

static void check_specials(const char *dir) {
  const int tss[] = {1, 4, 8, 12};
  const char *kinds[] = {"zeros", "nans", "repeat", "uninit"};
  for (int i = 0; i < 4; i++) {
    int ts = tss[i];
    for (int k = 0; k < 4; k++) {
      if (k == 1 && ts != 4 && ts != 8) continue;
      char path[1024];
      special_path(dir, kinds[k], ts, path, sizeof(path));
      long len = 0;
      uint8_t *chunk = read_file(path, &len);
      CHECK(chunk != NULL);
      if (!chunk) continue;
      int32_t nbytes = ts * 100003;
      uint8_t *out = malloc((size_t)nbytes);
      int n = blosc2_decompress(chunk, (int32_t)len, out, nbytes);
      CHECK_EQ(n, nbytes);
      int ok = 1;
      for (int32_t j = 0; j < nbytes && ok && k != 3; j += ts) {
        if (k == 0) ok = out[j] == 0 && out[j + ts - 1] == 0;
        if (k == 1) ok = ts == 4 ? ((float *)out)[j / 4] != ((float *)out)[j / 4] : ((double *)out)[j / 8] != ((double *)out)[j / 8];
        if (k == 2) ok = out[j] == 3 && out[j + ts - 1] == (uint8_t)((ts - 1) * 29 + 3);
      }
      CHECK(ok);
      if (!ok) fprintf(stderr, "  special %s typesize %d decodes wrong\n", kinds[k], ts);
      uint8_t items[5 * 16];
      CHECK_EQ(blosc2_getitem(chunk, (int32_t)len, 777, 5, items, sizeof(items)), 5 * ts);
      if (k == 2) CHECK(items[ts] == 3);
      free(out);
      free(chunk);
    }
  }
}

/* Print the chunk header fields blosc1_compress produces for a fixed buffer, under
   whatever BLOSC_* environment variables are set: run for both libraries, the outputs
   must match. */
static int env_report(void) {
  int32_t n = 1 << 20;
  int32_t *src = malloc((size_t)n * 4);
  uint8_t *dst = malloc((size_t)n * 4 + 64);
  for (int32_t i = 0; i < n; i++) src[i] = i / 3;
  int cs = blosc1_compress(5, BLOSC_SHUFFLE, 4, (size_t)n * 4, src, dst, (size_t)n * 4 + 64);
  if (cs <= 0) {
    printf("compress: %d\n", cs);
    return 0;
  }
  int32_t nb, cb, bs;
  blosc2_cbuffer_sizes(dst, &nb, &cb, &bs);
  printf("version %d flags 0x%02x typesize %d nbytes %d blocksize %d", dst[0], dst[2], dst[3], nb, bs);
  if ((dst[2] & 0x5) == 0x5) {
    printf(" filters %d %d %d %d %d %d", dst[16], dst[17], dst[18], dst[19], dst[20], dst[21]);
  }
  printf(" nthreads %d compressor %s\n", blosc2_get_nthreads(), blosc1_get_compressor());
  int32_t *back = malloc((size_t)n * 4);
  printf("roundtrip %d\n", blosc1_decompress(dst, back, (size_t)n * 4) == n * 4 && memcmp(src, back, (size_t)n * 4) == 0);
  free(src);
  free(dst);
  free(back);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "env") == 0) {
    blosc2_init();
    env_report();
    blosc2_destroy();
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s write|check DIR | compare DIR1 DIR2\n", argv[0]);
    return 2;
  }
  blosc2_init();
  int ncases;
  if (strcmp(argv[1], "write") == 0) {
    ncases = for_each_case(write_case, argv[2]);
    write_specials(argv[2]);
  } else if (strcmp(argv[1], "check") == 0) {
    ncases = for_each_case(check_case, argv[2]);
    check_specials(argv[2]);
  } else {
    other_dir = argv[3];
    ncases = for_each_case(compare_case, argv[2]);
    printf("byte-identical chunks: %d of %d (%d differ)\n", same_bytes, ncases, different_bytes);
    blosc2_destroy();
    return 0;
  }
  blosc2_destroy();
  printf("%s %s: %d cases\n", argv[1], argv[2], ncases);
  return report(argv[0]);
}
