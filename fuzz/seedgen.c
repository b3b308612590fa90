/* Writes the seed inputs of the fuzz targets into DIR/chunk, DIR/frame and DIR/b2nd:
   small chunks of every codec and filter and of special values, small frames (in memory
   and sparse-less files, with metalayers, vlmetalayers, special and variable-size chunks)
   and small b2nd arrays of 1 to 3 dimensions. Each chunk and frame seed starts with the
   flags byte its target reads. */
#include <b2nd.h>
#include <blosc2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[1024];
static int nseed = 0;

static void put(const char *target, uint8_t flags, const void *bytes, size_t len, int with_flags) {
  char p[2048];
  snprintf(p, sizeof p, "%s/%s/seed-%04d", dir, target, nseed++);
  FILE *f = fopen(p, "wb");
  if (!f) return;
  if (with_flags) fwrite(&flags, 1, 1, f);
  fwrite(bytes, 1, len, f);
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  snprintf(dir, sizeof dir, "%s", argv[1]);
  blosc2_init();
  int32_t data[500];
  for (int i = 0; i < 500; i++) data[i] = i * 3 + (i % 7);
  const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  const int filters[] = {BLOSC_NOFILTER, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE, BLOSC_DELTA};
  uint8_t chunk[sizeof data + BLOSC2_MAX_OVERHEAD];
  for (int c = 0; c < 5; c++) {
    for (int f = 0; f < 4; f++) {
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.compcode = (uint8_t)codecs[c];
      cp.typesize = 4;
      cp.blocksize = 512;
      cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)filters[f];
      blosc2_context *cctx = blosc2_create_cctx(cp);
      int n = blosc2_compress_ctx(cctx, data, sizeof data, chunk, sizeof chunk);
      if (n > 0) put("chunk", (uint8_t)(f & 1), chunk, (size_t)n, 1);
      blosc2_free_ctx(cctx);
    }
  }
  /* the plugin filters c-blosc2 registers at start: bytedelta (35, and the old 34)
     after shuffle, int_trunc (36) */
  const uint8_t plugin_pipes[][4] = {{BLOSC_SHUFFLE, 35, 0, 4}, {BLOSC_SHUFFLE, 34, 0, 4}, {36, BLOSC_SHUFFLE, 0xfb, 0}};
  for (int k = 0; k < 3; k++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = (uint8_t)codecs[k + 1];
    cp.typesize = 4;
    cp.blocksize = 512;
    cp.filters[4] = plugin_pipes[k][0];
    cp.filters[5] = plugin_pipes[k][1];
    cp.filters_meta[4] = plugin_pipes[k][2];
    cp.filters_meta[5] = plugin_pipes[k][3];
    blosc2_context *cctx = blosc2_create_cctx(cp);
    int n = blosc2_compress_ctx(cctx, data, sizeof data, chunk, sizeof chunk);
    if (n > 0) put("chunk", (uint8_t)k, chunk, (size_t)n, 1);
    blosc2_free_ctx(cctx);
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  int n = blosc2_chunk_zeros(cp, 2000, chunk, sizeof chunk);
  if (n > 0) put("chunk", 0, chunk, (size_t)n, 1);
  n = blosc2_chunk_nans(cp, 2000, chunk, sizeof chunk);
  if (n > 0) put("chunk", 1, chunk, (size_t)n, 1);
  int32_t v = 7;
  n = blosc2_chunk_repeatval(cp, 2000, chunk, sizeof chunk, &v);
  if (n > 0) put("chunk", 0, chunk, (size_t)n, 1);

  /* frames */
  for (int variant = 0; variant < 3; variant++) {
    blosc2_cparams fcp = BLOSC2_CPARAMS_DEFAULTS;
    fcp.typesize = 4;
    fcp.compcode = (uint8_t)(variant == 1 ? BLOSC_ZSTD : BLOSC_LZ4);
    blosc2_storage st = {.cparams = &fcp, .contiguous = true};
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    uint8_t meta[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (variant == 2) blosc2_meta_add(sc, "m", meta, sizeof meta);
    blosc2_schunk_append_buffer(sc, data, sizeof data);
    if (variant >= 1) {
      int zn = blosc2_chunk_zeros(fcp, sizeof data, chunk, sizeof chunk);
      if (zn > 0) blosc2_schunk_append_chunk(sc, chunk, true);
    }
    blosc2_schunk_append_buffer(sc, data, variant == 1 ? 600 : sizeof data);
    if (variant == 2) blosc2_vlmeta_add(sc, "info", meta, sizeof meta, NULL);
    uint8_t *cframe = NULL;
    bool needs_free = false;
    int64_t len = blosc2_schunk_to_buffer(sc, &cframe, &needs_free);
    if (len > 0) {
      put("frame", 0, cframe, (size_t)len, 1);
      put("frame", 3, cframe, (size_t)len, 1);
      if (needs_free) free(cframe);
    }
    blosc2_schunk_free(sc);
  }

  /* b2nd arrays */
  for (int nd = 1; nd <= 3; nd++) {
    int64_t shape[3] = {10, 7, 5};
    int32_t chunkshape[3] = {4, 3, 5}, blockshape[3] = {2, 3, 2};
    blosc2_cparams acp = BLOSC2_CPARAMS_DEFAULTS;
    acp.typesize = 8;
    blosc2_storage st = {.cparams = &acp, .contiguous = true};
    b2nd_context_t *ctx = b2nd_create_ctx(&st, (int8_t)nd, shape, chunkshape, blockshape, "<f8", 0, NULL, 0);
    b2nd_array_t *a = NULL;
    if (ctx && b2nd_zeros(ctx, &a) == 0) {
      double one = 1.5;
      int64_t start[3] = {1, 1, 1}, stop[3] = {2, 2, 2}, bshape[3] = {1, 1, 1};
      b2nd_set_slice_cbuffer(&one, bshape, sizeof one, start, stop, a);
      uint8_t *cframe = NULL;
      int64_t len = 0;
      bool needs_free = false;
      if (b2nd_to_cframe(a, &cframe, &len, &needs_free) == 0) {
        put("b2nd", 0, cframe, (size_t)len, 0);
        put("frame", 0, cframe, (size_t)len, 1);
        if (needs_free) free(cframe);
      }
      b2nd_free(a);
    }
    if (ctx) b2nd_free_ctx(ctx);
  }
  blosc2_destroy();
  printf("%d seeds\n", nseed);
  return 0;
}
