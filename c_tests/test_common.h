/* Minimal assertion helpers shared by the C test programs. */
#ifndef B2ND_TEST_COMMON_H
#define B2ND_TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tests_run = 0;
static int tests_failed = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    tests_run++;                                                                 \
    if (!(cond)) {                                                               \
      tests_failed++;                                                            \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

#define CHECK_EQ(a, b)                                                                  \
  do {                                                                                  \
    long long va_ = (long long)(a), vb_ = (long long)(b);                               \
    tests_run++;                                                                        \
    if (va_ != vb_) {                                                                   \
      tests_failed++;                                                                   \
      fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, \
              va_, #b, vb_);                                                            \
    }                                                                                   \
  } while (0)

static inline int report(const char *name) {
  printf("%s: %d checks, %d failed\n", name, tests_run, tests_failed);
  return tests_failed == 0 ? 0 : 1;
}

/* Deterministic test data of several kinds. */
static inline void fill_data(int kind, int typesize, int32_t nbytes, uint8_t *buf) {
  uint32_t state = 12345u + (uint32_t)kind * 7919u + (uint32_t)typesize;
  for (int32_t i = 0; i < nbytes; i++) {
    state = state * 1664525u + 1013904223u;
    switch (kind) {
      case 0: /* integer sequence with a little noise */
        buf[i] = (uint8_t)(((i / typesize) + ((state >> 28) & 1)) >> (8 * (i % typesize) % 32));
        break;
      case 1: /* smooth field */
        buf[i] = (uint8_t)((i / (typesize * 64)) & 0xff) ^ (uint8_t)((i % typesize == 0) ? (state >> 30) : 0);
        break;
      case 2: /* random */
        buf[i] = (uint8_t)(state >> 24);
        break;
      default: /* zeros with sparse ones */
        buf[i] = (uint8_t)((state >> 20) % 97 == 0);
    }
  }
}

/* The bytes of the file at `path` (malloc'ed, NULL if it cannot be read) and their number. */
static inline uint8_t *read_file(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)*len + 1);
  if (buf && fread(buf, 1, (size_t)*len, f) != (size_t)*len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

/* Write `len` bytes to the file at `path`; 0 on success. */
static inline int save_file(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(bytes, 1, len, f) == len;
  return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
