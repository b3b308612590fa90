/* User-registered codecs and filters (blosc2_register_codec / blosc2_register_filter). */
#include <stdint.h>
#include "blosc2.h"
#include "test_common.h"

/* A toy codec: the length of the run that ends the block (2 bytes), then the bytes
   before that run XORed with the meta byte. It gives up (returns 0) on blocks whose
   first byte is 0xff, and checks the cparams it is handed. */
static int toy_encode(const uint8_t *in, int32_t len, uint8_t *out, int32_t outlen, uint8_t meta,
                      blosc2_cparams *cparams, const void *chunk) {
  (void)chunk;
  if (cparams == NULL || cparams->compcode != 200) return BLOSC2_ERROR_CODEC_PARAM;
  if (len < 2 || in[0] == 0xff) return 0;
  int32_t k = 1;
  while (k < len && k < 65535 && in[len - 1 - k] == in[len - 1]) k++;
  int32_t keep = len - k + 1; /* the run's first byte is kept */
  if (2 + keep > outlen || 2 + keep >= len) return 0;
  out[0] = (uint8_t)(k - 1);
  out[1] = (uint8_t)((k - 1) >> 8);
  for (int32_t i = 0; i < keep; i++) out[2 + i] = in[i] ^ meta;
  return 2 + keep;
}

static int toy_decode(const uint8_t *in, int32_t len, uint8_t *out, int32_t outlen, uint8_t meta,
                      blosc2_dparams *dparams, const void *chunk) {
  (void)dparams;
  (void)chunk;
  if (len < 3) return BLOSC2_ERROR_DATA;
  int32_t extra = in[0] | (in[1] << 8), keep = len - 2;
  if (keep + extra != outlen) return BLOSC2_ERROR_DATA;
  for (int32_t i = 0; i < keep; i++) out[i] = in[2 + i] ^ meta;
  for (int32_t i = keep; i < outlen; i++) out[i] = out[keep - 1];
  return outlen;
}

static int plus_forward(const uint8_t *src, uint8_t *dst, int32_t size, uint8_t meta, blosc2_cparams *cparams,
                        uint8_t id) {
  (void)cparams;
  if (id != 201) return BLOSC2_ERROR_FAILURE;
  for (int32_t i = 0; i < size; i++) dst[i] = (uint8_t)(src[i] + meta);
  return 0;
}

static int plus_backward(const uint8_t *src, uint8_t *dst, int32_t size, uint8_t meta, blosc2_dparams *dparams,
                         uint8_t id) {
  (void)dparams;
  (void)id;
  for (int32_t i = 0; i < size; i++) dst[i] = (uint8_t)(src[i] - meta);
  return 0;
}

int main(void) {
  blosc2_codec codec = {200, "toy", 0, 1, toy_encode, toy_decode};
  CHECK_EQ(blosc2_register_codec(&codec), 0);
  CHECK_EQ(blosc2_register_codec(&codec), 0); /* same name again: fine */
  blosc2_codec clash = {200, "other", 0, 1, toy_encode, toy_decode};
  CHECK(blosc2_register_codec(&clash) < 0);
  blosc2_codec low = {100, "low", 0, 1, toy_encode, toy_decode};
  CHECK_EQ(blosc2_register_codec(&low), BLOSC2_ERROR_CODEC_PARAM);
  blosc2_filter filter = {201, "plus", 1, plus_forward, plus_backward};
  CHECK_EQ(blosc2_register_filter(&filter), 0);
  blosc2_filter lowf = {40, "lowf", 1, plus_forward, plus_backward};
  CHECK(blosc2_register_filter(&lowf) < 0);
  CHECK(blosc2_register_codec(NULL) < 0);
  CHECK(blosc2_register_filter(NULL) < 0);

  int32_t n = 100000;
  uint8_t *src = malloc((size_t)n), *dst = malloc((size_t)n + 64), *back = malloc((size_t)n);
  for (int32_t i = 0; i < n; i++) src[i] = (uint8_t)(i / 100);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = 200;
  cp.compcode_meta = 0x5a;
  cp.typesize = 1;
  cp.blocksize = 1000;
  cp.filters[0] = 201;
  cp.filters_meta[0] = 3;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int cs = blosc2_compress_ctx(cctx, src, n, dst, n + 64);
  CHECK(cs > 0 && cs < n + 32);
  CHECK_EQ(dst[2] >> 5, BLOSC_UDCODEC_FORMAT);
  CHECK_EQ(dst[BLOSC2_CHUNK_FILTER_CODES], 201);
  CHECK_EQ(dst[22], 200); /* user codec id */
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_EQ(blosc2_decompress_ctx(dctx, dst, cs, back, n), n);
  CHECK(memcmp(src, back, (size_t)n) == 0);
  uint8_t items[10];
  CHECK_EQ(blosc2_getitem_ctx(dctx, dst, cs, 55555, 10, items, sizeof(items)), 10);
  CHECK(memcmp(items, src + 55555, 10) == 0);
  /* An unregistered codec or filter id is refused. */
  cp.compcode = 222;
  blosc2_context *bad = blosc2_create_cctx(cp);
  CHECK(bad == NULL || blosc2_compress_ctx(bad, src, n, dst, n + 64) < 0);
  blosc2_free_ctx(bad);
  dst[22] = 223;
  CHECK(blosc2_decompress_ctx(dctx, dst, cs, back, n) < 0);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  free(src);
  free(dst);
  free(back);
  return report("test_plugins");
}
