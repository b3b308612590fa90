/* Side-by-side benchmark of super-chunk operations, libb2nd against the reference
   c-blosc2, both dlopen'ed (RTLD_LOCAL) into this process. Every repetition runs ours
   then theirs, on the same data and in fresh files, and the report gives the medians and
   the median of the per-repetition speed ratios (ours/ref: above 1 means libb2nd is faster).

   usage: bench_schunk OURS.so REF.so SCRATCH_DIR [REPS] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
#include "bench_common.h"

#define NCHUNKS 64
#define CHUNK_ITEMS (256 * 1024) /* int32: 1 MiB chunks */
#define NSLICES 2000
#define SLICE_ITEMS 100

typedef struct {
  const char *name;
  void (*init)(void);
  blosc2_schunk *(*schunk_new)(blosc2_storage *);
  blosc2_schunk *(*schunk_open)(const char *);
  int (*schunk_free)(blosc2_schunk *);
  int64_t (*append_buffer)(blosc2_schunk *, const void *, int32_t);
  int (*decompress_chunk)(blosc2_schunk *, int64_t, void *, int32_t);
  int (*get_slice_buffer)(blosc2_schunk *, int64_t, int64_t, void *);
  int64_t (*to_buffer)(blosc2_schunk *, uint8_t **, bool *);
  int (*remove_urlpath)(const char *);
} lib_t;

static int load(lib_t *l, const char *path, const char *name) {
  l->name = name;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s) *(void **)(&l->f) = dlsym(h, s); if (!l->f) { fprintf(stderr, "missing %s\n", s); return -1; }
  SYM(init, "blosc2_init");
  SYM(schunk_new, "blosc2_schunk_new");
  SYM(schunk_open, "blosc2_schunk_open");
  SYM(schunk_free, "blosc2_schunk_free");
  SYM(append_buffer, "blosc2_schunk_append_buffer");
  SYM(decompress_chunk, "blosc2_schunk_decompress_chunk");
  SYM(get_slice_buffer, "blosc2_schunk_get_slice_buffer");
  SYM(to_buffer, "blosc2_schunk_to_buffer");
  SYM(remove_urlpath, "blosc2_remove_urlpath");
  l->init();
  return 0;
}

enum { MEM_SPARSE, MEM_FRAME, FILE_FRAME, DIR_FRAME, NKINDS };
static const char *kind_names[] = {"memory", "memory frame", "frame file", "sparse dir"};

static int32_t *g_data;
static int64_t g_starts[NSLICES];
static char g_dir[1024];

/* One repetition of one operation; returns seconds (negative on failure). */
static double run(lib_t *l, int kind, int op, int rep) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s-%d-%d.b2%s", g_dir, l->name, kind, rep, kind == DIR_FRAME ? "dir" : "frame");
  l->remove_urlpath(path);
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = BLOSC_LZ4;
  cparams.typesize = 4;
  cparams.nthreads = 1;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = kind != MEM_SPARSE && kind != DIR_FRAME,
                       .urlpath = kind >= FILE_FRAME ? path : NULL, .cparams = &cparams, .dparams = &dparams};
  double t0 = now();
  blosc2_schunk *sc = l->schunk_new(&st);
  if (sc == NULL) return -1;
  for (int i = 0; i < NCHUNKS; i++) {
    if (l->append_buffer(sc, g_data + (size_t)i * CHUNK_ITEMS, CHUNK_ITEMS * 4) != i + 1) return -1;
  }
  double t = now() - t0;
  if (op > 0 && kind >= FILE_FRAME) {
    /* reads go through a freshly opened handle */
    l->schunk_free(sc);
    sc = l->schunk_open(path);
    if (sc == NULL) return -1;
  }
  int32_t *out = malloc(CHUNK_ITEMS * 4);
  if (op == 1) {
    t0 = now();
    for (int i = 0; i < NCHUNKS; i++) {
      if (l->decompress_chunk(sc, i, out, CHUNK_ITEMS * 4) != CHUNK_ITEMS * 4) return -1;
    }
    t = now() - t0;
    if (memcmp(out, g_data + (size_t)(NCHUNKS - 1) * CHUNK_ITEMS, CHUNK_ITEMS * 4) != 0) return -1;
  } else if (op == 2) {
    t0 = now();
    for (int i = 0; i < NSLICES; i++) {
      if (l->get_slice_buffer(sc, g_starts[i], g_starts[i] + SLICE_ITEMS, out) != 0) return -1;
    }
    t = now() - t0;
    if (memcmp(out, g_data + g_starts[NSLICES - 1], SLICE_ITEMS * 4) != 0) return -1;
  } else if (op == 3) {
    uint8_t *frame;
    bool nf;
    t0 = now();
    if (l->to_buffer(sc, &frame, &nf) <= 0) return -1;
    t = now() - t0;
    if (nf) free(frame);
  }
  free(out);
  l->schunk_free(sc);
  l->remove_urlpath(path);
  return t;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s OURS.so REF.so SCRATCH_DIR [REPS]\n", argv[0]);
    return 2;
  }
  lib_t libs[2];
  if (load(&libs[0], argv[1], "ours") || load(&libs[1], argv[2], "ref")) return 1;
  snprintf(g_dir, sizeof(g_dir), "%s", argv[3]);
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  if (reps < 1 || reps > 100) reps = 5;
  g_data = malloc((size_t)NCHUNKS * CHUNK_ITEMS * 4);
  uint32_t s = 12345;
  for (size_t i = 0; i < (size_t)NCHUNKS * CHUNK_ITEMS; i++) {
    s = s * 1664525u + 1013904223u;
    g_data[i] = (int32_t)(i / 3) + (int32_t)((s >> 28) & 3);
  }
  for (int i = 0; i < NSLICES; i++) {
    s = s * 1664525u + 1013904223u;
    g_starts[i] = (int64_t)(s % (uint32_t)(NCHUNKS * CHUNK_ITEMS - SLICE_ITEMS));
  }
  const char *ops[] = {"append_buffer", "decompress_chunk", "get_slice_buffer (100 items)", "to_buffer"};
  double mb = (double)NCHUNKS * CHUNK_ITEMS * 4 / 1e6;
  printf("| operation | storage | ours | c-blosc2 | ours/c-blosc2 |\n|---|---|---|---|---|\n");
  for (int op = 0; op < 4; op++) {
    for (int kind = 0; kind < NKINDS; kind++) {
      double t[2][100], ratio[100];
      for (int r = 0; r < reps; r++) {
        for (int k = 0; k < 2; k++) {
          t[k][r] = run(&libs[k], kind, op, r);
          if (t[k][r] < 0) {
            fprintf(stderr, "%s failed: %s %s\n", libs[k].name, ops[op], kind_names[kind]);
            return 1;
          }
        }
        ratio[r] = t[1][r] / t[0][r];
      }
      double a = median(t[0], reps), b = median(t[1], reps), q = median(ratio, reps);
      if (op == 2) {
        printf("| %s | %s | %.1f us/slice | %.1f us/slice | %.2f |\n", ops[op], kind_names[kind], a / NSLICES * 1e6,
               b / NSLICES * 1e6, q);
      } else if (op == 3) {
        printf("| %s | %s | %.2f ms | %.2f ms | %.2f |\n", ops[op], kind_names[kind], a * 1e3, b * 1e3, q);
      } else {
        printf("| %s | %s | %.0f MB/s | %.0f MB/s | %.2f |\n", ops[op], kind_names[kind], mb / a, mb / b, q);
      }
      fflush(stdout);
    }
  }
  return 0;
}
