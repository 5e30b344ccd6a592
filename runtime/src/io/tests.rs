//! Views, access modes and hints without a communicator (the collective
//! paths run under `oxrun` in the C tests `io_*`).

use super::view::{Datarep, FileView};
use super::*;
use crate::datatype::{BasicType, Datatype};

fn int() -> Datatype {
    Datatype::basic(BasicType::Int)
}

#[test]
fn amode_combinations() {
    assert!(check_amode(MODE_RDWR | MODE_CREATE).is_ok());
    assert!(check_amode(MODE_WRONLY | MODE_SEQUENTIAL).is_ok());
    for bad in [
        MODE_RDONLY | MODE_WRONLY,
        MODE_CREATE,
        MODE_RDONLY | MODE_CREATE,
        MODE_RDONLY | MODE_EXCL,
        MODE_RDWR | MODE_SEQUENTIAL,
        MODE_RDWR | 4096,
    ] {
        let e = check_amode(bad).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Amode, "{bad:#x}: {e}");
    }
}

#[test]
fn a_tiled_view_maps_its_stream_to_the_file() {
    // Two ints of every four (a vector), from byte 100 on.
    let ft = Datatype::vector(1, 2, 4, &int()).unwrap();
    let ft = Datatype::resized(&ft, 0, 16).unwrap();
    ft.commit();
    let v = FileView::new(100, int(), ft, Datarep::Native).unwrap();
    let runs: Vec<_> = v.runs(4, 20).unwrap().collect();
    assert_eq!(runs, [(104, 4), (116, 8), (132, 8)]);
    assert_eq!(v.byte_offset(3).unwrap(), 120);
    // The end of a 130-byte file in etypes: 100..108 and 116..124 hold data, 2 + 2.
    assert_eq!(v.etypes_before(130).unwrap(), 4);
    assert_eq!(v.etypes_before(50).unwrap(), 0);
}

#[test]
fn a_contiguous_view_is_one_run() {
    let v = FileView::new(8, int(), int(), Datarep::Native).unwrap();
    assert_eq!(v.runs(12, 40).unwrap().collect::<Vec<_>>(), [(20, 40)]);
    assert_eq!(v.etypes_before(30).unwrap(), 5);
    assert!(v.runs(0, 0).unwrap().next().is_none());
}

#[test]
fn views_are_checked() {
    let byte = Datatype::basic(BasicType::Byte);
    let three = Datatype::contiguous(3, &byte).unwrap();
    three.commit();
    let e = FileView::new(0, int(), three, Datarep::Native).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Type, "{e}");
    let ints = |blocks: &[(isize, isize)]| {
        let lens: Vec<isize> = blocks.iter().map(|b| b.1).collect();
        let disps: Vec<isize> = blocks.iter().map(|b| b.0).collect();
        let t = Datatype::indexed(&lens, &disps, &int()).unwrap();
        t.commit();
        FileView::new(0, int(), t, Datarep::Native).unwrap()
    };
    for (blocks, read_only_ok) in [
        (&[(-2, 1), (2, 1)][..], false),
        (&[(3, 1), (0, 1)][..], false),
        (&[(0, 3), (1, 1)][..], true),
    ] {
        let v = ints(blocks);
        let e = v.check_layout(false).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Io, "{blocks:?}: {e}");
        assert_eq!(v.check_layout(true).is_ok(), read_only_ok, "{blocks:?}");
    }
    assert!(ints(&[(0, 1), (1, 2), (5, 1)]).check_layout(false).is_ok());
    let long = Datatype::basic(BasicType::Long);
    let v = FileView::new(0, long.clone(), long.clone(), Datarep::External32).unwrap();
    assert_eq!(v.esize(), 4); // a contiguous view of longs: 4 bytes each in the file
    assert_eq!(v.runs(8, 8).unwrap().collect::<Vec<_>>(), [(8, 8)]);
    let gappy = Datatype::resized(&long, 0, 16).unwrap();
    gappy.commit();
    let e = FileView::new(0, long, gappy, Datarep::External32).unwrap_err();
    assert_eq!(e.class(), ErrorClass::UnsupportedDatarep, "{e}");
    assert_eq!(
        Datarep::parse("xdr").unwrap_err().class(),
        ErrorClass::UnsupportedDatarep
    );
}

#[test]
fn hints_are_applied_and_reported() {
    let mut h = Hints::defaults(4);
    h.apply(
        &[
            ("cb_buffer_size".into(), "4096".into()),
            ("cb_nodes".into(), "9".into()),
            ("romio_cb_write".into(), "disable".into()),
            ("cb_buffer_size".into(), "-3".into()),
            ("unknown".into(), "x".into()),
        ],
        4,
    );
    assert_eq!((h.cb_buffer_size, h.cb_nodes, h.cb_write), (4096, 4, false));
    assert!(h
        .pairs()
        .contains(&("cb_buffer_size".to_owned(), "4096".to_owned())));
}
