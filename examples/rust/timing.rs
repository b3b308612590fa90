//! Quick timing of the safe API (used while profiling; not a benchmark of record).
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shuffle: i32 = args.get(1).map_or(0, |s| s.parse().unwrap());
    let codec = Codec::from_name(args.get(2).map_or("lz4", |s| s.as_str())).unwrap();
    let n: usize = 8 << 20;
    let mut state = 42u32;
    let src: Vec<u8> = (0..(n / 4) as u32)
        .flat_map(|i: u32| {
            state = state.wrapping_mul(1664525).wrapping_add(1013904223);
            (i * 3 + ((state >> 24) & 7)).to_le_bytes()
        })
        .collect();
    for nthreads in [1i16, 2] {
        let mut p = CParams::classic(codec, 5, shuffle, 4, false);
        p.nthreads = nthreads;
        let mut c = Compressor::new(p).unwrap();
        let mut dst = vec![0u8; n + 64];
        let mut d = Decompressor::new(DParams { nthreads, typesize: 4, ..DParams::default() });
        let mut back = vec![0u8; n];
        let mut ct = vec![];
        let mut dt = vec![];
        for _ in 0..20 {
            let t = Instant::now();
            let cs = c.compress(&src, &mut dst).unwrap();
            ct.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            d.decompress(&dst[..cs], &mut back).unwrap();
            dt.push(t.elapsed().as_secs_f64());
        }
        ct.sort_by(f64::total_cmp);
        dt.sort_by(f64::total_cmp);
        println!(
            "threads {nthreads}: compress {:.0} MB/s, decompress {:.0} MB/s",
            n as f64 / ct[10] / 1e6,
            n as f64 / dt[10] / 1e6
        );
    }
}
