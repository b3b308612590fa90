//! The C headers in the repository's `include/` are what cbindgen makes of
//! this crate's sources, with `cbindgen/<header>.toml` for what it cannot
//! derive (includes, macros, `*_DEFAULTS` initializers, static inline
//! helpers). They are committed, not written by `cargo build` (a build
//! script writes only into its `OUT_DIR`): this test generates them and
//! fails on any difference. After changing the C API, rewrite them with
//!
//!     B2ND_WRITE_HEADERS=1 cargo test -p b2nd-capi --test headers
//!
//! and commit `include/`.

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

#[test]
fn committed_headers_are_what_cbindgen_generates() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let write = std::env::var_os("B2ND_WRITE_HEADERS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for h in HEADERS {
        let mut builder = cbindgen::Builder::new().with_config(config(&root, h.config));
        for s in h.sources {
            builder = builder.with_src(root.join(s));
        }
        let bindings = builder.generate().unwrap_or_else(|e| panic!("{}: {e}", h.output));
        let mut text = Vec::new();
        bindings.write(&mut text);
        let out = root.join(h.output);
        if std::fs::read(&out).ok().as_deref() == Some(&text[..]) {
            continue;
        }
        if write {
            std::fs::create_dir_all(out.parent().expect("headers live in a directory"))
                .expect("create include/");
            std::fs::write(&out, &text).expect("write header");
        } else {
            let old = std::fs::read_to_string(&out).unwrap_or_default();
            let new = String::from_utf8_lossy(&text);
            let first = old
                .lines()
                .zip(new.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(old.lines().count().min(new.lines().count()));
            differ.push(format!(
                "{}: differs from line {}:\n  committed: {:?}\n  generated: {:?}",
                h.output.trim_start_matches("../../"),
                first + 1,
                old.lines().nth(first).unwrap_or("(end)"),
                new.lines().nth(first).unwrap_or("(end)")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "include/ is not what cbindgen generates (B2ND_WRITE_HEADERS=1 cargo test -p b2nd-capi --test headers rewrites it):\n{}",
        differ.join("\n")
    );
}
