/* libFuzzer target: a chunk (the input after its first byte) decompressed, read with
   getitem and queried, with 1 or 2 threads (bit 0 of the first byte), and as a chunk of
   one of two b2nd arrays' super-chunks (bits 1 and 2: the plugins that take their
   geometry from the b2nd metalayer see it). Nothing may crash, hang, read out of bounds
   or allocate beyond what the chunk's sizes justify. */
#include <b2nd.h>
#include <blosc2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static b2nd_array_t *arrays[2];

static b2nd_array_t *make_array(int8_t ndim, const int64_t *shape, const int32_t *chunk, const int32_t *block,
                                int32_t typesize) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  blosc2_storage st = {.cparams = &cp, .contiguous = true};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, ndim, shape, chunk, block, NULL, 0, NULL, 0);
  b2nd_array_t *a = NULL;
  if (ctx) b2nd_zeros(ctx, &a);
  b2nd_free_ctx(ctx);
  return a;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  blosc2_init();
  int64_t s2[2] = {64, 64}, s3[3] = {10, 20, 30};
  int32_t c2[2] = {32, 32}, b2[2] = {16, 16}, c3[3] = {5, 10, 15}, b3[3] = {4, 4, 8};
  arrays[0] = make_array(2, s2, c2, b2, 4);
  arrays[1] = make_array(3, s3, c3, b3, 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  const uint8_t *chunk = data + 1;
  int32_t len = (int32_t)(size - 1);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (flags & 1) ? 2 : 1;
  b2nd_array_t *within = (flags & 2) ? arrays[(flags >> 2) & 1] : NULL;
  if (within != NULL) dp.schunk = within->sc;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize) >= 0 && nbytes >= 0 && nbytes <= (64 << 20)) {
    uint8_t *out = malloc((size_t)nbytes + 1);
    blosc2_decompress_ctx(dctx, chunk, len, out, nbytes);
    /* a destination that is too small */
    if (nbytes > 1) blosc2_decompress_ctx(dctx, chunk, len, out, nbytes / 2);
    int32_t start = (int32_t)(flags >> 1), n = 16;
    blosc2_getitem_ctx(dctx, chunk, len, start, n, out, nbytes);
    free(out);
  }
  blosc2_cbuffer_complib(chunk);
  blosc2_free_ctx(dctx);
  return 0;
}
