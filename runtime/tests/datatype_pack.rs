//! Pack / unpack of nested types against manual gathers, the halo-exchange
//! column type, resumable packing from any position, and pack errors.

use oxmpi::datatype::{BasicType as B, Datatype};
use oxmpi::Error;

fn basic(b: B) -> Datatype {
    Datatype::basic(b)
}

/// Bytes 0, 1, 2, ... (mod 251, so that runs are distinguishable).
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// Gathers `(offset, len)` ranges of `buf`.
fn gather(buf: &[u8], ranges: impl IntoIterator<Item = (usize, usize)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (at, len) in ranges {
        out.extend_from_slice(&buf[at..at + len]);
    }
    out
}

/// Packs `count` elements, unpacks into a zeroed buffer and checks that
/// exactly the packed bytes came back.
fn round_trip(t: &Datatype, count: usize, buf: &[u8]) -> Vec<u8> {
    t.commit();
    let mut packed = vec![0; t.pack_size(count).unwrap() + 3];
    let mut pos = 3;
    t.pack(buf, count, &mut packed, &mut pos).unwrap();
    assert_eq!(pos, packed.len());
    let mut back = vec![0; buf.len()];
    let mut rpos = 3;
    t.unpack(&packed, &mut rpos, &mut back, count).unwrap();
    assert_eq!(rpos, pos);
    let mut expect = vec![0; buf.len()];
    for s in t.segments(count).unwrap() {
        let r = s.offset as usize..s.offset as usize + s.len;
        expect[r.clone()].copy_from_slice(&buf[r]);
    }
    assert_eq!(back, expect);
    packed.split_off(3)
}

#[test]
fn vector_of_struct() {
    // struct { int i; double d; }: extent 16; blocks of 2 structs, stride 3.
    let s = Datatype::create_struct(&[1, 1], &[0, 8], &[basic(B::Int), basic(B::Double)]);
    let s = s.unwrap();
    let v = Datatype::vector(3, 2, 3, &s).unwrap();
    assert_eq!((v.size(), v.extent()), (72, 128));
    let buf = pattern(2 * 128);
    let packed = round_trip(&v, 2, &buf);
    let mut expect = Vec::new();
    for elem in 0..2 {
        for block in 0..3 {
            for k in 0..2 {
                let at = elem * 128 + (block * 3 + k) * 16;
                expect.extend(gather(&buf, [(at, 4), (at + 8, 8)]));
            }
        }
    }
    assert_eq!(packed, expect);
}

#[test]
fn indexed_of_vector() {
    let v = Datatype::vector(2, 1, 3, &basic(B::Double)).unwrap(); // extent 32
    let t = Datatype::indexed(&[2, 1], &[0, 5], &v).unwrap();
    assert_eq!((t.size(), t.extent()), (48, 192));
    let buf = pattern(192);
    let packed = round_trip(&t, 1, &buf);
    let starts = [0, 32, 160];
    let ranges = starts.iter().flat_map(|&s| [(s, 8), (s + 24, 8)]);
    assert_eq!(packed, gather(&buf, ranges));
}

#[test]
fn halo_column_matches_a_manual_gather() {
    const ROWS: usize = 6;
    const COLS: usize = 8;
    let grid: Vec<f64> = (0..ROWS * COLS).map(|i| i as f64 * 1.5).collect();
    let bytes: Vec<u8> = grid.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let col = Datatype::vector(ROWS as isize, 1, COLS as isize, &basic(B::Double)).unwrap();
    col.commit();
    for c in [0, 3, COLS - 1] {
        let mut out = vec![0; ROWS * 8];
        col.pack(&bytes[c * 8..], 1, &mut out, &mut 0).unwrap();
        let got: Vec<f64> = out
            .chunks(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        let want: Vec<f64> = (0..ROWS).map(|r| grid[r * COLS + c]).collect();
        assert_eq!(got, want, "column {c}");
    }
    // Resized to one double, consecutive columns follow each other: pack
    // two columns, unpack them into the ghost columns of another grid.
    let cols = Datatype::resized(&col, 0, 8).unwrap();
    cols.commit();
    let mut packed = vec![0; 2 * ROWS * 8];
    cols.pack(&bytes[8..], 2, &mut packed, &mut 0).unwrap();
    let mut other = vec![0u8; bytes.len()];
    cols.unpack(&packed, &mut 0, &mut other[(COLS - 2) * 8..], 2)
        .unwrap();
    for r in 0..ROWS {
        for (src, dst) in [(1, COLS - 2), (2, COLS - 1)] {
            let at = |c: usize| (r * COLS + c) * 8;
            assert_eq!(other[at(dst)..at(dst) + 8], bytes[at(src)..at(src) + 8]);
        }
    }
}

/// Packing any `from .. from + len` window equals the same slice of the
/// whole pack, and the resumed segment walk covers exactly those bytes.
fn check_resumption(t: &Datatype, count: usize) {
    t.commit();
    let span = t.data_span(count).unwrap().unwrap();
    let base = (-span.start).max(0) as usize;
    let buf = pattern(base + span.end.max(0) as usize);
    let origin = buf.as_ptr().wrapping_add(base);
    let total = t.pack_size(count).unwrap();
    let mut full = vec![0; total];
    // SAFETY: buf covers data_span around origin.
    unsafe { t.pack_raw(origin, count, 0, &mut full).unwrap() };
    for from in 0..=total {
        for len in [0, 1, 3, 7, total - from] {
            let len = len.min(total - from);
            let mut piece = vec![0; len];
            unsafe { t.pack_raw(origin, count, from, &mut piece).unwrap() };
            assert_eq!(piece, full[from..from + len], "from {from} len {len}");
        }
        let it = t.segments_range(count, from..total).unwrap();
        assert_eq!(it.packed_position(), from);
        let walked: usize = it.map(|s| s.len).sum();
        assert_eq!(walked, total - from);
    }
    // Walking in pieces and resuming reproduces the whole walk's bytes.
    let mut it = t.segments(count).unwrap();
    let mut pieces = Vec::new();
    for seg in it.by_ref().take(2) {
        pieces.extend(gather(
            &buf,
            [((seg.offset + base as isize) as usize, seg.len)],
        ));
    }
    let rest = t
        .segments_range(count, it.packed_position()..total)
        .unwrap();
    pieces.extend(gather(
        &buf,
        rest.map(|s| ((s.offset + base as isize) as usize, s.len)),
    ));
    assert_eq!(pieces, full);
}

#[test]
fn resumption_at_every_position() {
    let dc = Datatype::create_struct(&[1, 2], &[0, 12], &[basic(B::Double), basic(B::Short)]);
    let dc = dc.unwrap();
    let v = Datatype::hvector(3, 2, -40, &dc).unwrap();
    check_resumption(&v, 3);
    let i = Datatype::indexed(&[1, 3, 2], &[4, -2, 9], &basic(B::ShortInt)).unwrap();
    check_resumption(&i, 2);
    check_resumption(&Datatype::contiguous(5, &basic(B::Int)).unwrap(), 4);
    check_resumption(&basic(B::DoubleInt), 3);
}

#[test]
fn negative_lower_bound_needs_the_raw_form() {
    let int = basic(B::Int);
    let t = Datatype::hindexed(&[1, 1], &[-8, 0], &int).unwrap();
    t.commit();
    let buf = pattern(12);
    let mut out = [0u8; 8];
    let e = t.pack(&buf, 1, &mut out, &mut 0).unwrap_err();
    assert!(e.to_string().contains("touch bytes -8..4"), "{e}");
    // SAFETY: bytes -8..4 around buf[8] are inside buf.
    unsafe { t.pack_raw(buf.as_ptr().add(8), 1, 0, &mut out).unwrap() };
    assert_eq!(out, [0, 1, 2, 3, 8, 9, 10, 11]);
    let mut back = [0u8; 12];
    unsafe {
        t.unpack_raw(back.as_mut_ptr().add(8), 1, 4, &out[4..])
            .unwrap()
    };
    assert_eq!(back, [0, 0, 0, 0, 0, 0, 0, 0, 8, 9, 10, 11]);
}

#[test]
fn pack_errors_say_what_and_how_much() {
    let v = Datatype::vector(2, 3, 4, &basic(B::Int)).unwrap();
    v.commit();
    let buf = pattern(28);
    let mut out = [0u8; 20];
    let e = v.pack(&buf, 1, &mut out, &mut 4).unwrap_err();
    let Error::InvalidArgument { arg, reason } = e else {
        panic!("wrong error")
    };
    assert_eq!(arg, "outsize");
    assert!(
        reason.contains("needs 24 bytes at position 4, but the buffer has 20 bytes"),
        "{reason}"
    );
    let mut pos = 0;
    let e = v.pack(&buf[..27], 1, &mut [0; 24], &mut pos).unwrap_err();
    assert!(e.to_string().contains("`inbuf`"), "{e}");
    assert_eq!(pos, 0, "position untouched on error");
    let e = v.unpack(&[0; 23], &mut 0, &mut [0; 28], 1).unwrap_err();
    assert!(e.to_string().contains("`insize`"), "{e}");
    let e = v.segments_range(2, 10..49).unwrap_err();
    assert!(
        e.to_string().contains("10..49 is outside the 48 bytes"),
        "{e}"
    );
    assert!(v.pack_size(usize::MAX / 2).is_err());
    // Zero elements pack nothing, anywhere.
    let mut pos = 20;
    v.pack(&[], 0, &mut out, &mut pos).unwrap();
    assert_eq!(pos, 20);
}
