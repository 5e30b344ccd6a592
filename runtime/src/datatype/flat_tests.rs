//! The flattened form with repetitions against the written-out type map
//! (`layout::flatten_into`, the reference), and the O(1) size of types
//! whose counts are huge.

use super::layout::{self, MAX_DIMS};
use super::{BasicType, Datatype};

/// Every run of `count` elements, from the written-out type map.
fn reference(t: &Datatype, count: usize) -> Vec<(isize, usize)> {
    let mut runs = Vec::new();
    for e in 0..count {
        layout::flatten_into(t, e as isize * t.extent(), &mut runs);
    }
    runs
}

/// The bytes `count` elements cover, in pack order, both ways.
fn bytes(runs: &[(isize, usize)]) -> Vec<isize> {
    runs.iter()
        .flat_map(|&(o, l)| (0..l as isize).map(move |i| o + i))
        .collect()
}

fn check(t: &Datatype, count: usize) {
    t.commit();
    let want = bytes(&reference(t, count));
    let got: Vec<_> = t
        .segments(count)
        .unwrap()
        .map(|s| (s.offset, s.len))
        .collect();
    assert_eq!(bytes(&got), want, "{t:?} x {count}");
    // Starting anywhere in the packed stream, and walking in small pieces.
    for start in 0..want.len() {
        let mut segs = t.segments_range(count, start..want.len()).unwrap();
        let mut seen = Vec::new();
        while segs.walk(3, |o, l, _| seen.extend((0..l as isize).map(|i| o + i))) > 0 {}
        assert_eq!(
            seen,
            want[start..],
            "{t:?} x {count} from packed byte {start}"
        );
    }
}

#[test]
fn repetitions_walk_like_the_written_out_type_map() {
    let int = Datatype::basic(BasicType::Int);
    let di = Datatype::basic(BasicType::DoubleInt);
    let v = Datatype::vector(3, 2, 4, &int).unwrap();
    let vv = Datatype::vector(2, 2, 3, &v).unwrap();
    let neg = Datatype::hvector(3, 1, -20, &v).unwrap();
    let pairs = Datatype::contiguous(3, &di).unwrap();
    let c = Datatype::contiguous(2, &vv).unwrap();
    let r = Datatype::resized(&v, -8, 100).unwrap();
    let st = Datatype::create_struct(&[1, 2], &[0, 64], &[v.clone(), pairs.clone()]).unwrap();
    let deep = (0..MAX_DIMS + 2).try_fold(Datatype::vector(2, 1, 2, &int).unwrap(), |t, _| {
        Datatype::vector(2, 1, 2, &t)
    });
    for t in [v, vv, neg, pairs, c, r, st, deep.unwrap()] {
        for count in [1, 2] {
            check(&t, count);
        }
    }
}

#[test]
fn huge_counts_keep_types_small() {
    let int = Datatype::basic(BasicType::Int);
    let di = Datatype::basic(BasicType::DoubleInt);
    let n = 1isize << 40;
    let v = Datatype::vector(n, 1, 2, &int).unwrap();
    assert_eq!((v.size(), v.extent()), (4 << 40, (n - 1) * 8 + 4));
    v.commit();
    let flat = v.flat();
    assert_eq!((flat.dims.len(), flat.segs.len()), (1, 1));
    assert_eq!(v.num_segments(), 1 << 40);
    // A vector of vectors of pairs: dimensions and one signature piece.
    let w = Datatype::vector(1 << 20, 3, 5, &di).unwrap();
    let ww = Datatype::hvector(1 << 20, 1, w.extent() * 2, &w).unwrap();
    ww.commit();
    assert!(ww.flat().dims.len() <= 3 && ww.flat().segs.len() <= 2);
    assert_eq!(ww.signature().len(), 6 << 40);
    assert!(ww.signature().runs().take(3).count() == 3);
    assert_eq!(ww.get_elements(12 * 3 + 8), Some(7));
    // Positions far into the packed stream are found without walking.
    let size = ww.size();
    assert_eq!(size, 36 << 40);
    let mut segs = ww.segments_range(1, size - 12..size).unwrap();
    let last = segs.next().unwrap();
    assert_eq!(
        (last.len, last.offset),
        (12, ww.true_lb() + ww.true_extent() - 12)
    );
    assert!(segs.next().is_none());
}
