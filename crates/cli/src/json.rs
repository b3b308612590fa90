//! JSON for `--json`, with serde_json: values are `serde_json::Value`s (their
//! fields in the order given), written on one line as `{"key": value, ...}`.
//! Also the msgpack decoder that turns vlmetalayers into JSON values.

use serde_json::ser::Formatter;
pub use serde_json::Value;
use std::io;

/// An object with `fields` in this order.
pub fn obj<'a>(fields: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A number; JSON has no NaN or infinities, so those are strings ("NaN", "inf").
pub fn float(x: f64) -> Value {
    if x.is_finite() {
        Value::from(x)
    } else {
        Value::String(x.to_string())
    }
}

/// serde_json's compact output with a space after each `,` and `:`, easier
/// to read on one line.
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// The value as one line of JSON.
pub fn text(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    serde::Serialize::serialize(v, &mut ser).expect("a JSON value always serialises into memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A JSON string literal.
pub fn quote(s: &str) -> String {
    text(&Value::from(s))
}

/// The bytes as lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
/// A msgpack value (a vlmetalayer's content) as JSON: binary data and
/// extension types as hex strings (`{"ext": type, "hex": ...}` for the
/// latter), map keys that are not strings as their JSON text. `None` when the
/// bytes are not one whole msgpack value.
pub fn from_msgpack(bytes: &[u8]) -> Option<Value> {
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

fn value(b: &[u8], pos: &mut usize, depth: usize) -> Option<Value> {
    if depth > 64 {
        return None;
    }
    let m = *take(b, pos, 1)?.first()?;
    let str_of = |b: &[u8], pos: &mut usize, n: usize| -> Option<Value> {
        let s = take(b, pos, n)?;
        Some(Value::String(String::from_utf8_lossy(s).into_owned()))
    };
    let seq = |b: &[u8], pos: &mut usize, n: usize| -> Option<Value> {
        // each element takes at least a byte: a count beyond what is left is bad
        if n > b.len() - *pos {
            return None;
        }
        (0..n).map(|_| value(b, pos, depth + 1)).collect::<Option<Vec<_>>>().map(Value::Array)
    };
    let map = |b: &[u8], pos: &mut usize, n: usize| -> Option<Value> {
        if n > (b.len() - *pos) / 2 {
            return None;
        }
        let mut v = serde_json::Map::with_capacity(n);
        for _ in 0..n {
            let k = match value(b, pos, depth + 1)? {
                Value::String(s) => s,
                other => text(&other),
            };
            let x = value(b, pos, depth + 1)?;
            v.insert(k, x);
        }
        Some(Value::Object(v))
    };
    let ext = |b: &[u8], pos: &mut usize, n: usize| -> Option<Value> {
        let t = take(b, pos, 1)?[0] as i8;
        let d = take(b, pos, n)?;
        Some(obj([("ext", Value::from(t)), ("hex", Value::from(hex(d)))]))
    };
    Some(match m {
        0x00..=0x7f => Value::from(m),
        0x80..=0x8f => map(b, pos, usize::from(m & 0x0f))?,
        0x90..=0x9f => seq(b, pos, usize::from(m & 0x0f))?,
        0xa0..=0xbf => str_of(b, pos, usize::from(m & 0x1f))?,
        0xc0 => Value::Null,
        0xc2 => Value::Bool(false),
        0xc3 => Value::Bool(true),
        0xc4..=0xc6 => {
            let n = be(b, pos, 1 << (m - 0xc4))? as usize;
            Value::String(hex(take(b, pos, n)?))
        }
        0xc7..=0xc9 => {
            let n = be(b, pos, 1 << (m - 0xc7))? as usize;
            ext(b, pos, n)?
        }
        0xca => float(f64::from(f32::from_bits(be(b, pos, 4)? as u32))),
        0xcb => float(f64::from_bits(be(b, pos, 8)?)),
        0xcc..=0xcf => Value::from(be(b, pos, 1 << (m - 0xcc))?),
        0xd0 => Value::from(be(b, pos, 1)? as u8 as i8),
        0xd1 => Value::from(be(b, pos, 2)? as u16 as i16),
        0xd2 => Value::from(be(b, pos, 4)? as u32 as i32),
        0xd3 => Value::from(be(b, pos, 8)? as i64),
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
        0xe0..=0xff => Value::from(m as i8),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msgpack_values() {
        // {"a": [1, -2, 3.5, "x", nil, true]}
        let b =
            [0x81, 0xa1, b'a', 0x96, 0x01, 0xfe, 0xcb, 0x40, 0x0c, 0, 0, 0, 0, 0, 0, 0xa1, b'x', 0xc0, 0xc3];
        assert_eq!(text(&from_msgpack(&b).unwrap()), r#"{"a": [1, -2, 3.5, "x", null, true]}"#);
        assert_eq!(from_msgpack(&[0x92, 0x01]), None);
        assert_eq!(from_msgpack(&[0xdd, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(text(&from_msgpack(&[0xc4, 0x02, 0xab, 0xcd]).unwrap()), r#""abcd""#);
        assert_eq!(text(&float(f64::NAN)), r#""NaN""#);
        assert_eq!(quote("a\"b\n"), r#""a\"b\n""#);
    }
}
