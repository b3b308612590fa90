/* Side-by-side benchmark of libb2nd and the reference c-blosc2 through the public C API.
   Both libraries are dlopen'ed (RTLD_LOCAL) into this one process, and every repetition
   runs ours then theirs on the same buffers, so both see the same machine state.
   Reports median compress/decompress MB/s and ratio per case, and the geometric means
   of our/their throughput.

   usage: bench OURS.so REF.so [REPS] [DATAFILE] */
#include <dlfcn.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
#include "bench_common.h"

typedef struct {
  const char *name;
  void *h;
  void (*init)(void);
  blosc2_context *(*create_cctx)(blosc2_cparams);
  blosc2_context *(*create_dctx)(blosc2_dparams);
  void (*free_ctx)(blosc2_context *);
  int (*compress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  int (*decompress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  int (*decompress)(const void *, int32_t, void *, int32_t);
} lib_t;

static int load(lib_t *l, const char *path, const char *name) {
  l->name = name;
  l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s) *(void **)(&l->f) = dlsym(l->h, s); if (!l->f) { fprintf(stderr, "missing %s\n", s); return -1; }
  SYM(init, "blosc2_init");
  SYM(create_cctx, "blosc2_create_cctx");
  SYM(create_dctx, "blosc2_create_dctx");
  SYM(free_ctx, "blosc2_free_ctx");
  SYM(compress_ctx, "blosc2_compress_ctx");
  SYM(decompress_ctx, "blosc2_decompress_ctx");
  SYM(decompress, "blosc2_decompress");
  l->init();
  return 0;
}

#define NBYTES (4 * 1024 * 1024)
/* Calls timed together in one measurement (a 4 MiB chunk takes a few ms). */
#define INNER 3
enum { DATA_INTS, DATA_SMOOTH, DATA_REAL, DATA_SMOOTH32 };
static const char *data_names[] = {"ints+noise", "smooth f64", "rainfall f32", "smooth f32"};

static void make_data(int kind, int typesize, uint8_t *buf, const uint8_t *real, size_t real_len) {
  uint32_t s = 42;
  if (kind == DATA_INTS) {
    for (size_t i = 0; i < NBYTES / (size_t)typesize; i++) {
      s = s * 1664525u + 1013904223u;
      uint64_t v = i * 3 + ((s >> 24) & 7);
      memcpy(buf + i * typesize, &v, (size_t)typesize);
    }
  } else if (kind == DATA_SMOOTH) {
    for (size_t i = 0; i < NBYTES / 8; i++) {
      double x = (double)i / 1000.0;
      double v = sin(x) * cos(x / 7.0) * 100.0 + x;
      memcpy(buf + i * 8, &v, 8);
    }
  } else if (kind == DATA_SMOOTH32) {
    for (size_t i = 0; i < NBYTES / 4; i++) {
      float x = (float)i / 1000.0f;
      float v = (float)(sin(x) * cos(x / 7.0) * 100.0) + x;
      memcpy(buf + i * 4, &v, 4);
    }
  } else {
    for (size_t i = 0; i < NBYTES; i++) buf[i] = real[i % real_len];
  }
}

/* A filter pipeline: filters and metas as they go in the last slots of the parameters
   (a meta of -1 stands for the typesize). */
typedef struct {
  const char *name;
  uint8_t filters[BLOSC2_MAX_FILTERS];
  int metas[BLOSC2_MAX_FILTERS];
  int lossy;
} pipeline_t;

static const pipeline_t classic_pipelines[] = {
    {"none", {0}, {0}, 0},
    {"shuffle", {0, 0, 0, 0, 0, BLOSC_SHUFFLE}, {0}, 0},
    {"bitshuffle", {0, 0, 0, 0, 0, BLOSC_BITSHUFFLE}, {0}, 0},
};
/* BENCH_PLUGINS=1: the plugin filters (35 bytedelta, 36 int_trunc) */
static const pipeline_t plugin_pipelines[] = {
    {"shuffle+bytedelta", {0, 0, 0, 0, BLOSC_SHUFFLE, 35}, {0, 0, 0, 0, 0, -1}, 0},
    {"int_trunc(-8)+shuffle", {36, 0, 0, 0, 0, BLOSC_SHUFFLE}, {-8, 0, 0, 0, 0, 0}, 1},
};

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s OURS.so REF.so [REPS] [rainfall .bin chunk]\n", argv[0]);
    return 2;
  }
  lib_t libs[2];
  if (load(&libs[0], argv[1], "libb2nd") || load(&libs[1], argv[2], "c-blosc2")) return 1;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  /* BENCH_FILTERS=0 benchmarks without filters (default: shuffle and bitshuffle);
     BENCH_PLUGINS=1 the plugin filters instead (bytedelta, int_trunc; on f32/f64 and
     integer data, with lz4 and zstd); BENCH_CODEC=name keeps the codecs whose label
     starts with name. */
  const pipeline_t *pipes = classic_pipelines + 1;
  int npipes = 2;
  int plugins = getenv("BENCH_PLUGINS") && strcmp(getenv("BENCH_PLUGINS"), "1") == 0;
  if (getenv("BENCH_FILTERS") && strcmp(getenv("BENCH_FILTERS"), "0") == 0) pipes = classic_pipelines, npipes = 1;
  if (plugins) pipes = plugin_pipelines, npipes = 2;
  uint8_t *real = NULL;
  size_t real_len = 0;
  if (argc > 4) {
    FILE *f = fopen(argv[4], "rb");
    if (f) {
      uint8_t *c = malloc(1 << 20);
      size_t n = fread(c, 1, 1 << 20, f);
      fclose(f);
      real = malloc(1 << 20);
      int d = libs[1].decompress(c, (int32_t)n, real, 1 << 20);
      real_len = d > 0 ? (size_t)d : 0;
      free(c);
    }
  }
  const struct { int codec; int clevel; const char *name; } codecs[] = {
      {BLOSC_BLOSCLZ, 5, "blosclz 5"}, {BLOSC_LZ4, 5, "lz4 5"},   {BLOSC_LZ4HC, 5, "lz4hc 5"},
      {BLOSC_ZLIB, 5, "zlib 5"},       {BLOSC_ZSTD, 1, "zstd 1"}, {BLOSC_ZSTD, 5, "zstd 5"}};
  const struct { int kind; int typesize; } classic_datas[] = {
      {DATA_INTS, 4}, {DATA_INTS, 8}, {DATA_SMOOTH, 8}, {DATA_REAL, 4}};
  const struct { int kind; int typesize; } plugin_datas[] = {
      {DATA_SMOOTH32, 4}, {DATA_SMOOTH, 8}, {DATA_REAL, 4}, {DATA_INTS, 4}, {DATA_INTS, 8}};
  size_t ndatas = plugins ? sizeof(plugin_datas) / sizeof(plugin_datas[0]) : sizeof(classic_datas) / sizeof(classic_datas[0]);
  uint8_t *src = malloc(NBYTES), *dst = malloc(NBYTES + 64), *back = malloc(NBYTES);
  double log_c = 0, log_d = 0, worst_c = 1e9, worst_d = 1e9;
  int ncases = 0, nscaled = 0;
  double one[2][2] = {{1, 1}, {1, 1}}, log_s[4] = {0, 0, 0, 0};
  /* BENCH_LOAD=N: N processes spinning on the CPU during the run (a loaded machine). */
  int nload = getenv("BENCH_LOAD") ? atoi(getenv("BENCH_LOAD")) : 0;
  pid_t loaders[16];
  for (int i = 0; i < nload && i < 16; i++)
    if ((loaders[i] = fork()) == 0)
      for (volatile unsigned long x = 0;; x++) {
      }
  if (nload) printf("(with %d competing busy process%s)\n\n", nload, nload > 1 ? "es" : "");
  printf("| data | typesize | codec | filter | threads | ratio ours | ratio ref | comp MB/s ours | comp MB/s ref | comp ours/ref | decomp MB/s ours | decomp MB/s ref | decomp ours/ref |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t di = 0; di < ndatas; di++) {
    int kind = plugins ? plugin_datas[di].kind : classic_datas[di].kind;
    int typesize = plugins ? plugin_datas[di].typesize : classic_datas[di].typesize;
    if (kind == DATA_REAL && real_len == 0) continue;
    make_data(kind, typesize, src, real, real_len);
    for (size_t ci = 0; ci < sizeof(codecs) / sizeof(codecs[0]); ci++)
      if (!getenv("BENCH_CODEC") || strstr(codecs[ci].name, getenv("BENCH_CODEC")) == codecs[ci].name)
      for (int pi = 0; pi < npipes; pi++)
        for (int nthreads = 1; nthreads <= 2; nthreads++) {
          const pipeline_t *pipe = &pipes[pi];
          /* plugins: bytedelta on floats, int_trunc on integers; lz4 and zstd */
          if (plugins && (pipe->lossy != (kind == DATA_INTS) ||
                          (codecs[ci].codec != BLOSC_LZ4 && codecs[ci].codec != BLOSC_ZSTD)))
            continue;
          double ct[2][64], dt[2][64];
          int csize[2] = {0, 0};
          /* One compression and one decompression context per library for the whole
             case, as a program keeps its contexts: pools and buffers stay warm. */
          blosc2_context *cctx[2], *dctx[2];
          for (int li = 0; li < 2; li++) {
            blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
            cp.compcode = (uint8_t)codecs[ci].codec;
            cp.clevel = (uint8_t)codecs[ci].clevel;
            cp.typesize = typesize;
            cp.nthreads = (int16_t)nthreads;
            for (int f = 0; f < BLOSC2_MAX_FILTERS; f++) {
              cp.filters[f] = pipe->filters[f];
              cp.filters_meta[f] = (uint8_t)(pipe->metas[f] == -1 ? typesize : pipe->metas[f]);
            }
            blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
            dp.nthreads = (int16_t)nthreads;
            cctx[li] = libs[li].create_cctx(cp);
            dctx[li] = libs[li].create_dctx(dp);
          }
          for (int r = 0; r < reps && r < 64; r++) {
            for (int k = 0; k < 2; k++) {
              int li = (r % 2) ? 1 - k : k; /* alternate which library goes first */
              lib_t *l = &libs[li];
              double t0 = now();
              for (int i = 0; i < INNER; i++) csize[li] = l->compress_ctx(cctx[li], src, NBYTES, dst, NBYTES + 64);
              double t1 = now();
              int d = 0;
              for (int i = 0; i < INNER; i++) d = l->decompress_ctx(dctx[li], dst, csize[li], back, NBYTES);
              double t2 = now();
              if (csize[li] <= 0 || d != NBYTES || (!pipe->lossy && memcmp(src, back, NBYTES) != 0)) {
                fprintf(stderr, "%s failed on %s %s\n", l->name, data_names[kind], codecs[ci].name);
                return 1;
              }
              ct[li][r] = (t1 - t0) / INNER;
              dt[li][r] = (t2 - t1) / INNER;
            }
          }
          for (int li = 0; li < 2; li++) {
            libs[li].free_ctx(cctx[li]);
            libs[li].free_ctx(dctx[li]);
          }
          /* Ratios are medians of the per-repetition pairs (both libraries ran back to back
             there), which cancels most of the noise of a shared machine. */
          double cr[64], dr[64];
          for (int r = 0; r < reps && r < 64; r++) {
            cr[r] = ct[1][r] / ct[0][r];
            dr[r] = dt[1][r] / dt[0][r];
          }
          double c0 = NBYTES / median(ct[0], reps) / 1e6, c1 = NBYTES / median(ct[1], reps) / 1e6;
          double d0 = NBYTES / median(dt[0], reps) / 1e6, d1 = NBYTES / median(dt[1], reps) / 1e6;
          double crm = median(cr, reps), drm = median(dr, reps);
          printf("| %s | %d | %s | %s | %d | %.2f | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n",
                 data_names[kind], typesize, codecs[ci].name, pipe->name, nthreads, (double)NBYTES / csize[0],
                 (double)NBYTES / csize[1], c0, c1, crm, d0, d1, drm);
          fflush(stdout);
          /* 2-thread speed over the 1-thread speed of the same case, per library. */
          if (nthreads == 1) {
            one[0][0] = c0, one[0][1] = c1, one[1][0] = d0, one[1][1] = d1;
          } else {
            double s[4] = {c0 / one[0][0], c1 / one[0][1], d0 / one[1][0], d1 / one[1][1]};
            for (int q = 0; q < 4; q++) log_s[q] += log(s[q]);
            nscaled++;
          }
          log_c += log(crm);
          log_d += log(drm);
          if (crm < worst_c) worst_c = crm;
          if (drm < worst_d) worst_d = drm;
          ncases++;
        }
  }
  printf("\n%d cases; geometric mean ours/ref: compress %.3f, decompress %.3f; worst case: compress %.2f, decompress %.2f\n",
         ncases, exp(log_c / ncases), exp(log_d / ncases), worst_c, worst_d);
  if (nscaled)
    printf("2 threads / 1 thread (geometric mean over %d cases): compress ours %.2f ref %.2f; decompress ours %.2f ref %.2f\n",
           nscaled, exp(log_s[0] / nscaled), exp(log_s[1] / nscaled), exp(log_s[2] / nscaled), exp(log_s[3] / nscaled));
  for (int i = 0; i < nload && i < 16; i++) kill(loaders[i], SIGKILL);
  return 0;
}
