/* ADIOS2's Blosc2 operator ("blosc") under MPI: every rank writes its blocks of global arrays
   through the operator, step after step, then every rank reads them back and checks every value.

     mpiexec -n 4 adios2_blosc2 write ENGINE FILE   write FILE (BP3, BP4 or BP5), then check it
     mpiexec -n 4 adios2_blosc2 check ENGINE FILE   check FILE (written by any build, any rank count)

   The variables: each of the operator's codecs, its three shuffles, several levels, block sizes
   and thread counts, 1-, 2- and 3-dimensional, 1- to 8-byte items, and one whose blocks stay under
   the operator's threshold (stored without compression). Each rank puts two blocks of every
   variable per step (its rows, split in two unequal parts). The check reads each step's whole
   array on every rank, then a selection that crosses the ranks' blocks, and compares every item
   with the value it must have; after a write, rank 0 also checks that the file's data are smaller
   than the raw values (the operator was applied). Rank 0 prints
   "adios2_blosc2: ACTION ENGINE FILE: N checks, M failed"; exits 1 on any failure. Used by
   scripts/clients-tests.sh adios2 (docs/CLIENTS.md). */
#include <adios2.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace
{

constexpr size_t kSteps = 3;
constexpr size_t kRowsPerRank = 48; // split 20 + 28 between the rank's two blocks
constexpr size_t kSplit = 20;

struct Case
{
    const char *name;
    const char *type; // i8 u8 i16 i32 i64 f32 f64
    size_t ndim;      // the rows are the first dimension, split between the ranks
    adios2::Params params;
};

const Case kCases[] = {
    {"blosclz_shuffle_f64_2d", "f64", 2, {{"compressor", "blosclz"}, {"clevel", "5"}, {"doshuffle", "BLOSC_SHUFFLE"}}},
    {"lz4_bitshuffle_f32_3d", "f32", 3, {{"compressor", "lz4"}, {"clevel", "9"}, {"doshuffle", "BLOSC_BITSHUFFLE"}}},
    {"lz4hc_noshuffle_i32_1d", "i32", 1, {{"compressor", "lz4hc"}, {"clevel", "3"}, {"doshuffle", "BLOSC_NOSHUFFLE"}}},
    {"zlib_shuffle_i64_2d", "i64", 2, {{"compressor", "zlib"}, {"compression_level", "6"}, {"doshuffle", "BLOSC_SHUFFLE"}, {"blocksize", "16384"}}},
    {"zstd_bitshuffle_u8_2d", "u8", 2, {{"compressor", "zstd"}, {"clevel", "1"}, {"doshuffle", "BLOSC_BITSHUFFLE"}, {"nthreads", "2"}}},
    {"zstd_shuffle_i16_3d", "i16", 3, {{"compressor", "zstd"}, {"clevel", "9"}, {"doshuffle", "BLOSC_SHUFFLE"}, {"nthreads", "3"}, {"blocksize", "4096"}}},
    {"blosclz_default_i8_1d", "i8", 1, {}},
    {"threshold_memcpy_f64_2d", "f64", 2, {{"compressor", "zstd"}, {"threshold", "1073741824"}}},
};

// The global shape of a case for `ranks` ranks: rows, then 40 columns, then 25 planes
adios2::Dims Shape(const Case &c, size_t ranks)
{
    adios2::Dims d{ranks * kRowsPerRank};
    if (c.ndim >= 2)
        d.push_back(40);
    if (c.ndim >= 3)
        d.push_back(25);
    return d;
}

size_t Product(const adios2::Dims &d)
{
    return std::accumulate(d.begin(), d.end(), size_t{1}, std::multiplies<size_t>());
}

// The value of item `flat` (row-major index in the global array) at `step`: smooth enough to
// compress, different in every step and variable, and exact in every type
template <typename T>
T Value(size_t flat, size_t step, size_t var)
{
    const size_t v = flat * 3 + step * 7 + var * 11;
    if (std::is_floating_point<T>::value)
        return static_cast<T>(static_cast<double>(v % 100003) * 0.25 + static_cast<double>(step));
    if (sizeof(T) == 1)
        return static_cast<T>((flat / 16 + step + var) % 100);
    return static_cast<T>(v % 30011);
}

struct Ctx
{
    int rank = 0, size = 1;
    long checks = 0, failed = 0;
    void Check(bool ok, const std::string &what)
    {
        checks++;
        if (!ok)
        {
            failed++;
            std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
        }
    }
};

template <typename T>
void PutCase(adios2::IO &io, adios2::Engine &w, const Case &c, size_t var, size_t step, Ctx &ctx)
{
    adios2::Variable<T> v = io.InquireVariable<T>(c.name);
    if (!v)
    {
        v = io.DefineVariable<T>(c.name, Shape(c, ctx.size), adios2::Dims(c.ndim, 0), Shape(c, 1));
        v.AddOperation("blosc", c.params);
    }
    const adios2::Dims shape = Shape(c, ctx.size);
    const size_t row = Product(shape) / shape[0];
    const size_t first = static_cast<size_t>(ctx.rank) * kRowsPerRank;
    for (const auto &part : {std::pair<size_t, size_t>{0, kSplit}, {kSplit, kRowsPerRank - kSplit}})
    {
        adios2::Dims start(c.ndim, 0), count = shape;
        start[0] = first + part.first;
        count[0] = part.second;
        std::vector<T> data(part.second * row);
        for (size_t i = 0; i < data.size(); i++)
            data[i] = Value<T>(start[0] * row + i, step, var);
        v.SetSelection({start, count});
        w.Put(v, data.data(), adios2::Mode::Sync);
    }
}

// Reads rows [first, first + rows) of `step` and compares every item
template <typename T>
void GetRows(adios2::IO &io, adios2::Engine &r, const Case &c, size_t var, size_t step, size_t ranks,
             size_t first, size_t rows, const char *what, Ctx &ctx)
{
    adios2::Variable<T> v = io.InquireVariable<T>(c.name);
    ctx.Check(static_cast<bool>(v), std::string(c.name) + ": variable present");
    if (!v)
        return;
    const adios2::Dims shape = Shape(c, ranks);
    ctx.Check(v.Shape() == shape, std::string(c.name) + ": shape");
    if (v.Shape() != shape)
        return;
    const size_t row = Product(shape) / shape[0];
    adios2::Dims start(c.ndim, 0), count = shape;
    start[0] = first;
    count[0] = rows;
    v.SetSelection({start, count});
    std::vector<T> data(rows * row);
    r.Get(v, data.data(), adios2::Mode::Sync);
    size_t bad = 0, at = 0;
    for (size_t i = 0; i < data.size(); i++)
    {
        const T want = Value<T>(first * row + i, step, var);
        if (std::memcmp(&data[i], &want, sizeof(T)) != 0)
        {
            if (!bad)
                at = i;
            bad++;
        }
    }
    ctx.Check(bad == 0, std::string(c.name) + " step " + std::to_string(step) + " " + what + ": " +
                            std::to_string(bad) + " wrong items, first at " + std::to_string(at));
}

template <typename F>
void Dispatch(const char *type, F &&f)
{
    const std::string t = type;
    if (t == "i8")
        f(int8_t{});
    else if (t == "u8")
        f(uint8_t{});
    else if (t == "i16")
        f(int16_t{});
    else if (t == "i32")
        f(int32_t{});
    else if (t == "i64")
        f(int64_t{});
    else if (t == "f32")
        f(float{});
    else
        f(double{});
}

void Write(adios2::ADIOS &adios, const std::string &engine, const std::string &path, Ctx &ctx)
{
    adios2::IO io = adios.DeclareIO("writer");
    io.SetEngine(engine);
    adios2::Engine w = io.Open(path, adios2::Mode::Write);
    for (size_t step = 0; step < kSteps; step++)
    {
        w.BeginStep();
        for (size_t k = 0; k < sizeof(kCases) / sizeof(kCases[0]); k++)
            Dispatch(kCases[k].type, [&](auto zero) {
                PutCase<decltype(zero)>(io, w, kCases[k], k, step, ctx);
            });
        w.EndStep();
    }
    w.Close();
}

void Check(adios2::ADIOS &adios, const std::string &engine, const std::string &path, Ctx &ctx)
{
    adios2::IO io = adios.DeclareIO("reader");
    io.SetEngine(engine);
    adios2::Engine r = io.Open(path, adios2::Mode::Read);
    size_t step = 0, ranks = 0;
    while (r.BeginStep() == adios2::StepStatus::OK)
    {
        for (size_t k = 0; k < sizeof(kCases) / sizeof(kCases[0]); k++)
        {
            const Case &c = kCases[k];
            Dispatch(c.type, [&](auto zero) {
                using T = decltype(zero);
                adios2::Variable<T> v = io.InquireVariable<T>(c.name);
                if (!ranks && v)
                    ranks = v.Shape()[0] / kRowsPerRank; // the writers' rank count
                const size_t n = ranks ? ranks : 1;
                GetRows<T>(io, r, c, k, step, n, 0, n * kRowsPerRank, "whole", ctx);
                // a selection across blocks and ranks, different on every rank
                const size_t first = (static_cast<size_t>(ctx.rank) * 13 + 7) % (n * kRowsPerRank);
                const size_t rows = std::min(n * kRowsPerRank - first, kRowsPerRank + 5);
                GetRows<T>(io, r, c, k, step, n, first, rows, "across blocks", ctx);
            });
        }
        r.EndStep();
        step++;
    }
    r.Close();
    ctx.Check(step == kSteps, "steps: " + std::to_string(step) + " of " + std::to_string(kSteps));
}

// The data files' size against the raw values (the variables under the threshold excluded)
void CheckCompressed(const std::string &path, size_t ranks, Ctx &ctx)
{
    namespace fs = std::filesystem;
    uintmax_t stored = 0, raw = 0;
    // BP4 and BP5 write a directory; BP3 a file and its subfiles in FILE.dir/
    for (const std::string &p : {path, path + ".dir"})
        if (fs::is_regular_file(p))
            stored += fs::file_size(p);
        else if (fs::is_directory(p))
            for (const auto &e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file())
                    stored += e.file_size();
    for (const Case &c : kCases)
    {
        size_t item = 8;
        Dispatch(c.type, [&](auto zero) { item = sizeof(zero); });
        raw += Product(Shape(c, ranks)) * item * kSteps;
    }
    std::printf("adios2_blosc2: %s holds %ju bytes for %ju bytes of values\n", path.c_str(), stored, raw);
    ctx.Check(stored * 2 < raw, "the file is not smaller than half its values: the operator was not applied");
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    Ctx ctx;
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.size);
    if (argc != 4 || (std::strcmp(argv[1], "write") != 0 && std::strcmp(argv[1], "check") != 0))
    {
        if (ctx.rank == 0)
            std::fprintf(stderr, "usage: adios2_blosc2 write|check BP3|BP4|BP5 FILE\n");
        MPI_Finalize();
        return 2;
    }
    const std::string action = argv[1], engine = argv[2], path = argv[3];
    try
    {
        adios2::ADIOS adios(MPI_COMM_WORLD);
        if (action == "write")
        {
            Write(adios, engine, path, ctx);
            MPI_Barrier(MPI_COMM_WORLD);
            if (ctx.rank == 0)
                CheckCompressed(path, static_cast<size_t>(ctx.size), ctx);
        }
        Check(adios, engine, path, ctx);
    }
    catch (const std::exception &e)
    {
        std::fprintf(stderr, "rank %d: exception: %s\n", ctx.rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long totals[2] = {ctx.checks, ctx.failed}, sums[2] = {0, 0};
    MPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ctx.rank == 0)
        std::printf("adios2_blosc2: %s %s %s: %ld checks, %ld failed\n", action.c_str(), engine.c_str(),
                    path.c_str(), sums[0], sums[1]);
    int bad = sums[1] != 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
