//! The safe and fast twins of internal pieces agree.

use super::{corpus, Rng};

#[test]
fn probe_twins_agree() {
    use super::super::{probe, probe_unsafe};
    fn both<const N: usize>(window: &[u8]) {
        let (mut a, mut b) = ([0u32; N], [0u32; N]);
        let safe = probe::estimate_ratio(window, &mut a);
        let fast = probe_unsafe::estimate_ratio(window, &mut b);
        assert_eq!(safe.to_bits(), fast.to_bits(), "window of {}", window.len());
    }
    // (Under Miri up to 600 bytes: it is slow.)
    let lens: &[usize] =
        if cfg!(miri) { &[0, 12, 13, 20, 100, 600] } else { &[0, 12, 13, 20, 100, 5000, 20000] };
    for &len in lens {
        for (_, src) in corpus(len, 31) {
            both::<4096>(&src);
            both::<8192>(&src);
            both::<16384>(&src);
        }
    }
}

#[test]
fn match_end_twins_agree() {
    let mut rng = Rng(3);
    for _ in 0..if cfg!(miri) { 300 } else { 2000 } {
        let period = 1 + rng.below(40);
        let len = 40 + rng.below(200);
        let mut buf: Vec<u8> = (0..len).map(|i| (i % period) as u8).collect();
        for _ in 0..rng.below(4) {
            let at = rng.below(len);
            buf[at] = rng.next() as u8;
        }
        let bound = 1 + period + rng.below(len - period);
        let reference = rng.below(bound - period);
        let ip = reference + 1 + rng.below(bound - reference);
        let safe = super::super::compress::match_end(&buf, ip, reference, bound);
        let fast = super::super::compress_unsafe::match_end(&buf, ip, reference, bound);
        assert_eq!(safe, fast);
        assert!(safe > ip.min(bound - 1) && safe <= bound);
    }
}
