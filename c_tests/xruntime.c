/* Run-time plugins: codecs c-blosc2 registers by name and loads from their
   library at first use (here openzl, from the PyPI package blosc2-openzl,
   found through `python -c "import blosc2_openzl; ..."`), and plugins that are
   not installed. Built twice, against libb2nd and against c-blosc2 3.3.5:
     write DIR   compress buffers with openzl into DIR/<case>.chunk
     check DIR   decompress what DIR holds and check the values and getitem
     missing     print what a plugin that is not installed gives (the two
                 libraries must print the same lines)
   (Tuner 32, btune, is libb2nd's own tuner: xtuner.c.) */
#include <stdint.h>
#include "blosc2.h"
#include "blosc2/codecs-registry.h"
#include "test_common.h"

static const int metas[] = {0, 1, 2, 6, 7}; /* openzl profiles */
static const int typesizes[] = {1, 4, 8};
/* (the openzl plugin cannot decode a last block that is not a whole number of
   items, with either library: sizes are multiples of 8) */
static const int32_t sizes[] = {1000, 65536, 400008};

static void data(int typesize, int32_t nbytes, uint8_t *buf) {
  if (typesize == 4) {
    for (int32_t i = 0; i + 4 <= nbytes; i += 4) { float v = (float)(i % 9000) * 0.25f; memcpy(buf + i, &v, 4); }
  } else if (typesize == 8) {
    for (int32_t i = 0; i + 8 <= nbytes; i += 8) { double v = 1e3 - (double)(i % 7000) * 0.125; memcpy(buf + i, &v, 8); }
  } else {
    fill_data(1, typesize, nbytes, buf);
    return;
  }
  for (int32_t i = nbytes / typesize * typesize; i < nbytes; i++) buf[i] = (uint8_t)i;
}

static void path_of(const char *dir, int meta, int ts, int32_t n, int nthreads, char *out, size_t len) {
  snprintf(out, len, "%s/openzl-m%d-t%d-n%d-th%d.chunk", dir, meta, ts, (int)n, nthreads);
}

static int run(const char *dir, int write) {
  int ncases = 0;
  for (size_t m = 0; m < sizeof(metas) / sizeof(int); m++)
    for (size_t t = 0; t < sizeof(typesizes) / sizeof(int); t++)
      for (size_t s = 0; s < sizeof(sizes) / sizeof(int32_t); s++) {
        int ts = typesizes[t], nthreads = 1 + (int)((m + s) % 2);
        int32_t n = sizes[s];
        char path[1024];
        path_of(dir, metas[m], ts, n, nthreads, path, sizeof(path));
        uint8_t *src = malloc((size_t)n), *buf = malloc((size_t)n + BLOSC2_MAX_OVERHEAD);
        data(ts, n, src);
        if (write) {
          blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
          cp.compcode = BLOSC_CODEC_OPENZL;
          cp.compcode_meta = (uint8_t)metas[m];
          cp.typesize = ts;
          cp.nthreads = (int16_t)nthreads;
          blosc2_context *c = blosc2_create_cctx(cp);
          int cs = blosc2_compress_ctx(c, src, n, buf, n + BLOSC2_MAX_OVERHEAD);
          blosc2_free_ctx(c);
          CHECK(cs > 0);
          if (cs <= 0) fprintf(stderr, "  %s: compress gives %d\n", path, cs);
          if (cs > 0) CHECK(save_file(path, buf, (size_t)cs) == 0);
        } else {
          long len = 0;
          uint8_t *chunk = read_file(path, &len);
          CHECK(chunk != NULL && len > 0);
          if (chunk && len > 0) {
            blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
            dp.nthreads = (int16_t)nthreads;
            blosc2_context *d = blosc2_create_dctx(dp);
            int got = blosc2_decompress_ctx(d, chunk, (int32_t)len, buf, n);
            CHECK_EQ(got, n);
            int same = got == n && memcmp(buf, src, (size_t)n) == 0;
            CHECK(same);
            if (!same) fprintf(stderr, "  %s decodes wrong\n", path);
            int32_t start = n / ts / 3, count = n / ts / 4;
            CHECK_EQ(blosc2_getitem_ctx(d, chunk, (int32_t)len, start, count, buf, n), count * ts);
            CHECK(memcmp(buf, src + (size_t)start * ts, (size_t)count * ts) == 0);
            blosc2_free_ctx(d);
          }
          free(chunk);
        }
        free(src);
        free(buf);
        ncases++;
      }
  return ncases;
}

/* A codec and a filter registered by name, whose libraries are nowhere. */
static void missing(void) {
  blosc2_codec codec = {0};
  codec.compcode = 200;
  codec.compname = (char *)"b2nd_absent_codec";
  printf("register codec: %d\n", blosc2_register_codec(&codec));
  blosc2_filter filter = {0};
  filter.id = 201;
  filter.name = (char *)"b2nd_absent_filter";
  printf("register filter: %d\n", blosc2_register_filter(&filter));
  uint8_t src[20000], dst[20000 + BLOSC2_MAX_OVERHEAD];
  fill_data(0, 4, sizeof(src), src);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = 200;
  blosc2_context *c = blosc2_create_cctx(cp);
  printf("compress with the absent codec: %d\n", blosc2_compress_ctx(c, src, sizeof(src), dst, sizeof(dst)));
  blosc2_free_ctx(c);
  cp.compcode = BLOSC_LZ4;
  cp.filters[5] = 201;
  c = blosc2_create_cctx(cp);
  printf("compress with the absent filter: %d\n", blosc2_compress_ctx(c, src, sizeof(src), dst, sizeof(dst)));
  blosc2_free_ctx(c);
  /* a chunk that names the absent codec: an LZ4 chunk with its codec byte changed */
  cp.filters[5] = BLOSC_SHUFFLE;
  c = blosc2_create_cctx(cp);
  int cs = blosc2_compress_ctx(c, src, sizeof(src), dst, sizeof(dst));
  blosc2_free_ctx(c);
  printf("lz4 chunk: %s\n", cs > 0 ? "made" : "failed");
  dst[2] = (uint8_t)((dst[2] & 0x1f) | (6 << 5)); /* user-defined codec format */
  dst[22] = 200;                                  /* which one */
  uint8_t out[20000];
  printf("decompress a chunk of the absent codec: %d\n", blosc2_decompress(dst, cs, out, sizeof(out)));
  /* a name that cannot be a plugin's is taken, and fails when used */
  codec.compcode = 202;
  codec.compname = (char *)"bad name;";
  printf("register a codec with a bad name: %d\n", blosc2_register_codec(&codec));
  cp.compcode = 202;
  c = blosc2_create_cctx(cp);
  printf("compress with it: %d\n", blosc2_compress_ctx(c, src, sizeof(src), dst, sizeof(dst)));
  blosc2_free_ctx(c);
}

int main(int argc, char **argv) {
  blosc2_init();
  if (argc >= 2 && strcmp(argv[1], "missing") == 0) {
    missing();
    blosc2_destroy();
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s write|check DIR | missing\n", argv[0]);
    return 2;
  }
  int n = run(argv[2], strcmp(argv[1], "write") == 0);
  blosc2_destroy();
  printf("%s %s: %d cases\n", argv[1], argv[2], n);
  return report(argv[0]);
}
