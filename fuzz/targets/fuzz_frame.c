/* libFuzzer target: a contiguous frame (the input after its first byte), opened from
   memory (bit 0 of the first byte: copied or not) or from a file (bit 1), then read:
   every chunk (stored, lazy, decompressed), a slice, metalayers, vlmetalayers, and the
   frame written back out. */
#include <blosc2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  blosc2_init();
  snprintf(path, sizeof path, "/tmp/b2nd-fuzz-frame-%d.b2frame", (int)getpid());
  return 0;
}

static void read_all(blosc2_schunk *sc) {
  int64_t n = sc->nchunks < 64 ? sc->nchunks : 64;
  for (int64_t i = 0; i < n; i++) {
    uint8_t *chunk = NULL;
    bool needs_free = false;
    int cb = blosc2_schunk_get_chunk(sc, i, &chunk, &needs_free);
    if (cb > 0 && needs_free) free(chunk);
    chunk = NULL;
    cb = blosc2_schunk_get_lazychunk(sc, i, &chunk, &needs_free);
    int32_t nbytes = 0;
    if (cb > 0) {
      blosc2_cbuffer_sizes(chunk, &nbytes, NULL, NULL);
      if (needs_free) free(chunk);
    }
    if (nbytes > 0 && nbytes <= (16 << 20)) {
      uint8_t *out = malloc((size_t)nbytes);
      blosc2_schunk_decompress_chunk(sc, i, out, nbytes);
      free(out);
    }
  }
  /* (the target's own buffer: a crafted header can give any typesize) */
  if (sc->typesize > 0 && sc->typesize <= (1 << 16) && sc->nbytes > 0) {
    int64_t nitems = sc->nbytes / sc->typesize;
    int64_t stop = nitems < 100 ? nitems : 100;
    uint8_t *out = malloc((size_t)(stop * sc->typesize) + 1);
    blosc2_schunk_get_slice_buffer(sc, 0, stop, out);
    free(out);
  }
  for (int i = 0; i < sc->nmetalayers; i++) {
    uint8_t *content = NULL;
    int32_t len = 0;
    if (blosc2_meta_get(sc, sc->metalayers[i]->name, &content, &len) >= 0) free(content);
  }
  char **names = NULL;
  int nv = blosc2_vlmeta_get_names(sc, NULL);
  if (nv > 0 && nv < 1000) {
    names = malloc(sizeof(char *) * (size_t)nv);
    if (blosc2_vlmeta_get_names(sc, names) == nv) {
      for (int i = 0; i < nv; i++) {
        uint8_t *content = NULL;
        int32_t len = 0;
        if (blosc2_vlmeta_get(sc, names[i], &content, &len) >= 0) free(content);
      }
    }
    free(names);
  }
  uint8_t *cframe = NULL;
  bool needs_free = false;
  if (blosc2_schunk_to_buffer(sc, &cframe, &needs_free) > 0 && needs_free) free(cframe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  const uint8_t *frame = data + 1;
  size_t len = size - 1;
  blosc2_schunk *sc = NULL;
  uint8_t *copy = NULL;
  if (flags & 2) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(frame, 1, len, f);
    fclose(f);
    sc = blosc2_schunk_open(path);
  } else {
    copy = malloc(len + 1);
    memcpy(copy, frame, len);
    sc = blosc2_schunk_from_buffer(copy, (int64_t)len, (flags & 1) != 0);
  }
  if (sc) {
    read_all(sc);
    blosc2_schunk_free(sc);
  }
  free(copy);
  if (flags & 2) unlink(path);
  return 0;
}
