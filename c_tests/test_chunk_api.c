/* The chunk-level API of blosc2.h: compress, decompress, getitem, contexts,
   special chunks, header queries, VL blocks and the Blosc1 API. */
#include <stdint.h>
#include "blosc2.h"
#include "test_common.h"

static const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};

static void test_roundtrip_matrix(void) {
  const int32_t sizes[] = {0, 1, 31, 32, 1000, 100003, 1 << 20};
  const int typesizes[] = {1, 2, 4, 8, 12, 16};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    int32_t n = sizes[s];
    uint8_t *src = malloc((size_t)n + 1), *dst = malloc((size_t)n + BLOSC2_MAX_OVERHEAD);
    uint8_t *back = malloc((size_t)n + 1);
    for (size_t t = 0; t < sizeof(typesizes) / sizeof(typesizes[0]); t++) {
      for (size_t c = 0; c < 5; c++) {
        for (int filter = 0; filter <= 2; filter++) {
          fill_data((int)(c + s) % 4, typesizes[t], n, src);
          blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
          cp.compcode = (uint8_t)codecs[c];
          cp.clevel = (uint8_t)((c + t + s) % 10);
          cp.typesize = typesizes[t];
          cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)filter;
          cp.nthreads = (int16_t)(1 + (s % 2));
          blosc2_context *cctx = blosc2_create_cctx(cp);
          CHECK(cctx != NULL);
          int csize = blosc2_compress_ctx(cctx, src, n, dst, n + BLOSC2_MAX_OVERHEAD);
          CHECK(csize > 0);
          blosc2_free_ctx(cctx);
          blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
          dp.nthreads = cp.nthreads;
          blosc2_context *dctx = blosc2_create_dctx(dp);
          int dsize = blosc2_decompress_ctx(dctx, dst, csize, back, n);
          CHECK_EQ(dsize, n);
          CHECK(n == 0 || memcmp(src, back, (size_t)n) == 0);
          if (n >= 100) {
            int ts = typesizes[t], start = (n / ts) / 3, nitems = (n / ts) / 4;
            int got = blosc2_getitem_ctx(dctx, dst, csize, start, nitems, back, n);
            CHECK_EQ(got, nitems * ts);
            CHECK(memcmp(back, src + (size_t)start * ts, (size_t)nitems * ts) == 0);
          }
          blosc2_free_ctx(dctx);
        }
      }
    }
    free(src);
    free(dst);
    free(back);
  }
}

static void test_global_api(void) {
  blosc2_init();
  int32_t n = 400000;
  int32_t *src = malloc(n * sizeof(int32_t)), *back = malloc(n * sizeof(int32_t));
  uint8_t *dst = malloc(n * sizeof(int32_t) + BLOSC2_MAX_OVERHEAD);
  for (int32_t i = 0; i < n; i++) src[i] = i;
  for (size_t c = 0; c < 5; c++) {
    const char *name = NULL;
    CHECK_EQ(blosc2_compcode_to_compname(codecs[c], &name), codecs[c]);
    CHECK(name != NULL && blosc1_set_compressor(name) == codecs[c]);
    CHECK(strcmp(blosc1_get_compressor(), name) == 0);
    int csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, n * 4, dst, n * 4 + BLOSC2_MAX_OVERHEAD);
    CHECK(csize > 0 && csize < n);
    CHECK_EQ(blosc2_decompress(dst, csize, back, n * 4), n * 4);
    CHECK(memcmp(src, back, (size_t)n * 4) == 0);
    int32_t nbytes, cbytes, blocksize;
    CHECK_EQ(blosc2_cbuffer_sizes(dst, &nbytes, &cbytes, &blocksize), 0);
    CHECK_EQ(nbytes, n * 4);
    CHECK_EQ(cbytes, csize);
    CHECK(blocksize > 0 && blocksize <= nbytes);
    size_t vn = 0;
    CHECK_EQ(blosc1_cbuffer_validate(dst, (size_t)csize, &vn), 0);
    CHECK_EQ(vn, (size_t)n * 4);
    CHECK(blosc1_cbuffer_validate(dst, (size_t)csize + 1, &vn) < 0);
    size_t ts;
    int flags;
    blosc1_cbuffer_metainfo(dst, &ts, &flags);
    CHECK_EQ(ts, 4);
    int version, versionlz;
    blosc2_cbuffer_versions(dst, &version, &versionlz);
    CHECK_EQ(version, BLOSC2_VERSION_FORMAT_STABLE);
    CHECK_EQ(versionlz, 1);
    CHECK(blosc2_cbuffer_complib(dst) != NULL);
    int32_t item[10];
    CHECK_EQ(blosc2_getitem(dst, csize, 1234, 10, item, sizeof(item)), 40);
    CHECK_EQ(item[0], 1234);
    CHECK_EQ(item[9], 1243);
    CHECK_EQ(blosc1_getitem(dst, 5000, 10, item), 40);
    CHECK_EQ(item[3], 5003);
    CHECK_EQ(blosc1_decompress(dst, back, (size_t)n * 4), n * 4);
  }
  /* Delta through the global API, with a size that is not a multiple of the typesize. */
  blosc2_set_delta(1);
  int csize = blosc1_compress(5, BLOSC_SHUFFLE, 4, (size_t)n * 4 - 3, src, dst, (size_t)n * 4 + 32);
  CHECK(csize > 0);
  memset(back, 0, (size_t)n * 4);
  CHECK_EQ(blosc1_decompress(dst, back, (size_t)n * 4), n * 4 - 3);
  CHECK(memcmp(src, back, (size_t)n * 4 - 3) == 0);
  int32_t item[4];
  CHECK_EQ(blosc1_getitem(dst, 300000, 4, item), 16);
  CHECK_EQ(item[0], 300000);
  CHECK_EQ(item[3], 300003);
  blosc2_set_delta(0);
  CHECK_EQ(blosc2_set_nthreads(2), 1);
  CHECK_EQ(blosc2_get_nthreads(), 2);
  csize = blosc1_compress(9, BLOSC_BITSHUFFLE, 4, (size_t)n * 4, src, dst, (size_t)n * 4 + 32);
  CHECK(csize > 0);
  CHECK_EQ(blosc1_decompress(dst, back, (size_t)n * 4), n * 4);
  CHECK(memcmp(src, back, (size_t)n * 4) == 0);
  CHECK_EQ(blosc2_set_nthreads(1), 2);
  /* Incompressible data in a tight buffer: 0, not an error. */
  fill_data(2, 1, 10000, (uint8_t *)src);
  CHECK_EQ(blosc1_compress(5, BLOSC_NOSHUFFLE, 1, 10000, src, dst, 10000), 0);
  CHECK(blosc1_compress(5, BLOSC_NOSHUFFLE, 1, 10000, src, dst, 10032) == 10032);
  CHECK(blosc2_compress(10, BLOSC_SHUFFLE, 4, src, 1000, dst, 2000) < 0);
  free(src);
  free(back);
  free(dst);
  blosc2_destroy();
}

static void test_special_chunks(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  uint8_t chunk[BLOSC_EXTENDED_HEADER_LENGTH + 8];
  double out[1000];
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_EQ(blosc2_chunk_zeros(cp, sizeof(out), chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, sizeof(chunk), out, sizeof(out)), (int)sizeof(out));
  CHECK(out[0] == 0.0 && out[999] == 0.0);
  CHECK_EQ(blosc2_chunk_nans(cp, sizeof(out), chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, sizeof(chunk), out, sizeof(out)), (int)sizeof(out));
  CHECK(out[0] != out[0] && out[999] != out[999]);
  double v = 3.25;
  CHECK_EQ(blosc2_chunk_repeatval(cp, sizeof(out), chunk, sizeof(chunk), &v), BLOSC_EXTENDED_HEADER_LENGTH + 8);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, sizeof(chunk), out, sizeof(out)), (int)sizeof(out));
  CHECK(out[0] == 3.25 && out[999] == 3.25);
  double items[3];
  CHECK_EQ(blosc2_getitem_ctx(dctx, chunk, sizeof(chunk), 500, 3, items, sizeof(items)), 24);
  CHECK(items[2] == 3.25);
  CHECK_EQ(blosc2_chunk_uninit(cp, sizeof(out), chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, sizeof(chunk), out, sizeof(out)), (int)sizeof(out));
  CHECK(blosc2_chunk_zeros(cp, 12, chunk, sizeof(chunk)) < 0);
  CHECK(blosc2_chunk_zeros(cp, 80, chunk, 10) < 0);
  blosc2_free_ctx(dctx);
}

static void test_vlblocks(void) {
  const char *parts[] = {"alpha alpha alpha alpha", "be", "gamma gamma gamma gamma gamma gamma gamma"};
  const void *srcs[3];
  int32_t sizes[3];
  for (int i = 0; i < 3; i++) {
    srcs[i] = parts[i];
    sizes[i] = (int32_t)strlen(parts[i]);
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.compcode = BLOSC_LZ4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  uint8_t chunk[512];
  int csize = blosc2_vlcompress_ctx(cctx, srcs, sizes, 3, chunk, sizeof(chunk));
  CHECK(csize > 0);
  int32_t nblocks = 0;
  CHECK_EQ(blosc2_vlchunk_get_nblocks(chunk, csize, &nblocks), 0);
  CHECK_EQ(nblocks, 3);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  void *dests[3];
  int32_t dsizes[3];
  CHECK_EQ(blosc2_vldecompress_ctx(dctx, chunk, csize, dests, dsizes, 3), 3);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(dsizes[i], sizes[i]);
    CHECK(memcmp(dests[i], parts[i], (size_t)sizes[i]) == 0);
    free(dests[i]);
  }
  uint8_t *one = NULL;
  int32_t one_size = 0;
  CHECK_EQ(blosc2_vldecompress_block_ctx(dctx, chunk, csize, 2, &one, &one_size), sizes[2]);
  CHECK(one != NULL && memcmp(one, parts[2], (size_t)sizes[2]) == 0);
  free(one);
  char whole[128];
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, csize, whole, sizeof(whole)), sizes[0] + sizes[1] + sizes[2]);
  CHECK(memcmp(whole + sizes[0], "be", 2) == 0);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
}

static void test_info(void) {
  CHECK(strcmp(blosc2_get_version_string(), BLOSC2_VERSION_STRING) == 0);
  CHECK(strcmp(blosc2_list_compressors(), "blosclz,lz4,lz4hc,zlib,zstd") == 0);
  CHECK_EQ(blosc2_compname_to_compcode("zstd"), BLOSC_ZSTD);
  CHECK_EQ(blosc2_compname_to_compcode("nope"), -1);
  char *lib = NULL, *ver = NULL;
  CHECK_EQ(blosc2_get_complib_info("lz4hc", &lib, &ver), BLOSC_LZ4_LIB);
  CHECK(lib != NULL && strcmp(lib, "LZ4") == 0 && ver != NULL);
  free(lib);
  free(ver);
  CHECK(strcmp(blosc2_error_string(BLOSC2_ERROR_DATA), "Invalid data") == 0);
  CHECK(strcmp(print_error(-9999), "Unknown error") == 0);
  blosc2_cparams cp = blosc2_get_blosc2_cparams_defaults();
  CHECK(cp.compcode == BLOSC2_CPARAMS_DEFAULTS.compcode && cp.clevel == BLOSC2_CPARAMS_DEFAULTS.clevel &&
        cp.typesize == BLOSC2_CPARAMS_DEFAULTS.typesize && cp.nthreads == BLOSC2_CPARAMS_DEFAULTS.nthreads &&
        cp.splitmode == BLOSC2_CPARAMS_DEFAULTS.splitmode && cp.blocksize == BLOSC2_CPARAMS_DEFAULTS.blocksize &&
        memcmp(cp.filters, BLOSC2_CPARAMS_DEFAULTS.filters, BLOSC2_MAX_FILTERS) == 0);
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_cparams back;
  CHECK_EQ(blosc2_ctx_get_cparams(cctx, &back), 0);
  CHECK_EQ(back.clevel, 5);
  CHECK_EQ(back.typesize, 8);
  blosc2_dparams dp;
  CHECK(blosc2_ctx_get_dparams(cctx, &dp) < 0);
  blosc2_free_ctx(cctx);
  int64_t shape[3] = {4, 5, 6}, index[3], strides[3] = {30, 6, 1}, lin = 0;
  blosc2_unidim_to_multidim(3, shape, 67, index);
  CHECK(index[0] == 2 && index[1] == 1 && index[2] == 1);
  blosc2_multidim_to_unidim(index, 3, strides, &lin);
  CHECK_EQ(lin, 67);
  uint8_t a[1003], b[1003], c[1003];
  fill_data(2, 4, sizeof(a), a);
  CHECK_EQ(blosc2_shuffle(4, sizeof(a), a, b), (int)sizeof(a));
  CHECK_EQ(blosc2_unshuffle(4, sizeof(a), b, c), (int)sizeof(a));
  CHECK(memcmp(a, c, sizeof(a)) == 0);
  CHECK_EQ(blosc2_bitshuffle(8, sizeof(a), a, b), (int)sizeof(a));
  CHECK_EQ(blosc2_bitunshuffle(8, sizeof(a), b, c), (int)sizeof(a));
  CHECK(memcmp(a, c, sizeof(a)) == 0);
  CHECK(blosc2_shuffle(0, sizeof(a), a, b) < 0);
  blosc_timestamp_t t0, t1;
  blosc_set_timestamp(&t0);
  blosc_set_timestamp(&t1);
  CHECK(blosc_elapsed_nsecs(t0, t1) >= 0.0);
  CHECK(blosc_elapsed_secs(t0, t1) < 1.0);
}

int main(void) {
  test_roundtrip_matrix();
  test_global_api();
  test_special_chunks();
  test_vlblocks();
  test_info();
  return report("test_chunk_api");
}
