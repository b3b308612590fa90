/* One library, one process: the measuring half of the benchmark against c-blosc2.
   scripts/bench.py runs this once per library, round and thread count (never two
   libraries in one process: they would share the machine's caches, the allocator and the
   scheduler's view of this process), pairs the results and prints the tables.

   usage: bench_worker LIB.so SUITE NTHREADS [--data DIR] [--reps K] [--only SUBSTRING]
                       [--rainfall FILE]

   LIB.so is dlopen'ed alone (RTLD_NOW | RTLD_LOCAL) and reached through dlsym; SUITE is
   chunks, schunk, b2nd or plugins. Every measurement is one warm-up pass and then the best
   (the highest MB/s) of K timed passes (default 3); MB/s = uncompressed bytes / seconds / 1e6
   (for slices: the bytes returned). Each case's round trip is checked once (memcmp; the
   lossy int_trunc cases check sizes only) and a mismatch exits non-zero. Output: one line
   per measurement on stdout,
     suite<TAB>case<TAB>op<TAB>MBps<TAB>extra
   where extra is the compression ratio for compress ops and 0 otherwise. --only keeps the
   measurements whose "case:op" contains SUBSTRING.

   --data DIR holds de421.f64 (little-endian float64: the DE421 ephemeris coefficients,
   extracted by scripts/bench.sh), or else de421.bsp (an SPK file: the bytes from offset
   8192 on are read as float64). --rainfall FILE is a c-blosc2 chunk of float32 rainfall
   (default tests/data/raw/rainfall-grid-150x150.bin), for the plugins suite. */
#ifdef _WIN32
/* Windows (mingw-w64; scripts/bench.py --runner wine): the DLL through the loader. */
#include <stdio.h>
#include <windows.h>
#define RTLD_NOW 0
#define RTLD_LOCAL 0
static void *dlopen(const char *path, int flags) {
  (void)flags;
  return (void *)LoadLibraryA(path);
}
static void *dlsym(void *h, const char *name) { return (void *)GetProcAddress((HMODULE)h, name); }
static const char *dlerror(void) {
  static char text[32];
  snprintf(text, sizeof text, "error %lu", (unsigned long)GetLastError());
  return text;
}
#else
#include <dlfcn.h>
#endif
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "b2nd.h"
#include "bench_common.h"

typedef struct {
  void (*init)(void);
  int (*decompress)(const void *, int32_t, void *, int32_t);
  blosc2_context *(*create_cctx)(blosc2_cparams);
  blosc2_context *(*create_dctx)(blosc2_dparams);
  void (*free_ctx)(blosc2_context *);
  int (*compress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  int (*decompress_ctx)(blosc2_context *, const void *, int32_t, void *, int32_t);
  blosc2_schunk *(*schunk_new)(blosc2_storage *);
  int (*schunk_free)(blosc2_schunk *);
  int64_t (*append_buffer)(blosc2_schunk *, const void *, int32_t);
  int (*decompress_chunk)(blosc2_schunk *, int64_t, void *, int32_t);
  int (*get_slice_buffer)(blosc2_schunk *, int64_t, int64_t, void *);
  int (*set_slice_buffer)(blosc2_schunk *, int64_t, int64_t, void *);
  b2nd_context_t *(*b2nd_create_ctx)(const blosc2_storage *, int8_t, const int64_t *, const int32_t *,
                                     const int32_t *, const char *, int8_t, const blosc2_metalayer *, int32_t);
  int (*b2nd_free_ctx)(b2nd_context_t *);
  int (*b2nd_from_cbuffer)(b2nd_context_t *, b2nd_array_t **, const void *, int64_t);
  int (*b2nd_to_cbuffer)(const b2nd_array_t *, void *, int64_t);
  int (*b2nd_get_slice_cbuffer)(const b2nd_array_t *, const int64_t *, const int64_t *, void *, const int64_t *,
                                int64_t);
  int (*b2nd_free)(b2nd_array_t *);
} lib_t;

static lib_t L;

static int load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
#define SYM(f, s) *(void **)(&L.f) = dlsym(h, s); if (!L.f) { fprintf(stderr, "%s: missing %s\n", path, s); return -1; }
  SYM(init, "blosc2_init");
  SYM(decompress, "blosc2_decompress");
  SYM(create_cctx, "blosc2_create_cctx");
  SYM(create_dctx, "blosc2_create_dctx");
  SYM(free_ctx, "blosc2_free_ctx");
  SYM(compress_ctx, "blosc2_compress_ctx");
  SYM(decompress_ctx, "blosc2_decompress_ctx");
  SYM(schunk_new, "blosc2_schunk_new");
  SYM(schunk_free, "blosc2_schunk_free");
  SYM(append_buffer, "blosc2_schunk_append_buffer");
  SYM(decompress_chunk, "blosc2_schunk_decompress_chunk");
  SYM(get_slice_buffer, "blosc2_schunk_get_slice_buffer");
  SYM(set_slice_buffer, "blosc2_schunk_set_slice_buffer");
  SYM(b2nd_create_ctx, "b2nd_create_ctx");
  SYM(b2nd_free_ctx, "b2nd_free_ctx");
  SYM(b2nd_from_cbuffer, "b2nd_from_cbuffer");
  SYM(b2nd_to_cbuffer, "b2nd_to_cbuffer");
  SYM(b2nd_get_slice_cbuffer, "b2nd_get_slice_cbuffer");
  SYM(b2nd_free, "b2nd_free");
#undef SYM
  L.init();
  return 0;
}

/* ---- options, output, failure ---- */

static const char *g_suite;
static int g_nthreads = 1, g_reps = 3;
static const char *g_only = NULL, *g_data_dir = ".", *g_rainfall = "tests/data/raw/rainfall-grid-150x150.bin";

static bool selected(const char *name, const char *op) {
  if (!g_only) return true;
  char key[1024];
  snprintf(key, sizeof(key), "%s:%s", name, op);
  return strstr(key, g_only) != NULL;
}

static void emit(const char *name, const char *op, double bytes, double seconds, double extra) {
  printf("%s\t%s\t%s\t%.3f\t%.9g\n", g_suite, name, op, bytes / seconds / 1e6, extra);
  fflush(stdout);
}

static void die(const char *name, const char *what) {
  fprintf(stderr, "bench_worker: %s %s: %s\n", g_suite, name, what);
  exit(1);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "bench_worker: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* ---- data ---- */

static uint64_t g_noise_state;
/* Uniform in [-1, 1). */
static double noise(void) {
  g_noise_state = g_noise_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_noise_state >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* A smooth 3-D field (a few sines) plus a small noise, so the low mantissa bits vary. */
static double field(int64_t x, int64_t y, int64_t z) {
  return 10.0 * sin(0.021 * x) * cos(0.017 * y) + 5.0 * sin(0.013 * z + 0.005 * x) +
         2.5 * sin(0.011 * (double)(x + y + z)) + 1e-6 * noise();
}

/* An int32 ramp with a small noise (as the old one-process benchmark made it). */
static void make_ints(uint8_t *buf, size_t nbytes, int typesize) {
  uint32_t s = 42;
  for (size_t i = 0; i < nbytes / (size_t)typesize; i++) {
    s = s * 1664525u + 1013904223u;
    uint64_t v = i * 3 + ((s >> 24) & 7);
    memcpy(buf + i * typesize, &v, (size_t)typesize); /* little-endian: the low bytes */
  }
}

/* The field on a grid of nx x 128 x 128 float64 (C order): each 4 MiB chunk is 32 planes. */
static void make_field(uint8_t *buf, size_t nbytes) {
  size_t n = nbytes / 8, ny = 128, nz = 128;
  g_noise_state = 1234;
  for (size_t i = 0; i < n; i++) {
    double v = field((int64_t)(i / (ny * nz)), (int64_t)(i / nz % ny), (int64_t)(i % nz));
    memcpy(buf + i * 8, &v, 8);
  }
}

/* The old benchmark's 1-D smooth sequences (for the plugins suite). */
static void make_smooth_1d(uint8_t *buf, size_t nbytes, int typesize) {
  if (typesize == 8) {
    for (size_t i = 0; i < nbytes / 8; i++) {
      double x = (double)i / 1000.0;
      double v = sin(x) * cos(x / 7.0) * 100.0 + x;
      memcpy(buf + i * 8, &v, 8);
    }
  } else {
    for (size_t i = 0; i < nbytes / 4; i++) {
      float x = (float)i / 1000.0f;
      float v = (float)(sin(x) * cos(x / 7.0) * 100.0) + x;
      memcpy(buf + i * 4, &v, 4);
    }
  }
}

/* `buf` filled with repetitions of `real`. */
static void tile(uint8_t *buf, size_t nbytes, const uint8_t *real, size_t len) {
  for (size_t off = 0; off < nbytes; off += len) memcpy(buf + off, real, nbytes - off < len ? nbytes - off : len);
}

static uint8_t *read_file(const char *path, size_t skip, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long size = ftell(f);
  if (size < 0 || (size_t)size <= skip || fseek(f, (long)skip, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  size_t n = (size_t)size - skip;
  uint8_t *p = xmalloc(n);
  size_t got = fread(p, 1, n, f);
  fclose(f);
  if (got != n) {
    free(p);
    return NULL;
  }
  *len = n;
  return p;
}

/* The DE421 coefficients as float64 (a whole number of them). */
static uint8_t *load_de421(size_t *len) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/de421.f64", g_data_dir);
  uint8_t *p = read_file(path, 0, len);
  if (!p) {
    snprintf(path, sizeof(path), "%s/de421.bsp", g_data_dir);
    p = read_file(path, 8192, len); /* past the DAF file record and the comment records */
  }
  if (p) *len -= *len % 8;
  if (!p || *len == 0) {
    fprintf(stderr, "bench_worker: no de421.f64 or de421.bsp in %s (scripts/bench.sh fetches it)\n", g_data_dir);
    exit(1);
  }
  return p;
}

/* The registered filters' ids (c-blosc2's filters registry). */
#define FILTER_BYTEDELTA 35
#define FILTER_INT_TRUNC 36

/* ---- chunks and plugins: 8 chunks of 4 MiB per pass through the context API ---- */

#define CHUNK (4 * 1024 * 1024)
#define NCH 8
#define CAP (CHUNK + BLOSC2_MAX_OVERHEAD)
#define DATA_BYTES ((size_t)NCH * CHUNK)

static uint8_t *g_src, *g_cbuf, *g_out;

/* One case: filters and their metas as they go in the parameters' slots. */
static void chunk_case(const char *name, int typesize, int codec, int clevel, const uint8_t filters[BLOSC2_MAX_FILTERS],
                       const uint8_t metas[BLOSC2_MAX_FILTERS], bool lossy) {
  bool sel_c = selected(name, "compress"), sel_d = selected(name, "decompress");
  if (!sel_c && !sel_d) return;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = (uint8_t)codec;
  cp.clevel = (uint8_t)clevel;
  cp.typesize = typesize;
  cp.nthreads = (int16_t)g_nthreads;
  memcpy(cp.filters, filters, BLOSC2_MAX_FILTERS);
  memcpy(cp.filters_meta, metas, BLOSC2_MAX_FILTERS);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)g_nthreads;
  /* One context each way for the whole case, as a program keeps its contexts. */
  blosc2_context *cctx = L.create_cctx(cp), *dctx = L.create_dctx(dp);
  if (!cctx || !dctx) die(name, "context creation failed");
  int32_t csize[NCH];
  double best_c = 1e30, best_d = 1e30;
  /* pass 0 (warm-up): both ways, and the round trip checked */
  for (int pass = 0; pass <= g_reps; pass++) {
    if (pass == 0 || sel_c) {
      double t0 = now();
      for (int c = 0; c < NCH; c++) {
        csize[c] = L.compress_ctx(cctx, g_src + (size_t)c * CHUNK, CHUNK, g_cbuf + (size_t)c * CAP, CAP);
        if (csize[c] <= 0) die(name, "compression failed");
      }
      double t = now() - t0;
      if (pass > 0 && t < best_c) best_c = t;
    }
    if (pass == 0 || sel_d) {
      double t0 = now();
      for (int c = 0; c < NCH; c++) {
        if (L.decompress_ctx(dctx, g_cbuf + (size_t)c * CAP, csize[c], g_out + (size_t)c * CHUNK, CHUNK) != CHUNK)
          die(name, "decompression failed");
      }
      double t = now() - t0;
      if (pass > 0 && t < best_d) best_d = t;
    }
    if (pass == 0 && !lossy && memcmp(g_src, g_out, DATA_BYTES) != 0) die(name, "round trip mismatch");
  }
  double total = 0;
  for (int c = 0; c < NCH; c++) total += csize[c];
  if (sel_c) emit(name, "compress", (double)DATA_BYTES, best_c, (double)DATA_BYTES / total);
  if (sel_d) emit(name, "decompress", (double)DATA_BYTES, best_d, 0);
  L.free_ctx(cctx);
  L.free_ctx(dctx);
}

typedef struct {
  const char *name;
  int codec, clevel;
  uint8_t filter;
} codec_t;

static const codec_t chunk_codecs[] = {
    {"blosclz-5/shuffle", BLOSC_BLOSCLZ, 5, BLOSC_SHUFFLE}, {"lz4-5/shuffle", BLOSC_LZ4, 5, BLOSC_SHUFFLE},
    {"zstd-1/shuffle", BLOSC_ZSTD, 1, BLOSC_SHUFFLE},       {"zstd-5/shuffle", BLOSC_ZSTD, 5, BLOSC_SHUFFLE},
    {"zlib-5/shuffle", BLOSC_ZLIB, 5, BLOSC_SHUFFLE},       {"zstd-1/bitshuffle", BLOSC_ZSTD, 1, BLOSC_BITSHUFFLE},
    {"lz4-5/bitshuffle", BLOSC_LZ4, 5, BLOSC_BITSHUFFLE},
};
#define NCODECS (sizeof(chunk_codecs) / sizeof(chunk_codecs[0]))

static bool any_selected(const char *data) {
  char name[128];
  for (size_t i = 0; i < NCODECS; i++) {
    snprintf(name, sizeof(name), "%s/%s", data, chunk_codecs[i].name);
    if (selected(name, "compress") || selected(name, "decompress")) return true;
  }
  return false;
}

static void suite_chunks(void) {
  g_src = xmalloc(DATA_BYTES);
  g_cbuf = xmalloc((size_t)NCH * CAP);
  g_out = xmalloc(DATA_BYTES);
  const char *datas[] = {"int32", "f64", "de421"};
  const int typesizes[] = {4, 8, 8};
  for (int di = 0; di < 3; di++) {
    if (!any_selected(datas[di])) continue;
    if (di == 0) {
      make_ints(g_src, DATA_BYTES, 4);
    } else if (di == 1) {
      make_field(g_src, DATA_BYTES);
    } else {
      size_t len;
      uint8_t *real = load_de421(&len);
      tile(g_src, DATA_BYTES, real, len);
      free(real);
    }
    for (size_t ci = 0; ci < NCODECS; ci++) {
      char name[128];
      snprintf(name, sizeof(name), "%s/%s", datas[di], chunk_codecs[ci].name);
      uint8_t filters[BLOSC2_MAX_FILTERS] = {0}, metas[BLOSC2_MAX_FILTERS] = {0};
      filters[BLOSC2_MAX_FILTERS - 1] = chunk_codecs[ci].filter;
      chunk_case(name, typesizes[di], chunk_codecs[ci].codec, chunk_codecs[ci].clevel, filters, metas, false);
    }
  }
}

/* The plugin filters of the old BENCH_PLUGINS=1 run: shuffle + bytedelta (35) on floats,
   int_trunc (36) to -8 bits + shuffle on integers; LZ4 5, Zstd 1 and Zstd 5. */
static void suite_plugins(void) {
  g_src = xmalloc(DATA_BYTES);
  g_cbuf = xmalloc((size_t)NCH * CAP);
  g_out = xmalloc(DATA_BYTES);
  const struct { const char *name; int typesize; bool is_int; } datas[] = {
      {"f32-smooth", 4, false}, {"f64-smooth", 8, false}, {"rainfall-f32", 4, false}, {"int32", 4, true},
      {"int64", 8, true}};
  const struct { const char *name; int codec, clevel; } codecs[] = {
      {"lz4-5", BLOSC_LZ4, 5}, {"zstd-1", BLOSC_ZSTD, 1}, {"zstd-5", BLOSC_ZSTD, 5}};
  for (size_t di = 0; di < sizeof(datas) / sizeof(datas[0]); di++) {
    const char *pipe = datas[di].is_int ? "int_trunc-8+shuffle" : "shuffle+bytedelta";
    char name[3][128];
    bool any = false;
    for (int ci = 0; ci < 3; ci++) {
      snprintf(name[ci], sizeof(name[ci]), "%s/%s/%s", datas[di].name, codecs[ci].name, pipe);
      any |= selected(name[ci], "compress") || selected(name[ci], "decompress");
    }
    if (!any) continue;
    int ts = datas[di].typesize;
    if (datas[di].is_int) {
      make_ints(g_src, DATA_BYTES, ts);
    } else if (di < 2) {
      make_smooth_1d(g_src, DATA_BYTES, ts);
    } else {
      size_t clen;
      uint8_t *c = read_file(g_rainfall, 0, &clen);
      if (!c || clen > INT32_MAX) {
        fprintf(stderr, "bench_worker: cannot read %s (--rainfall)\n", g_rainfall);
        exit(1);
      }
      uint8_t *real = xmalloc(1 << 20);
      int d = L.decompress(c, (int32_t)clen, real, 1 << 20);
      if (d <= 0) die(g_rainfall, "cannot decompress the rainfall chunk");
      tile(g_src, DATA_BYTES, real, (size_t)d);
      free(real);
      free(c);
    }
    uint8_t filters[BLOSC2_MAX_FILTERS] = {0}, metas[BLOSC2_MAX_FILTERS] = {0};
    if (datas[di].is_int) {
      filters[0] = FILTER_INT_TRUNC;
      metas[0] = (uint8_t)(int8_t)-8;
      filters[5] = BLOSC_SHUFFLE;
    } else {
      filters[4] = BLOSC_SHUFFLE;
      filters[5] = FILTER_BYTEDELTA;
      metas[5] = (uint8_t)ts;
    }
    for (int ci = 0; ci < 3; ci++)
      chunk_case(name[ci], ts, codecs[ci].codec, codecs[ci].clevel, filters, metas, datas[di].is_int);
  }
}

/* ---- schunk: 32 chunks of 1 MiB int32 in memory, LZ4 5 + shuffle ---- */

#define SC_NCHUNKS 32
#define SC_CHUNK_ITEMS (256 * 1024)
#define SC_ITEMS ((int64_t)SC_NCHUNKS * SC_CHUNK_ITEMS)
#define SC_NSLICES 200
#define SC_SLICE_ITEMS 100000

static blosc2_cparams g_sc_cp;
static blosc2_dparams g_sc_dp;

static blosc2_schunk *sc_build(const int32_t *data, const char *name) {
  blosc2_storage st = {.contiguous = false, .urlpath = NULL, .cparams = &g_sc_cp, .dparams = &g_sc_dp};
  blosc2_schunk *sc = L.schunk_new(&st);
  if (!sc) die(name, "blosc2_schunk_new failed");
  for (int i = 0; i < SC_NCHUNKS; i++) {
    if (L.append_buffer(sc, data + (size_t)i * SC_CHUNK_ITEMS, SC_CHUNK_ITEMS * 4) != i + 1)
      die(name, "append_buffer failed");
  }
  return sc;
}

static void suite_schunk(void) {
  const char *name = "int32/lz4-5/shuffle";
  const char *ops[] = {"append", "decompress_chunk", "get_slice_buffer", "get_slice_whole", "set_slice_buffer"};
  bool any = false;
  for (int i = 0; i < 5; i++) any |= selected(name, ops[i]);
  if (!any) return;
  g_sc_cp = (blosc2_cparams)BLOSC2_CPARAMS_DEFAULTS;
  g_sc_cp.compcode = BLOSC_LZ4;
  g_sc_cp.clevel = 5;
  g_sc_cp.typesize = 4;
  g_sc_cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  g_sc_cp.nthreads = (int16_t)g_nthreads;
  g_sc_dp = (blosc2_dparams)BLOSC2_DPARAMS_DEFAULTS;
  g_sc_dp.nthreads = (int16_t)g_nthreads;
  size_t nbytes = (size_t)SC_ITEMS * 4;
  int32_t *data = xmalloc(nbytes), *out = xmalloc(nbytes);
  uint32_t s = 12345;
  for (int64_t i = 0; i < SC_ITEMS; i++) {
    s = s * 1664525u + 1013904223u;
    data[i] = (int32_t)(i / 3) + (int32_t)((s >> 28) & 3);
  }
  int64_t starts[SC_NSLICES];
  for (int i = 0; i < SC_NSLICES; i++) {
    s = s * 1664525u + 1013904223u;
    starts[i] = (int64_t)(s % (uint32_t)(SC_ITEMS - SC_SLICE_ITEMS + 1));
  }
  double best;
  if (selected(name, "append")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t0 = now();
      blosc2_schunk *sc = sc_build(data, name);
      double t = now() - t0;
      L.schunk_free(sc);
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "append", (double)nbytes, best, 0);
  }
  blosc2_schunk *sc = sc_build(data, name);
  if (selected(name, "decompress_chunk")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t0 = now();
      for (int i = 0; i < SC_NCHUNKS; i++) {
        if (L.decompress_chunk(sc, i, out + (size_t)i * SC_CHUNK_ITEMS, SC_CHUNK_ITEMS * 4) != SC_CHUNK_ITEMS * 4)
          die(name, "decompress_chunk failed");
      }
      double t = now() - t0;
      if (pass == 0 && memcmp(out, data, nbytes) != 0) die(name, "decompress_chunk: mismatch");
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "decompress_chunk", (double)nbytes, best, 0);
  }
  if (selected(name, "get_slice_buffer")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t = 0;
      for (int i = 0; i < SC_NSLICES; i++) {
        double t0 = now();
        if (L.get_slice_buffer(sc, starts[i], starts[i] + SC_SLICE_ITEMS, out) < 0)
          die(name, "get_slice_buffer failed");
        t += now() - t0;
        if (pass == 0 && memcmp(out, data + starts[i], SC_SLICE_ITEMS * 4) != 0)
          die(name, "get_slice_buffer: mismatch");
      }
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "get_slice_buffer", (double)SC_NSLICES * SC_SLICE_ITEMS * 4, best, 0);
  }
  if (selected(name, "get_slice_whole")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      memset(out, 0, pass == 0 ? nbytes : 0);
      double t0 = now();
      if (L.get_slice_buffer(sc, 0, SC_ITEMS, out) < 0) die(name, "get_slice_buffer (whole) failed");
      double t = now() - t0;
      if (pass == 0 && memcmp(out, data, nbytes) != 0) die(name, "get_slice_buffer (whole): mismatch");
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "get_slice_whole", (double)nbytes, best, 0);
  }
  if (selected(name, "set_slice_buffer")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t0 = now();
      if (L.set_slice_buffer(sc, 0, SC_ITEMS, data) < 0) die(name, "set_slice_buffer failed");
      double t = now() - t0;
      if (pass > 0 && t < best) best = t;
    }
    memset(out, 0, nbytes);
    if (L.get_slice_buffer(sc, 0, SC_ITEMS, out) < 0 || memcmp(out, data, nbytes) != 0)
      die(name, "set_slice_buffer: mismatch on reading back");
    emit(name, "set_slice_buffer", (double)nbytes, best, 0);
  }
  L.schunk_free(sc);
  free(data);
  free(out);
}

/* ---- b2nd: 200^3 float64 in memory, chunks 50^3, blocks 10x10x50, Zstd 1 + shuffle ---- */

#define D 200
static const int64_t SHAPE[3] = {D, D, D};
static const int32_t CHUNKS3[3] = {50, 50, 50};
static const int32_t BLOCKS3[3] = {10, 10, 50};
#define NTHIN 12
#define NBOXES 300
#define BOX 12

static double *g_arr_data;

static b2nd_context_t *b2nd_ctx(void) {
  /* Static: c-blosc2's context keeps pointing at the parameters it was given. */
  static blosc2_cparams cp;
  static blosc2_dparams dp;
  static blosc2_storage st;
  cp = (blosc2_cparams)BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_ZSTD;
  cp.clevel = 1;
  cp.typesize = 8;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  cp.nthreads = (int16_t)g_nthreads;
  dp = (blosc2_dparams)BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)g_nthreads;
  st = (blosc2_storage){.contiguous = false, .urlpath = NULL, .cparams = &cp, .dparams = &dp};
  return L.b2nd_create_ctx(&st, 3, SHAPE, CHUNKS3, BLOCKS3, "<f8", 0, NULL, 0);
}

/* Whether `buf` (C order, shape stop - start) holds the items of [start, stop). */
static bool box_ok(const int64_t start[3], const int64_t stop[3], const double *buf) {
  int64_t ny = stop[1] - start[1], nz = stop[2] - start[2];
  for (int64_t x = start[0]; x < stop[0]; x++)
    for (int64_t y = start[1]; y < stop[1]; y++) {
      const double *want = g_arr_data + ((size_t)x * D + (size_t)y) * D + (size_t)start[2];
      const double *got = buf + ((size_t)(x - start[0]) * (size_t)ny + (size_t)(y - start[1])) * (size_t)nz;
      if (memcmp(want, got, (size_t)nz * 8) != 0) return false;
    }
  return true;
}

/* Seconds for the boxes [starts[i], starts[i] + sides) (checked when `check`). */
static double read_boxes(b2nd_array_t *a, int n, const int64_t (*starts)[3], const int64_t sides[3], double *out,
                         bool check, const char *name, const char *op) {
  int64_t bytes = sides[0] * sides[1] * sides[2] * 8;
  double t = 0;
  for (int i = 0; i < n; i++) {
    int64_t stop[3] = {starts[i][0] + sides[0], starts[i][1] + sides[1], starts[i][2] + sides[2]};
    double t0 = now();
    if (L.b2nd_get_slice_cbuffer(a, starts[i], stop, out, sides, bytes) < 0) die(name, op);
    t += now() - t0;
    if (check && !box_ok(starts[i], stop, out)) die(name, "slice mismatch");
  }
  return t;
}

static void suite_b2nd(void) {
  const char *name = "f64-200x200x200/zstd-1/shuffle";
  const char *ops[] = {"slice_axis0", "slice_axis1", "slice_axis2", "boxes12", "from_cbuffer", "to_cbuffer"};
  bool any = false;
  for (int i = 0; i < 6; i++) any |= selected(name, ops[i]);
  if (!any) return;
  size_t n = (size_t)D * D * D, nbytes = n * 8;
  g_arr_data = xmalloc(nbytes);
  double *out = xmalloc(nbytes);
  g_noise_state = 1234;
  for (size_t i = 0; i < n; i++) g_arr_data[i] = field((int64_t)(i / (D * D)), (int64_t)(i / D % D), (int64_t)(i % D));
  b2nd_context_t *ctx = b2nd_ctx();
  b2nd_array_t *arr = NULL;
  if (!ctx || L.b2nd_from_cbuffer(ctx, &arr, g_arr_data, (int64_t)nbytes) < 0) die(name, "from_cbuffer failed");
  double best;
  /* Thin slices one item thick at 12 places spread over 0..199 along each axis. */
  for (int axis = 0; axis < 3; axis++) {
    char op[32];
    snprintf(op, sizeof(op), "slice_axis%d", axis);
    if (!selected(name, op)) continue;
    int64_t starts[NTHIN][3], sides[3] = {D, D, D};
    sides[axis] = 1;
    for (int j = 0; j < NTHIN; j++) {
      starts[j][0] = starts[j][1] = starts[j][2] = 0;
      starts[j][axis] = (int64_t)j * (D - 1) / (NTHIN - 1);
    }
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t = read_boxes(arr, NTHIN, (const int64_t(*)[3])starts, sides, out, pass == 0, name, op);
      if (pass > 0 && t < best) best = t;
    }
    emit(name, op, (double)NTHIN * D * D * 8, best, 0);
  }
  if (selected(name, "boxes12")) {
    static int64_t starts[NBOXES][3];
    int64_t sides[3] = {BOX, BOX, BOX};
    uint32_t s = 7;
    for (int i = 0; i < NBOXES; i++)
      for (int k = 0; k < 3; k++) {
        s = s * 1664525u + 1013904223u;
        starts[i][k] = (s >> 8) % (D - BOX + 1);
      }
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t = read_boxes(arr, NBOXES, (const int64_t(*)[3])starts, sides, out, pass == 0, name, "boxes12");
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "boxes12", (double)NBOXES * BOX * BOX * BOX * 8, best, 0);
  }
  if (selected(name, "from_cbuffer")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      double t0 = now();
      b2nd_context_t *c = b2nd_ctx();
      b2nd_array_t *b = NULL;
      if (!c || L.b2nd_from_cbuffer(c, &b, g_arr_data, (int64_t)nbytes) < 0) die(name, "from_cbuffer failed");
      double t = now() - t0;
      L.b2nd_free(b);
      L.b2nd_free_ctx(c);
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "from_cbuffer", (double)nbytes, best, 0);
  }
  if (selected(name, "to_cbuffer")) {
    best = 1e30;
    for (int pass = 0; pass <= g_reps; pass++) {
      if (pass == 0) memset(out, 0, nbytes);
      double t0 = now();
      if (L.b2nd_to_cbuffer(arr, out, (int64_t)nbytes) < 0) die(name, "to_cbuffer failed");
      double t = now() - t0;
      if (pass == 0 && memcmp(out, g_arr_data, nbytes) != 0) die(name, "to_cbuffer: mismatch");
      if (pass > 0 && t < best) best = t;
    }
    emit(name, "to_cbuffer", (double)nbytes, best, 0);
  }
  L.b2nd_free(arr);
  L.b2nd_free_ctx(ctx);
  free(out);
  free(g_arr_data);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s LIB.so SUITE NTHREADS [--data DIR] [--reps K] [--only SUBSTRING] [--rainfall FILE]\n"
            "  SUITE: chunks, schunk, b2nd or plugins\n",
            argv[0]);
    return 2;
  }
  g_suite = argv[2];
  g_nthreads = atoi(argv[3]);
  for (int i = 4; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_worker: %s needs a value\n", argv[i]);
      return 2;
    }
    if (strcmp(argv[i], "--data") == 0) g_data_dir = v;
    else if (strcmp(argv[i], "--reps") == 0) g_reps = atoi(v);
    else if (strcmp(argv[i], "--only") == 0) g_only = v;
    else if (strcmp(argv[i], "--rainfall") == 0) g_rainfall = v;
    else {
      fprintf(stderr, "bench_worker: unknown option %s\n", argv[i]);
      return 2;
    }
    i++;
  }
  if (g_nthreads < 1 || g_nthreads > 256 || g_reps < 1 || g_reps > 1000) {
    fprintf(stderr, "bench_worker: NTHREADS must be 1..256 and --reps 1..1000\n");
    return 2;
  }
  void (*suite)(void) = strcmp(g_suite, "chunks") == 0    ? suite_chunks
                        : strcmp(g_suite, "schunk") == 0  ? suite_schunk
                        : strcmp(g_suite, "b2nd") == 0    ? suite_b2nd
                        : strcmp(g_suite, "plugins") == 0 ? suite_plugins
                                                          : NULL;
  if (!suite) {
    fprintf(stderr, "bench_worker: unknown suite %s (chunks, schunk, b2nd, plugins)\n", g_suite);
    return 2;
  }
  if (load(argv[1])) return 1;
  suite();
  return 0;
}
