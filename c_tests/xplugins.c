/* Cross-compatibility of the plugin filters and codecs c-blosc2 registers at
   blosc2_init. Built twice from this source, against libb2nd and against the
   reference c-blosc2 3.3.5:
     write DIR          compress a matrix of buffers with each plugin into DIR/<case>.chunk
     check DIR          decompress what DIR holds and check the values (and getitem)
     compare DIR1 DIR2  count the chunks whose bytes are the same in both
     errors             print the return codes of malformed parameters (the two
                        libraries must print the same lines)
   Running `check` of one library on what `write` of the other made tests both
   directions. */
#include <stdint.h>
#include "blosc2.h"
#include "blosc2/filters-registry.h"
#include "test_common.h"

static const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZSTD};
static const int typesizes[] = {1, 2, 4, 8, 3, 12};
static const int32_t sizes[] = {7, 4321, 240000, 262147, 1000003};
/* pipelines: 0 shuffle+bytedelta, 1 bytedelta alone, 2 shuffle+bytedelta_buggy,
   3 int_trunc (bits kept)+shuffle, 4 int_trunc (bits dropped)+shuffle+bytedelta,
   5 bitshuffle+bytedelta */
static const int pipelines = 6;

typedef struct {
  int codec, typesize, clevel, pipeline, nthreads;
  int32_t nbytes;
} case_t;

static int int_trunc_meta(const case_t *c) {
  return c->pipeline == 3 ? 8 * c->typesize - 3 : -(c->typesize * 8 / 3);
}

static void params_for(const case_t *c, blosc2_cparams *cp) {
  *cp = BLOSC2_CPARAMS_DEFAULTS;
  cp->compcode = (uint8_t)c->codec;
  cp->clevel = (uint8_t)c->clevel;
  cp->typesize = c->typesize;
  cp->nthreads = (int16_t)c->nthreads;
  memset(cp->filters, 0, sizeof(cp->filters));
  memset(cp->filters_meta, 0, sizeof(cp->filters_meta));
  uint8_t ts = (uint8_t)c->typesize;
  switch (c->pipeline) {
    case 0: cp->filters[4] = BLOSC_SHUFFLE; cp->filters[5] = BLOSC_FILTER_BYTEDELTA; cp->filters_meta[5] = ts; break;
    case 1: cp->filters[5] = BLOSC_FILTER_BYTEDELTA; cp->filters_meta[5] = ts; break;
    case 2: cp->filters[4] = BLOSC_SHUFFLE; cp->filters[5] = BLOSC_FILTER_BYTEDELTA_BUGGY; cp->filters_meta[5] = ts; break;
    case 3:
      cp->filters[0] = BLOSC_FILTER_INT_TRUNC; cp->filters_meta[0] = (uint8_t)int_trunc_meta(c);
      cp->filters[5] = BLOSC_SHUFFLE;
      break;
    case 4:
      cp->filters[0] = BLOSC_FILTER_INT_TRUNC; cp->filters_meta[0] = (uint8_t)(int8_t)int_trunc_meta(c);
      cp->filters[4] = BLOSC_SHUFFLE; cp->filters[5] = BLOSC_FILTER_BYTEDELTA; cp->filters_meta[5] = ts;
      break;
    default: cp->filters[4] = BLOSC_BITSHUFFLE; cp->filters[5] = BLOSC_FILTER_BYTEDELTA; cp->filters_meta[5] = ts; break;
  }
}

static int lossy(const case_t *c) { return c->pipeline == 3 || c->pipeline == 4; }

static int case_valid(const case_t *c) {
  /* int_trunc takes 1-, 2-, 4- and 8-byte items */
  if (lossy(c) && c->typesize != 1 && c->typesize != 2 && c->typesize != 4 && c->typesize != 8) return 0;
  return 1;
}

static void case_name(const case_t *c, char *out, size_t n) {
  snprintf(out, n, "c%d-t%d-l%d-p%d-th%d-n%d", c->codec, c->typesize, c->clevel, c->pipeline, c->nthreads,
           (int)c->nbytes);
}

/* Smooth floating-point-like data (what bytedelta is for), or integers. */
static void case_data(const case_t *c, uint8_t *buf) {
  if (c->typesize == 4 && !lossy(c)) {
    for (int32_t i = 0; i + 4 <= c->nbytes; i += 4) { float v = 20.f + (float)(i % 4000) * 0.013f; memcpy(buf + i, &v, 4); }
  } else if (c->typesize == 8 && !lossy(c)) {
    for (int32_t i = 0; i + 8 <= c->nbytes; i += 8) { double v = -3.0 + (double)(i % 8000) * 1e-3; memcpy(buf + i, &v, 8); }
  } else {
    /* (with three filters, c-blosc2 3.3.5 writes the third one's output over the
       caller's buffer, and a chunk that then falls back to a plain copy holds that:
       the three-filter pipeline gets data that compresses) */
    fill_data(c->pipeline == 4 ? c->typesize % 2 : (c->codec + c->typesize) % 3, c->typesize, c->nbytes, buf);
    return;
  }
  for (int32_t i = c->nbytes / c->typesize * c->typesize; i < c->nbytes; i++) buf[i] = (uint8_t)(i * 7);
}

/* What int_trunc keeps of an item. */
static void truncate_items(const case_t *c, uint8_t *buf) {
  int bits = 8 * c->typesize, m = int_trunc_meta(c);
  int zeroed = m >= 0 ? bits - m : -m;
  for (int32_t i = 0; i + c->typesize <= c->nbytes; i += c->typesize) {
    uint64_t v = 0;
    memcpy(&v, buf + i, (size_t)c->typesize);
    v &= ~((1ULL << zeroed) - 1);
    memcpy(buf + i, &v, (size_t)c->typesize);
  }
}

typedef void (*case_fn)(const case_t *c, const char *dir);

static int for_each_case(case_fn fn, const char *dir) {
  int ncases = 0;
  for (size_t a = 0; a < sizeof(codecs) / sizeof(int); a++)
    for (size_t b = 0; b < sizeof(typesizes) / sizeof(int); b++)
      for (int p = 0; p < pipelines; p++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(int32_t); s++) {
          int clevel = (int)((a + b + s + (size_t)p) % 3) * 4 + 1; /* 1, 5, 9 */
          if ((a + b + s) % 7 == 3) clevel = 0;
          case_t c = {codecs[a], typesizes[b], clevel, p, 1 + (int)((a + b + s) % 2), sizes[s]};
          if (!case_valid(&c)) continue;
          fn(&c, dir);
          ncases++;
        }
  return ncases;
}

static void write_case(const case_t *c, const char *dir) {
  uint8_t *src = malloc((size_t)c->nbytes), *dst = malloc((size_t)c->nbytes + BLOSC2_MAX_OVERHEAD);
  case_data(c, src);
  blosc2_cparams cp;
  params_for(c, &cp);
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int csize = blosc2_compress_ctx(cctx, src, c->nbytes, dst, c->nbytes + BLOSC2_MAX_OVERHEAD);
  CHECK(csize > 0);
  blosc2_free_ctx(cctx);
  char name[256], path[1024];
  case_name(c, name, sizeof(name));
  if (csize <= 0) fprintf(stderr, "  case %s: compress gives %d\n", name, csize);
  snprintf(path, sizeof(path), "%s/%s.chunk", dir, name);
  CHECK(save_file(path, dst, csize > 0 ? (size_t)csize : 0) == 0);
  free(src);
  free(dst);
}

static void check_case(const case_t *c, const char *dir) {
  char name[256], path[1024];
  case_name(c, name, sizeof(name));
  snprintf(path, sizeof(path), "%s/%s.chunk", dir, name);
  long len = 0;
  uint8_t *chunk = read_file(path, &len);
  CHECK(chunk != NULL && len > 0);
  if (!chunk || len == 0) { free(chunk); return; }
  uint8_t *expected = malloc((size_t)c->nbytes), *out = malloc((size_t)c->nbytes);
  case_data(c, expected);
  /* a chunk stored as a copy (too small, or not compressible) went through no filter */
  int memcpyed = (chunk[2] & BLOSC_MEMCPYED) != 0;
  if (lossy(c) && !memcpyed) truncate_items(c, expected);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)c->nthreads;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int n = blosc2_decompress_ctx(dctx, chunk, (int32_t)len, out, c->nbytes);
  CHECK_EQ(n, c->nbytes);
  /* int_trunc and bytedelta_buggy leave the bytes after the last whole item
     undefined in c-blosc2 */
  int tail_undefined = !memcpyed && (lossy(c) || c->pipeline == 2);
  size_t cmp = tail_undefined ? (size_t)(c->nbytes / c->typesize * c->typesize) : (size_t)c->nbytes;
  int ok = n == c->nbytes && memcmp(out, expected, cmp) == 0;
  CHECK(ok);
  if (!ok) {
    int32_t at = 0;
    while (at < (int32_t)cmp && out[at] == expected[at]) at++;
    fprintf(stderr, "  case %s decodes wrong (flags 0x%02x, first difference at byte %d: %d, expected %d)\n", name,
            chunk[2], at, at < c->nbytes ? out[at] : -1, at < c->nbytes ? expected[at] : -1);
  }
  int32_t nitems = c->nbytes / c->typesize;
  for (int r = 0; r < 3 && nitems > 0; r++) {
    int32_t start = (int32_t)(((uint64_t)(r + 1) * 2654435761u) % (uint64_t)nitems);
    int32_t count = (nitems - start) < 1000 ? (nitems - start) : 1000;
    int got = blosc2_getitem_ctx(dctx, chunk, (int32_t)len, start, count, out, c->nbytes);
    CHECK_EQ(got, count * c->typesize);
    int same = memcmp(out, expected + (size_t)start * c->typesize, (size_t)count * c->typesize) == 0;
    CHECK(same);
    if (!same) fprintf(stderr, "  case %s getitem(%d, %d) differs\n", name, start, count);
  }
  blosc2_free_ctx(dctx);
  free(chunk);
  free(expected);
  free(out);
}

static int same_bytes = 0, different_bytes = 0;
static const char *other_dir = NULL;

/* Whether c-blosc2 writes the same bytes at every run: one thread (with two,
   blocks land in the order the threads finish), and no bytes it leaves undefined
   (after the last whole item, with int_trunc and bytedelta_buggy). */
static int deterministic(const case_t *c) {
  return c->nthreads == 1 && !((lossy(c) || c->pipeline == 2) && c->nbytes % c->typesize != 0);
}

static int compared = 0;

static void compare_case(const case_t *c, const char *dir) {
  char name[256], p1[1024], p2[1024];
  if (!deterministic(c)) return;
  compared++;
  case_name(c, name, sizeof(name));
  snprintf(p1, sizeof(p1), "%s/%s.chunk", dir, name);
  snprintf(p2, sizeof(p2), "%s/%s.chunk", other_dir, name);
  long l1 = 0, l2 = 0;
  uint8_t *a = read_file(p1, &l1), *b = read_file(p2, &l2);
  if (a && b && l1 == l2 && memcmp(a, b, (size_t)l1) == 0) same_bytes++;
  else {
    different_bytes++;
    if (getenv("XCOMPAT_VERBOSE")) fprintf(stderr, "differs: %s (%ld vs %ld bytes)\n", name, l1, l2);
  }
  free(a);
  free(b);
}

/* One compression with a filter and its meta; prints the return code. */
static void try_filter(const char *what, int filter, int meta, int typesize, int32_t nbytes) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  memset(cp.filters, 0, sizeof(cp.filters));
  cp.filters[5] = (uint8_t)filter;
  cp.filters_meta[5] = (uint8_t)meta;
  uint8_t *src = malloc((size_t)nbytes), *dst = malloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
  fill_data(0, typesize, nbytes, src);
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int rc = blosc2_compress_ctx(cctx, src, nbytes, dst, nbytes + BLOSC2_MAX_OVERHEAD);
  blosc2_free_ctx(cctx);
  printf("%s (filter %d, meta %d, typesize %d, %d bytes): %s\n", what, filter, meta, typesize, (int)nbytes,
         rc > 0 ? "compresses" : "fails");
  if (rc <= 0) printf("  code %d\n", rc);
  free(src);
  free(dst);
}

static int errors(void) {
  try_filter("bytedelta, meta 0, no super-chunk", BLOSC_FILTER_BYTEDELTA, 0, 4, 40000);
  try_filter("bytedelta_buggy, meta 0, no super-chunk", BLOSC_FILTER_BYTEDELTA_BUGGY, 0, 4, 40000);
  try_filter("bytedelta, meta larger than the typesize", BLOSC_FILTER_BYTEDELTA, 16, 4, 40000);
  try_filter("bytedelta, meta 255", BLOSC_FILTER_BYTEDELTA, 255, 4, 40000);
  try_filter("bytedelta, tiny buffer", BLOSC_FILTER_BYTEDELTA, 4, 4, 3);
  try_filter("int_trunc, meta 0", BLOSC_FILTER_INT_TRUNC, 0, 4, 40000);
  try_filter("int_trunc, keeps all bits", BLOSC_FILTER_INT_TRUNC, 32, 4, 40000);
  try_filter("int_trunc, keeps more bits than there are", BLOSC_FILTER_INT_TRUNC, 33, 4, 40000);
  try_filter("int_trunc, drops all bits", BLOSC_FILTER_INT_TRUNC, (uint8_t)-32, 4, 40000);
  try_filter("int_trunc, drops 31 of 32 bits", BLOSC_FILTER_INT_TRUNC, (uint8_t)-31, 4, 40000);
  try_filter("int_trunc, typesize 3", BLOSC_FILTER_INT_TRUNC, 10, 3, 40000);
  try_filter("int_trunc, typesize 16", BLOSC_FILTER_INT_TRUNC, 10, 16, 40000);
  try_filter("int_trunc, 8-byte items keep 1 bit", BLOSC_FILTER_INT_TRUNC, 1, 8, 40000);
  try_filter("int_trunc, 1-byte items drop 7 bits", BLOSC_FILTER_INT_TRUNC, (uint8_t)-7, 1, 40000);
  try_filter("ndcell without a b2nd metalayer", BLOSC_FILTER_NDCELL, 4, 4, 40000);
  try_filter("ndmean without a b2nd metalayer", BLOSC_FILTER_NDMEAN, 4, 4, 40000);
  /* the plugin codecs' names and ids */
  printf("compressors: %s\n", blosc2_list_compressors());
  for (int code = 30; code <= 42; code++) {
    const char *name = NULL;
    int rc = blosc2_compcode_to_compname(code, &name);
    printf("compcode %d: %d %s\n", code, rc, name ? name : "(none)");
    if (name == NULL) continue;
    char *lib = NULL, *version = NULL;
    int info = blosc2_get_complib_info(name, &lib, &version);
    printf("  compname_to_compcode %d, complib_info %d %s %s\n", blosc2_compname_to_compcode(name), info,
           lib ? lib : "(none)", version ? version : "(none)");
    free(lib);
    free(version);
  }
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
    fprintf(stderr, "usage: %s write|check DIR | compare DIR1 DIR2 | errors\n", argv[0]);
    return 2;
  }
  int ncases;
  if (strcmp(argv[1], "write") == 0) {
    ncases = for_each_case(write_case, argv[2]);
  } else if (strcmp(argv[1], "check") == 0) {
    ncases = for_each_case(check_case, argv[2]);
  } else {
    other_dir = argv[3];
    ncases = for_each_case(compare_case, argv[2]);
    printf("byte-identical chunks: %d of %d written deterministically (%d differ; %d cases in all)\n", same_bytes,
           compared, different_bytes, ncases);
    blosc2_destroy();
    return different_bytes == 0 ? 0 : 1;
  }
  blosc2_destroy();
  printf("%s %s: %d cases\n", argv[1], argv[2], ncases);
  return report(argv[0]);
}
