//! A JSON value and its text (for `--json`, and for vlmetalayers decoded from msgpack).

use std::fmt::{self, Write};

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn obj(fields: Vec<(&str, Json)>) -> Json {
        Json::Obj(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_string())
    }
}
impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}
impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}
impl From<f64> for Json {
    fn from(x: f64) -> Json {
        Json::Float(x)
    }
}
macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Json {
            fn from(x: $t) -> Json {
                Json::Int(x as i128)
            }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl<T: Into<Json>> From<Vec<T>> for Json {
    fn from(v: Vec<T>) -> Json {
        Json::Arr(v.into_iter().map(Into::into).collect())
    }
}

/// A JSON string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Int(i) => write!(f, "{i}"),
            // JSON has no NaN or infinities: they are written as strings
            Json::Float(x) if !x.is_finite() => f.write_str(&quote(&x.to_string())),
            Json::Float(x) => {
                if x.fract() == 0.0 && x.abs() < 1e16 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Json::Str(s) => f.write_str(&quote(s)),
            Json::Arr(v) => {
                f.write_char('[')?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_char(']')
            }
            Json::Obj(v) => {
                f.write_char('{')?;
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {x}", quote(k))?;
                }
                f.write_char('}')
            }
        }
    }
}

/// The bytes as lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A msgpack value (a vlmetalayer's content) as JSON: binary data and
/// extension types as hex strings (`{"ext": type, "hex": ...}` for the
/// latter), map keys that are not strings as their JSON text. `None` when the
/// bytes are not one whole msgpack value.
pub fn from_msgpack(bytes: &[u8]) -> Option<Json> {
    let mut pos = 0;
    let v = value(bytes, &mut pos, 0)?;
    (pos == bytes.len()).then_some(v)
}

fn take<'a>(b: &'a [u8], pos: &mut usize, n: usize) -> Option<&'a [u8]> {
    let s = b.get(*pos..pos.checked_add(n)?)?;
    *pos += n;
    Some(s)
}

fn be(b: &[u8], pos: &mut usize, n: usize) -> Option<u64> {
    Some(take(b, pos, n)?.iter().fold(0u64, |a, &x| a << 8 | u64::from(x)))
}

fn value(b: &[u8], pos: &mut usize, depth: usize) -> Option<Json> {
    if depth > 64 {
        return None;
    }
    let m = *take(b, pos, 1)?.first()?;
    let str_of = |b: &[u8], pos: &mut usize, n: usize| -> Option<Json> {
        let s = take(b, pos, n)?;
        Some(Json::Str(String::from_utf8_lossy(s).into_owned()))
    };
    let seq = |b: &[u8], pos: &mut usize, n: usize| -> Option<Json> {
        // each element takes at least a byte: a count beyond what is left is bad
        if n > b.len() - *pos {
            return None;
        }
        (0..n).map(|_| value(b, pos, depth + 1)).collect::<Option<Vec<_>>>().map(Json::Arr)
    };
    let map = |b: &[u8], pos: &mut usize, n: usize| -> Option<Json> {
        if n > (b.len() - *pos) / 2 {
            return None;
        }
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let k = match value(b, pos, depth + 1)? {
                Json::Str(s) => s,
                other => other.to_string(),
            };
            v.push((k, value(b, pos, depth + 1)?));
        }
        Some(Json::Obj(v))
    };
    let ext = |b: &[u8], pos: &mut usize, n: usize| -> Option<Json> {
        let t = take(b, pos, 1)?[0] as i8;
        let d = take(b, pos, n)?;
        Some(Json::obj(vec![("ext", Json::from(t)), ("hex", Json::from(hex(d)))]))
    };
    Some(match m {
        0x00..=0x7f => Json::Int(i128::from(m)),
        0x80..=0x8f => map(b, pos, usize::from(m & 0x0f))?,
        0x90..=0x9f => seq(b, pos, usize::from(m & 0x0f))?,
        0xa0..=0xbf => str_of(b, pos, usize::from(m & 0x1f))?,
        0xc0 => Json::Null,
        0xc2 => Json::Bool(false),
        0xc3 => Json::Bool(true),
        0xc4..=0xc6 => {
            let n = be(b, pos, 1 << (m - 0xc4))? as usize;
            Json::Str(hex(take(b, pos, n)?))
        }
        0xc7..=0xc9 => {
            let n = be(b, pos, 1 << (m - 0xc7))? as usize;
            ext(b, pos, n)?
        }
        0xca => Json::Float(f64::from(f32::from_bits(be(b, pos, 4)? as u32))),
        0xcb => Json::Float(f64::from_bits(be(b, pos, 8)?)),
        0xcc..=0xcf => Json::Int(i128::from(be(b, pos, 1 << (m - 0xcc))?)),
        0xd0 => Json::Int(i128::from(be(b, pos, 1)? as u8 as i8)),
        0xd1 => Json::Int(i128::from(be(b, pos, 2)? as u16 as i16)),
        0xd2 => Json::Int(i128::from(be(b, pos, 4)? as u32 as i32)),
        0xd3 => Json::Int(i128::from(be(b, pos, 8)? as i64)),
        0xd4..=0xd8 => ext(b, pos, 1 << (m - 0xd4))?,
        0xd9..=0xdb => {
            let n = be(b, pos, 1 << (m - 0xd9))? as usize;
            str_of(b, pos, n)?
        }
        0xdc | 0xdd => {
            let n = be(b, pos, if m == 0xdc { 2 } else { 4 })? as usize;
            seq(b, pos, n)?
        }
        0xde | 0xdf => {
            let n = be(b, pos, if m == 0xde { 2 } else { 4 })? as usize;
            map(b, pos, n)?
        }
        0xe0..=0xff => Json::Int(i128::from(m as i8)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msgpack_values() {
        // {"a": [1, -2, 3.5, "x", nil, true]}
        let b = [0x81, 0xa1, b'a', 0x96, 0x01, 0xfe, 0xcb, 0x40, 0x0c, 0, 0, 0, 0, 0, 0, 0xa1, b'x', 0xc0, 0xc3];
        assert_eq!(from_msgpack(&b).unwrap().to_string(), r#"{"a": [1, -2, 3.5, "x", null, true]}"#);
        assert_eq!(from_msgpack(&[0x92, 0x01]), None);
        assert_eq!(from_msgpack(&[0xdd, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(from_msgpack(&[0xc4, 0x02, 0xab, 0xcd]).unwrap().to_string(), r#""abcd""#);
        assert_eq!(Json::Float(f64::NAN).to_string(), r#""NaN""#);
        assert_eq!(quote("a\"b\n"), r#""a\"b\n""#);
    }
}
