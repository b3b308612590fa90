/* Prefilters and postfilters through contexts and super-chunks: what each
   block's call receives, what it produces, errors, disposable output.
   Built against libb2nd and (with REF_BLOSC2_PREFIX) against c-blosc2 3.3.5: both pass. */
#include <pthread.h>

#include "blosc2.h"
#include "test_common.h"

#define N 100000 /* int32 items */

typedef struct {
  int calls;
  int bad;            /* calls whose parameters were not as expected */
  int64_t last_nchunk;
  int32_t blocksize;  /* the chunk's block size, once known */
  void *ctx;
  int fail_at;        /* return an error at this call (-1: never) */
  int32_t add;        /* value added by the filter */
} hook_state;

static int prefilter(blosc2_prefilter_params *p) {
  hook_state *st = p->user_data;
  st->calls++;
  if (p->output_typesize != 4 || p->output_size % 4 != 0 || p->nblock < 0 || p->ttmp == NULL ||
      (st->blocksize > 0 && p->output_offset != p->nblock * st->blocksize) || (st->ctx && p->ctx != st->ctx))
    st->bad++;
  st->last_nchunk = p->nchunk;
  if (st->fail_at >= 0 && st->calls - 1 == st->fail_at) return -1;
  const int32_t *in = (const int32_t *)p->input;
  int32_t *out = (int32_t *)p->output;
  for (int i = 0; i < p->output_size / 4; i++) {
    out[i] = (in != NULL ? in[i] : 0) * 2 + st->add + (int32_t)(p->nchunk > 0 ? p->nchunk : 0);
  }
  return 0;
}

static int postfilter(blosc2_postfilter_params *p) {
  hook_state *st = p->user_data;
  st->calls++;
  if (p->typesize != 4 || p->size % 4 != 0 || p->ttmp == NULL || (st->ctx && p->ctx != st->ctx)) st->bad++;
  st->last_nchunk = p->nchunk;
  if (st->fail_at >= 0 && st->calls - 1 == st->fail_at) return -1;
  const int32_t *in = (const int32_t *)p->input;
  int32_t *out = (int32_t *)p->output;
  for (int i = 0; i < p->size / 4; i++) out[i] = in[i] + st->add;
  return 0;
}

static blosc2_cparams base_cparams(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = BLOSC_LZ4;
  cp.blocksize = 16384;
  return cp;
}

static void contexts(void) {
  int32_t *src = malloc(N * 4), *back = malloc(N * 4);
  uint8_t *chunk = malloc(N * 4 + BLOSC2_MAX_OVERHEAD);
  for (int i = 0; i < N; i++) src[i] = i % 1000;

  /* prefilter: output = 2 * input + 3 */
  hook_state st = {.fail_at = -1, .add = 3, .blocksize = 16384};
  blosc2_prefilter_params pp = {.user_data = &st};
  blosc2_cparams cp = base_cparams();
  cp.prefilter = prefilter;
  cp.preparams = &pp;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  if (cctx == NULL) return;
  st.ctx = cctx;
  int cb = blosc2_compress_ctx(cctx, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD);
  CHECK(cb > 0);
  CHECK_EQ(st.calls, (N * 4 + 16383) / 16384);
  CHECK_EQ(st.bad, 0);
  CHECK_EQ(st.last_nchunk, -1);
  CHECK_EQ(blosc2_decompress(chunk, cb, back, N * 4), N * 4);
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= back[i] == src[i] * 2 + 3;
  CHECK(ok);

  /* a failing prefilter fails the compression */
  st.calls = 0;
  st.fail_at = 2;
  CHECK(blosc2_compress_ctx(cctx, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD) < 0);
  blosc2_free_ctx(cctx);

  /* disposable output: every block is seen, the chunk holds zeros */
  hook_state sd = {.fail_at = -1, .add = 0};
  blosc2_prefilter_params pd = {.user_data = &sd, .output_is_disposable = true};
  cp.preparams = &pd;
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  if (cctx != NULL) {
    cb = blosc2_compress_ctx(cctx, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD);
    CHECK(cb > 0);
    CHECK_EQ(sd.calls, (N * 4 + 16383) / 16384);
    CHECK_EQ(blosc2_decompress(chunk, cb, back, N * 4), N * 4);
    ok = 1;
    for (int i = 0; i < N; i++) ok &= back[i] == 0;
    CHECK(ok);
    blosc2_free_ctx(cctx);
  }

  /* postfilter: output = decoded + 5, whole chunks and getitem */
  cb = blosc2_compress(5, 1, 4, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD);
  CHECK(cb > 0);
  hook_state sp = {.fail_at = -1, .add = 5};
  blosc2_postfilter_params qp = {.user_data = &sp};
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.postfilter = postfilter;
  dp.postparams = &qp;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK(dctx != NULL);
  if (dctx != NULL) {
    sp.ctx = dctx;
    CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, cb, back, N * 4), N * 4);
    ok = 1;
    for (int i = 0; i < N; i++) ok &= back[i] == src[i] + 5;
    CHECK(ok);
    CHECK(sp.calls > 0);
    CHECK_EQ(sp.bad, 0);
    CHECK_EQ(sp.last_nchunk, -1);
    int32_t items[10];
    CHECK_EQ(blosc2_getitem_ctx(dctx, chunk, cb, 12345, 10, items, sizeof(items)), 40);
    ok = 1;
    for (int i = 0; i < 10; i++) ok &= items[i] == src[12345 + i] + 5;
    CHECK(ok);
    sp.calls = 0;
    sp.fail_at = 0;
    CHECK(blosc2_decompress_ctx(dctx, chunk, cb, back, N * 4) < 0);
    blosc2_free_ctx(dctx);
  }
  free(src);
  free(back);
  free(chunk);
}

static void superchunks(void) {
  /* A prefilter in the storage's cparams computes the chunks from their number. */
  hook_state st = {.fail_at = -1, .add = 1};
  blosc2_prefilter_params pp = {.user_data = &st};
  blosc2_cparams cp = base_cparams();
  cp.prefilter = prefilter;
  cp.preparams = &pp;
  hook_state sp = {.fail_at = -1, .add = 0};
  blosc2_postfilter_params qp = {.user_data = &sp};
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = {.contiguous = false, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  int32_t *zeros = calloc(N, 4), *back = malloc(N * 4);
  for (int c = 0; c < 3; c++) {
    CHECK_EQ(blosc2_schunk_append_buffer(sc, zeros, N * 4), c + 1);
    CHECK_EQ(st.last_nchunk, c);
  }
  CHECK_EQ(st.bad, 0);
  for (int c = 0; c < 3; c++) {
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, c, back, N * 4), N * 4);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= back[i] == 1 + c;
    CHECK(ok);
  }
  blosc2_schunk_free(sc);

  /* A postfilter in the storage's dparams sees the chunk numbers. */
  dp.postfilter = postfilter;
  dp.postparams = &qp;
  sp.add = 7;
  blosc2_cparams plain = base_cparams();
  storage.cparams = &plain;
  sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  for (int c = 0; c < 3; c++) {
    for (int i = 0; i < N; i++) back[i] = i + c;
    CHECK_EQ(blosc2_schunk_append_buffer(sc, back, N * 4), c + 1);
  }
  for (int c = 0; c < 3; c++) {
    CHECK_EQ(blosc2_schunk_decompress_chunk(sc, c, back, N * 4), N * 4);
    CHECK_EQ(sp.last_nchunk, c);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= back[i] == i + c + 7;
    CHECK(ok);
  }
  CHECK_EQ(sp.bad, 0);
  blosc2_schunk_free(sc);
  free(zeros);
  free(back);
}

/* A threads callback running each job on its own pthread. */
typedef struct {
  int calls, jobs;
  pthread_mutex_t mutex;
} pool_stats;

typedef struct {
  void (*dojob)(void *);
  void *data;
} job_arg;

static void *job_thread(void *arg) {
  job_arg *a = arg;
  a->dojob(a->data);
  return NULL;
}

static void threads_callback(void *callback_data, void (*dojob)(void *), int numjobs, size_t jobdata_elsize,
                             void *jobdata) {
  pool_stats *st = callback_data;
  pthread_mutex_lock(&st->mutex);
  st->calls++;
  st->jobs += numjobs;
  pthread_mutex_unlock(&st->mutex);
  pthread_t th[64];
  job_arg args[64];
  int n = numjobs < 64 ? numjobs : 64;
  for (int i = 0; i < n; i++) {
    args[i].dojob = dojob;
    args[i].data = (uint8_t *)jobdata + (size_t)i * jobdata_elsize;
    pthread_create(&th[i], NULL, job_thread, &args[i]);
  }
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
}

static void threads(void) {
  pool_stats st = {0, 0, PTHREAD_MUTEX_INITIALIZER};
  blosc2_set_threads_callback(threads_callback, &st);
  int32_t *src = malloc(N * 40), *back = malloc(N * 40);
  uint8_t *chunk = malloc(N * 40 + BLOSC2_MAX_OVERHEAD);
  for (int i = 0; i < N * 10; i++) src[i] = i / 3;
  blosc2_cparams cp = base_cparams();
  cp.nthreads = 4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int cb = blosc2_compress_ctx(cctx, src, N * 40, chunk, N * 40 + BLOSC2_MAX_OVERHEAD);
  CHECK(cb > 0);
  CHECK(st.calls >= 1);
  CHECK_EQ(st.jobs, 4 * st.calls);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 4;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int calls = st.calls;
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, cb, back, N * 40), N * 40);
  CHECK(memcmp(src, back, N * 40) == 0);
  CHECK(st.calls > calls);
  /* single-threaded contexts do not use it */
  calls = st.calls;
  CHECK_EQ(blosc2_decompress(chunk, cb, back, N * 40), N * 40);
  CHECK(memcmp(src, back, N * 40) == 0);
  CHECK_EQ(st.calls, calls);
  /* Back to the library's threads, for contexts made from now on (c-blosc2 3.3.5
     crashes when a context made with the callback set is used after it is unset). */
  blosc2_set_threads_callback(NULL, NULL);
  blosc2_free_ctx(dctx);
  dctx = blosc2_create_dctx(dp);
  memset(back, 0, N * 40);
  CHECK_EQ(blosc2_decompress_ctx(dctx, chunk, cb, back, N * 40), N * 40);
  CHECK(memcmp(src, back, N * 40) == 0);
  CHECK_EQ(st.calls, calls);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  free(src);
  free(back);
  free(chunk);
}

/* A user tuner that counts its hook calls. */
typedef struct {
  int init, next_blocksize, next_cparams, update, free, bad;
} tuner_calls;

static tuner_calls g_tc;

static int t_init(void *config, blosc2_context *cctx, blosc2_context *dctx) {
  g_tc.init++;
  if (cctx == NULL || dctx != NULL) g_tc.bad++;
  (void)config;
  return 0;
}
static int t_next_blocksize(blosc2_context *ctx) {
  g_tc.next_blocksize++;
  return ctx != NULL ? 0 : -1;
}
static int t_next_cparams(blosc2_context *ctx) {
  g_tc.next_cparams++;
  blosc2_cparams cp;
  if (blosc2_ctx_get_cparams(ctx, &cp) < 0 || cp.typesize != 4) g_tc.bad++;
  return 0;
}
static int t_update(blosc2_context *ctx, double ctime) {
  g_tc.update++;
  if (ctx == NULL || ctime < 0) g_tc.bad++;
  return 0;
}
static int t_free(blosc2_context *ctx) {
  g_tc.free++;
  return ctx != NULL ? 0 : -1;
}

static void tuners(void) {
  blosc2_tuner t = {t_init, t_next_blocksize, t_next_cparams, t_update, t_free, 170, "counting-tuner"};
  CHECK_EQ(blosc2_register_tuner(&t), 0);
  CHECK_EQ(blosc2_register_tuner(&t), 0); /* the same again is fine */
  blosc2_tuner other = t;
  other.name = "another-tuner";
  CHECK(blosc2_register_tuner(&other) < 0);
  other.id = 100; /* below the user range */
  CHECK(blosc2_register_tuner(&other) < 0);

  int32_t *src = malloc(N * 4);
  uint8_t *chunk = malloc(N * 4 + BLOSC2_MAX_OVERHEAD);
  for (int i = 0; i < N; i++) src[i] = i;
  int params = 1;
  blosc2_cparams cp = base_cparams();
  cp.tuner_id = 170;
  cp.tuner_params = &params;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  if (cctx != NULL) {
    CHECK_EQ(g_tc.init, 1);
    for (int k = 0; k < 2; k++) {
      int cb = blosc2_compress_ctx(cctx, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD);
      CHECK(cb > 0);
      int32_t back[100];
      CHECK_EQ(blosc2_getitem(chunk, cb, 500, 100, back, sizeof(back)), 400);
      CHECK_EQ(back[0], 500);
    }
    /* the context's private tuner state is never set through the public API:
       next_blocksize before each compression, no next_cparams/update/free */
    CHECK_EQ(g_tc.next_blocksize, 2);
    CHECK_EQ(g_tc.next_cparams, 0);
    CHECK_EQ(g_tc.update, 0);
    blosc2_free_ctx(cctx);
    CHECK_EQ(g_tc.free, 0);
  }
  /* without tuner_params: next_blocksize before each compression, nothing else */
  cp.tuner_params = NULL;
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  if (cctx != NULL) {
    CHECK(blosc2_compress_ctx(cctx, src, N * 4, chunk, N * 4 + BLOSC2_MAX_OVERHEAD) > 0);
    CHECK_EQ(g_tc.next_blocksize, 3);
    CHECK_EQ(g_tc.update, 0);
    blosc2_free_ctx(cctx);
    CHECK_EQ(g_tc.free, 0);
  }
  CHECK_EQ(g_tc.init, 2);
  CHECK_EQ(g_tc.bad, 0);
  /* an unknown tuner makes no context */
  cp.tuner_id = 171;
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx == NULL);
  if (cctx != NULL) blosc2_free_ctx(cctx);
  free(src);
  free(chunk);
}

int main(void) {
  blosc2_init();
  tuners();
  contexts();
  superchunks();
  threads();
  blosc2_destroy();
  return report("test_hooks");
}
