//! Generates the C headers in the repository's `include/` from this crate's
//! sources with cbindgen, and gives the shared library its soname.
//!
//! Each header is produced from the `src/` files that declare its items
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
        output: "../../include/blosc2.h",
        config: "cbindgen/blosc2.toml",
        sources: &[
            "src/blosc2/types.rs",
            "src/blosc2/context.rs",
            "src/blosc2/global.rs",
            "src/blosc2/chunk.rs",
            "src/blosc2/misc.rs",
            "src/blosc2/defaults.rs",
            "src/blosc2/plugins.rs",
            "src/blosc2/io.rs",
            "src/blosc2/schunk.rs",
            "src/blosc2/schunk_chunks.rs",
            "src/blosc2/schunk_meta.rs",
            "src/blosc2/paths.rs",
        ],
    },
    Header {
        output: "../../include/b2nd.h",
        config: "cbindgen/b2nd.toml",
        sources: &["src/b2nd/types.rs", "src/b2nd/context.rs", "src/b2nd/array.rs"],
    },
    Header {
        output: "../../include/blosc2/blosc2-stdio.h",
        config: "cbindgen/blosc2-stdio.toml",
        sources: &["src/stdio/types.rs", "src/stdio/file.rs", "src/stdio/mmap.rs"],
    },
    Header {
        output: "../../include/blosc2/blosc2-export.h",
        config: "cbindgen/blosc2-export.toml",
        sources: &["cbindgen/empty.rs"],
    },
    Header {
        output: "../../include/blosc2/blosc2-common.h",
        config: "cbindgen/blosc2-common.toml",
        sources: &["cbindgen/empty.rs"],
    },
    Header {
        output: "../../include/blosc2/codecs-registry.h",
        config: "cbindgen/codecs-registry.toml",
        sources: &["src/registry/codecs.rs"],
    },
    Header {
        output: "../../include/blosc2/filters-registry.h",
        config: "cbindgen/filters-registry.toml",
        sources: &["src/registry/filters.rs"],
    },
    Header {
        output: "../../include/blosc2/tuners-registry.h",
        config: "cbindgen/tuners-registry.toml",
        sources: &["src/registry/tuners.rs"],
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
    println!("cargo:rerun-if-changed=src");
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
    // The shared library carries a soname so that programs record libb2nd.so.0
    // (ELF only: a Windows DLL is known by its file name, libblosc2.dll, given
    // at install by scripts/cross.sh windows).
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let unix = std::env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|f| f.split(',').any(|f| f == "unix"));
    if unix && !matches!(os.as_str(), "macos" | "ios") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2nd.so.0");
    }
}
