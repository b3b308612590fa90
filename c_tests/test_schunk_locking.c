/* Several processes append to one on-disk frame at once, with c-blosc2 3.3's
   opt-in locking (blosc2_stdio_params.locking), while another process reads
   it: no append is lost, every chunk reads back intact, and readers see the
   counters grow through blosc2_schunk_refresh. Contiguous and sparse frames.
   Usage: test_schunk_locking [SCRATCH_DIR [OTHER]]
   The processes are the program run again (`--writer PATH N`, `--reader PATH`).
   With OTHER (this program built against the other library), every second
   writer is OTHER: c-blosc2 and libb2nd processes share the frame. */
#include "blosc2.h"
#include "test_common.h"
#include "test_portable.h"

#define NPROC 4
#define NAPPEND 25
#define CHUNK_ITEMS 2000

static void chunk_data(int proc, int k, int32_t *buf) {
  for (int i = 0; i < CHUNK_ITEMS; i++) buf[i] = proc * 1000000 + k * 1000 + i % 97;
}

static blosc2_schunk *open_locked(const char *path) {
  blosc2_stdio_params params = {.locking = true};
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &params};
  return blosc2_schunk_open_udio(path, &io);
}

static int writer(const char *path, int proc) {
  blosc2_schunk *sc = open_locked(path);
  if (sc == NULL) return 2;
  int32_t buf[CHUNK_ITEMS];
  for (int k = 0; k < NAPPEND; k++) {
    chunk_data(proc, k, buf);
    if (k % 5 == 4) {
      /* A bracket of two appends that must stay adjacent. */
      if (blosc2_schunk_lock(sc) < 0) return 3;
      if (blosc2_schunk_append_buffer(sc, buf, sizeof(buf)) < 0) return 4;
      buf[0] = -1 - proc;
      if (blosc2_schunk_append_buffer(sc, buf, sizeof(buf)) < 0) return 4;
      if (blosc2_schunk_unlock(sc) < 0) return 5;
    } else if (blosc2_schunk_append_buffer(sc, buf, sizeof(buf)) < 0) {
      return 4;
    }
  }
  blosc2_schunk_free(sc);
  return 0;
}

static int reader(const char *path) {
  blosc2_schunk *sc = open_locked(path);
  if (sc == NULL) return 2;
  int64_t last = sc->nchunks;
  int32_t buf[CHUNK_ITEMS];
  for (int round = 0; round < 200; round++) {
    if (blosc2_schunk_refresh(sc) < 0) return 6;
    if (sc->nchunks < last) return 7;
    last = sc->nchunks;
    for (int64_t i = 0; i < last; i += 7) {
      if (blosc2_schunk_decompress_chunk(sc, i, buf, sizeof(buf)) != (int)sizeof(buf)) return 8;
    }
#ifdef _WIN32
    Sleep(1);
#else
    usleep(1000);
#endif
  }
  blosc2_schunk_free(sc);
  return 0;
}

static void run(const char *self, const char *other, const char *dir, int contiguous) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/locking%s", dir, contiguous ? ".b2frame" : ".b2sframe");
  blosc2_remove_urlpath(path);
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.compcode = BLOSC_LZ4;
  blosc2_storage storage = {.contiguous = contiguous, .urlpath = path, .cparams = &cparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  blosc2_schunk_free(sc);

  child_t children[NPROC + 1];
  for (int p = 0; p <= NPROC; p++) {
    char n[16];
    snprintf(n, sizeof n, "%d", p);
    char *writer_args[] = {(char *)self, "--writer", path, n, NULL};
    char *reader_args[] = {(char *)self, "--reader", path, NULL};
    const char *program = other != NULL && p % 2 == 1 ? other : self;
    writer_args[0] = reader_args[0] = (char *)program;
    children[p] = spawn_self(program, p < NPROC ? writer_args : reader_args);
    CHECK(children[p] != -1);
  }
  for (int p = 0; p <= NPROC; p++) {
    int code = -1;
    if (children[p] != -1) CHECK_EQ(child_ended(children[p], false, &code), 1);
    CHECK_EQ(code, 0);
  }

  sc = blosc2_schunk_open(path);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  int per_proc = NAPPEND + NAPPEND / 5;
  CHECK_EQ(sc->nchunks, NPROC * per_proc);
  int seen[NPROC] = {0};
  int32_t buf[CHUNK_ITEMS], want[CHUNK_ITEMS];
  for (int64_t i = 0; i < sc->nchunks; i++) {
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i, buf, sizeof(buf)), (int)sizeof(buf));
    if (buf[0] < 0) {
      CHECK(i > 0);  /* the second half of a bracket follows its first half */
      continue;
    }
    int proc = buf[0] / 1000000, k = (buf[0] / 1000) % 1000;
    CHECK(proc >= 0 && proc < NPROC);
    if (proc < 0 || proc >= NPROC) continue;
    chunk_data(proc, k, want);
    CHECK(memcmp(buf, want, sizeof(buf)) == 0);
    CHECK_EQ(k, seen[proc]); /* one writer's chunks keep their order */
    seen[proc]++;
    if (k % 5 == 4) {
      CHECK_EQ(blosc2_schunk_decompress_chunk(sc, i + 1, buf, sizeof(buf)), (int)sizeof(buf));
      CHECK_EQ(buf[0], -1 - proc);
    }
  }
  for (int p = 0; p < NPROC; p++) CHECK_EQ(seen[p], NAPPEND);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(path);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--writer") == 0) {
    blosc2_init();
    return writer(argv[2], atoi(argv[3]));
  }
  if (argc == 3 && strcmp(argv[1], "--reader") == 0) {
    blosc2_init();
    return reader(argv[2]);
  }
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *other = argc > 2 ? argv[2] : NULL;
  blosc2_init();
  run(argv[0], other, dir, 1);
  run(argv[0], other, dir, 0);
  blosc2_destroy();
  return report("test_schunk_locking");
}
