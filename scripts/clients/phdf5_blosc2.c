/* Parallel HDF5 with the Blosc2 filter (id 32026, the HDF Group's H5Zblosc2 plugin, found
   through HDF5_PLUGIN_PATH): every rank writes its share of chunked datasets collectively,
   then every rank reads all of them back and checks every value.

     mpiexec -n 4 phdf5_blosc2 write FILE     write the datasets (FILE is made anew), check them
     mpiexec -n 4 phdf5_blosc2 check FILE     check the datasets of FILE (written by any build)

   PHDF5_SCALE=N makes the datasets N times longer (default 1: 6,181 rows of 1,000 items with
   4 ranks). Each rank's peak resident memory (VmHWM) is then checked to stay below the size
   of one 8-byte dataset when N >= 4: no rank ever holds a whole dataset, nor its share of all.

   The datasets: several codecs and shuffles, 4- and 8-byte items; rows split evenly between
   the ranks while a chunk holds 1.5 ranks' rows, so that chunks span ranks; written and read
   in slabs of SLAB_ROWS rows, so that no rank holds more than one slab, while each dataset
   is larger than one rank's share of it many times over. Prints one line per dataset and
   "phdf5_blosc2: N checks, M failed" (rank 0); exits 1 on any failure. Used by
   scripts/clients-tests.sh phdf5 (docs/CLIENTS.md). */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILTER_BLOSC2 32026
#define COLS 1000
#define SLAB_ROWS 64

typedef struct {
  const char *name;
  int compcode, shuffle, clevel, typesize;
} case_t;

/* c-blosc2's codes: 0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd; shuffle 0 none, 1 byte, 2 bit */
static const case_t cases[] = {
    {"blosclz_shuffle_f64", 0, 1, 5, 8}, {"lz4_noshuffle_i32", 1, 0, 5, 4},
    {"lz4hc_bitshuffle_f64", 2, 2, 9, 8}, {"zlib_shuffle_i32", 4, 1, 5, 4},
    {"zstd_bitshuffle_i32", 5, 2, 3, 4}, {"zstd_shuffle_f64", 5, 1, 1, 8},
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

static int rank, nranks;
static long checks, failures;

static void check(int ok, const char *what, const char *name) {
  checks++;
  if (!ok) {
    failures++;
    if (failures < 20) fprintf(stderr, "rank %d: %s: %s failed\n", rank, name, what);
  }
}

/* The value at (row, col): smooth, so that the filters have work. */
static double value(long row, long col) { return (double)(row % 997) * 0.25 + (double)col * 1e-3; }

static void fill(const case_t *c, long row0, long nrows, void *buf) {
  for (long r = 0; r < nrows; r++)
    for (long j = 0; j < COLS; j++) {
      double v = value(row0 + r, j);
      if (c->typesize == 8) ((double *)buf)[r * COLS + j] = v;
      else ((int32_t *)buf)[r * COLS + j] = (int32_t)(v * 4);
    }
}

static long scale = 1;
static long rows_total(void) { return scale * nranks * 24 * SLAB_ROWS + 37; } /* not a multiple of the chunk */

/* This process's peak resident memory, bytes (Linux: VmHWM), or -1. */
static long peak_rss(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

static hid_t mem_type(const case_t *c) { return c->typesize == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT32; }

static void write_case(hid_t file, const case_t *c, void *buf) {
  long rows = rows_total();
  long share = (rows + nranks - 1) / nranks;
  hsize_t dims[2] = {(hsize_t)rows, COLS};
  hsize_t chunk[2] = {(hsize_t)(share + share / 2), 200};  /* 1.5 ranks' rows: chunks span ranks */
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  unsigned cd[7] = {0, 0, 0, 0, (unsigned)c->clevel, (unsigned)c->shuffle, (unsigned)c->compcode};
  check(H5Pset_filter(dcpl, FILTER_BLOSC2, H5Z_FLAG_MANDATORY, 7, cd) >= 0, "H5Pset_filter", c->name);
  hid_t ds = H5Dcreate2(file, c->name, mem_type(c), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(ds >= 0, "H5Dcreate2", c->name);
  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);  /* filtered datasets are written collectively */
  long first = (long)rank * share, last = first + share < rows ? first + share : rows;
  long nslabs_max = (share + SLAB_ROWS - 1) / SLAB_ROWS;
  /* every rank takes part in every collective write, with an empty selection once done */
  for (long s = 0; s < nslabs_max; s++) {
    long r0 = first + s * SLAB_ROWS, n = last - r0 < SLAB_ROWS ? last - r0 : SLAB_ROWS;
    if (n < 0) n = 0;
    hid_t fspace = H5Dget_space(ds);
    hsize_t start[2] = {(hsize_t)(n > 0 ? r0 : 0), 0}, count[2] = {(hsize_t)n, COLS};
    hid_t mspace = H5Screate_simple(2, count, NULL);
    if (n > 0) {
      H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
      fill(c, r0, n, buf);
    } else {
      H5Sselect_none(fspace);
      H5Sselect_none(mspace);
    }
    check(H5Dwrite(ds, mem_type(c), mspace, fspace, xfer, buf) >= 0, "H5Dwrite", c->name);
    H5Sclose(mspace);
    H5Sclose(fspace);
  }
  H5Pclose(xfer);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* Every rank reads the whole dataset, slab by slab, and checks every value and the filter. */
static void check_case(hid_t file, const case_t *c, void *buf, void *want) {
  hid_t ds = H5Dopen2(file, c->name, H5P_DEFAULT);
  check(ds >= 0, "H5Dopen2", c->name);
  if (ds < 0) return;
  hid_t dcpl = H5Dget_create_plist(ds);
  unsigned flags, cd[16];
  size_t ncd = 16;
  check(H5Pget_filter_by_id2(dcpl, FILTER_BLOSC2, &flags, &ncd, cd, 0, NULL, NULL) >= 0, "the dataset has the Blosc2 filter", c->name);
  H5Pclose(dcpl);
  hid_t fspace = H5Dget_space(ds);
  hsize_t dims[2];
  H5Sget_simple_extent_dims(fspace, dims, NULL);
  check(dims[0] == (hsize_t)rows_total() && dims[1] == COLS, "its shape", c->name);
  long bad = 0;
  for (long r0 = 0; r0 < (long)dims[0]; r0 += SLAB_ROWS) {
    long n = (long)dims[0] - r0 < SLAB_ROWS ? (long)dims[0] - r0 : SLAB_ROWS;
    hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)n, COLS};
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    if (H5Dread(ds, mem_type(c), mspace, fspace, H5P_DEFAULT, buf) < 0) bad++;
    fill(c, r0, n, want);
    if (memcmp(buf, want, (size_t)n * COLS * (size_t)c->typesize) != 0) bad++;
    H5Sclose(mspace);
  }
  check(bad == 0, "every value read back", c->name);
  H5Sclose(fspace);
  H5Dclose(ds);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 3 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "check") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: %s write|check FILE\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *path = argv[2];
  if (getenv("PHDF5_SCALE")) scale = atol(getenv("PHDF5_SCALE"));
  if (scale < 1) scale = 1;
  int writing = strcmp(argv[1], "write") == 0;
  check(H5Zfilter_avail(FILTER_BLOSC2) > 0, "the Blosc2 filter is found (HDF5_PLUGIN_PATH)", "plugin");
  void *buf = malloc((size_t)SLAB_ROWS * COLS * 8), *want = malloc((size_t)SLAB_ROWS * COLS * 8);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  if (writing) {
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file >= 0, "H5Fcreate", path);
    for (int i = 0; i < NCASES && file >= 0; i++) write_case(file, &cases[i], buf);
    if (file >= 0) H5Fclose(file);
  }
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  check(file >= 0, "H5Fopen", path);
  for (int i = 0; i < NCASES && file >= 0; i++) {
    long before = failures;
    check_case(file, &cases[i], buf, want);
    long bad = failures - before, all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%-24s %ld rows x %d, chunks of %ld rows: read back on %d ranks: %s\n", cases[i].name, rows_total(),
             COLS, ((rows_total() + nranks - 1) / nranks) * 3 / 2, nranks, all_bad ? "FAILED" : "ok");
  }
  if (file >= 0) H5Fclose(file);
  H5Pclose(fapl);
  free(buf);
  free(want);
  long rss = peak_rss(), max_rss = 0, dataset_bytes = rows_total() * COLS * 8;
  MPI_Allreduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (scale >= 4) check(rss > 0 && rss < dataset_bytes, "peak memory below one dataset's size", "memory");
  if (rank == 0)
    printf("peak resident memory of a rank: %.1f MB; one 8-byte dataset: %.1f MB, a rank's share of the %d: %.1f MB\n",
           max_rss / 1e6, dataset_bytes / 1e6, NCASES, (double)dataset_bytes * 0.75 * NCASES / nranks / 1e6);
  long all_checks = 0, all_failures = 0;
  MPI_Reduce(&checks, &all_checks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(&all_failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("phdf5_blosc2: %ld checks, %ld failed (%d ranks, %s)\n", all_checks, all_failures, nranks, path);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
