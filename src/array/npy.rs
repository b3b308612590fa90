//! The NumPy `.npy` format (versions 1.0, 2.0 and 3.0): reading a file's
//! header, and writing one byte for byte as NumPy writes it.
//!
//! A header is the magic `\x93NUMPY`, a version, a little-endian length and
//! a Python dict literal (`{'descr': '<f8', 'fortran_order': False, 'shape':
//! (3, 4), }`), padded with spaces to a multiple of 64 bytes and ended by a
//! newline. The items follow in C or Fortran order.
//!
//! The `descr` is the array's dtype as NumPy's `dtype.descr` gives it: a
//! type string (`'<f8'`) or, for structured dtypes, a list of fields
//! (`[('a', '<i4'), ('b', '<f8', (2,))]`). The b2nd metalayer holds the same
//! text: the type string itself, or the list as Python prints it.

use std::fmt;

/// What is wrong with a `.npy` file or dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError(pub String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

fn bad<T>(what: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(what.into()))
}

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// NumPy aligns the items to this many bytes.
const ALIGN: usize = 64;
/// NumPy leaves room for the growing axis' length to reach this many digits.
const GROWTH_DIGITS: usize = 21;
/// The longest header read (NumPy's own limit for untrusted files is 10,000).
const MAX_HEADER: usize = 1 << 20;

/// A `.npy` file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The dtype as the b2nd metalayer holds it (`<f8`, `[('a', '<i4')]`).
    pub dtype: String,
    pub itemsize: usize,
    pub fortran_order: bool,
    pub shape: Vec<i64>,
    /// Where the items start.
    pub data_offset: u64,
    pub version: (u8, u8),
}

impl Header {
    /// Parse the header at the start of `bytes`, which must hold it whole
    /// (the first 12 bytes say how long it is: [`Header::needed`]).
    pub fn parse(bytes: &[u8]) -> Result<Header, FormatError> {
        let (version, start, len) = Header::needed(bytes)?;
        let end = start + len;
        if bytes.len() < end {
            return bad("the header ends early");
        }
        let text = match version.0 {
            3 => std::str::from_utf8(&bytes[start..end])
                .map_err(|_| FormatError("the header is not UTF-8".into()))?
                .to_string(),
            _ => bytes[start..end].iter().map(|&b| b as char).collect(),
        };
        let dict = match Lit::parse(&text)? {
            Lit::Dict(d) => d,
            _ => return bad("the header is not a dict"),
        };
        let get = |k: &str| dict.iter().find(|(key, _)| matches!(key, Lit::Str(s) if s == k)).map(|(_, v)| v);
        let (Some(descr), Some(fortran), Some(shape)) = (get("descr"), get("fortran_order"), get("shape"))
        else {
            return bad("the header lacks 'descr', 'fortran_order' or 'shape'");
        };
        if dict.len() != 3 {
            return bad("the header has keys other than 'descr', 'fortran_order' and 'shape'");
        }
        let Lit::Bool(fortran_order) = *fortran else {
            return bad("'fortran_order' is not True or False");
        };
        let Lit::Tuple(dims) = shape else {
            return bad("'shape' is not a tuple");
        };
        let shape = dims
            .iter()
            .map(|d| match d {
                Lit::Int(n) if *n >= 0 => Ok(*n),
                _ => bad("'shape' holds something other than lengths"),
            })
            .collect::<Result<Vec<i64>, _>>()?;
        let dtype = match descr {
            Lit::Str(s) => s.clone(),
            Lit::List(_) => descr.repr(),
            _ => return bad("'descr' is neither a type string nor a list of fields"),
        };
        let itemsize = descr_itemsize(descr)?;
        Ok(Header { dtype, itemsize, fortran_order, shape, data_offset: end as u64, version })
    }

    /// The version, where the header text starts and its length, from the
    /// first 12 bytes of a file.
    pub fn needed(bytes: &[u8]) -> Result<((u8, u8), usize, usize), FormatError> {
        if bytes.len() < 10 || &bytes[..6] != MAGIC {
            return bad("not a .npy file (no \\x93NUMPY magic)");
        }
        let version = (bytes[6], bytes[7]);
        let (start, len) = match version.0 {
            1 => (10, usize::from(u16::from_le_bytes([bytes[8], bytes[9]]))),
            2 | 3 if bytes.len() >= 12 => {
                (12, u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize)
            }
            2 | 3 => return bad("the header ends early"),
            _ => {
                return bad(format!(".npy format version {}.{} (1.0 to 3.0 are known)", version.0, version.1))
            }
        };
        if len > MAX_HEADER {
            return bad(format!("a header of {len} bytes (more than {MAX_HEADER})"));
        }
        Ok((version, start, len))
    }

    /// The items' bytes, checked against overflow.
    pub fn data_len(&self) -> Result<u64, FormatError> {
        self.shape
            .iter()
            .try_fold(self.itemsize as u64, |acc, &d| acc.checked_mul(d as u64))
            .ok_or_else(|| FormatError("the array's size overflows".into()))
    }
}

/// The header NumPy writes for an array of `dtype` (as the b2nd metalayer
/// holds it) and `shape`: the same bytes, version 1.0 when the header fits
/// in 65,535 bytes, 2.0 when not, 3.0 when its text is not Latin-1.
pub fn header_bytes(dtype: &str, fortran_order: bool, shape: &[i64]) -> Result<Vec<u8>, FormatError> {
    let descr = if dtype.trim_start().starts_with('[') {
        Lit::parse(dtype)?.repr()
    } else {
        Lit::Str(dtype.to_string()).repr()
    };
    let shape_text = Lit::Tuple(shape.iter().map(|&d| Lit::Int(d)).collect()).repr();
    let fortran = if fortran_order { "True" } else { "False" };
    let mut text = format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape_text}, }}");
    if !shape.is_empty() {
        let grow = if fortran_order { shape[shape.len() - 1] } else { shape[0] };
        text.push_str(&" ".repeat(GROWTH_DIGITS.saturating_sub(grow.to_string().len())));
    }
    let latin1: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
    let (major, body) = match latin1 {
        Some(b) if wrapped_len(10, b.len()) <= usize::from(u16::MAX) + 10 => (1u8, b),
        Some(b) => (2, b),
        None => (3, text.into_bytes()),
    };
    let prefix = if major == 1 { 10 } else { 12 };
    let total = wrapped_len(prefix, body.len());
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    let hlen = total - prefix;
    if major == 1 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(&body);
    out.resize(total - 1, b' ');
    out.push(b'\n');
    Ok(out)
}

/// The whole header's length: prefix, text, at least one space of padding
/// up to a multiple of 64, and the newline (as NumPy pads: 1 to 64 spaces).
fn wrapped_len(prefix: usize, text: usize) -> usize {
    let unpadded = prefix + text + 1;
    unpadded + (ALIGN - unpadded % ALIGN)
}

/// The bytes of an item of `dtype` (as the b2nd metalayer holds it).
pub fn dtype_itemsize(dtype: &str) -> Result<usize, FormatError> {
    if dtype.trim_start().starts_with('[') {
        descr_itemsize(&Lit::parse(dtype)?)
    } else {
        typestr_itemsize(dtype)
    }
}

fn descr_itemsize(descr: &Lit) -> Result<usize, FormatError> {
    match descr {
        Lit::Str(s) => typestr_itemsize(s),
        Lit::List(fields) if !fields.is_empty() => fields.iter().try_fold(0usize, |acc, f| {
            let size = field_itemsize(f)?;
            acc.checked_add(size).ok_or_else(|| FormatError("the dtype's size overflows".into()))
        }),
        _ => bad("a dtype that is neither a type string nor a list of fields"),
    }
}

/// `(name, dtype)` or `(name, dtype, shape)`; the name may be `(title, name)`.
fn field_itemsize(field: &Lit) -> Result<usize, FormatError> {
    let Lit::Tuple(parts) = field else {
        return bad("a field of a structured dtype is not a tuple");
    };
    let (name, dt, shape) = match parts.as_slice() {
        [n, d] => (n, d, None),
        [n, d, s] => (n, d, Some(s)),
        _ => return bad("a field of a structured dtype is not (name, dtype[, shape])"),
    };
    match name {
        Lit::Str(_) => {}
        Lit::Tuple(t) if t.len() == 2 && t.iter().all(|x| matches!(x, Lit::Str(_))) => {}
        _ => return bad("a field name is not a string"),
    }
    let base = descr_itemsize(dt)?;
    let count = match shape {
        None => 1u64,
        Some(Lit::Int(n)) if *n >= 0 => *n as u64,
        Some(Lit::Tuple(dims)) => dims.iter().try_fold(1u64, |acc, d| match d {
            Lit::Int(n) if *n >= 0 => {
                acc.checked_mul(*n as u64).ok_or_else(|| FormatError("a field's shape overflows".into()))
            }
            _ => bad("a field's shape holds something other than lengths"),
        })?,
        _ => return bad("a field's shape is not a tuple of lengths"),
    };
    (base as u64)
        .checked_mul(count)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| FormatError("a field's size overflows".into()))
}

/// `<f8`, `|u1`, `>i4`, `<U5`, `|S3`, `|V16`, `<M8[ns]`, `|b1`.
fn typestr_itemsize(s: &str) -> Result<usize, FormatError> {
    let body = s.strip_prefix(['<', '>', '|', '=']).unwrap_or(s);
    let mut chars = body.chars();
    let kind = chars.next().ok_or_else(|| FormatError("an empty type string".into()))?;
    let rest = chars.as_str();
    let digits_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (digits, unit) = rest.split_at(digits_end);
    let n: usize = digits.parse().map_err(|_| FormatError(format!("type string {s:?} has no size")))?;
    let unit_ok =
        unit.is_empty() || (matches!(kind, 'M' | 'm') && unit.starts_with('[') && unit.ends_with(']'));
    let size = match kind {
        'b' if n == 1 => Some(1),
        'i' | 'u' if matches!(n, 1 | 2 | 4 | 8) => Some(n),
        'f' if matches!(n, 2 | 4 | 8 | 16) => Some(n),
        'c' if matches!(n, 8 | 16 | 32) => Some(n),
        'M' | 'm' if n == 8 => Some(8),
        'S' | 'a' | 'V' => Some(n),
        'U' => n.checked_mul(4),
        'O' => return bad("object arrays (dtype 'O') hold Python objects, not values"),
        _ => None,
    };
    match size {
        Some(size) if unit_ok => Ok(size),
        _ => bad(format!("unknown type string {s:?}")),
    }
}

// ------------------------------------------------------------ Python literals

/// The Python literals a `.npy` header holds.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    fn parse(text: &str) -> Result<Lit, FormatError> {
        let mut p = Parser { s: text.as_bytes(), text, at: 0, depth: 0 };
        let v = p.value()?;
        p.skip_space();
        if p.at != p.s.len() {
            return bad("text after the header's dict");
        }
        Ok(v)
    }

    /// As Python's `repr` writes it.
    fn repr(&self) -> String {
        let join = |v: &[Lit]| v.iter().map(Lit::repr).collect::<Vec<_>>().join(", ");
        match self {
            Lit::Str(s) => repr_str(s),
            Lit::Int(n) => n.to_string(),
            Lit::Bool(b) => if *b { "True" } else { "False" }.into(),
            Lit::None => "None".into(),
            Lit::Tuple(v) if v.len() == 1 => format!("({},)", v[0].repr()),
            Lit::Tuple(v) => format!("({})", join(v)),
            Lit::List(v) => format!("[{}]", join(v)),
            Lit::Dict(d) => format!(
                "{{{}}}",
                d.iter().map(|(k, v)| format!("{}: {}", k.repr(), v.repr())).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.at).copied()
    }

    fn value(&mut self) -> Result<Lit, FormatError> {
        self.depth += 1;
        if self.depth > 64 {
            return bad("the header nests too deeply");
        }
        let v = match self.peek() {
            Some(b'{') => self.dict(),
            Some(b'(') => self.seq(b')').map(Lit::Tuple),
            Some(b'[') => self.seq(b']').map(Lit::List),
            Some(b'\'' | b'"') => self.string().map(Lit::Str),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.int(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            _ => bad("the header is not a Python literal"),
        };
        self.depth -= 1;
        v
    }

    fn dict(&mut self) -> Result<Lit, FormatError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.at += 1;
                return Ok(Lit::Dict(items));
            }
            let k = self.value()?;
            if self.peek() != Some(b':') {
                return bad("a dict entry without ':'");
            }
            self.at += 1;
            let v = self.value()?;
            items.push((k, v));
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                _ => return bad("a dict entry not followed by ',' or '}'"),
            }
        }
    }

    fn seq(&mut self, close: u8) -> Result<Vec<Lit>, FormatError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return bad("a list or tuple item not followed by ',' or its end"),
            }
        }
    }

    fn int(&mut self) -> Result<Lit, FormatError> {
        let start = self.at;
        if self.s[self.at] == b'-' {
            self.at += 1;
        }
        while self.at < self.s.len() && self.s[self.at].is_ascii_digit() {
            self.at += 1;
        }
        let n = self.text[start..self.at]
            .parse()
            .map_err(|_| FormatError("a number out of range in the header".into()))?;
        // Python 2 wrote long integers as 3L.
        if matches!(self.s.get(self.at), Some(b'L' | b'l')) {
            self.at += 1;
        }
        Ok(Lit::Int(n))
    }

    fn word(&mut self) -> Result<Lit, FormatError> {
        let start = self.at;
        while self.at < self.s.len() && self.s[self.at].is_ascii_alphanumeric() {
            self.at += 1;
        }
        match &self.text[start..self.at] {
            "True" => Ok(Lit::Bool(true)),
            "False" => Ok(Lit::Bool(false)),
            "None" => Ok(Lit::None),
            w => bad(format!("{w:?} in the header")),
        }
    }

    fn string(&mut self) -> Result<String, FormatError> {
        let quote = self.s[self.at];
        self.at += 1;
        let mut out = String::new();
        let mut chars = self.text[self.at..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c as u32 == u32::from(quote) => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => {
                    let (_, e) = chars.next().ok_or_else(|| FormatError("a string ends early".into()))?;
                    match e {
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        '0' => out.push('\0'),
                        'x' | 'u' | 'U' => {
                            let n = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = (0..n).filter_map(|_| chars.next().map(|(_, h)| h)).collect();
                            let v = u32::from_str_radix(&hex, 16)
                                .ok()
                                .filter(|_| hex.len() == n)
                                .and_then(char::from_u32);
                            out.push(v.ok_or_else(|| FormatError("a bad escape in a string".into()))?);
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
        bad("a string is not closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_as_numpy_writes_them() {
        // np.save of np.zeros((3, 4)): the dict, 21 - 1 spaces of room, padding to 128 bytes
        let h = header_bytes("<f8", false, &[3, 4]).unwrap();
        assert_eq!(h.len(), 128);
        assert_eq!(&h[..10], b"\x93NUMPY\x01\x00\x76\x00");
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text
            .starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }                    "));
        assert!(text.ends_with(" \n"));
        let parsed = Header::parse(&h).unwrap();
        assert_eq!(
            parsed,
            Header {
                dtype: "<f8".into(),
                itemsize: 8,
                fortran_order: false,
                shape: vec![3, 4],
                data_offset: 128,
                version: (1, 0)
            }
        );
        // 0-d and 1-d shapes
        let h = header_bytes("|u1", true, &[]).unwrap();
        assert!(std::str::from_utf8(&h[10..])
            .unwrap()
            .starts_with("{'descr': '|u1', 'fortran_order': True, 'shape': (), }"));
        let h = header_bytes("|u1", false, &[7]).unwrap();
        assert!(std::str::from_utf8(&h[10..]).unwrap().contains("'shape': (7,), }"));
        // a structured dtype keeps the metalayer's text
        let dt = "[('a', '<i4'), ('b', '<f8', (2,)), ('c', [('x', '|u1')])]";
        let h = header_bytes(dt, false, &[5]).unwrap();
        let p = Header::parse(&h).unwrap();
        assert_eq!((p.dtype.as_str(), p.itemsize), (dt, 4 + 16 + 1));
        // a non-Latin-1 field name needs version 3.0
        let h = header_bytes("[('\u{3b1}', '<f4')]", false, &[2]).unwrap();
        assert_eq!(h[6], 3);
        assert_eq!(Header::parse(&h).unwrap().dtype, "[('\u{3b1}', '<f4')]");
    }

    #[test]
    fn sizes_and_bad_headers() {
        for (s, n) in [
            ("<f8", 8),
            ("|b1", 1),
            ("<U5", 20),
            ("|S3", 3),
            ("<M8[ns]", 8),
            ("<c16", 16),
            (">i2", 2),
            ("|V16", 16),
        ] {
            assert_eq!(dtype_itemsize(s).unwrap(), n, "{s}");
        }
        assert_eq!(dtype_itemsize("[(('title', 'a'), '<i2', (2, 3)), ('', '|V2')]").unwrap(), 14);
        assert!(dtype_itemsize("|O").is_err());
        assert!(dtype_itemsize("<q8").is_err());
        assert!(Header::parse(b"\x93NUMPX\x01\x00").is_err());
        assert!(Header::parse(b"\x93NUMPY\x04\x00\x00\x00").is_err());
        let mut h = header_bytes("<f8", false, &[3]).unwrap();
        h[20] = b'@';
        assert!(Header::parse(&h).is_err());
        let text = b"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }\n";
        let mut h = b"\x93NUMPY\x01\x00".to_vec();
        h.extend_from_slice(&(text.len() as u16).to_le_bytes());
        h.extend_from_slice(text);
        assert!(Header::parse(&h).unwrap_err().0.contains("lengths"));
        // Python 2's long integers and double quotes
        let text = b"{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3L, 2L)}\n";
        let mut h = b"\x93NUMPY\x01\x00".to_vec();
        h.extend_from_slice(&(text.len() as u16).to_le_bytes());
        h.extend_from_slice(text);
        assert_eq!(Header::parse(&h).unwrap().shape, vec![3, 2]);
        // deep nesting is refused, not followed
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(Lit::parse(&deep).is_err());
    }
}
