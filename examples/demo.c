/* libb2nd demo: compress a buffer with the c-blosc2 API, write the chunk to a file,
   read it back, decompress it and print sizes, ratio and speed; then store the same
   data as a super-chunk in a contiguous frame file (with a metalayer and a
   variable-length metalayer), reopen it and read a slice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define NITEMS (10 * 1000 * 1000)

int main(void) {
  blosc2_init();
  size_t nbytes = NITEMS * sizeof(double);
  double *data = malloc(nbytes), *back = malloc(nbytes);
  uint8_t *chunk = malloc(nbytes + BLOSC2_MAX_OVERHEAD);
  for (int i = 0; i < NITEMS; i++) data[i] = (double)i * 0.001 + (double)(i % 17) * 1e-6;

  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = BLOSC_ZSTD;
  cparams.clevel = 5;
  cparams.typesize = sizeof(double);
  cparams.nthreads = 2;
  blosc2_context *cctx = blosc2_create_cctx(cparams);
  blosc_timestamp_t t0, t1;
  blosc_set_timestamp(&t0);
  int csize = blosc2_compress_ctx(cctx, data, (int32_t)nbytes, chunk, (int32_t)(nbytes + BLOSC2_MAX_OVERHEAD));
  blosc_set_timestamp(&t1);
  double ctime = blosc_elapsed_secs(t0, t1);
  blosc2_free_ctx(cctx);
  if (csize <= 0) {
    fprintf(stderr, "compression failed: %d (%s)\n", csize, blosc2_error_string(csize));
    return 1;
  }

  const char *path = "demo.b2chunk";
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(chunk, 1, (size_t)csize, f) != (size_t)csize) return 1;
  fclose(f);
  memset(chunk, 0, (size_t)csize);
  f = fopen(path, "rb");
  if (!f || fread(chunk, 1, (size_t)csize, f) != (size_t)csize) return 1;
  fclose(f);

  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  dparams.nthreads = 2;
  blosc2_context *dctx = blosc2_create_dctx(dparams);
  blosc_set_timestamp(&t0);
  int dsize = blosc2_decompress_ctx(dctx, chunk, csize, back, (int32_t)nbytes);
  blosc_set_timestamp(&t1);
  double dtime = blosc_elapsed_secs(t0, t1);
  blosc2_free_ctx(dctx);
  int ok = dsize == (int)nbytes && memcmp(data, back, nbytes) == 0;

  printf("libb2nd %s (c-blosc2 API), codec zstd level 5, shuffle, 2 threads\n", blosc2_get_version_string());
  printf("original:   %zu bytes\n", nbytes);
  printf("compressed: %d bytes (written to and read back from %s)\n", csize, path);
  printf("ratio:      %.1fx\n", (double)nbytes / csize);
  printf("compress:   %.0f MB/s\n", nbytes / ctime / 1e6);
  printf("decompress: %.0f MB/s\n", nbytes / dtime / 1e6);
  printf("round trip: %s\n", ok ? "identical" : "MISMATCH");

  /* The same data as a super-chunk of 1 MB chunks in a frame file. */
  const char *frame_path = "demo.b2frame";
  blosc2_cparams fparams = BLOSC2_CPARAMS_DEFAULTS;
  fparams.compcode = BLOSC_LZ4;
  fparams.typesize = sizeof(double);
  fparams.nthreads = 2;
  blosc2_storage storage = {.contiguous = true, .urlpath = (char *)frame_path, .cparams = &fparams};
  /* A new frame is never written over an old one (c-blosc2's rule too): remove what an
     earlier run left. */
  blosc2_remove_urlpath(frame_path);
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  uint8_t unit[] = {'s'};
  if (sc == NULL) {
    fprintf(stderr, "cannot create the frame %s\n", frame_path);
    return 1;
  }
  if (blosc2_meta_add(sc, "units", unit, 1) < 0) return 1;
  const int32_t chunk_items = 128 * 1024;
  blosc_set_timestamp(&t0);
  for (int64_t i = 0; i < NITEMS; i += chunk_items) {
    int32_t n = (int32_t)(NITEMS - i < chunk_items ? NITEMS - i : chunk_items);
    if (blosc2_schunk_append_buffer(sc, data + i, n * (int32_t)sizeof(double)) < 0) return 1;
  }
  blosc_set_timestamp(&t1);
  double stime = blosc_elapsed_secs(t0, t1);
  char note[] = "a demo series";
  if (blosc2_vlmeta_add(sc, "note", (uint8_t *)note, (int32_t)sizeof(note), NULL) < 0) return 1;
  blosc2_schunk_free(sc);

  sc = blosc2_schunk_open(frame_path);
  if (sc == NULL) return 1;
  double slice[1000];
  int sok = blosc2_schunk_get_slice_buffer(sc, 5000000, 5001000, slice) == 0 &&
            memcmp(slice, data + 5000000, sizeof(slice)) == 0;
  uint8_t *content;
  int32_t content_len;
  sok = sok && blosc2_vlmeta_get(sc, "note", &content, &content_len) >= 0 && strcmp((char *)content, note) == 0;
  if (sok) free(content);
  printf("frame:      %s, %lld chunks, %lld -> %lld bytes, written at %.0f MB/s\n", frame_path,
         (long long)sc->nchunks, (long long)sc->nbytes, (long long)sc->cbytes, nbytes / stime / 1e6);
  printf("reopened:   metalayer \"%s\", vlmetalayer \"note\", slice [5000000, 5001000) %s\n",
         sc->metalayers[0]->name, sok ? "identical" : "MISMATCH");
  blosc2_schunk_free(sc);
  ok = ok && sok;
  free(data);
  free(back);
  free(chunk);
  blosc2_destroy();
  return ok ? 0 : 1;
}
