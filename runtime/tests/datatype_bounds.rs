//! Datatype constructors: size, bounds, true bounds, contiguity, signature
//! and argument errors, against values worked out by hand from the MPI
//! standard's definitions and examples.

use oxmpi::datatype::{BasicType as B, Datatype, Order};
use oxmpi::{Error, ErrorClass};

fn basic(b: B) -> Datatype {
    Datatype::basic(b)
}

/// `(size, lb, extent, true_lb, true_extent)`.
fn shape(t: &Datatype) -> (usize, isize, isize, isize, isize) {
    (t.size(), t.lb(), t.extent(), t.true_lb(), t.true_extent())
}

/// The MPI standard's running example: `{(double, 0), (char, 8)}`, extent 16.
fn double_char() -> Datatype {
    Datatype::create_struct(&[1, 1], &[0, 8], &[basic(B::Double), basic(B::Char)]).unwrap()
}

fn segs(t: &Datatype, count: usize) -> Vec<(isize, usize)> {
    t.commit();
    t.segments(count)
        .unwrap()
        .map(|s| (s.offset, s.len))
        .collect()
}

#[test]
fn basic_types_have_their_c_layouts() {
    assert_eq!(shape(&basic(B::Int)), (4, 0, 4, 0, 4));
    assert_eq!(shape(&basic(B::LongDouble)), (16, 0, 16, 0, 16));
    assert_eq!(shape(&basic(B::DoubleInt)), (12, 0, 16, 0, 12));
    assert_eq!(shape(&basic(B::LongInt)), (12, 0, 16, 0, 12));
    assert_eq!(shape(&basic(B::FloatInt)), (8, 0, 8, 0, 8));
    assert_eq!(shape(&basic(B::TwoInt)), (8, 0, 8, 0, 8));
    assert_eq!(shape(&basic(B::ShortInt)), (6, 0, 8, 0, 8));
    assert_eq!(shape(&basic(B::LongDoubleInt)), (20, 0, 32, 0, 20));
    assert_eq!(shape(&basic(B::CLongDoubleComplex)), (32, 0, 32, 0, 32));
    assert_eq!(shape(&basic(B::BFloat16)), (2, 0, 2, 0, 2));
    assert!(basic(B::TwoInt).is_contiguous());
    assert!(!basic(B::DoubleInt).is_contiguous());
    assert_eq!(segs(&basic(B::ShortInt), 2), [(0, 2), (4, 6), (12, 4)]);
    for &b in B::ALL {
        let t = basic(b);
        assert!(t.is_committed() && t.same(&basic(b)), "{}", b.name());
        assert_eq!(t.basic_type(), Some(b));
        assert_eq!(t.element_kind(), Some(b.kind()));
        assert_eq!(t.get_count(3 * t.size()), Some(3));
    }
}

#[test]
fn contiguous_and_vector() {
    let int = basic(B::Int);
    assert_eq!(
        shape(&Datatype::contiguous(5, &int).unwrap()),
        (20, 0, 20, 0, 20)
    );
    // Blocks of ints 0..3 and 4..7: the last int ends at byte 28.
    let v = Datatype::vector(2, 3, 4, &int).unwrap();
    assert_eq!(shape(&v), (24, 0, 28, 0, 28));
    assert_eq!(segs(&v, 1), [(0, 12), (16, 12)]);
    assert!(!v.is_contiguous());
    assert!(Datatype::vector(3, 2, 2, &int).unwrap().is_contiguous());
    // The standard's examples with {(double,0),(char,8)}.
    let dc = double_char();
    assert_eq!(
        shape(&Datatype::contiguous(3, &dc).unwrap()),
        (27, 0, 48, 0, 41)
    );
    let v = Datatype::vector(2, 3, 4, &dc).unwrap();
    assert_eq!(shape(&v), (54, 0, 112, 0, 105));
    let hv = Datatype::hvector(2, 3, 4, &dc).unwrap();
    assert_eq!(shape(&hv), (54, 0, 52, 0, 45));
    // A negative stride walks backwards; bounds are min / max.
    let back = Datatype::vector(3, 1, -2, &int).unwrap();
    assert_eq!(shape(&back), (12, -16, 20, -16, 20));
    assert_eq!(segs(&back, 1), [(0, 4), (-8, 4), (-16, 4)]);
}

#[test]
fn indexed_family() {
    let int = basic(B::Int);
    let dc = double_char();
    // Standard example: blocklengths (3, 1), displacements (4, 0).
    let t = Datatype::indexed(&[3, 1], &[4, 0], &dc).unwrap();
    assert_eq!(shape(&t), (36, 0, 112, 0, 105));
    let h = Datatype::hindexed(&[1, 2], &[-8, 4], &int).unwrap();
    assert_eq!(shape(&h), (12, -8, 20, -8, 20));
    assert_eq!(segs(&h, 1), [(-8, 4), (4, 8)]);
    let ib = Datatype::indexed_block(2, &[5, 0], &int).unwrap();
    assert_eq!(shape(&ib), (16, 0, 28, 0, 28));
    assert_eq!(segs(&ib, 1), [(20, 8), (0, 8)]);
    let hb = Datatype::hindexed_block(1, &[0, 4, 8], &int).unwrap();
    assert!(hb.is_contiguous());
    // Zero blocklengths contribute nothing; all zero gives an empty type.
    let z = Datatype::indexed(&[0, 2, 0], &[100, 1, -100], &int).unwrap();
    assert_eq!(shape(&z), (8, 4, 8, 4, 8));
    let empty = Datatype::indexed(&[0], &[3], &int).unwrap();
    assert_eq!(shape(&empty), (0, 0, 0, 0, 0));
    assert!(empty.is_contiguous());
}

#[test]
fn struct_pads_to_alignment() {
    let (c, d, i) = (basic(B::Char), basic(B::Double), basic(B::Int));
    let cd = Datatype::create_struct(&[1, 1], &[0, 8], &[c.clone(), d.clone()]).unwrap();
    assert_eq!(shape(&cd), (9, 0, 16, 0, 16));
    assert_eq!(shape(&double_char()), (9, 0, 16, 0, 9));
    // Standard example: (2, 1, 3) of (float, {double,char}, char) at (0, 16, 26).
    let f = basic(B::Float);
    let t = Datatype::create_struct(&[2, 1, 3], &[0, 16, 26], &[f, double_char(), c.clone()]);
    assert_eq!(shape(&t.unwrap()), (20, 0, 32, 0, 29));
    // Negative displacement: {int at -4, char at 0} spans 5 bytes, padded to 8.
    let neg = Datatype::create_struct(&[1, 1], &[-4, 0], &[i.clone(), c.clone()]).unwrap();
    assert_eq!(shape(&neg), (5, -4, 8, -4, 5));
    // Members in reverse address order are not contiguous.
    let fwd = Datatype::create_struct(&[1, 1], &[0, 4], &[i.clone(), i.clone()]).unwrap();
    let rev = Datatype::create_struct(&[1, 1], &[4, 0], &[i.clone(), i]).unwrap();
    assert!(fwd.is_contiguous() && !rev.is_contiguous());
    assert_eq!(fwd.signature().runs().collect::<Vec<_>>(), [(B::Int, 2)]);
    assert_eq!(
        cd.signature().runs().collect::<Vec<_>>(),
        [(B::Char, 1), (B::Double, 1)]
    );
}

#[test]
fn resized_bounds_are_explicit_and_sticky() {
    let int = basic(B::Int);
    let r = Datatype::resized(&int, -4, 12).unwrap();
    assert_eq!(shape(&r), (4, -4, 12, 0, 4));
    let two = Datatype::contiguous(2, &r).unwrap();
    assert_eq!(shape(&two), (8, -4, 24, 0, 16));
    assert_eq!(segs(&two, 1), [(0, 4), (12, 4)]);
    // One run of `extent` bytes per element: contiguous even with lb != 0.
    let shifted = Datatype::resized(&int, -4, 4).unwrap();
    assert!(shifted.is_contiguous());
    assert_eq!(segs(&shifted, 3), [(0, 12)]);
    // A member with explicit bounds defines the struct's bounds: no padding.
    let padded = Datatype::resized(&int, 0, 16).unwrap();
    let s = Datatype::create_struct(&[1, 1], &[0, 4], &[padded, basic(B::Char)]).unwrap();
    assert_eq!(shape(&s), (5, 0, 16, 0, 5));
    // Resizing a struct to its C size is the usual idiom.
    let dc = Datatype::resized(&double_char(), 0, 24).unwrap();
    assert_eq!(
        shape(&Datatype::contiguous(2, &dc).unwrap()),
        (18, 0, 48, 0, 33)
    );
}

#[test]
fn subarrays_in_both_orders() {
    let int = basic(B::Int);
    // int a[4][5]; the 2x3 block at a[1][1].
    let c = Datatype::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &int).unwrap();
    assert_eq!(shape(&c), (24, 0, 80, 24, 32));
    assert_eq!(segs(&c, 1), [(24, 12), (44, 12)]);
    // Fortran a(4,5): the first index varies fastest.
    let f = Datatype::subarray(&[4, 5], &[2, 3], &[1, 1], Order::Fortran, &int).unwrap();
    assert_eq!(shape(&f), (24, 0, 80, 20, 40));
    assert_eq!(segs(&f, 1), [(20, 8), (36, 8), (52, 8)]);
    // 3-D, whole array: contiguous.
    let all = Datatype::subarray(&[2, 3, 4], &[2, 3, 4], &[0, 0, 0], Order::C, &int).unwrap();
    assert_eq!(shape(&all), (96, 0, 96, 0, 96));
    assert!(all.is_contiguous());
    assert_eq!(segs(&all, 2), [(0, 192)]);
}

#[test]
fn dup_and_commit() {
    let v = Datatype::vector(2, 1, 3, &basic(B::Double)).unwrap();
    assert!(!v.is_committed());
    let d = v.dup();
    assert!(!d.is_committed() && !d.same(&v));
    let e = v.dup();
    let err = d.segments(1).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Type);
    assert!(err.to_string().contains("not committed"), "{err}");
    let mut out = [0u8; 16];
    assert!(matches!(
        d.pack(&[0; 32], 1, &mut out, &mut 0),
        Err(Error::InvalidDatatype(_))
    ));
    // Uncommitted types build others; commit is per object, shared by clones.
    let w = Datatype::contiguous(2, &d).unwrap();
    w.commit();
    assert!(w.is_committed() && !d.is_committed() && !e.is_committed());
    let clone = d.clone();
    d.commit();
    assert!(clone.is_committed());
    assert!(v.dup().basic_type().is_none());
    assert_eq!(basic(B::Float).dup().element_kind(), Some(B::Float.kind()));
    assert_eq!(shape(&d), shape(&v));
    assert!(v.dup().dup().signature() == v.signature());
}

#[test]
fn element_and_count_queries() {
    let di = basic(B::DoubleInt);
    assert_eq!(
        di.signature().runs().collect::<Vec<_>>(),
        [(B::Double, 1), (B::Int, 1)]
    );
    assert_eq!(di.get_elements(24), Some(4));
    assert_eq!(di.get_elements(32), Some(5));
    assert_eq!(di.get_elements(30), None);
    assert_eq!(di.get_count(24), Some(2));
    assert_eq!(di.get_count(20), None);
    let s = Datatype::create_struct(&[2, 3], &[0, 8], &[basic(B::Short), basic(B::Char)]);
    let s = s.unwrap();
    assert_eq!(s.size(), 7);
    assert_eq!(s.get_elements(7 + 4), Some(5 + 2));
    assert_eq!(s.get_elements(7 + 3), None);
    let empty = Datatype::contiguous(0, &basic(B::Int)).unwrap();
    assert_eq!(
        (empty.get_elements(0), empty.get_elements(4)),
        (Some(0), None)
    );
    assert_eq!((empty.get_count(0), empty.get_count(1)), (Some(0), None));
}

#[test]
fn signatures_match_by_prefix() {
    let int = basic(B::Int);
    let pair = Datatype::contiguous(2, &int).unwrap();
    let (p, i) = (pair.signature(), int.signature());
    assert!(p.matches(3, i, 6) && p.matches(3, i, 7) && !p.matches(3, i, 5));
    assert!(i.matches(4, p, 2) && i.matches(0, p, 0));
    let mixed = Datatype::create_struct(&[1, 1], &[0, 8], &[int.clone(), basic(B::Double)]);
    let m = mixed.unwrap();
    assert!(!m.signature().matches(1, i, 3));
    assert!(m.signature().matches(2, m.signature(), 2));
    let v = Datatype::vector(2, 1, 4, &m).unwrap();
    assert!(
        m.signature().matches(3, v.signature(), 2) && !v.signature().matches(2, m.signature(), 3)
    );
    assert!(!basic(B::Int32).signature().matches(1, i, 1));
}

fn arg_of(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { arg, reason } => (arg, reason),
        e => panic!("not an argument error: {e}"),
    }
}

#[test]
fn constructor_errors_name_the_argument_and_value() {
    let int = basic(B::Int);
    let e = Datatype::contiguous(-1, &int).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Count);
    assert_eq!(arg_of(e), ("count", "must be non-negative, got -1".into()));
    let (arg, why) = arg_of(Datatype::vector(2, -3, 1, &int).unwrap_err());
    assert_eq!((arg, why.contains("-3")), ("blocklength", true));
    let (arg, why) = arg_of(Datatype::indexed(&[1, -2], &[0, 4], &int).unwrap_err());
    assert_eq!(arg, "array_of_blocklengths");
    assert!(why.contains("entry 1 is -2"), "{why}");
    let (arg, why) = arg_of(Datatype::hindexed(&[1, 2], &[0], &int).unwrap_err());
    assert_eq!(arg, "array_of_displacements");
    assert!(
        why.contains("has 1 entries") && why.contains("has 2"),
        "{why}"
    );
    let (arg, _) = arg_of(Datatype::create_struct(&[1], &[0], &[]).unwrap_err());
    assert_eq!(arg, "array_of_types");
    let (arg, _) = arg_of(Datatype::vector(2, 1, isize::MAX / 2, &int).unwrap_err());
    assert_eq!(arg, "stride");
    let (arg, _) = arg_of(Datatype::resized(&int, isize::MAX, 1).unwrap_err());
    assert_eq!(arg, "extent");
    let sub = |sizes: &[isize], subs: &[isize], starts: &[isize]| {
        arg_of(Datatype::subarray(sizes, subs, starts, Order::C, &int).unwrap_err())
    };
    assert_eq!(sub(&[], &[], &[]).0, "ndims");
    let (arg, why) = sub(&[4, 0], &[1, 0], &[0, 0]);
    assert_eq!(
        (arg, why.as_str()),
        ("array_of_sizes", "entry 1 is 0; must be in 1..")
    );
    let (arg, why) = sub(&[4, 5], &[5, 1], &[0, 0]);
    assert_eq!(
        (arg, why.as_str()),
        ("array_of_subsizes", "entry 0 is 5; must be in 0..=4")
    );
    let (arg, why) = sub(&[4, 5], &[2, 3], &[1, 3]);
    assert_eq!(arg, "array_of_starts");
    assert!(why.starts_with("entry 1 is 3; must be in 0..=2"), "{why}");
    assert_eq!(sub(&[4, 5], &[2], &[1, 3]).0, "array_of_subsizes");
}

#[test]
fn types_and_walks_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Datatype>();
    send_sync::<oxmpi::datatype::Segments>();
    let t = Datatype::vector(4, 1, 2, &basic(B::Int)).unwrap();
    let u = t.clone();
    std::thread::spawn(move || u.commit()).join().unwrap();
    assert!(t.is_committed());
    assert_eq!(t.num_segments(), 4);
}
