//! NumPy dtype strings (what the b2nd metalayer holds, `dtype_format` 0) and
//! the text of one item: `<f8`, `|u1`, `>i4`, `<c16`, `|b1`, `|S10`, `<U5`,
//! `<M8[ns]`, `|V16`, and structured dtypes written as their field list
//! (`[('a', '<i4'), ('b', '<f8')]`).

#[derive(Debug, Clone, PartialEq)]
pub enum Dtype {
    Scalar { kind: char, size: usize, big: bool, unit: String },
    Struct { fields: Vec<(String, usize, Dtype)>, size: usize },
}

impl Dtype {
    pub fn size(&self) -> usize {
        match self {
            Dtype::Scalar { size, .. } | Dtype::Struct { size, .. } => *size,
        }
    }

    /// Raw items of `size` bytes (when there is no dtype, or it does not parse).
    pub fn void(size: usize) -> Dtype {
        Dtype::Scalar { kind: 'V', size, big: false, unit: String::new() }
    }

    /// Parse a dtype string; `None` when it is not one this tool knows.
    pub fn parse(s: &str) -> Option<Dtype> {
        let s = s.trim();
        if s.starts_with('[') {
            return parse_struct(s);
        }
        let mut chars = s.chars();
        let first = chars.next()?;
        let (big, rest) = match first {
            '<' | '=' | '|' => (false, chars.as_str()),
            '>' => (true, chars.as_str()),
            _ => (false, s),
        };
        let kind = rest.chars().next()?;
        let num_end = rest[1..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |p| p + 1);
        let n: usize = rest[1..num_end].parse().ok()?;
        let unit = rest[num_end..].trim_matches(|c| c == '[' || c == ']').to_string();
        let size = match kind {
            'U' => n.checked_mul(4)?,
            'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'V' | 'M' | 'm' | 'a' => n,
            _ => return None,
        };
        let ok = match kind {
            'b' => n == 1,
            'i' | 'u' => matches!(n, 1 | 2 | 4 | 8),
            'f' => matches!(n, 2 | 4 | 8),
            'c' => matches!(n, 8 | 16),
            'M' | 'm' => n == 8,
            _ => true,
        };
        ok.then_some(Dtype::Scalar { kind: if kind == 'a' { 'S' } else { kind }, size, big, unit })
    }

    /// A float item's value, and whether it is a single-precision one.
    pub fn float_value(&self, b: &[u8]) -> Option<(f64, bool)> {
        match self {
            Dtype::Scalar { kind: 'f', size, big, .. } if b.len() >= *size => {
                let mut buf = [0u8; 8];
                buf[..*size].copy_from_slice(&b[..*size]);
                if *big {
                    buf[..*size].reverse();
                }
                Some(match size {
                    2 => (half(u16::from_le_bytes([buf[0], buf[1]])), true),
                    4 => (f64::from(f32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]])), true),
                    _ => (f64::from_le_bytes(buf), false),
                })
            }
            _ => None,
        }
    }

    /// The text of one item (`b` holds exactly `self.size()` bytes).
    pub fn format(&self, b: &[u8]) -> String {
        match self {
            Dtype::Struct { fields, .. } => {
                let v: Vec<String> =
                    fields.iter().map(|(_, off, dt)| dt.format(&b[*off..*off + dt.size()])).collect();
                format!("({})", v.join(", "))
            }
            Dtype::Scalar { kind, size, big, unit } => {
                let mut buf = [0u8; 16];
                let n = (*size).min(16);
                buf[..n].copy_from_slice(&b[..n]);
                if *big && matches!(kind, 'i' | 'u' | 'f' | 'c' | 'M' | 'm') {
                    let half = if *kind == 'c' { n / 2 } else { n };
                    buf[..half].reverse();
                    if *kind == 'c' {
                        buf[half..n].reverse();
                    }
                }
                let uint = || u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8]));
                let sint = |n: usize| {
                    let shift = 64 - 8 * n as u32;
                    ((uint() << shift) as i64) >> shift
                };
                match kind {
                    'b' => {
                        if b[0] != 0 {
                            "True".into()
                        } else {
                            "False".into()
                        }
                    }
                    'i' => sint(n).to_string(),
                    'u' => uint().to_string(),
                    'f' => float(
                        match n {
                            2 => half(u16::from_le_bytes([buf[0], buf[1]])),
                            4 => f64::from(f32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]])),
                            _ => f64::from_bits(uint()),
                        },
                        n == 4,
                    ),
                    'c' => {
                        let (re, im) = if n == 8 {
                            (
                                f64::from(f32::from_le_bytes(buf[..4].try_into().unwrap_or([0; 4]))),
                                f64::from(f32::from_le_bytes(buf[4..8].try_into().unwrap_or([0; 4]))),
                            )
                        } else {
                            (
                                f64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8])),
                                f64::from_le_bytes(buf[8..16].try_into().unwrap_or([0; 8])),
                            )
                        };
                        let im_s = float(im, n == 8);
                        let sign = if im_s.starts_with('-') { "" } else { "+" };
                        format!("({}{sign}{im_s}j)", float(re, n == 8))
                    }
                    'M' | 'm' => {
                        let v = sint(8);
                        if v == i64::MIN {
                            "NaT".into()
                        } else {
                            format!("{v}[{unit}]")
                        }
                    }
                    'S' => {
                        let end = b.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1);
                        let body: String = b[..end]
                            .iter()
                            .map(|&c| match c {
                                b'\'' => "\\'".to_string(),
                                b'\\' => "\\\\".to_string(),
                                0x20..=0x7e => (c as char).to_string(),
                                _ => format!("\\x{c:02x}"),
                            })
                            .collect();
                        format!("b'{body}'")
                    }
                    'U' => {
                        let s: String = b
                            .chunks_exact(4)
                            .map(|c| {
                                let v = if *big {
                                    u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                                } else {
                                    u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                                };
                                char::from_u32(v).unwrap_or('\u{fffd}')
                            })
                            .collect();
                        format!("'{}'", s.trim_end_matches('\0'))
                    }
                    _ => format!("0x{}", crate::json::hex(b)),
                }
            }
        }
    }
}

/// A float as NumPy prints array items: `1.`, `0.25`, `nan`, `-inf`, `1.5e+20`.
fn float(x: f64, single: bool) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = if single { format!("{:e}", x as f32) } else { format!("{x:e}") };
        // Rust writes 1.5e20 and 1e-7: NumPy writes 1.5e+20 and 1.e-07
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') { m.to_string() } else { format!("{m}.") };
        let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
        return format!("{m}e{sign}{digits:0>2}");
    }
    let s = if single { (x as f32).to_string() } else { x.to_string() };
    if s.contains('.') {
        s
    } else {
        format!("{s}.")
    }
}

/// An IEEE half float.
fn half(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// `[('a', '<i4'), ('b', '<f8')]` (names and scalar types; other forms give `None`).
fn parse_struct(s: &str) -> Option<Dtype> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let mut fields = Vec::new();
    let mut off = 0usize;
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let body_end = rest.find(')')?;
        let body = rest.strip_prefix('(')?.get(..body_end - 1)?;
        let parts: Vec<&str> =
            body.split(',').map(|p| p.trim().trim_matches(|c| c == '\'' || c == '"')).collect();
        if parts.len() != 2 {
            return None;
        }
        let dt = Dtype::parse(parts[1])?;
        let size = dt.size();
        fields.push((parts[0].to_string(), off, dt));
        off = off.checked_add(size)?;
        rest = rest[body_end + 1..].trim_start().trim_start_matches(',').trim_start();
    }
    (!fields.is_empty()).then_some(Dtype::Struct { fields, size: off })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_as_numpy_prints_them() {
        let f8 = Dtype::parse("<f8").unwrap();
        assert_eq!(f8.format(&1.0f64.to_le_bytes()), "1.");
        assert_eq!(f8.format(&0.25f64.to_le_bytes()), "0.25");
        assert_eq!(f8.format(&1.5e20f64.to_le_bytes()), "1.5e+20");
        assert_eq!(f8.format(&f64::NAN.to_le_bytes()), "nan");
        assert_eq!(Dtype::parse(">i2").unwrap().format(&[0xff, 0xfe]), "-2");
        assert_eq!(Dtype::parse("|b1").unwrap().format(&[1]), "True");
        assert_eq!(Dtype::parse("|S4").unwrap().format(b"ab\0\0"), "b'ab'");
        assert_eq!(Dtype::parse("<U2").unwrap().format(&[b'h', 0, 0, 0, b'i', 0, 0, 0]), "'hi'");
        let c = Dtype::parse("<c16").unwrap();
        let mut b = 1.5f64.to_le_bytes().to_vec();
        b.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(c.format(&b), "(1.5-2.j)");
        let s = Dtype::parse("[('a', '<i4'), ('b', '<f4')]").unwrap();
        assert_eq!(s.size(), 8);
        let mut b = 7i32.to_le_bytes().to_vec();
        b.extend_from_slice(&0.5f32.to_le_bytes());
        assert_eq!(s.format(&b), "(7, 0.5)");
        assert_eq!(Dtype::parse("<M8[ns]").unwrap().format(&5i64.to_le_bytes()), "5[ns]");
        assert_eq!(Dtype::parse("<q8"), None);
    }
}
