//! The header text build systems parse. Build scripts read `blosc2.h` and
//! `b2nd.h` as text, not through a compiler: PyTables' setup.py takes the
//! third field of the line that names `BLOSC2_VERSION_MAJOR` and holds the
//! word "major" (likewise "minor", "tweaks"), CMake and other scripts match
//! `#define NAME VALUE` with a regex. These tests read our headers those ways
//! and compare with the library's own constants. (The header check of
//! `scripts/test.sh` keeps `include/` equal to what cbindgen generates, and
//! `scripts/install.sh` installs these files.)

use b2nd_capi::b2nd::{B2ND_MAX_DIM, B2ND_METALAYER_VERSION};
use b2nd_capi::blosc2::types::{
    BLOSC2_MAX_METALAYERS, BLOSC2_VERSION_MAJOR, BLOSC2_VERSION_MINOR, BLOSC2_VERSION_RELEASE,
};

fn header(name: &str) -> String {
    let path = format!("{}/../../include/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The value on the first line that contains `name` and `word`, read as
/// PyTables' setup.py reads it: the third whitespace-separated field.
fn field_on_line_with(text: &str, name: &str, word: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains(name) && l.contains(word))?;
    line.split_whitespace().nth(2).map(str::to_string)
}

/// The value of `#define NAME VALUE` (spaces or tabs around, a comment after
/// it allowed), as a regex like `^#define NAME +([^ ]+)` takes it.
fn define(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("#define")?;
        let rest = rest.trim_start().strip_prefix(name)?;
        if !rest.starts_with([' ', '\t']) {
            return None;
        }
        let rest = rest.trim_start();
        let value = match rest.strip_prefix('"') {
            Some(s) => format!("\"{}\"", &s[..s.find('"')?]),
            None => rest.split_whitespace().next()?.to_string(),
        };
        Some(value)
    })
}

#[test]
fn version_lines_read_as_pytables_reads_them() {
    let h = header("blosc2.h");
    let read = |name, word| field_on_line_with(&h, name, word).and_then(|v| v.parse::<i32>().ok());
    assert_eq!(read("BLOSC2_VERSION_MAJOR", "major"), Some(BLOSC2_VERSION_MAJOR));
    assert_eq!(read("BLOSC2_VERSION_MINOR", "minor"), Some(BLOSC2_VERSION_MINOR));
    assert_eq!(read("BLOSC2_VERSION_RELEASE", "tweaks"), Some(BLOSC2_VERSION_RELEASE));
}

#[test]
fn version_lines_read_as_defines() {
    let h = header("blosc2.h");
    assert_eq!(define(&h, "BLOSC2_VERSION_MAJOR"), Some(BLOSC2_VERSION_MAJOR.to_string()));
    assert_eq!(define(&h, "BLOSC2_VERSION_MINOR"), Some(BLOSC2_VERSION_MINOR.to_string()));
    assert_eq!(define(&h, "BLOSC2_VERSION_RELEASE"), Some(BLOSC2_VERSION_RELEASE.to_string()));
    let string = format!("\"{BLOSC2_VERSION_MAJOR}.{BLOSC2_VERSION_MINOR}.{BLOSC2_VERSION_RELEASE}\"");
    assert_eq!(define(&h, "BLOSC2_VERSION_STRING"), Some(string));
    let date = define(&h, "BLOSC2_VERSION_DATE").expect("BLOSC2_VERSION_DATE");
    assert!(date.starts_with("\"$Date:: ") && date.ends_with(" #$\""), "{date}");
    // Each version macro is defined once, on one line (no doc comment in between).
    for name in ["BLOSC2_VERSION_MAJOR", "BLOSC2_VERSION_MINOR", "BLOSC2_VERSION_RELEASE"] {
        let n = h.lines().filter(|l| l.trim_start().starts_with(&format!("#define {name} "))).count();
        assert_eq!(n, 1, "{name}");
    }
}

#[test]
fn limits_scripts_read() {
    let h = header("blosc2.h");
    assert_eq!(define(&h, "BLOSC2_MAX_METALAYERS"), Some(BLOSC2_MAX_METALAYERS.to_string()));
    assert_eq!(define(&h, "BLOSC2_MAX_FILTERS"), Some("6".to_string()));
    let b = header("b2nd.h");
    assert_eq!(define(&b, "B2ND_MAX_DIM"), Some(B2ND_MAX_DIM.to_string()));
    assert_eq!(define(&b, "B2ND_METALAYER_VERSION"), Some(B2ND_METALAYER_VERSION.to_string()));
}
