/* Cross-compatibility of the n-dimensional plugins c-blosc2 registers at
   blosc2_init (filters ndcell and ndmean, codecs ndlz and zfp in its three
   modes): b2nd arrays of 1 to 4
   dimensions whose shapes are not multiples of their chunks, nor chunks of their
   blocks, nor blocks of the cells. Built twice from this source, against libb2nd
   and against the reference c-blosc2 3.3.5:
     write DIR          write each case as DIR/<case>.b2nd, and the values the
                        writer reads back as DIR/<case>.values (none when it
                        cannot read its own array)
     check DIR          read DIR's arrays: the same values as their writer read
                        (exact, also for the lossy ndmean and zfp), or the same
                        failure
     compare DIR1 DIR2  count the arrays whose chunks are the same bytes in both
     checkdir DIR       read the arrays DIR/list.txt names (python-blosc2 wrote them
                        with c_tests/py/plugins_write.py): the values beside them,
                        or the same failure
     errors             print the return codes of malformed parameters (the two
                        libraries must print the same lines)
   Running `check` of one library on what `write` of the other made tests both
   directions. */
#include <math.h>
#include <stdint.h>
#include "b2nd.h"
#include "blosc2.h"
#include "blosc2/codecs-registry.h"
#include "blosc2/filters-registry.h"
#include "test_common.h"

enum { NDCELL, NDMEAN, NDLZ, ZFP_ACC, ZFP_PREC, ZFP_RATE, NKINDS };
static const char *kind_names[] = {"ndcell", "ndmean", "ndlz", "zfpacc", "zfpprec", "zfprate"};
static int is_zfp(int kind) { return kind >= ZFP_ACC; }

typedef struct {
  int kind, meta, typesize, ndim, nthreads, codec, geometry;
} case_t;

/* Shapes, chunk shapes and block shapes per number of dimensions: a few
   geometries each, cells cut at the blocks' ends. */
typedef struct {
  int64_t shape[4];
  int32_t chunk[4], block[4];
} geometry_t;

static const geometry_t geometries[4][3] = {
    {{{1000}, {300}, {70}}, {{257}, {257}, {64}}, {{5000}, {1024}, {1000}}},
    {{{100, 90}, {40, 33}, {16, 16}}, {{64, 64}, {32, 32}, {32, 32}}, {{77, 130}, {50, 60}, {23, 17}}},
    {{{30, 20, 25}, {12, 10, 9}, {6, 5, 8}}, {{16, 16, 16}, {16, 16, 16}, {8, 8, 8}}, {{9, 40, 11}, {9, 20, 11}, {9, 7, 4}}},
    {{{10, 9, 8, 7}, {5, 5, 4, 4}, {3, 4, 2, 3}}, {{8, 8, 8, 8}, {4, 4, 4, 4}, {4, 4, 4, 4}}, {{6, 5, 4, 9}, {6, 5, 4, 9}, {2, 5, 3, 4}}},
};

static void case_name(const case_t *c, char *out, size_t n) {
  snprintf(out, n, "%s-m%d-t%d-d%d-g%d-c%d-th%d", kind_names[c->kind], c->meta, c->typesize, c->ndim, c->geometry,
           c->codec, c->nthreads);
}

static int64_t nitems(const geometry_t *g, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= g->shape[i];
  return n;
}

/* Values with structure along every dimension (what the cells are for), some
   runs and some repeated rows; floats for ndmean. */
static void case_data(const case_t *c, const geometry_t *g, uint8_t *buf) {
  int64_t n = nitems(g, c->ndim);
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i, idx[4] = {0};
    for (int d = c->ndim - 1; d >= 0; d--) {
      idx[d] = rest % g->shape[d];
      rest /= g->shape[d];
    }
    double x = 0;
    for (int d = 0; d < c->ndim; d++) x += sin(0.11 * (double)(idx[d] + 1) * (d + 1)) * (10.0 / (d + 1));
    uint8_t *p = buf + i * c->typesize;
    if (c->kind == NDMEAN || is_zfp(c->kind) || (c->kind == NDCELL && c->typesize >= 4 && c->codec == BLOSC_ZSTD)) {
      if (c->typesize == 4) { float v = (float)x; memcpy(p, &v, 4); }
      else { memcpy(p, &x, 8); }
    } else {
      uint64_t v = (uint64_t)(int64_t)(x * 3);
      if ((idx[0] / 4) % 3 == 1) v = 42;               /* runs of whole cells */
      if (c->ndim > 1 && (idx[1] / 8) % 4 == 2) v = (uint64_t)(idx[1] % 8); /* repeated rows */
      memcpy(p, &v, (size_t)c->typesize);
    }
  }
}

static void params_for(const case_t *c, blosc2_cparams *cp) {
  *cp = BLOSC2_CPARAMS_DEFAULTS;
  cp->typesize = c->typesize;
  cp->nthreads = (int16_t)c->nthreads;
  cp->clevel = 5;
  memset(cp->filters, 0, sizeof(cp->filters));
  memset(cp->filters_meta, 0, sizeof(cp->filters_meta));
  if (is_zfp(c->kind)) {
    cp->compcode = (uint8_t)(c->kind == ZFP_ACC ? BLOSC_CODEC_ZFP_FIXED_ACCURACY
                             : c->kind == ZFP_PREC ? BLOSC_CODEC_ZFP_FIXED_PRECISION : BLOSC_CODEC_ZFP_FIXED_RATE);
    cp->compcode_meta = (uint8_t)c->meta;
  } else if (c->kind == NDLZ) {
    cp->compcode = BLOSC_CODEC_NDLZ;
    cp->compcode_meta = (uint8_t)c->meta;
    /* one stream per byte of the items: ndlz sees 2-D planes of bytes */
    if (c->typesize > 1) cp->splitmode = BLOSC_ALWAYS_SPLIT;
  } else {
    cp->compcode = (uint8_t)c->codec;
    cp->filters[4] = (uint8_t)(c->kind == NDCELL ? BLOSC_FILTER_NDCELL : BLOSC_FILTER_NDMEAN);
    cp->filters_meta[4] = (uint8_t)c->meta;
    cp->filters[5] = BLOSC_SHUFFLE;
  }
}

/* ndcell refuses cells of more items than a block has, zfp blocks shorter than
   its 4-item cells (the `errors` mode has them) */
static int case_valid(const case_t *c) {
  const geometry_t *g = &geometries[c->ndim - 1][c->geometry];
  if (is_zfp(c->kind)) {
    for (int i = 0; i < c->ndim; i++)
      if (g->block[i] < 4) return 0;
  }
  int64_t cell = 1, block = 1;
  for (int i = 0; i < c->ndim; i++) {
    cell *= c->meta;
    block *= g->block[i];
  }
  return c->kind != NDCELL || cell <= block;
}

typedef void (*case_fn)(const case_t *, const char *);

static int for_each_case(case_fn fn, const char *dir) {
  /* zfp: tolerances 1e-3, 1e-1, 10 (signed bytes); planes + 5..11; 10%, 40%, 75% of the input */
  static const int metas[NKINDS][3] = {{2, 3, 4}, {2, 3, 5}, {4, 8, 0}, {253, 255, 1}, {4, 12, 30}, {10, 40, 75}};
  static const int typesizes[NKINDS][4] = {{1, 2, 4, 8}, {4, 8, 0, 0}, {1, 2, 0, 0}, {4, 8, 0, 0}, {4, 8, 0, 0}, {4, 8, 0, 0}};
  int n = 0;
  for (int kind = 0; kind < NKINDS; kind++) {
    for (int mi = 0; mi < 3 && metas[kind][mi]; mi++) {
      for (int ti = 0; ti < 4 && typesizes[kind][ti]; ti++) {
        for (int ndim = 1; ndim <= 4; ndim++) {
          if (kind == NDLZ && ndim != 2) continue;
          for (int g = 0; g < 3; g++) {
            for (int nthreads = 1; nthreads <= 2; nthreads++) {
              case_t c = {kind, metas[kind][mi], typesizes[kind][ti], ndim, nthreads,
                          (mi + ti + g) % 2 ? BLOSC_ZSTD : BLOSC_LZ4, g};
              if (!case_valid(&c)) continue;
              fn(&c, dir);
              n++;
            }
          }
        }
      }
    }
  }
  return n;
}

static void path_of(const case_t *c, const char *dir, const char *ext, char *out, size_t n) {
  char name[256];
  case_name(c, name, sizeof(name));
  snprintf(out, n, "%s/%s.%s", dir, name, ext);
}

/* Read an array whole; NULL (and the code in *rc) when it cannot be read. */
static uint8_t *read_array(const char *path, int64_t *nbytes, int nthreads, int *rc) {
  b2nd_array_t *arr = NULL;
  *rc = b2nd_open(path, &arr);
  if (*rc < 0) return NULL;
  /* a decompression context with the case's threads */
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)nthreads;
  dp.schunk = arr->sc;
  blosc2_free_ctx(arr->sc->dctx);
  arr->sc->dctx = blosc2_create_dctx(dp);
  *nbytes = arr->nitems * arr->sc->typesize;
  uint8_t *out = malloc((size_t)*nbytes + 1);
  *rc = b2nd_to_cbuffer(arr, out, *nbytes);
  b2nd_free(arr);
  if (*rc < 0) {
    free(out);
    return NULL;
  }
  return out;
}

static void write_case(const case_t *c, const char *dir) {
  const geometry_t *g = &geometries[c->ndim - 1][c->geometry];
  int64_t n = nitems(g, c->ndim), nbytes = n * c->typesize;
  uint8_t *src = malloc((size_t)nbytes);
  case_data(c, g, src);
  char path[1024];
  path_of(c, dir, "b2nd", path, sizeof(path));
  remove(path);
  blosc2_cparams cp;
  params_for(c, &cp);
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.contiguous = true;
  st.urlpath = path;
  st.cparams = &cp;
  b2nd_context_t *ctx = b2nd_create_ctx(&st, (int8_t)c->ndim, g->shape, g->chunk, g->block,
                                        c->typesize == 4 ? "<f4" : c->typesize == 8 ? "<f8" : NULL, DTYPE_NUMPY_FORMAT,
                                        NULL, 0);
  b2nd_array_t *arr = NULL;
  int rc = b2nd_from_cbuffer(ctx, &arr, src, nbytes);
  char name[256];
  case_name(c, name, sizeof(name));
  if (rc < 0) {
    fprintf(stderr, "%s: cannot write (%d)\n", name, rc);
    CHECK(rc >= 0);
  } else {
    b2nd_free(arr);
    int64_t got_bytes = 0;
    int rrc = 0;
    uint8_t *got = read_array(path, &got_bytes, c->nthreads, &rrc);
    path_of(c, dir, "values", path, sizeof(path));
    remove(path);
    if (got) {
      save_file(path, got, (size_t)got_bytes);
      /* the lossless ones give the data back */
      if (c->kind == NDCELL || c->kind == NDLZ) CHECK(got_bytes == nbytes && memcmp(got, src, (size_t)nbytes) == 0);
      if (c->kind == ZFP_ACC && got_bytes == nbytes) {
        /* fixed accuracy: every value within the tolerance */
        double tol = pow(10, (int8_t)c->meta), worst = 0;
        for (int64_t i = 0; i < n; i++) {
          double a, b;
          if (c->typesize == 4) { float fa, fb; memcpy(&fa, src + i * 4, 4); memcpy(&fb, got + i * 4, 4); a = fa; b = fb; }
          else { memcpy(&a, src + i * 8, 8); memcpy(&b, got + i * 8, 8); }
          if (fabs(a - b) > worst) worst = fabs(a - b);
        }
        CHECK(worst <= tol);
      }
    } else if (getenv("XCOMPAT_VERBOSE")) {
      fprintf(stderr, "%s: the writer cannot read it back (%d)\n", name, rrc);
    }
    free(got);
  }
  b2nd_free_ctx(ctx);
  free(src);
}

static void check_case(const case_t *c, const char *dir) {
  char path[1024], vpath[1024], name[256];
  case_name(c, name, sizeof(name));
  path_of(c, dir, "b2nd", path, sizeof(path));
  path_of(c, dir, "values", vpath, sizeof(vpath));
  long vlen = 0;
  uint8_t *want = read_file(vpath, &vlen);
  int64_t got_bytes = 0;
  int rc = 0;
  uint8_t *got = read_array(path, &got_bytes, c->nthreads, &rc);
  if (want == NULL) {
    /* the writer could not read it back: neither can we */
    if (got) fprintf(stderr, "%s: reads, where its writer could not\n", name);
    CHECK(got == NULL);
  } else {
    if (!got || got_bytes != vlen || memcmp(got, want, (size_t)vlen) != 0)
      fprintf(stderr, "%s: values differ from the writer's (%d)\n", name, rc);
    CHECK(got && got_bytes == vlen && memcmp(got, want, (size_t)vlen) == 0);
  }
  free(want);
  free(got);
}

/* The arrays another writer listed in DIR/list.txt, each against the values it read back. */
static int check_dir(const char *dir) {
  char lpath[1024], name[256];
  snprintf(lpath, sizeof(lpath), "%s/list.txt", dir);
  FILE *f = fopen(lpath, "r");
  CHECK(f != NULL);
  if (!f) return 0;
  int n = 0;
  while (fscanf(f, "%255s", name) == 1) {
    char path[1024], vpath[1024];
    snprintf(path, sizeof(path), "%s/%s.b2nd", dir, name);
    snprintf(vpath, sizeof(vpath), "%s/%s.values", dir, name);
    long vlen = 0;
    uint8_t *want = read_file(vpath, &vlen);
    int64_t got_bytes = 0;
    int rc = 0;
    for (int nthreads = 1; nthreads <= 2; nthreads++) {
      uint8_t *got = read_array(path, &got_bytes, nthreads, &rc);
      int ok = want ? (got && got_bytes == vlen && memcmp(got, want, (size_t)vlen) == 0) : got == NULL;
      if (!ok) fprintf(stderr, "%s (%d threads): not the writer's values (%d)\n", name, nthreads, rc);
      CHECK(ok);
      free(got);
    }
    free(want);
    n++;
  }
  fclose(f);
  CHECK(n > 0);
  return n;
}

static int same = 0, different = 0;
static const char *other_dir = NULL;

static void compare_case(const case_t *c, const char *dir) {
  char p1[1024], p2[1024], name[256];
  if (c->nthreads != 1) return;
  case_name(c, name, sizeof(name));
  path_of(c, dir, "b2nd", p1, sizeof(p1));
  path_of(c, other_dir, "b2nd", p2, sizeof(p2));
  blosc2_schunk *a = blosc2_schunk_open(p1), *b = blosc2_schunk_open(p2);
  int equal = a && b && a->nchunks == b->nchunks;
  for (int64_t i = 0; equal && i < a->nchunks; i++) {
    uint8_t *ca = NULL, *cb = NULL;
    bool fa = false, fb = false;
    int la = blosc2_schunk_get_chunk(a, i, &ca, &fa), lb = blosc2_schunk_get_chunk(b, i, &cb, &fb);
    equal = la > 0 && la == lb && memcmp(ca, cb, (size_t)la) == 0;
    if (!equal && getenv("XCOMPAT_VERBOSE")) fprintf(stderr, "%s: chunk %lld differs (%d vs %d bytes)\n", name, (long long)i, la, lb);
    if (fa) free(ca);
    if (fb) free(cb);
  }
  if (equal) same++;
  else different++;
  if (a) blosc2_schunk_free(a);
  if (b) blosc2_schunk_free(b);
}

/* One array with a plugin and its meta; prints the return code. */
static void try_array(const char *what, int filter, int codec, int meta, int typesize, int ndim, const int32_t *block,
                      int splitmode) {
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunk[B2ND_MAX_DIM];
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    chunk[i] = block[i] * 2;
    shape[i] = chunk[i] * 2 - 1;
    n *= shape[i];
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  memset(cp.filters, 0, sizeof(cp.filters));
  memset(cp.filters_meta, 0, sizeof(cp.filters_meta));
  if (filter) {
    cp.filters[4] = (uint8_t)filter;
    cp.filters_meta[4] = (uint8_t)meta;
  } else {
    cp.compcode = (uint8_t)codec;
    cp.compcode_meta = (uint8_t)meta;
  }
  cp.splitmode = splitmode;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  uint8_t *src = malloc((size_t)(n * typesize));
  for (int64_t i = 0; i < n * typesize; i++) src[i] = (uint8_t)(i * 7 / 5);
  b2nd_context_t *ctx = b2nd_create_ctx(&st, (int8_t)ndim, shape, chunk, block, NULL, 0, NULL, 0);
  b2nd_array_t *arr = NULL;
  int rc = b2nd_from_cbuffer(ctx, &arr, src, n * typesize);
  printf("%s: write %d", what, rc);
  if (rc >= 0) {
    uint8_t *back = malloc((size_t)(n * typesize));
    int rrc = b2nd_to_cbuffer(arr, back, n * typesize);
    printf(", read %d", rrc);
    free(back);
    b2nd_free(arr);
  }
  printf("\n");
  b2nd_free_ctx(ctx);
  free(src);
}

/* A plain compression (no super-chunk) with a plugin; prints the return code. */
static void try_chunk(const char *what, int filter, int codec, int meta) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  memset(cp.filters, 0, sizeof(cp.filters));
  if (filter) {
    cp.filters[5] = (uint8_t)filter;
    cp.filters_meta[5] = (uint8_t)meta;
  } else {
    cp.compcode = (uint8_t)codec;
    cp.compcode_meta = (uint8_t)meta;
  }
  int32_t nbytes = 40000;
  uint8_t *src = malloc((size_t)nbytes), *dst = malloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
  fill_data(0, 4, nbytes, src);
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int rc = blosc2_compress_ctx(cctx, src, nbytes, dst, nbytes + BLOSC2_MAX_OVERHEAD);
  blosc2_free_ctx(cctx);
  printf("%s: %d\n", what, rc);
  free(src);
  free(dst);
}

static int errors(void) {
  const int32_t b2[] = {8, 8}, b3[] = {4, 4, 4}, b2s[] = {2, 16}, b9[] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  try_chunk("ndcell, no super-chunk", BLOSC_FILTER_NDCELL, 0, 4);
  try_chunk("ndmean, no super-chunk", BLOSC_FILTER_NDMEAN, 0, 4);
  try_chunk("ndlz, no super-chunk", 0, BLOSC_CODEC_NDLZ, 4);
  try_array("ndcell, meta 0", BLOSC_FILTER_NDCELL, 0, 0, 4, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndcell, cell larger than the block", BLOSC_FILTER_NDCELL, 0, 9, 4, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndcell, cell longer than one side", BLOSC_FILTER_NDCELL, 0, 4, 4, 2, b2s, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndcell, meta 200", BLOSC_FILTER_NDCELL, 0, 200, 1, 3, b3, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndcell, 9 dimensions", BLOSC_FILTER_NDCELL, 0, 2, 1, 9, b9, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, 2-byte items", BLOSC_FILTER_NDMEAN, 0, 4, 2, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, 1-byte items", BLOSC_FILTER_NDMEAN, 0, 4, 1, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, meta 0", BLOSC_FILTER_NDMEAN, 0, 0, 4, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, meta 128", BLOSC_FILTER_NDMEAN, 0, 128, 4, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, cell longer than the first side", BLOSC_FILTER_NDMEAN, 0, 4, 4, 2, b2s, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndmean, cell longer than every side", BLOSC_FILTER_NDMEAN, 0, 20, 8, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndlz, 3 dimensions", 0, BLOSC_CODEC_NDLZ, 4, 1, 3, b3, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndlz, meta 5", 0, BLOSC_CODEC_NDLZ, 5, 1, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndlz, meta 0", 0, BLOSC_CODEC_NDLZ, 0, 1, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndlz, 4-byte items, not split", 0, BLOSC_CODEC_NDLZ, 4, 4, 2, b2, BLOSC_NEVER_SPLIT);
  try_array("ndlz, 4-byte items, split", 0, BLOSC_CODEC_NDLZ, 4, 4, 2, b2, BLOSC_ALWAYS_SPLIT);
  try_array("ndlz, 8x8 cells over 8x8 blocks", 0, BLOSC_CODEC_NDLZ, 8, 1, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("ndlz, 8x8 cells over 2x16 blocks", 0, BLOSC_CODEC_NDLZ, 8, 1, 2, b2s, BLOSC_FORWARD_COMPAT_SPLIT);
  const int32_t b5[] = {4, 4, 4, 4, 4}, b1[] = {3}, b4[] = {8, 8, 4, 4};
  try_chunk("zfp_acc, no super-chunk", 0, BLOSC_CODEC_ZFP_FIXED_ACCURACY, 0);
  try_chunk("zfp_rate, no super-chunk", 0, BLOSC_CODEC_ZFP_FIXED_RATE, 50);
  try_array("zfp_acc, 5 dimensions", 0, BLOSC_CODEC_ZFP_FIXED_ACCURACY, 0, 4, 5, b5, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_acc, block side of 3", 0, BLOSC_CODEC_ZFP_FIXED_ACCURACY, 0, 8, 1, b1, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_prec, 2-byte items", 0, BLOSC_CODEC_ZFP_FIXED_PRECISION, 10, 2, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_prec, 1-byte items", 0, BLOSC_CODEC_ZFP_FIXED_PRECISION, 10, 1, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_rate, 2-byte items, split", 0, BLOSC_CODEC_ZFP_FIXED_RATE, 50, 2, 2, b2, BLOSC_ALWAYS_SPLIT);
  try_array("zfp_rate, 4-byte items, split", 0, BLOSC_CODEC_ZFP_FIXED_RATE, 50, 4, 2, b2, BLOSC_ALWAYS_SPLIT);
  try_array("zfp_rate, rate 0", 0, BLOSC_CODEC_ZFP_FIXED_RATE, 0, 4, 4, b4, BLOSC_FORWARD_COMPAT_SPLIT);
  /* (a rate above 100%, e.g. 255, makes c-blosc2 3.3.5 write past its stream
     buffer and abort: tests/plugins.rs has it for libb2nd) */
  try_array("zfp_prec, 255 planes", 0, BLOSC_CODEC_ZFP_FIXED_PRECISION, 255, 8, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_acc, tolerance 1e-128", 0, BLOSC_CODEC_ZFP_FIXED_ACCURACY, 128, 4, 2, b2, BLOSC_FORWARD_COMPAT_SPLIT);
  try_array("zfp_acc, tolerance 1e127", 0, BLOSC_CODEC_ZFP_FIXED_ACCURACY, 127, 8, 1, b4, BLOSC_FORWARD_COMPAT_SPLIT);
  return 0;
}

int main(int argc, char **argv) {
  blosc2_init();
  int rc = 0;
  if (argc >= 2 && strcmp(argv[1], "errors") == 0) {
    rc = errors();
    blosc2_destroy();
    return rc;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s write|check|checkdir DIR | compare DIR1 DIR2 | errors\n", argv[0]);
    return 2;
  }
  int ncases;
  if (strcmp(argv[1], "checkdir") == 0) {
    ncases = check_dir(argv[2]);
  } else if (strcmp(argv[1], "write") == 0) {
    ncases = for_each_case(write_case, argv[2]);
  } else if (strcmp(argv[1], "check") == 0) {
    ncases = for_each_case(check_case, argv[2]);
  } else {
    other_dir = argv[3];
    ncases = for_each_case(compare_case, argv[2]);
    printf("arrays with byte-identical chunks: %d of %d written with one thread (%d differ; %d cases in all)\n", same,
           same + different, different, ncases);
    blosc2_destroy();
    return different == 0 ? 0 : 1;
  }
  blosc2_destroy();
  printf("%s %s: %d cases\n", argv[1], argv[2], ncases);
  return report(argv[0]);
}
