//! `b2nd convert` and `b2nd repack` stream: on an input several times larger
//! than the memory they may use (256 MB of items, against a bound of 8
//! chunks of 1 MiB + 64 MB), the tool's peak resident memory, read from the
//! kernel's accounting of the child process (`wait4`), stays within the bound.
// Linux only: it reads the child's getrusage through wait4.
#![cfg(target_os = "linux")]

use b2nd::array::npy::header_bytes;
use std::io::{Read, Write};
use std::process::Command;

const ROWS: i64 = 32768;
const COLS: i64 = 1024;
const CHUNK_BYTES: u64 = 256 * 512 * 8;
const MB: u64 = 1 << 20;

/// Run the tool; its exit status, stderr and peak RSS in bytes.
fn tool_peak(args: &[&str]) -> (i32, String, u64) {
    let err_path = std::env::temp_dir().join(format!("b2nd-mem-err-{}", std::process::id()));
    let err_file = std::fs::File::create(&err_path).unwrap();
    // Reaped by the `wait4` below (not `Child::wait`), which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child =
        Command::new(env!("CARGO_BIN_EXE_b2nd")).args(args).stderr(err_file).spawn().expect("run b2nd");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 writes into the two
    // locals we pass and reaps the child we spawned (std never waits for it).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `status` and `ru` are live locals for wait4 to write; `pid` is our own
    // child, not reaped yet.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid);
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    (code, err, ru.ru_maxrss as u64 * 1024)
}

/// The same bytes in two files, compared a piece at a time.
fn same_files(a: &str, b: &str) -> bool {
    let (mut fa, mut fb) = (std::fs::File::open(a).unwrap(), std::fs::File::open(b).unwrap());
    if fa.metadata().unwrap().len() != fb.metadata().unwrap().len() {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba).unwrap();
        if n == 0 {
            return true;
        }
        fb.read_exact(&mut bb[..n]).unwrap();
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

#[test]
fn convert_and_repack_stay_within_memory_bounds() {
    let dir = std::env::temp_dir().join(format!("b2nd-cli-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (npy, arr, back, repacked) = (p("big.npy"), p("big.b2nd"), p("big.back.npy"), p("big.repacked.b2nd"));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&npy).unwrap());
        f.write_all(&header_bytes("<f8", false, &[ROWS, COLS]).unwrap()).unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut row = Vec::with_capacity(COLS as usize * 8);
        for i in 0..ROWS {
            row.clear();
            for j in 0..COLS {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let v = (i * COLS + j) as f64 + (x >> 52) as f64 / 4096.0;
                row.extend_from_slice(&v.to_le_bytes());
            }
            f.write_all(&row).unwrap();
        }
    }
    let bound = 8 * CHUNK_BYTES + 64 * MB;
    let input = (ROWS * COLS * 8) as u64;
    assert!(input > 3 * bound);
    let report = |what: &str, peak: u64| {
        eprintln!(
            "{what}: peak RSS {:.1} MB (bound {:.1} MB, items {:.0} MB)",
            peak as f64 / MB as f64,
            bound as f64 / MB as f64,
            input as f64 / MB as f64
        );
        assert!(peak < bound, "{what}: peak RSS {peak} over the bound {bound}");
    };
    let (rc, err, peak) = tool_peak(&[
        "convert", "--codec", "zstd", "--clevel", "1", "--chunks", "256,512", "--blocks", "32,512", &npy,
        &arr,
    ]);
    assert_eq!(rc, 0, "{err}");
    report("convert .npy -> .b2nd", peak);
    let (rc, err, peak) = tool_peak(&["convert", &arr, &back]);
    assert_eq!(rc, 0, "{err}");
    report("convert .b2nd -> .npy", peak);
    assert!(same_files(&npy, &back), "the round trip changed the bytes");
    let (rc, err, peak) = tool_peak(&[
        "repack", "--codec", "lz4", "--chunks", "512,256", "--blocks", "64,256", &arr, &repacked,
    ]);
    assert_eq!(rc, 0, "{err}");
    report("repack to other chunks", peak);
    let (rc, err, peak) = tool_peak(&["convert", "--order", "F", "--force", &repacked, &back]);
    assert_eq!(rc, 0, "{err}");
    report("convert .b2nd -> Fortran-order .npy", peak);
    std::fs::remove_dir_all(&dir).unwrap();
}
