//! Argument checks, datatypes and operations of the collectives.

use std::ffi::c_void;

use oxmpi::ops::ElemType;

use super::buffers::*;
use super::datatype::*;
use super::ops::*;
use crate::errors::Class;
use crate::handles::{self, MPI_Op, BUILTIN_OPS, IN_PLACE};

#[test]
fn one_sided_operations_come_last_in_the_table() {
    assert_eq!(
        &BUILTIN_OPS[FIRST_ONE_SIDED_OP..],
        ["MPI_REPLACE", "MPI_NO_OP"]
    );
    assert_eq!(BUILTIN_OPS.len(), BUILTIN_OP_TABLE.len());
}

#[test]
fn only_predefined_pairs_take_the_static_operation_path() {
    let float = builtin_ty(
        handles::BUILTIN_DATATYPES
            .iter()
            .find(|d| d.1 == "MPI_FLOAT")
            .unwrap()
            .0,
    )
    .expect("MPI_FLOAT is predefined");
    let sum = 0x5800_0001 + 2; // MPI_SUM
    assert!(builtin_op_for(sum, float).is_some());
    let replace = 0x5800_0001 + FIRST_ONE_SIDED_OP as MPI_Op;
    assert!(
        builtin_op_for(replace, float).is_none(),
        "MPI_REPLACE is one-sided only"
    );
    let band = 0x5800_0001 + 5; // MPI_BAND: not defined for floats
    assert!(builtin_op_for(band, float).is_none());
}

#[test]
fn basic_datatypes_map_to_kernel_types() {
    let find = |name: &str| {
        handles::BUILTIN_DATATYPES
            .iter()
            .map(|d| d.0)
            .chain(handles::PAIR_DATATYPES.iter().map(|d| d.0))
            .find(|&h| handles::datatype_name(h) == Some(name))
            .unwrap()
    };
    for (name, elem, size) in [
        ("MPI_INT", ElemType::I32, 4),
        ("MPI_LONG", ElemType::I64, 8),
        ("MPI_FLOAT", ElemType::F32, 4),
        ("MPI_DOUBLE", ElemType::F64, 8),
        ("MPI_C_BOOL", ElemType::Bool, 1),
        ("MPI_BYTE", ElemType::Byte, 1),
        ("MPI_2INT", ElemType::TwoInt, 8),
        ("MPI_DOUBLE_INT", ElemType::DoubleInt, 16),
        ("MPI_SHORT_INT", ElemType::ShortInt, 8),
        ("MPI_UNSIGNED_LONG", ElemType::U64, 8),
    ] {
        let t = ty(find(name), "datatype").unwrap();
        assert_eq!((t.elem, t.extent, t.name), (Some(elem), size, name));
    }
    assert_eq!(elem_type("MPI_LONG_DOUBLE"), None);
    let e = ty(handles::DATATYPE_NULL, "sendtype").unwrap_err();
    assert_eq!(e.class, Class::TYPE);
    assert!(e.message.contains("`sendtype`"), "{}", e.message);
}

#[test]
fn ops_must_fit_the_type() {
    let float = ty(0x4c00_040a, "datatype").unwrap();
    let band = 0x5800_0006;
    let e = op_for(band, &float).unwrap_err();
    assert_eq!(e.class, Class::OP);
    assert!(e.message.contains("MPI_BAND") && e.message.contains("MPI_FLOAT"));
    assert!(op_for(0x5800_0003, &float).is_ok());
    let int = ty(0x4c00_0405, "datatype").unwrap();
    assert!(op_for(band, &int).is_ok());
    assert_eq!(op_for(0x5800_000d, &int).unwrap_err().class, Class::OP);
    assert_eq!(op_for(handles::OP_NULL, &int).unwrap_err().class, Class::OP);
}

#[test]
fn argument_checks_name_the_argument() {
    let e = count(-3, "recvcount").unwrap_err();
    assert_eq!(e.class, Class::COUNT);
    assert!(e.message.contains("`recvcount` is -3"));
    let in_place = IN_PLACE as *const c_void;
    let e = buffer(in_place, 4, "recvbuf", "here").unwrap_err();
    assert_eq!(e.class, Class::BUFFER);
    let int = ty(0x4c00_0405, "datatype").unwrap();
    let e = located(std::ptr::null(), 4, 0, &int, "sendbuf").unwrap_err();
    assert!(e.message.contains("`sendbuf`") && e.message.contains("MPI_BOTTOM"));
    assert!(located(std::ptr::null(), 0, 0, &int, "sendbuf").is_ok());
    let x = 5u8;
    assert_eq!(not_aliased(&x, &x, 1).unwrap_err().class, Class::BUFFER);
    let cs = [1, 2];
    let ds = [0, -1];
    let unit = |_| Ok(4);
    // SAFETY: two entries each.
    let e = unsafe { blocks(cs.as_ptr(), ds.as_ptr(), 2, &unit, &unit, "c", "d") };
    assert!(e.unwrap_err().message.contains("`d[1]` is -1"));
    let ds = [0, 1];
    // SAFETY: as above.
    let (c, d) = unsafe { blocks(cs.as_ptr(), ds.as_ptr(), 2, &unit, &unit, "c", "d") }.unwrap();
    assert_eq!((c, d), (vec![4, 8], vec![0, 4]));
}
