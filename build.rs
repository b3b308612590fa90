//! Generates the C headers in `include/` from the Rust sources with cbindgen.
//!
//! Each header is produced from the `src/capi` files that declare its items
//! and from `cbindgen/<header>.toml`, which holds what cbindgen cannot derive
//! (includes, macros, `*_DEFAULTS` initializers, static inline helpers).
//! Files are rewritten only when their content changes.

use std::path::{Path, PathBuf};

struct Header {
    output: &'static str,
    config: &'static str,
    sources: &'static [&'static str],
}

const HEADERS: &[Header] = &[
    Header {
        output: "include/blosc2.h",
        config: "cbindgen/blosc2.toml",
        sources: &[
            "src/capi/blosc2/types.rs",
            "src/capi/blosc2/context.rs",
            "src/capi/blosc2/global.rs",
            "src/capi/blosc2/chunk.rs",
            "src/capi/blosc2/misc.rs",
            "src/capi/blosc2/defaults.rs",
            "src/capi/blosc2/plugins.rs",
            "src/capi/blosc2/io.rs",
            "src/capi/blosc2/schunk.rs",
            "src/capi/blosc2/schunk_chunks.rs",
            "src/capi/blosc2/schunk_meta.rs",
            "src/capi/blosc2/paths.rs",
        ],
    },
    Header {
        output: "include/b2nd.h",
        config: "cbindgen/b2nd.toml",
        sources: &["src/capi/b2nd/types.rs", "src/capi/b2nd/context.rs", "src/capi/b2nd/array.rs"],
    },
    Header {
        output: "include/blosc2/blosc2-stdio.h",
        config: "cbindgen/blosc2-stdio.toml",
        sources: &["src/capi/stdio/types.rs", "src/capi/stdio/file.rs", "src/capi/stdio/mmap.rs"],
    },
    Header {
        output: "include/blosc2/blosc2-export.h",
        config: "cbindgen/blosc2-export.toml",
        sources: &["cbindgen/empty.rs"],
    },
    Header {
        output: "include/blosc2/blosc2-common.h",
        config: "cbindgen/blosc2-common.toml",
        sources: &["cbindgen/empty.rs"],
    },
    Header {
        output: "include/blosc2/codecs-registry.h",
        config: "cbindgen/codecs-registry.toml",
        sources: &["src/capi/registry/codecs.rs"],
    },
    Header {
        output: "include/blosc2/filters-registry.h",
        config: "cbindgen/filters-registry.toml",
        sources: &["src/capi/registry/filters.rs"],
    },
    Header {
        output: "include/blosc2/tuners-registry.h",
        config: "cbindgen/tuners-registry.toml",
        sources: &["src/capi/registry/tuners.rs"],
    },
];

fn config(root: &Path, file: &str) -> cbindgen::Config {
    let mut c = cbindgen::Config::from_file(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    c.language = cbindgen::Language::C;
    c.style = cbindgen::Style::Both;
    c.documentation = true;
    c.documentation_style = cbindgen::DocumentationStyle::Doxy;
    c.no_includes = true;
    c.line_length = 110;
    c.tab_width = 2;
    c.usize_is_size_t = true;
    c.cpp_compat = true;
    c.sort_by = cbindgen::SortKey::None;
    c.function.prefix = Some("BLOSC_EXPORT".to_string());
    c.parse.parse_deps = false;
    // The guard wraps the trailer too (cbindgen would close it before the trailer).
    if let Some(guard) = c.include_guard.take() {
        let header = c.header.take().unwrap_or_default();
        let trailer = c.trailer.take().unwrap_or_default();
        c.header = Some(format!("{header}\n\n#ifndef {guard}\n#define {guard}"));
        c.trailer = Some(format!("{trailer}\n#endif  /* {guard} */"));
    }
    c
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=cbindgen");
    println!("cargo:rerun-if-changed=src/capi");
    for h in HEADERS {
        let mut builder = cbindgen::Builder::new().with_config(config(&root, h.config));
        for s in h.sources {
            builder = builder.with_src(root.join(s));
        }
        let bindings = builder.generate().unwrap_or_else(|e| panic!("{}: {e}", h.output));
        let mut text = Vec::new();
        bindings.write(&mut text);
        let out = root.join(h.output);
        if std::fs::read(&out).ok().as_deref() != Some(&text[..]) {
            std::fs::create_dir_all(out.parent().expect("headers live in a directory")).expect("create include/");
            std::fs::write(&out, &text).expect("write header");
        }
    }
    zlib_ng(&root);
    zfp(&root);
    // The shared library carries a soname so that programs record libb2nd.so.0.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2nd.so.0");
}

/// The groups of zlib-ng's x86-64 kernels: the define that makes functable.c
/// dispatch to them at run time, the compiler flags their files need, and the files.
/// Only the kernels are built with these flags; everything else stays baseline
/// x86-64, as zlib-ng's own CMake build does.
const ZLIB_NG_X86: &[(&str, &[&str], &[&str])] = &[
    ("X86_SSE2", &["-msse2"], &["chunkset_sse2", "compare256_sse2", "slide_hash_sse2", "chorba_sse2"]),
    ("X86_SSSE3", &["-mssse3"], &["adler32_ssse3", "chunkset_ssse3"]),
    ("X86_SSE41", &["-msse4.1"], &["chorba_sse41"]),
    ("X86_SSE42", &["-msse4.2"], &["adler32_sse42"]),
    ("X86_PCLMULQDQ_CRC", &["-msse4.2", "-mpclmul"], &["crc32_pclmulqdq"]),
    ("X86_AVX2", &["-mavx2", "-mbmi2"], &["slide_hash_avx2", "chunkset_avx2", "compare256_avx2", "adler32_avx2"]),
    (
        "X86_AVX512",
        &["-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl", "-mbmi2"],
        &["adler32_avx512", "chunkset_avx512", "compare256_avx512"],
    ),
    (
        "X86_AVX512VNNI",
        &["-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl", "-mavx512vnni", "-mbmi2"],
        &["adler32_avx512_vnni"],
    ),
    (
        "X86_VPCLMULQDQ_CRC",
        &["-mpclmul", "-mvpclmulqdq", "-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl", "-mbmi2"],
        &["crc32_vpclmulqdq"],
    ),
];

/// zlib-ng's library files (native `zng_` API, no gz* file functions).
const ZLIB_NG_CORE: &[&str] = &[
    "adler32", "compress", "cpu_features", "crc32", "crc32_braid_comb", "deflate", "deflate_fast",
    "deflate_huff", "deflate_medium", "deflate_quick", "deflate_rle", "deflate_slow", "deflate_stored",
    "functable", "infback", "inflate", "inftrees", "insert_string", "insert_string_roll", "trees",
    "uncompr", "zutil",
];

/// Build zlib-ng 2.3.3 (vendor/zlib-ng, the version c-blosc2 3.3.5 uses) with
/// `cc`, in native mode (`zng_` names, so it never clashes with a system zlib
/// in the same program). On x86-64 with a GCC-compatible compiler the SIMD
/// kernels are compiled each with its own flags and chosen at run time by
/// zlib-ng's cpu detection, as its CMake build does; elsewhere the portable C
/// kernels are used.
fn zlib_ng(root: &Path) {
    let dir = root.join("vendor/zlib-ng");
    println!("cargo:rerun-if-changed=vendor/zlib-ng");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("zlib-ng");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/zlib-ng");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("vendor/zlib-ng/{name}: {e}"));
    let unix = std::env::var("CARGO_CFG_UNIX").is_ok();
    // The two configure-time switches of zconf-ng.h, as zlib-ng's CMake resolves them.
    let zconf: String = read("zconf-ng.h.in")
        .lines()
        .map(|l| {
            if l.starts_with("#ifdef HAVE_UNISTD_H") {
                if unix { "#if 1" } else { "#if 0" }.to_string()
            } else if l.starts_with("#ifdef NEED_PTRDIFF_T") {
                "#if 0".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    let header = read("zlib-ng.h.in").replace("@ZLIB_SYMBOL_PREFIX@", "");
    for (name, text) in
        [("zconf-ng.h", zconf), ("zlib-ng.h", header), ("zlib_name_mangling-ng.h", read("zlib_name_mangling.h.empty"))]
    {
        let path = out.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(&text[..]) {
            std::fs::write(&path, text).expect("write zlib-ng header");
        }
    }

    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let base = || {
        let mut b = cc::Build::new();
        b.include(&out).include(&dir).std("c11").opt_level(3).warnings(false);
        b
    };
    let probe = base();
    let gnu = probe.get_compiler().is_like_gnu() || probe.get_compiler().is_like_clang();
    let mut defines: Vec<&str> = Vec::new();
    if gnu {
        defines.extend(["HAVE_ATTRIBUTE_ALIGNED", "HAVE_BUILTIN_ASSUME_ALIGNED", "HAVE_BUILTIN_CTZ", "HAVE_BUILTIN_CTZLL"]);
        defines.extend(["HAVE_VISIBILITY_HIDDEN", "HAVE_VISIBILITY_INTERNAL"]);
    }
    if os == "linux" {
        defines.extend(["HAVE_SYS_AUXV_H", "HAVE_LINUX_AUXVEC_H"]);
    }
    // (group define, flags, files) that this compiler accepts.
    let mut kernels: Vec<(&str, Vec<&str>, Vec<PathBuf>)> = Vec::new();
    // B2ND_ZLIB_NG_PORTABLE=1 builds the portable kernels only (to test them on x86-64).
    println!("cargo:rerun-if-env-changed=B2ND_ZLIB_NG_PORTABLE");
    let portable = std::env::var("B2ND_ZLIB_NG_PORTABLE").is_ok_and(|v| v == "1");
    let x86 = !portable && arch == "x86_64" && gnu && probe.is_flag_supported("-mxsave").unwrap_or(false);
    if x86 {
        defines.extend(["WITH_OPTIM", "X86_FEATURES", "HAVE_CPUID_GNU", "X86_HAVE_XSAVE_INTRIN"]);
        for (define, flags, files) in ZLIB_NG_X86 {
            if flags.iter().all(|f| probe.is_flag_supported(f).unwrap_or(false)) {
                defines.push(define);
                let files = files.iter().map(|f| dir.join(format!("arch/x86/{f}.c"))).collect();
                kernels.push((define, flags.to_vec(), files));
            }
        }
        kernels.push(("X86_FEATURES", vec!["-mxsave"], vec![dir.join("arch/x86/x86_features.c")]));
    }
    // The portable kernels: x86-64 always has SSE2 versions of the others.
    let generic: &[&str] = if defines.contains(&"X86_SSE2") {
        &["adler32_c", "adler32_fold_c", "crc32_braid_c", "crc32_chorba_c", "crc32_fold_c"]
    } else {
        &[
            "adler32_c", "adler32_fold_c", "chunkset_c", "compare256_c", "crc32_braid_c", "crc32_chorba_c",
            "crc32_fold_c", "slide_hash_c",
        ]
    };
    if !defines.contains(&"X86_SSE2") {
        defines.push("WITH_ALL_FALLBACKS");
    }
    let mut core = base();
    for d in &defines {
        core.define(d, None);
    }
    core.files(ZLIB_NG_CORE.iter().map(|f| dir.join(format!("{f}.c"))));
    core.files(generic.iter().map(|f| dir.join(format!("arch/generic/{f}.c"))));
    // Each group compiled apart with its flags; the objects go into the one archive.
    for (_, flags, files) in &kernels {
        let mut k = base();
        for d in &defines {
            k.define(d, None);
        }
        for f in flags {
            k.flag(f);
        }
        core.objects(k.files(files).compile_intermediates());
    }
    core.compile("b2nd_zlibng");
}

/// Build zfp 1.0.1 (vendor/zfp: the library's C sources, as c-blosc2 3.3.5
/// builds them) into the crate; `src/codecs/zfp/ffi.rs` declares what is used.
fn zfp(root: &Path) {
    let dir = root.join("vendor/zfp");
    println!("cargo:rerun-if-changed=vendor/zfp");
    let mut files = vec![dir.join("src/zfp.c"), dir.join("src/bitstream.c")];
    for dims in 1..=4 {
        for kind in ["i", "l", "f", "d"] {
            files.push(dir.join(format!("src/decode{dims}{kind}.c")));
            files.push(dir.join(format!("src/encode{dims}{kind}.c")));
        }
    }
    cc::Build::new()
        .files(files)
        .include(dir.join("include"))
        .include(dir.join("src"))
        .std("c99")
        .opt_level(3)
        .warnings(false)
        .compile("b2nd_zfp");
}
