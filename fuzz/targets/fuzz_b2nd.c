/* libFuzzer target: a b2nd array in a contiguous frame (the input), opened with
   b2nd_from_cframe, sliced, copied whole when small, squeezed; and the input also read
   as a bare b2nd metalayer. */
#include <b2nd.h>
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
  int8_t ndim = 0;
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunkshape[B2ND_MAX_DIM], blockshape[B2ND_MAX_DIM];
  char *dtype = NULL;
  int8_t dtype_format = 0;
  if (size < (1 << 16) &&
      b2nd_deserialize_meta(data, (int32_t)size, &ndim, shape, chunkshape, blockshape, &dtype, &dtype_format) >= 0) {
    free(dtype);
  }
  uint8_t *copy = malloc(size + 1);
  memcpy(copy, data, size);
  b2nd_array_t *a = NULL;
  if (b2nd_from_cframe(copy, (int64_t)size, true, &a) == 0 && a != NULL) {
    int64_t start[B2ND_MAX_DIM] = {0}, stop[B2ND_MAX_DIM], bshape[B2ND_MAX_DIM];
    int64_t items = 1;
    for (int i = 0; i < a->ndim; i++) {
      stop[i] = a->shape[i] < 3 ? a->shape[i] : 3;
      bshape[i] = stop[i];
      if (__builtin_mul_overflow(items, stop[i], &items)) items = -1;
    }
    int32_t ts = a->sc->typesize > 0 ? a->sc->typesize : 1;
    int64_t sb = 0;
    if (items >= 0 && !__builtin_mul_overflow(items, (int64_t)ts, &sb) && sb <= (1 << 20)) {
      int64_t nb = sb;
      uint8_t *buf = malloc((size_t)nb + 1);
      b2nd_get_slice_cbuffer(a, start, stop, buf, bshape, nb);
      free(buf);
    }
    int64_t nb = 0;
    if (a->nitems >= 0 && !__builtin_mul_overflow(a->nitems, (int64_t)ts, &nb) && nb <= (4 << 20)) {
      uint8_t *buf = malloc((size_t)nb + 1);
      b2nd_to_cbuffer(a, buf, nb);
      free(buf);
    }
    b2nd_array_t *v = NULL;
    if (b2nd_squeeze(a, &v) == 0 && v) b2nd_free(v);
    b2nd_free(a);
  }
  free(copy);
  return 0;
}
