/* libFuzzer target: a chunk (the input after its first byte) decompressed, read with
   getitem and queried, with 1 or 2 threads (bit 0 of the first byte). Nothing may crash,
   hang, read out of bounds or allocate beyond what the chunk's sizes justify. */
#include <blosc2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  blosc2_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  const uint8_t *chunk = data + 1;
  int32_t len = (int32_t)(size - 1);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (flags & 1) ? 2 : 1;
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
