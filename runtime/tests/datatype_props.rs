//! Property tests over random nested type trees: the segment walk equals a
//! naive per-element enumeration of the type map, pack and unpack invert
//! each other, resumed packing equals the whole pack, and size, true bounds
//! and element counts agree with the type map.

use oxmpi::datatype::{BasicType as B, Datatype, Order};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A type constructor call, as data.
#[derive(Debug, Clone)]
enum Tree {
    Basic(B),
    Contig(isize, Box<Tree>),
    Vector(isize, isize, isize, Box<Tree>),
    HVector(isize, isize, isize, Box<Tree>),
    Indexed(Vec<(isize, isize)>, Box<Tree>),
    HIndexed(Vec<(isize, isize)>, Box<Tree>),
    IndexedBlock(isize, Vec<isize>, Box<Tree>),
    Struct(Vec<(isize, isize, Tree)>),
    Resized(isize, isize, Box<Tree>),
    Dup(Box<Tree>),
    Subarray([isize; 2], [isize; 2], [isize; 2], bool, Box<Tree>),
}

/// Builds the type and, independently, its type map: `(displacement,
/// bytes)` of every basic element, pairs split into their two members.
fn build(t: &Tree) -> (Datatype, Vec<(isize, usize)>) {
    fn copies(map: &[(isize, usize)], at: isize) -> impl Iterator<Item = (isize, usize)> + '_ {
        map.iter().map(move |&(d, n)| (d + at, n))
    }
    match t {
        Tree::Basic(b) => {
            let map = match b.pair() {
                Some((x, off, y)) => vec![(0, x.size()), (off as isize, y.size())],
                None => vec![(0, b.size())],
            };
            (Datatype::basic(*b), map)
        }
        Tree::Contig(n, c) => {
            let (ct, cm) = build(c);
            let e = ct.extent();
            let map = (0..*n)
                .flat_map(|i| copies(&cm, i * e).collect::<Vec<_>>())
                .collect();
            (Datatype::contiguous(*n, &ct).unwrap(), map)
        }
        Tree::Vector(n, bl, stride, c) | Tree::HVector(n, bl, stride, c) => {
            let (ct, cm) = build(c);
            let e = ct.extent();
            let hv = matches!(t, Tree::HVector(..));
            let step = if hv { *stride } else { stride * e };
            let mut map = Vec::new();
            for i in 0..*n {
                (0..*bl).for_each(|j| map.extend(copies(&cm, i * step + j * e)));
            }
            let dt = if hv {
                Datatype::hvector(*n, *bl, *stride, &ct)
            } else {
                Datatype::vector(*n, *bl, *stride, &ct)
            };
            (dt.unwrap(), map)
        }
        Tree::Indexed(blocks, c) | Tree::HIndexed(blocks, c) => {
            let (ct, cm) = build(c);
            let e = ct.extent();
            let hi = matches!(t, Tree::HIndexed(..));
            let mut map = Vec::new();
            for &(bl, d) in blocks {
                let at = if hi { d } else { d * e };
                (0..bl).for_each(|j| map.extend(copies(&cm, at + j * e)));
            }
            let (lens, disps): (Vec<_>, Vec<_>) = blocks.iter().copied().unzip();
            let dt = if hi {
                Datatype::hindexed(&lens, &disps, &ct)
            } else {
                Datatype::indexed(&lens, &disps, &ct)
            };
            (dt.unwrap(), map)
        }
        Tree::IndexedBlock(bl, disps, c) => {
            let blocks = disps.iter().map(|&d| (*bl, d)).collect();
            let (_, map) = build(&Tree::Indexed(blocks, c.clone()));
            let (ct, _) = build(c);
            (Datatype::indexed_block(*bl, disps, &ct).unwrap(), map)
        }
        Tree::Struct(members) => {
            let (mut lens, mut disps, mut types, mut map) = (vec![], vec![], vec![], vec![]);
            for (bl, d, c) in members {
                let (ct, cm) = build(c);
                (0..*bl).for_each(|j| map.extend(copies(&cm, d + j * ct.extent())));
                lens.push(*bl);
                disps.push(*d);
                types.push(ct);
            }
            (Datatype::create_struct(&lens, &disps, &types).unwrap(), map)
        }
        Tree::Resized(lb, ext, c) => {
            let (ct, cm) = build(c);
            (Datatype::resized(&ct, *lb, *ext).unwrap(), cm)
        }
        Tree::Dup(c) => {
            let (ct, cm) = build(c);
            (ct.dup(), cm)
        }
        Tree::Subarray(sizes, subs, starts, fortran, c) => {
            let (ct, cm) = build(c);
            let e = ct.extent();
            let mut map = Vec::new();
            let (outer, inner) = if *fortran { (1, 0) } else { (0, 1) };
            for a in 0..subs[outer] {
                for b in 0..subs[inner] {
                    let (i0, i1) = if *fortran { (b, a) } else { (a, b) };
                    let (i0, i1) = (starts[0] + i0, starts[1] + i1);
                    let index = if *fortran {
                        i0 + i1 * sizes[0]
                    } else {
                        i0 * sizes[1] + i1
                    };
                    map.extend(copies(&cm, index * e));
                }
            }
            let order = if *fortran { Order::Fortran } else { Order::C };
            (
                Datatype::subarray(sizes, subs, starts, order, &ct).unwrap(),
                map,
            )
        }
    }
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop::sample::select(vec![
        B::Byte,
        B::Char,
        B::Short,
        B::Int,
        B::Double,
        B::LongDouble,
        B::DoubleInt,
        B::ShortInt,
        B::CFloatComplex,
    ])
    .prop_map(Tree::Basic);
    leaf.prop_recursive(3, 24, 4, |inner| {
        let bx = inner.clone().prop_map(Box::new);
        let blocks = prop::collection::vec((0isize..3, -4isize..8), 1..4);
        prop_oneof![
            (0isize..4, bx.clone()).prop_map(|(n, c)| Tree::Contig(n.max(1), c)),
            (1isize..4, 0isize..3, -5isize..6, bx.clone())
                .prop_map(|(n, b, s, c)| Tree::Vector(n, b, s, c)),
            (1isize..4, 1isize..3, -48isize..64, bx.clone())
                .prop_map(|(n, b, s, c)| Tree::HVector(n, b, s, c)),
            (blocks.clone(), bx.clone()).prop_map(|(b, c)| Tree::Indexed(b, c)),
            (
                prop::collection::vec((0isize..3, -40isize..80), 1..4),
                bx.clone()
            )
                .prop_map(|(b, c)| Tree::HIndexed(b, c)),
            (
                1isize..3,
                prop::collection::vec(-4isize..8, 1..4),
                bx.clone()
            )
                .prop_map(|(bl, d, c)| Tree::IndexedBlock(bl, d, c)),
            prop::collection::vec((1isize..3, -32isize..64, inner.clone()), 1..4)
                .prop_map(Tree::Struct),
            (-16isize..16, 0isize..48, bx.clone()).prop_map(|(lb, e, c)| Tree::Resized(lb, e, c)),
            bx.clone().prop_map(Tree::Dup),
            (
                (1isize..4, 1isize..4),
                (1isize..4, 0isize..4),
                (0isize..4, 0isize..4),
                any::<bool>(),
                bx
            )
                .prop_map(|((s0, s1), (a, b), (c, d), f, t)| {
                    let sub = [a.min(s0), b.min(s1)];
                    let start = [c.min(s0 - sub[0]), d.min(s1 - sub[1])];
                    Tree::Subarray([s0, s1], sub, start, f, t)
                }),
        ]
    })
}

/// Merges adjacent ranges, as the segment walk does.
fn merged(ranges: impl IntoIterator<Item = (isize, usize)>) -> Vec<(isize, usize)> {
    let mut out: Vec<(isize, usize)> = Vec::new();
    for (d, n) in ranges {
        match out.last_mut() {
            Some(last) if last.0 + last.1 as isize == d => last.1 += n,
            _ => out.push((d, n)),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn walk_pack_and_unpack_follow_the_type_map(
        t in tree(), count in prop_oneof![1 => Just(0usize), 6 => 1usize..4], cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4)
    ) {
        let (dt, map) = build(&t);
        // Size, true bounds and element count come from the type map.
        prop_assert_eq!(dt.size(), map.iter().map(|m| m.1).sum::<usize>());
        prop_assert_eq!(dt.signature().len(), map.len());
        if let (Some(lo), Some(hi)) = (map.iter().map(|m| m.0).min(), map.iter().map(|m| m.0 + m.1 as isize).max()) {
            prop_assert_eq!((dt.true_lb(), dt.true_lb() + dt.true_extent()), (lo, hi));
        }
        prop_assert_eq!(dt.get_elements(count * dt.size()), Some(count * map.len()));
        // The walk equals the naive per-element enumeration.
        dt.commit();
        let ext = dt.extent();
        let all: Vec<_> = (0..count as isize)
            .flat_map(|e| map.iter().map(move |&(d, n)| (e * ext + d, n)))
            .collect();
        let naive = merged(all.iter().copied());
        let walked: Vec<_> = dt.segments(count).unwrap().map(|s| (s.offset, s.len)).collect();
        prop_assert_eq!(&walked, &naive);
        prop_assert_eq!(dt.is_contiguous(), dt.size() == 0 || merged(map.iter().copied()).len() == 1 && dt.size() as isize == dt.extent());
        // A buffer covering the data, its origin `base` bytes in.
        let span = dt.data_span(count).unwrap().unwrap_or(0..0);
        let base = (-span.start).max(0) as usize;
        let buf: Vec<u8> = (0..base + span.end.max(0) as usize).map(|i| (i * 7 % 253) as u8).collect();
        let origin = buf.as_ptr().wrapping_add(base);
        let total = dt.pack_size(count).unwrap();
        let mut packed = vec![0; total];
        unsafe { dt.pack_raw(origin, count, 0, &mut packed).unwrap() };
        let expect: Vec<u8> = naive.iter().flat_map(|&(d, n)| {
            let at = (d + base as isize) as usize;
            buf[at..at + n].iter().copied()
        }).collect();
        prop_assert_eq!(&packed, &expect);
        // pack(unpack(x)) == x for packed data x (and for any x when no two
        // type-map entries overlap).
        let overlap = {
            let mut m = all.clone();
            m.sort();
            m.windows(2).any(|w| w[0].0 + w[0].1 as isize > w[1].0)
        };
        let x: Vec<u8> = if overlap { packed.clone() } else { (0..total).map(|i| (i * 13 % 251) as u8 ^ 0x5a).collect() };
        let mut scratch = vec![0u8; buf.len()];
        let sorigin = scratch.as_mut_ptr().wrapping_add(base);
        unsafe { dt.unpack_raw(sorigin, count, 0, &x).unwrap() };
        let mut again = vec![0; total];
        unsafe { dt.pack_raw(scratch.as_ptr().wrapping_add(base), count, 0, &mut again).unwrap() };
        prop_assert_eq!(&again, &x);
        // Packing in pieces cut at arbitrary positions gives the whole pack.
        let mut cut: Vec<usize> = cuts.iter().map(|i| i.index(total + 1)).collect();
        cut.extend([0, total]);
        cut.sort();
        let mut pieces = Vec::new();
        for w in cut.windows(2) {
            let mut piece = vec![0; w[1] - w[0]];
            unsafe { dt.pack_raw(origin, count, w[0], &mut piece).unwrap() };
            pieces.extend(piece);
        }
        prop_assert_eq!(&pieces, &packed);
    }
}
