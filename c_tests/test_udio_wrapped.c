/* Frames through user I/O callbacks that wrap blosc2_stdio_* and, as C programs
 * commonly write them, return a stream even when the file could not be opened
 * (a wrapper around a NULL blosc2_stdio_file). The frame's journal goes through
 * the same callbacks and must cope: its first open finds no file.
 *
 *   test_udio_wrapped CASE DIR     CASE: cframe | sframe
 */
#include <blosc2.h>
#include "test_common.h"

typedef struct {
  int opens;
  int null_files; /* opens that found no file and still returned a stream */
} wrap_counters;

typedef struct {
  void *bfile; /* NULL when the open found nothing */
  wrap_counters *cnt;
} wrap_file;

static void *w_open(const char *urlpath, const char *mode, void *params) {
  wrap_file *w = malloc(sizeof(wrap_file));
  w->cnt = params;
  w->cnt->opens++;
  w->bfile = blosc2_stdio_open(urlpath, mode, NULL);
  if (w->bfile == NULL) w->cnt->null_files++;
  return w;
}

static int w_close(void *stream) {
  wrap_file *w = stream;
  int rc = w->bfile != NULL ? blosc2_stdio_close(w->bfile) : 0;
  free(w);
  return rc;
}

static int64_t w_size(void *stream) { return blosc2_stdio_size(((wrap_file *)stream)->bfile); }

static int64_t w_write(const void *ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  return blosc2_stdio_write(ptr, size, nitems, position, ((wrap_file *)stream)->bfile);
}

static int64_t w_read(void **ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  return blosc2_stdio_read(ptr, size, nitems, position, ((wrap_file *)stream)->bfile);
}

static int w_truncate(void *stream, int64_t size) { return blosc2_stdio_truncate(((wrap_file *)stream)->bfile, size); }

static int w_destroy(void *params) {
  (void)params;
  return 0;
}

#define WRAP_ID 201
#define NCHUNKS 10
#define NITEMS 5000

static void run(int contiguous, const char *path) {
  blosc2_io_cb cb = {0};
  cb.id = WRAP_ID;
  cb.name = "wrapped-stdio";
  cb.is_allocation_necessary = true;
  cb.open = w_open;
  cb.close = w_close;
  cb.size = w_size;
  cb.write = w_write;
  cb.read = w_read;
  cb.truncate = w_truncate;
  cb.destroy = w_destroy;
  CHECK_EQ(blosc2_register_io_cb(&cb), 0);

  wrap_counters cnt = {0};
  blosc2_io io = {.id = WRAP_ID, .name = "wrapped-stdio", .params = &cnt};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(int32_t);
  cp.compcode = BLOSC_BLOSCLZ;
  cp.clevel = 9;
  cp.nthreads = 2;
  blosc2_storage st = {.cparams = &cp, .contiguous = contiguous, .urlpath = (char *)path, .io = &io};

  blosc2_remove_urlpath(path);
  int32_t data[NITEMS], back[NITEMS];
  for (int i = 0; i < NITEMS; i++) data[i] = i;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  for (int i = 0; i < NCHUNKS; i++) {
    data[0] = i;
    CHECK(blosc2_schunk_append_buffer(sc, data, sizeof(data)) >= 0);
  }
  /* an update and a delete through the same callbacks */
  data[0] = 100;
  int32_t csize = NITEMS * (int32_t)sizeof(int32_t) + BLOSC2_MAX_OVERHEAD;
  uint8_t *chunk = malloc((size_t)csize);
  csize = blosc2_compress_ctx(sc->cctx, data, sizeof(data), chunk, csize);
  CHECK(csize > 0);
  CHECK_EQ(blosc2_schunk_update_chunk(sc, 3, chunk, true), NCHUNKS);
  free(chunk);
  CHECK_EQ(blosc2_schunk_delete_chunk(sc, NCHUNKS - 1), NCHUNKS - 1);
  CHECK(cnt.null_files > 0); /* the journal's first open found nothing */

  blosc2_schunk *again = blosc2_schunk_open_udio(path, &io);
  CHECK(again != NULL);
  if (again != NULL) {
    CHECK_EQ(again->nchunks, NCHUNKS - 1);
    for (int i = 0; i < NCHUNKS - 1; i++) {
      CHECK_EQ(blosc2_schunk_decompress_chunk(again, i, back, sizeof(back)), (int)sizeof(back));
      CHECK_EQ(back[0], i == 3 ? 100 : i);
      CHECK_EQ(back[NITEMS - 1], NITEMS - 1);
    }
    /* the reopened frame takes changes too */
    data[0] = 7;
    CHECK(blosc2_schunk_append_buffer(again, data, sizeof(data)) >= 0);
    blosc2_schunk_free(again);
  }
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(path);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s cframe|sframe DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  int contiguous = strcmp(argv[1], "cframe") == 0;
  snprintf(path, sizeof(path), "%s/wrapped.%s", argv[2], contiguous ? "b2frame" : "b2dir");
  blosc2_init();
  run(contiguous, path);
  blosc2_destroy();
  return report(argv[1]);
}
