//! The bounds arithmetic of views: which `(slice, origin, datatype, count)`
//! are accepted, and what moves.

use super::*;
use crate::datatype::stage::Plan;
use crate::datatype::BasicType;

fn committed(t: Datatype) -> Datatype {
    t.commit();
    t
}

fn int() -> Datatype {
    Datatype::basic(BasicType::Int)
}

/// The argument an error names.
fn arg_of(e: Error) -> &'static str {
    match e {
        Error::InvalidArgument { arg, .. } => arg,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn basic_types_fit_exactly() {
    let buf = [0i32; 4];
    assert_eq!(View::new(&buf, &int(), 4).unwrap().packed_len(), 16);
    assert_eq!(arg_of(View::new(&buf, &int(), 5).unwrap_err()), "buf");
    assert_eq!(View::new(&buf, &int(), 0).unwrap().packed_len(), 0);
    // Byte slices hold anything of the right size.
    let bytes = [0u8; 17];
    assert!(View::new(&bytes, &int(), 4).is_ok());
    assert!(View::new(&bytes[1..], &int(), 4).is_ok());
    assert!(View::new(&bytes[2..], &int(), 4).is_err());
}

#[test]
fn the_last_element_ends_at_its_true_extent_not_its_extent() {
    // int, gap, int: extent 12 but the last element needs only 12 bytes
    // from its start; 3 elements span 2*12 + 12 = 36 bytes.
    let v = committed(Datatype::vector(2, 1, 2, &int()).unwrap());
    let buf = [0i32; 9];
    assert!(View::new(&buf, &v, 3).is_ok());
    assert!(View::new(&buf[..8], &v, 3).is_err());
    // A column of a 3x4 matrix, resized to step one int: columns 0..4 fit,
    // column 4 would leave the matrix.
    let col =
        committed(Datatype::resized(&Datatype::vector(3, 1, 4, &int()).unwrap(), 0, 4).unwrap());
    let m = [0i32; 12];
    assert!(View::new(&m, &col, 4).is_ok());
    assert!(View::new(&m[1..], &col, 3).is_ok());
    assert!(View::new(&m[1..], &col, 4).is_err());
}

#[test]
fn negative_lower_bounds_need_an_origin() {
    // One int 4 bytes before the address.
    let before = committed(Datatype::hindexed(&[1], &[-4], &int()).unwrap());
    assert_eq!((before.true_lb(), before.true_extent()), (-4, 4));
    let mut buf = [0i32; 3];
    assert_eq!(
        arg_of(ViewMut::new(&mut buf, &before, 1).unwrap_err()),
        "buf"
    );
    assert!(ViewMut::with_origin(&mut buf, 4, &before, 1).is_ok());
    // Three elements step forward by the extent (4): bytes 0..12 from origin 4.
    assert!(ViewMut::with_origin(&mut buf, 4, &before, 3).is_ok());
    assert!(ViewMut::with_origin(&mut buf, 4, &before, 4).is_err());
    assert_eq!(
        arg_of(ViewMut::with_origin(&mut buf, 13, &before, 0).unwrap_err()),
        "origin"
    );
    // Origin exactly at the end is an address, with nothing after it.
    assert!(ViewMut::with_origin(&mut buf, 12, &before, 1).is_ok());
}

#[test]
fn negative_extents_walk_backwards() {
    let back = committed(Datatype::vector(3, 1, -1, &int()).unwrap());
    assert_eq!((back.true_lb(), back.true_extent()), (-8, 12));
    let data = [1i32, 2, 3, 4];
    assert!(View::new(&data, &back, 1).is_err());
    assert!(View::with_origin(&data, 8, &back, 1).is_ok());
    assert!(View::with_origin(&data, 12, &back, 1).is_ok());
    // A resized element with negative extent: each next element is before.
    let step_back = committed(Datatype::resized(&int(), 0, -4).unwrap());
    assert!(View::with_origin(&data, 12, &step_back, 4).is_ok());
    assert!(View::with_origin(&data, 8, &step_back, 4).is_err());
}

#[test]
fn resized_lower_bounds_do_not_move_the_data() {
    // lb -4, extent 12: the data stays at bytes 0..4 of each element.
    let r = committed(Datatype::resized(&int(), -4, 12).unwrap());
    let buf = [0i32; 7]; // 28 bytes: elements at 0, 12, 24
    assert!(View::new(&buf, &r, 3).is_ok());
    assert!(View::new(&buf[..6], &r, 3).is_err());
}

#[test]
fn struct_with_resized_extent() {
    // {f64 at 0, i32 at 8}, resized to 24 bytes: three elements end at 2*24+12.
    let t = Datatype::create_struct(
        &[1, 1],
        &[0, 8],
        &[Datatype::basic(BasicType::Double), int()],
    )
    .unwrap();
    let t = committed(Datatype::resized(&t, 0, 24).unwrap());
    let buf = [0u8; 60];
    assert_eq!(View::new(&buf, &t, 3).unwrap().packed_len(), 36);
    assert!(View::new(&buf[..59], &t, 3).is_err());
}

#[test]
fn uncommitted_types_and_huge_counts_are_errors() {
    let v = Datatype::vector(2, 1, 2, &int()).unwrap();
    let buf = [0i32; 3];
    assert!(matches!(
        View::new(&buf, &v, 1),
        Err(Error::InvalidDatatype(_))
    ));
    v.commit();
    assert!(View::new(&buf, &v, 1).is_ok());
    assert_eq!(
        arg_of(View::new(&buf, &v, usize::MAX).unwrap_err()),
        "count"
    );
}

#[test]
fn contiguous_derived_types_move_in_place() {
    // Two ints with their data from byte 4 (true_lb 4): in place from +4.
    let t = committed(Datatype::hindexed(&[2], &[4], &int()).unwrap());
    let t = committed(Datatype::resized(&t, 4, 8).unwrap());
    assert!(t.is_contiguous());
    let buf = [0i32; 5];
    let v = View::new(&buf, &t, 2).unwrap();
    match v.plan().unwrap() {
        Plan::Bytes { ptr, len } => {
            assert_eq!(ptr as usize, buf.as_ptr() as usize + 4);
            assert_eq!(len, 16);
        }
        Plan::Typed(_) => panic!("a contiguous type was typed"),
    }
    let gaps = committed(Datatype::vector(2, 1, 2, &int()).unwrap());
    let v = View::new(&buf, &gaps, 1).unwrap();
    assert!(matches!(v.plan().unwrap(), Plan::Typed(_)));
}
