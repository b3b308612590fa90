//! `b2nd dump FILE [--slice SPEC]`: the values of an array, or of a slice of
//! it, as NumPy prints them; more than 1000 items are summarised (the first and
//! last 3 along each long dimension), and only what is printed is read.

use crate::dtype::Dtype;
use crate::source::{explain, Source};
use b2nd::array::Array;

/// Items beyond which the output is summarised, and the items kept at each end.
const THRESHOLD: i64 = 1000;
const EDGE: i64 = 3;
const LINE: usize = 75;

/// One dimension of a slice: `start..stop`, and whether an integer index drops it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    pub start: i64,
    pub stop: i64,
    pub drop: bool,
}

/// Parse `0:10,5,:,-3:` against `shape` (missing dimensions are whole).
pub fn parse_slice(spec: &str, shape: &[i64]) -> Result<Vec<Dim>, String> {
    let parts: Vec<&str> = if spec.trim().is_empty() { Vec::new() } else { spec.split(',').collect() };
    if parts.len() > shape.len() {
        return Err(format!("the slice has {} dimensions, the array {}", parts.len(), shape.len()));
    }
    let mut dims = Vec::with_capacity(shape.len());
    for (d, &len) in shape.iter().enumerate() {
        let p = parts.get(d).map_or(":", |p| p.trim());
        let num = |s: &str, default: i64| -> Result<i64, String> {
            if s.is_empty() {
                return Ok(default);
            }
            let v: i64 = s.parse().map_err(|_| format!("not an index: {s:?}"))?;
            Ok(if v < 0 { (v + len).max(0) } else { v.min(len) })
        };
        if let Some((a, b)) = p.split_once(':') {
            if let Some((_, step)) = b.split_once(':') {
                if !step.trim().is_empty() && step.trim() != "1" {
                    return Err("steps other than 1 are not supported".into());
                }
            }
            let b = b.split(':').next().unwrap_or("");
            let (start, stop) = (num(a.trim(), 0)?, num(b.trim(), len)?);
            dims.push(Dim { start, stop: stop.max(start), drop: false });
        } else {
            let v: i64 = p.parse().map_err(|_| format!("not an index: {p:?}"))?;
            let i = if v < 0 { v + len } else { v };
            if i < 0 || i >= len {
                return Err(format!("index {v} is out of bounds for a dimension of {len}"));
            }
            dims.push(Dim { start: i, stop: i + 1, drop: true });
        }
    }
    Ok(dims)
}

pub fn run(src: &Source, slice: Option<&str>) -> Result<i32, String> {
    let arr = match &src.b2nd() {
        Some(Ok(_)) => Some(
            if src.offset > 0 { Array::open_offset(&src.path, src.offset) } else { Array::open(&src.path) }
                .map_err(explain)?,
        ),
        Some(Err(e)) => return Err(format!("unreadable b2nd metalayer: {}", explain(*e))),
        None => None,
    };
    let ts = src.sc.typesize().max(1) as usize;
    let (shape, dtype) = match &arr {
        Some(a) => {
            let m = src.b2nd().and_then(|m| m.ok()).ok_or("no b2nd metalayer")?;
            let dt = Dtype::parse(&m.dtype).filter(|d| d.size() == ts).unwrap_or_else(|| Dtype::void(ts));
            (a.shape().to_vec(), dt)
        }
        // a plain super-chunk: its items, of its typesize
        None => (vec![src.sc.nbytes() / ts as i64], Dtype::void(ts)),
    };
    let dims = parse_slice(slice.unwrap_or(""), &shape)?;
    let lens: Vec<i64> = dims.iter().map(|d| d.stop - d.start).collect();
    let total: i64 = lens.iter().product();
    // the coordinates printed along each dimension
    let summarise = total > THRESHOLD;
    let shown: Vec<Vec<i64>> = dims
        .iter()
        .map(|d| {
            let n = d.stop - d.start;
            if summarise && n > 2 * EDGE {
                (d.start..d.start + EDGE).chain(d.stop - EDGE..d.stop).collect()
            } else {
                (d.start..d.stop).collect()
            }
        })
        .collect();
    let counts: Vec<usize> = shown.iter().map(Vec::len).collect();
    let nshown: usize = counts.iter().product();
    let mut items = vec![0u8; nshown * ts];
    if nshown > 0 {
        read_boxes(src, arr.as_ref(), &shown, ts, &mut items).map_err(explain)?;
    }
    let text = match dtype.float_value(&items[..ts.min(items.len())]) {
        // floats are laid out together, as NumPy decides for the items shown
        Some((_, single)) => {
            let vals: Vec<f64> =
                items.chunks_exact(ts).filter_map(|b| dtype.float_value(b).map(|v| v.0)).collect();
            format_floats(&vals, single)
        }
        None => items.chunks_exact(ts).map(|b| dtype.format(b)).collect(),
    };
    // dimensions dropped by integer indexes disappear from the printout
    let keep: Vec<usize> = (0..dims.len()).filter(|&d| !dims[d].drop).collect();
    let out_counts: Vec<usize> = keep.iter().map(|&d| counts[d]).collect();
    let cut: Vec<bool> = keep.iter().map(|&d| summarise && lens[d] > 2 * EDGE).collect();
    let width = text.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    print_array(&text, &out_counts, &cut, width, 0, 0, &mut out);
    outln!("{out}");
    Ok(0)
}

/// Floats as NumPy prints an array of them (precision 8, `maxprec`): in
/// positional form, lined up on their points (`0. `, `0.5`, `10.25`), unless the
/// largest is 1e8 or more, the smallest below 1e-4, or their ratio above 1000:
/// then in scientific form with one mantissa length (`1.50000000e+00`).
pub fn format_floats(vals: &[f64], single: bool) -> Vec<String> {
    let shortest = |x: f64, sci: bool| -> String {
        let s = match (single, sci) {
            (true, false) => (x as f32).to_string(),
            (false, false) => x.to_string(),
            (true, true) => format!("{:e}", x as f32),
            (false, true) => format!("{x:e}"),
        };
        // at most 8 digits after the point
        let (m, e) = s.split_once('e').map_or((s.as_str(), None), |(m, e)| (m, Some(e)));
        let m = match m.split_once('.') {
            Some((_, f)) if f.len() > 8 => {
                let r =
                    if sci { format!("{:.8e}", m.parse::<f64>().unwrap_or(0.0)) } else { format!("{x:.8}") };
                let r = r.split('e').next().unwrap_or("").trim_end_matches('0').to_string();
                r
            }
            _ => m.to_string(),
        };
        // the shortest digits end as the exact value rounds (half to even, as NumPy)
        let m = if !sci {
            let n = m.split_once('.').map_or(0, |(_, f)| f.len());
            let exact = if single { format!("{:.n$}", x as f32) } else { format!("{x:.n$}") };
            let same = if single {
                exact.parse::<f32>().ok() == Some(x as f32)
            } else {
                exact.parse::<f64>().ok() == Some(x)
            };
            if same {
                exact
            } else {
                m
            }
        } else {
            m
        };
        let m = if m.contains('.') { m } else { format!("{m}.") };
        match e {
            Some(e) => format!("{m}e{e}"),
            None => m,
        }
    };
    let finite: Vec<f64> = vals.iter().copied().filter(|x| x.is_finite()).collect();
    let nonzero: Vec<f64> = finite.iter().map(|x| x.abs()).filter(|&a| a != 0.0).collect();
    let (lo, hi) = nonzero.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &a| (lo.min(a), hi.max(a)));
    let sci = !nonzero.is_empty() && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1000.0);
    let parts: Vec<(String, String, String)> = finite
        .iter()
        .map(|&x| {
            let s = shortest(x, sci);
            let (m, e) =
                s.split_once('e').map_or((s.clone(), String::new()), |(m, e)| (m.to_string(), e.to_string()));
            let (i, f) =
                m.split_once('.').map_or((m.clone(), String::new()), |(i, f)| (i.to_string(), f.to_string()));
            (i, f, e)
        })
        .collect();
    let pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(1);
    let pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
    let exp_digits = parts.iter().map(|p| p.2.trim_start_matches('-').len()).max().unwrap_or(0).max(2);
    let width = if sci { pad_left + 1 + pad_right + 2 + exp_digits } else { pad_left + 1 + pad_right };
    let mut k = 0;
    vals.iter()
        .map(|&x| {
            if !x.is_finite() {
                let s = if x.is_nan() {
                    "nan"
                } else if x > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                return format!("{s:>width$}");
            }
            let (i, f, _) = &parts[k];
            k += 1;
            if sci {
                // the mantissa to one length, with the value's own further digits
                let full =
                    if single { format!("{:.pad_right$e}", x as f32) } else { format!("{x:.pad_right$e}") };
                let (m, e) = full.split_once('e').unwrap_or((&full, "0"));
                let (i, f) = m.split_once('.').unwrap_or((m, ""));
                let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
                format!("{i:>pad_left$}.{f}e{sign}{digits:0>exp_digits$}")
            } else {
                format!("{i:>pad_left$}.{f:<pad_right$}")
            }
        })
        .collect()
}

/// Read the items at the shown coordinates into `out` (C order over them):
/// each run of consecutive coordinates per dimension is one box.
fn read_boxes(
    src: &Source,
    arr: Option<&Array>,
    shown: &[Vec<i64>],
    ts: usize,
    out: &mut [u8],
) -> Result<(), b2nd::Error> {
    let runs: Vec<Vec<(usize, i64, i64)>> = shown
        .iter()
        .map(|v| {
            let mut r: Vec<(usize, i64, i64)> = Vec::new();
            for (k, &x) in v.iter().enumerate() {
                match r.last_mut() {
                    Some(last) if last.2 == x => last.2 = x + 1,
                    _ => r.push((k, x, x + 1)),
                }
            }
            r
        })
        .collect();
    let counts: Vec<usize> = shown.iter().map(Vec::len).collect();
    let nd = shown.len();
    let mut pick = vec![0usize; nd];
    loop {
        let start: Vec<i64> = (0..nd).map(|d| runs[d][pick[d]].1).collect();
        let stop: Vec<i64> = (0..nd).map(|d| runs[d][pick[d]].2).collect();
        let bshape: Vec<usize> = (0..nd).map(|d| (stop[d] - start[d]) as usize).collect();
        let n: usize = bshape.iter().product();
        let mut buf = vec![0u8; n * ts];
        match arr {
            Some(a) => a.get_slice(&start, &stop, &mut buf)?,
            None => {
                src.sc.get_slice(start[0], stop[0], &mut buf)?;
            }
        }
        // scatter the box into the shown items
        for (j, item) in buf.chunks_exact(ts).enumerate() {
            let (mut rest, mut at, mut stride) = (j, 0usize, 1usize);
            let mut idx = vec![0usize; nd];
            for d in (0..nd).rev() {
                idx[d] = rest % bshape[d];
                rest /= bshape[d];
            }
            for d in (0..nd).rev() {
                at += (runs[d][pick[d]].0 + idx[d]) * stride;
                stride *= counts[d];
            }
            out[at * ts..(at + 1) * ts].copy_from_slice(item);
        }
        let mut d = nd;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            pick[d] += 1;
            if pick[d] < runs[d].len() {
                break;
            }
            pick[d] = 0;
        }
    }
}

/// NumPy's layout: nested brackets, items right-aligned to one width, `...`
/// where a dimension is summarised, rows wrapped at 75 columns.
fn print_array(
    text: &[String],
    counts: &[usize],
    cut: &[bool],
    width: usize,
    depth: usize,
    base: usize,
    out: &mut String,
) {
    if counts.is_empty() {
        out.push_str(text.get(base).map_or("", |s| s.as_str()));
        return;
    }
    let n = counts[0];
    let inner: usize = counts[1..].iter().product();
    out.push('[');
    if counts.len() == 1 {
        // each piece after a space, or on a new indented line when it would pass the width
        let mut col = depth + 1;
        let mut place = |out: &mut String, piece: &str, first: bool| {
            if !first && col + 1 + piece.len() > LINE {
                out.push('\n');
                out.push_str(&" ".repeat(depth + 1));
                col = depth + 1;
            } else if !first {
                out.push(' ');
                col += 1;
            }
            out.push_str(piece);
            col += piece.len();
        };
        for i in 0..n {
            if cut[0] && i == EDGE as usize {
                place(out, "...,", false);
            }
            let comma = if i + 1 < n { "," } else { "" };
            place(out, &format!("{:>width$}{comma}", text[base + i]), i == 0);
        }
    } else {
        let blank = "\n".repeat(counts.len() - 1);
        for i in 0..n {
            if i > 0 {
                out.push(',');
                out.push_str(&blank);
                out.push_str(&" ".repeat(depth + 1));
            }
            if cut[0] && i == EDGE as usize {
                out.push_str("...,");
                out.push_str(&blank);
                out.push_str(&" ".repeat(depth + 1));
            }
            print_array(text, &counts[1..], &cut[1..], width, depth + 1, base + i * inner, out);
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices() {
        let d = parse_slice("0:10,5,:,-3:", &[20, 8, 4, 10]).unwrap();
        assert_eq!(d[0], Dim { start: 0, stop: 10, drop: false });
        assert_eq!(d[1], Dim { start: 5, stop: 6, drop: true });
        assert_eq!(d[2], Dim { start: 0, stop: 4, drop: false });
        assert_eq!(d[3], Dim { start: 7, stop: 10, drop: false });
        assert_eq!(parse_slice("", &[3]).unwrap()[0], Dim { start: 0, stop: 3, drop: false });
        assert!(parse_slice("9", &[3]).is_err());
        assert!(parse_slice("1,2", &[3]).is_err());
        assert!(parse_slice("::2", &[3]).is_err());
        assert!(parse_slice("x", &[3]).is_err());
    }

    #[test]
    fn layout_as_numpy() {
        let t: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        let mut s = String::new();
        print_array(&t, &[2, 3], &[false, false], 1, 0, 0, &mut s);
        assert_eq!(s, "[[0, 1, 2],\n [3, 4, 5]]");
        let t: Vec<String> = (0..6).map(|i| (i * 10).to_string()).collect();
        let mut s = String::new();
        print_array(&t, &[6], &[true], 2, 0, 0, &mut s);
        assert_eq!(s, "[ 0, 10, 20, ..., 30, 40, 50]");
    }
}
