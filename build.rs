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
    zlib_ng_version();
    zfp(&root);
    // The shared library carries a soname so that programs record libb2nd.so.0.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2nd.so.0");
}

/// Pass the version of the bundled zlib-ng (which reports a zlib-compatible
/// version string at run time) to the crate, read from the header libz-sys built.
fn zlib_ng_version() {
    let mut version = String::new();
    if let Ok(dir) = std::env::var("DEP_Z_INCLUDE") {
        let header = std::fs::read_to_string(Path::new(&dir).join("zlib.h")).unwrap_or_default();
        if let Some(line) = header.lines().find(|l| l.starts_with("#define ZLIBNG_VERSION ")) {
            version = line.trim_start_matches("#define ZLIBNG_VERSION ").trim().trim_matches('"').to_string();
        }
    }
    println!("cargo:rustc-env=B2ND_ZLIBNG_VERSION={version}");
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
