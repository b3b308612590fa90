//! XXH32, the 32-bit xxHash (from its specification, `doc/xxhash_spec.md` of
//! the xxHash project): NDLZ hashes cells and groups of rows with it.

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

fn lane(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn round(acc: u32, input: u32) -> u32 {
    acc.wrapping_add(input.wrapping_mul(P2)).rotate_left(13).wrapping_mul(P1)
}

/// The XXH32 hash of `data` with `seed`.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    let mut rest = data;
    let mut acc = if data.len() >= 16 {
        let mut v =
            [seed.wrapping_add(P1).wrapping_add(P2), seed.wrapping_add(P2), seed, seed.wrapping_sub(P1)];
        while rest.len() >= 16 {
            for (k, acc) in v.iter_mut().enumerate() {
                *acc = round(*acc, lane(&rest[4 * k..]));
            }
            rest = &rest[16..];
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    acc = acc.wrapping_add(data.len() as u32);
    while rest.len() >= 4 {
        acc = acc.wrapping_add(lane(rest).wrapping_mul(P3)).rotate_left(17).wrapping_mul(P4);
        rest = &rest[4..];
    }
    for &b in rest {
        acc = acc.wrapping_add(u32::from(b).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    }
    acc ^= acc >> 15;
    acc = acc.wrapping_mul(P2);
    acc ^= acc >> 13;
    acc = acc.wrapping_mul(P3);
    acc ^ (acc >> 16)
}

#[cfg(test)]
mod tests {
    use super::xxh32;

    #[test]
    fn known_values() {
        // The reference implementation's results (xxhsum -H0, Python's xxhash).
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(xxh32(b"Nobody inspects the spammish repetition", 0), 0xE229_3B2F);
    }
}
