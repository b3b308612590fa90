//! Where a contiguous frame file puts changed chunks (docs/FRAME_BEHAVIOUR.md
//! §12a): into holes or at the end of the chunks section, never over a chunk
//! the frame before the change, or at the last checkpoint, still holds; the
//! chunk stored last in place; holes reused, the free end cut off, and the
//! section compacted when holes take too much of it.

use b2nd::chunk::{CParams, Compressor, DParams};
use b2nd::codecs::Codec;
use b2nd::io::{filesystem, Durability};
use b2nd::schunk::{Storage, SuperChunk};

fn scratch(name: &str) -> String {
    let d = b2nd::os::temp_dir().join(format!("b2nd-holes-{}", b2nd::os::process_id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name).to_str().unwrap().to_string();
    let _ = b2nd::schunk::remove_urlpath(&p);
    p
}

fn cparams() -> CParams {
    CParams::classic(Codec::Lz4, 5, 1, 4, false)
}

/// `n` bytes, the first `noisy` of them noise (they do not compress).
fn data(seed: u64, n: usize, noisy: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i < noisy {
                x as u8
            } else {
                (i / 64) as u8
            }
        })
        .collect()
}

fn compress(src: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() + 64];
    let n = Compressor::new(cparams()).unwrap().compress(src, &mut out).unwrap();
    out.truncate(n);
    out
}

fn new_frame(path: &str, durability: Durability) -> SuperChunk {
    let storage =
        Storage { contiguous: true, urlpath: Some(path.to_string()), durability, ..Storage::default() };
    SuperChunk::new(cparams(), DParams::default(), storage).unwrap()
}

fn offsets(sc: &SuperChunk) -> Vec<i64> {
    sc.frame().unwrap().offsets()
}

fn contents(sc: &SuperChunk) -> Vec<Vec<u8>> {
    (0..sc.nchunks())
        .map(|i| {
            let mut out = vec![0u8; sc.chunk_nbytes(i).unwrap() as usize];
            sc.decompress_chunk(i, &mut out).unwrap();
            out
        })
        .collect()
}

const N: usize = 64 << 10;

#[test]
fn an_update_leaves_the_old_chunk_in_place_and_the_next_change_fills_its_hole() {
    let path = scratch("fill.b2frame");
    let mut sc = new_frame(&path, Durability::Off);
    let mut want = Vec::new();
    for i in 0..4 {
        want.push(data(i, N, N / 2));
        sc.append_chunk(&compress(&want[i as usize])).unwrap();
    }
    let before = offsets(&sc);
    let section = sc.cbytes();
    // chunk 1 grows: it goes to the end, the other chunks stay where they were
    want[1] = data(10, N, N * 3 / 4);
    sc.update_chunk(1, &compress(&want[1])).unwrap();
    let after = offsets(&sc);
    assert_eq!((after[0], after[2], after[3]), (before[0], before[2], before[3]));
    assert_eq!(after[1], section, "the larger chunk goes at the end of the section");
    // a smaller chunk 2 goes into chunk 1's old slot
    want[2] = data(11, N, N / 4);
    sc.update_chunk(2, &compress(&want[2])).unwrap();
    assert_eq!(offsets(&sc)[2], before[1]);
    assert_eq!(contents(&sc), want);
    drop(sc);
    let sc = SuperChunk::open(&path, filesystem(), false).unwrap();
    assert_eq!(contents(&sc), want);
}

#[test]
fn a_hole_the_last_checkpoint_holds_is_reused_only_after_the_next_one() {
    let path = scratch("settle.b2frame");
    let mut sc = new_frame(&path, Durability::Off);
    for i in 0..4 {
        sc.append_chunk(&compress(&data(i, N, N / 2))).unwrap();
    }
    drop(sc);
    // consistent, one epoch for the whole test, however slow the machine, on
    // a machine that gives a boot id (without one, as under wine, every
    // change is a checkpoint, and the hole is free at once)
    b2nd::frame::journal::set_epoch_age_for_this_thread(Some(std::time::Duration::from_secs(3600)));
    b2nd::frame::journal::set_boot_id_for_this_thread(Some(Some([7; 16])));
    let mut sc = SuperChunk::open(&path, filesystem(), true).unwrap();
    sc.set_durability(Durability::Consistent).unwrap();
    let before = offsets(&sc);
    sc.update_chunk(1, &compress(&data(10, N, N / 2))).unwrap();
    let end = sc.cbytes();
    // chunk 1's old slot belongs to the checkpoint: a power loss goes back to it
    sc.update_chunk(2, &compress(&data(11, N, N / 8))).unwrap();
    assert_eq!(offsets(&sc)[2], end, "a settling hole was reused before a checkpoint");
    sc.sync().unwrap();
    sc.update_chunk(3, &compress(&data(12, N, N / 8))).unwrap();
    assert_eq!(offsets(&sc)[3], before[1], "after a checkpoint the hole is free");
    drop(sc);
    b2nd::frame::journal::set_epoch_age_for_this_thread(None);
    b2nd::frame::journal::set_boot_id_for_this_thread(None);
}

#[test]
fn the_chunk_stored_last_is_rewritten_in_place_and_the_frame_stays_compact() {
    let path = scratch("grow.b2frame");
    let mut sc = new_frame(&path, Durability::Consistent);
    for i in 0..3 {
        sc.append_chunk(&compress(&data(i, N, N / 2))).unwrap();
    }
    let at = offsets(&sc)[2];
    // as an array that grows rewrites its last chunk, larger each time
    for k in 1..20 {
        let chunk = compress(&data(100 + k, N, N / 2 + k as usize * 1000));
        sc.update_chunk(2, &chunk).unwrap();
        assert_eq!(offsets(&sc)[2], at);
        assert_eq!(sc.cbytes(), at + chunk.len() as i64, "the section ends after the last chunk");
    }
}

#[test]
fn holes_past_a_fifth_of_the_section_are_compacted_and_the_file_shrinks() {
    let path = scratch("compact.b2frame");
    let mut sc = new_frame(&path, Durability::Off);
    let chunk = 512 << 10;
    let mut want = Vec::new();
    for i in 0..10 {
        want.push(data(i, chunk, chunk));
        sc.append_chunk(&compress(&want[i as usize])).unwrap();
    }
    let full = sc.cbytes();
    let orig = offsets(&sc);
    // 3 of 10 noise chunks deleted: holes of 30% (1.5 MiB); the changes past
    // a fifth move the chunks stored last into the holes below them
    for k in [1, 2, 3] {
        sc.delete_chunk(k).unwrap();
        want.remove(k);
    }
    let kept = [0, 2, 4, 6, 7, 8, 9];
    want.push(data(50, chunk, 1000));
    sc.append_chunk(&compress(&want[7])).unwrap();
    let now = offsets(&sc);
    let moved: Vec<usize> = (0..7).filter(|&i| now[i] != orig[kept[i]]).collect();
    assert!(moved.len() >= 2, "no chunk moved: {orig:?} -> {now:?}");
    assert!(moved.iter().all(|&i| now[i] < orig[kept[i]] && kept[i] >= 7), "{orig:?} -> {now:?}");
    assert_eq!(contents(&sc), want);
    // their old slots end the section: the next change cuts them off
    sc.vlmeta_add("x", b"1", None).unwrap();
    assert!(sc.cbytes() <= full - (1 << 20), "section {} of {full}", sc.cbytes());
    drop(sc);
    let size = std::fs::metadata(&path).unwrap().len() as i64;
    assert!(size < full - (1 << 20) + 4096, "file {size}, section before {full}");
    let sc = SuperChunk::open(&path, filesystem(), false).unwrap();
    assert_eq!(contents(&sc), want);
}

#[test]
fn a_reopened_frame_finds_its_holes_from_its_chunks() {
    let path = scratch("reopen.b2frame");
    let mut sc = new_frame(&path, Durability::Off);
    for i in 0..4 {
        sc.append_chunk(&compress(&data(i, N, N / 2))).unwrap();
    }
    let before = offsets(&sc);
    sc.delete_chunk(1).unwrap();
    drop(sc);
    let mut sc = SuperChunk::open(&path, filesystem(), true).unwrap();
    sc.set_durability(Durability::Off).unwrap();
    sc.append_chunk(&compress(&data(9, N, N / 4))).unwrap();
    assert_eq!(offsets(&sc)[3], before[1], "the deleted chunk's bytes were reused");
}

#[test]
fn a_frame_with_a_broken_chunk_header_still_takes_changes_and_reuses_nothing() {
    let path = scratch("broken.b2frame");
    let mut sc = new_frame(&path, Durability::Off);
    let mut want = Vec::new();
    for i in 0..4 {
        want.push(data(i, N, N / 2));
        sc.append_chunk(&compress(&want[i as usize])).unwrap();
    }
    let at = sc.frame().unwrap().header_len() as u64 + offsets(&sc)[1] as u64;
    let end = sc.cbytes();
    drop(sc);
    // chunk 1 claims more bytes than the frame holds
    {
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        b2nd::os::write_all_at(&f, at + 12, &i32::MAX.to_le_bytes()).unwrap();
    }
    let mut sc = SuperChunk::open(&path, filesystem(), true).unwrap();
    sc.set_durability(Durability::Off).unwrap();
    // the holes cannot be known: an updated chunk goes at the end, and its
    // old bytes are not reused
    let before = offsets(&sc);
    want[2] = data(10, N, N / 8);
    sc.update_chunk(2, &compress(&want[2])).unwrap();
    assert_eq!(offsets(&sc)[2], end);
    want[3] = data(11, N, N / 8);
    sc.update_chunk(3, &compress(&want[3])).unwrap();
    assert!(offsets(&sc)[3] > end, "a hole was reused: {before:?} -> {:?}", offsets(&sc));
    for i in [0, 2, 3] {
        let mut out = vec![0u8; N];
        sc.decompress_chunk(i, &mut out).unwrap();
        assert!(out == want[i]);
    }
}
