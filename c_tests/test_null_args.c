/* Every exported function, called with NULL pointers and nonsense arguments,
   must return an error (or do nothing) and never crash. */
#include <stdint.h>
#include "blosc2.h"
#include "test_common.h"

int main(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  uint8_t buf[64] = {0};
  uint8_t garbage[64];
  for (int i = 0; i < 64; i++) garbage[i] = (uint8_t)(i * 37 + 11);

  CHECK(blosc2_compress(5, 1, 4, NULL, 100, buf, 64) < 0);
  CHECK(blosc2_compress(5, 1, 4, buf, 64, NULL, 100) < 0);
  CHECK(blosc2_compress(5, 1, 4, buf, -1, buf, 64) < 0);
  CHECK(blosc1_compress(5, 1, 4, 100, NULL, NULL, 100) < 0);
  CHECK(blosc2_decompress(NULL, 100, buf, 64) < 0);
  CHECK(blosc2_decompress(garbage, 64, buf, 64) < 0);
  CHECK(blosc2_decompress(buf, 64, NULL, 64) < 0);
  CHECK(blosc1_decompress(NULL, buf, 64) < 0);
  CHECK(blosc1_decompress(garbage, buf, 64) < 0);
  CHECK(blosc2_compress_ctx(NULL, buf, 64, buf, 64) < 0);
  CHECK(blosc2_decompress_ctx(NULL, buf, 64, buf, 64) < 0);
  CHECK(blosc2_getitem(NULL, 10, 0, 1, buf, 64) < 0);
  CHECK(blosc2_getitem(garbage, 64, 0, 1, buf, 64) < 0);
  CHECK(blosc1_getitem(NULL, 0, 1, buf) < 0);
  CHECK(blosc2_getitem_ctx(NULL, buf, 64, 0, 1, buf, 64) < 0);
  CHECK(blosc2_getitem_bytes_ctx(NULL, buf, 64, 0, 1, buf, 64) < 0);
  int32_t n32;
  CHECK(blosc2_cbuffer_sizes(NULL, &n32, NULL, NULL) < 0);
  CHECK(blosc2_cbuffer_sizes(garbage, NULL, NULL, NULL) < 0);
  size_t nsz = 7;
  blosc1_cbuffer_sizes(NULL, &nsz, NULL, NULL);
  CHECK_EQ(nsz, 0);
  CHECK(blosc1_cbuffer_validate(NULL, 64, &nsz) < 0);
  CHECK(blosc1_cbuffer_validate(garbage, 64, NULL) < 0);
  blosc1_cbuffer_metainfo(NULL, NULL, NULL);
  blosc2_cbuffer_versions(NULL, NULL, NULL);
  CHECK(blosc2_cbuffer_complib(NULL) == NULL);
  CHECK(blosc2_chunk_zeros(cp, 100, NULL, 64) < 0);
  CHECK(blosc2_chunk_nans(cp, 100, NULL, 64) < 0);
  CHECK(blosc2_chunk_uninit(cp, -5, buf, 64) < 0);
  CHECK(blosc2_chunk_repeatval(cp, 80, buf, 64, NULL) < 0);
  CHECK(blosc2_create_cctx((blosc2_cparams){.clevel = 12, .typesize = 4}) == NULL);
  blosc2_free_ctx(NULL);
  CHECK(blosc2_ctx_get_cparams(NULL, &cp) < 0);
  CHECK(blosc2_ctx_get_dparams(NULL, &dp) < 0);
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK(blosc2_ctx_get_dparams(dctx, NULL) < 0);
  CHECK(blosc2_set_maskout(NULL, NULL, 3) < 0);
  CHECK(blosc2_set_maskout(dctx, NULL, 3) < 0);
  CHECK(blosc2_decompress_ctx(dctx, garbage, 64, buf, 64) < 0);
  CHECK(blosc2_vldecompress_ctx(dctx, garbage, 64, NULL, NULL, 1) < 0);
  CHECK(blosc2_vldecompress_block_ctx(dctx, garbage, 64, 0, NULL, NULL) < 0);
  CHECK(blosc2_vlcompress_ctx(dctx, NULL, NULL, 1, buf, 64) < 0);
  CHECK(blosc2_vlchunk_get_nblocks(NULL, 64, NULL) < 0);
  CHECK(blosc2_vlchunk_get_nblocks(garbage, 64, &n32) < 0);
  blosc2_free_ctx(dctx);
  CHECK(blosc1_set_compressor(NULL) < 0);
  CHECK(blosc1_set_compressor("snappy") < 0);
  CHECK(blosc2_compname_to_compcode(NULL) < 0);
  const char *name = (const char *)buf;
  CHECK(blosc2_compcode_to_compname(3, &name) < 0);
  CHECK(name == NULL);
  CHECK(blosc2_compcode_to_compname(1, NULL) == 1);
  CHECK(blosc2_get_complib_info(NULL, NULL, NULL) < 0);
  CHECK(blosc2_get_complib_info("lz4", NULL, NULL) >= 0);
  CHECK(blosc2_set_nthreads(0) < 0);
  CHECK(blosc2_set_nthreads(-3) < 0);
  CHECK(blosc2_error_string(12345) != NULL);
  CHECK(blosc2_shuffle(4, 64, NULL, buf) < 0);
  CHECK(blosc2_unshuffle(300, 64, buf, garbage) < 0);
  CHECK(blosc2_bitshuffle(4, -1, buf, garbage) < 0);
  CHECK(blosc2_bitunshuffle(4, 64, buf, NULL) < 0);
  blosc_set_timestamp(NULL);
  blosc2_unidim_to_multidim(3, NULL, 5, NULL);
  blosc2_multidim_to_unidim(NULL, 3, NULL, NULL);
  blosc1_set_blocksize(0);
  blosc1_set_splitmode(99);
  blosc2_set_delta(0);
  CHECK(blosc2_free_resources() == 0);
  blosc2_destroy();
  return report("test_null_args");
}
