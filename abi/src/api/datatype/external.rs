//! `MPI_Type_create_darray` (and `_c`), the external32 data representation
//! (`MPI_Pack_external`, `MPI_Unpack_external`, `MPI_Pack_external_size`
//! and their `_c` forms), and `MPI_Type_create_f90_integer` / `_real` /
//! `_complex`.
//!
//! The f90 functions follow MPICH's models, so that Fortran programs see
//! the same kinds on both libraries: integers of 1, 2, 4 and 8 bytes
//! (decimal ranges 2, 4, 9 and 18), reals and complexes of 4 and 8 bytes
//! per part (precision 6 and 15, exponent ranges 37 and 307). Each
//! distinct `(p, r)` gives one handle, the same on every call, with
//! combiner `MPI_COMBINER_F90_*` and the arguments as its contents; the
//! handle cannot be freed. As the standard says, `MPI_UNDEFINED` leaves
//! `p` or `r` unconstrained, but not both. Two deliberate differences from
//! MPICH 4.0.2: no such type is `MPI_ERR_ARG` (MPICH: `MPI_ERR_OTHER`),
//! and both `p` and `r` `MPI_UNDEFINED` is an error (MPICH returns REAL).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

use oxmpi::datatype::{BasicType, Datatype, Distribution};

use crate::api::datatype::pack::{self as dq, Rep};
use crate::api::datatype::{
    self as dtm, array, child, contents, count_arg, create_as, isizes, order_arg,
};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Datatype, UNDEFINED};
use crate::objects::datatype::{combiner, Contents, TypeEntry};
use crate::raise::guard;
use crate::state;

/// `MPI_DISTRIBUTE_BLOCK`.
const DISTRIBUTE_BLOCK: c_int = 121;
/// `MPI_DISTRIBUTE_CYCLIC`.
const DISTRIBUTE_CYCLIC: c_int = 122;
/// `MPI_DISTRIBUTE_NONE`.
const DISTRIBUTE_NONE: c_int = 123;
/// `MPI_DISTRIBUTE_DFLT_DARG`.
const DISTRIBUTE_DFLT_DARG: c_int = -49767;

/// The distribution of dimension `i` from its `MPI_DISTRIBUTE_*` constant
/// and argument.
fn distribution(i: usize, distrib: c_int, darg: c_int) -> Result<Distribution, AbiError> {
    let darg = (darg != DISTRIBUTE_DFLT_DARG).then_some(darg as isize);
    match distrib {
        DISTRIBUTE_BLOCK => Ok(Distribution::Block(darg)),
        DISTRIBUTE_CYCLIC => Ok(Distribution::Cyclic(darg)),
        DISTRIBUTE_NONE => Ok(Distribution::None),
        _ => Err(AbiError::new(
            Class::ARG,
            format!(
                "invalid `array_of_distribs[{i}]` {distrib}: expected MPI_DISTRIBUTE_BLOCK, \
                 MPI_DISTRIBUTE_CYCLIC or MPI_DISTRIBUTE_NONE"
            ),
        )),
    }
}

/// The C arguments of `MPI_Type_create_darray`, arrays read.
struct DarrayArgs<'a> {
    size: c_int,
    rank: c_int,
    gsizes: Vec<isize>,
    distribs: &'a [c_int],
    dargs: &'a [c_int],
    psizes: Vec<isize>,
    order: c_int,
}

fn darray(a: DarrayArgs<'_>, oldtype: MPI_Datatype) -> Result<(Datatype, Contents), AbiError> {
    let dists = (0..a.distribs.len())
        .map(|i| distribution(i, a.distribs[i], a.dargs[i]))
        .collect::<Result<Vec<_>, _>>()?;
    let order = order_arg(a.order)?;
    let (old, c) = child(oldtype)?;
    let (size, rank) = (a.size as isize, a.rank as isize);
    let dt = Datatype::darray(size, rank, &a.gsizes, &dists, &a.psizes, order, &old)?;
    let n = a.gsizes.len();
    let ints = [a.size.into(), a.rank.into(), n as i64]
        .into_iter()
        .chain(a.gsizes.iter().map(|&v| v as i64))
        .chain(a.distribs.iter().map(|&v| i64::from(v)))
        .chain(a.dargs.iter().map(|&v| i64::from(v)))
        .chain(a.psizes.iter().map(|&v| v as i64))
        .chain([i64::from(a.order)])
        .collect();
    Ok((dt, contents(combiner::DARRAY, ints, vec![], vec![c])))
}

large_count! {
    /// The part of a distributed array one process owns.
    ///
    /// # Safety
    /// The arrays hold `ndims` entries; `newtype` is writable.
    Type_create_darray(
        size: c_int,
        rank: c_int,
        ndims: c_int,
        array_of_gsizes: *const Count,
        array_of_distribs: *const c_int,
        array_of_dargs: *const c_int,
        array_of_psizes: *const c_int,
        order: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            let n = usize::try_from(ndims)
                .map_err(|_| AbiError::new(Class::ARG, format!("invalid `ndims` {ndims}")))?;
            // SAFETY: the caller's contract (four arrays of `ndims`).
            let args = unsafe {
                DarrayArgs {
                    size,
                    rank,
                    gsizes: isizes(array_of_gsizes, n, "array_of_gsizes")?,
                    distribs: array(array_of_distribs, n, "array_of_distribs")?,
                    dargs: array(array_of_dargs, n, "array_of_dargs")?,
                    psizes: isizes(array_of_psizes, n, "array_of_psizes")?,
                    order,
                }
            };
            create_as(NAME, newtype, || darray(args, oldtype))
        })
    }
}

// ---------------------------------------------------------------- external32

/// Checks a `datarep` argument: "external32" is the only representation.
///
/// # Safety
/// `datarep` is null or a C string.
unsafe fn datarep(datarep: *const c_char) -> Result<(), AbiError> {
    if datarep.is_null() {
        return Err(AbiError::new(Class::ARG, "`datarep` is a null pointer"));
    }
    // SAFETY: non-null; the caller's contract.
    let rep = unsafe { CStr::from_ptr(datarep) }.to_string_lossy();
    if rep == "external32" {
        return Ok(());
    }
    Err(AbiError::new(
        Class::ARG,
        format!(
            "invalid `datarep` {rep:?}: the only data representation supported is \"external32\""
        ),
    ))
}

large_count! {
    /// Packs in the external32 representation.
    ///
    /// # Safety
    /// MPI's contract: `inbuf` holds the elements, `outbuf` has `outsize`
    /// bytes, `position` is readable and writable.
    Pack_external(
        datarep: *const c_char,
        inbuf: *const c_void,
        incount: Count,
        datatype: MPI_Datatype,
        outbuf: *mut c_void,
        outsize: Bytes,
        position: *mut Bytes,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe {
                self::datarep(datarep)?;
                let p = out_ptr(position, "position")?;
                let (inc, outs) = (wide(incount), wide(outsize));
                *p = dq::pack(Rep::External32, inbuf, inc, datatype, outbuf, outs, *p)?;
            }
            Ok(())
        })
    }
}

large_count! {
    /// Unpacks from the external32 representation.
    ///
    /// # Safety
    /// MPI's contract: `inbuf` has `insize` bytes, `outbuf` room for the
    /// elements, `position` is readable and writable.
    Unpack_external(
        datarep: *const c_char,
        inbuf: *const c_void,
        insize: Bytes,
        position: *mut Bytes,
        outbuf: *mut c_void,
        outcount: Count,
        datatype: MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe {
                self::datarep(datarep)?;
                let p = out_ptr(position, "position")?;
                let (ins, outc) = (wide(insize), wide(outcount));
                *p = dq::unpack(Rep::External32, inbuf, ins, *p, outbuf, outc, datatype)?;
            }
            Ok(())
        })
    }
}

large_count! {
    /// Bytes the elements take in external32 (exact).
    ///
    /// # Safety
    /// `datarep` is a C string; `size` is writable.
    Pack_external_size(
        datarep: *const c_char,
        incount: Count,
        datatype: MPI_Datatype,
        size: *mut Bytes,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe { self::datarep(datarep)? };
            let out = out_ptr(size, "size")?;
            let n = count_arg(wide(incount), "incount")?;
            let len = Rep::External32.size(&dtm::lookup(datatype)?, n)?;
            // SAFETY: checked non-null; the caller's contract.
            unsafe { *out = len as Bytes };
            Ok(())
        })
    }
}

// ----------------------------------------------------------------------- f90

/// MPICH's INTEGER kinds: (decimal exponent range, type).
const F90_INTEGERS: [(c_int, BasicType); 4] = [
    (2, BasicType::Integer1),
    (4, BasicType::Integer2),
    (9, BasicType::Integer4),
    (18, BasicType::Integer8),
];

/// MPICH's REAL kinds: (precision, exponent range, real type, complex type).
const F90_REALS: [(c_int, c_int, BasicType, BasicType); 2] = [
    (6, 37, BasicType::Real4, BasicType::Complex8),
    (15, 307, BasicType::Real8, BasicType::Complex16),
];

/// Whether a kind with `have` digits satisfies a request for `want`
/// (`MPI_UNDEFINED`: any).
fn enough(want: c_int, have: c_int) -> bool {
    want == UNDEFINED || want <= have
}

/// The basic type of `MPI_Type_create_f90_*` for `combiner` and `(p, r)`.
fn f90_basic(combiner: c_int, p: c_int, r: c_int) -> Result<BasicType, AbiError> {
    let none = |what: String| AbiError::new(Class::ARG, what);
    if combiner == combiner::F90_INTEGER {
        return (F90_INTEGERS.iter().find(|&&(range, _)| enough(r, range)))
            .map(|&(_, t)| t)
            .ok_or_else(|| {
                none(format!(
                    "no INTEGER kind has a decimal exponent range of `r` = {r} (the largest is \
                     18, INTEGER*8)"
                ))
            });
    }
    let real = combiner == combiner::F90_REAL;
    let what = if real { "REAL" } else { "COMPLEX" };
    if p == UNDEFINED && r == UNDEFINED {
        return Err(none(
            "`p` and `r` are both MPI_UNDEFINED; at most one of them may be".into(),
        ));
    }
    F90_REALS
        .iter()
        .find(|&&(prec, range, _, _)| enough(p, prec) && enough(r, range))
        .map(|&(_, _, r4, c8)| if real { r4 } else { c8 })
        .ok_or_else(|| {
            none(format!(
                "no {what} kind has a precision of `p` = {p} and an exponent range of `r` = {r} \
                 (the largest has precision 15 and range 307)"
            ))
        })
}

/// The handle of the f90 type for `combiner` and `(p, r)`: made on the
/// first call, the same one after.
fn f90(combiner: c_int, p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> Result<(), AbiError> {
    let out = out_ptr(newtype, "newtype")?;
    let basic = f90_basic(combiner, p, r)?;
    let ints = if combiner == combiner::F90_INTEGER {
        vec![i64::from(r)]
    } else {
        vec![i64::from(p), i64::from(r)]
    };
    let mut st = state::lock();
    let types = &mut st.types;
    let h = match types.f90.get(&(combiner, p, r)) {
        Some(&h) => h,
        None => {
            let slot = types.entries.insert(TypeEntry {
                dt: Datatype::basic(basic).dup(),
                name: String::new(),
                contents: Arc::new(contents(combiner, ints, vec![], vec![])),
            });
            let h = handles::derived_type_handle(slot);
            types.f90.insert((combiner, p, r), h);
            h
        }
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// `MPI_Type_create_f90_integer`: the INTEGER kind of at least `r` decimal
/// digits of range.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_f90_integer(
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_create_f90_integer", ErrObj::None, || {
        f90(combiner::F90_INTEGER, UNDEFINED, r, newtype)
    })
}

/// `MPI_Type_create_f90_real`: the REAL kind of at least `p` digits of
/// precision and `r` of exponent range.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_f90_real(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_create_f90_real", ErrObj::None, || {
        f90(combiner::F90_REAL, p, r, newtype)
    })
}

/// `MPI_Type_create_f90_complex`: the COMPLEX kind whose parts have at
/// least `p` digits of precision and `r` of exponent range.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_f90_complex(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_create_f90_complex", ErrObj::None, || {
        f90(combiner::F90_COMPLEX, p, r, newtype)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f90_kinds_follow_mpich_models() {
        let int = |r| f90_basic(combiner::F90_INTEGER, UNDEFINED, r);
        assert_eq!(int(UNDEFINED).unwrap(), BasicType::Integer1);
        assert_eq!(int(-3).unwrap(), BasicType::Integer1);
        assert_eq!(int(3).unwrap(), BasicType::Integer2);
        assert_eq!(int(5).unwrap(), BasicType::Integer4);
        assert_eq!(int(18).unwrap(), BasicType::Integer8);
        assert_eq!(int(19).unwrap_err().class, Class::ARG);
        let real = |p, r| f90_basic(combiner::F90_REAL, p, r);
        assert_eq!(real(6, 37).unwrap(), BasicType::Real4);
        assert_eq!(real(7, UNDEFINED).unwrap(), BasicType::Real8);
        assert_eq!(real(UNDEFINED, 38).unwrap(), BasicType::Real8);
        assert_eq!(real(16, 1).unwrap_err().class, Class::ARG);
        let e = real(UNDEFINED, UNDEFINED).unwrap_err();
        assert!(e.message.contains("both MPI_UNDEFINED"), "{}", e.message);
        let cplx = |p, r| f90_basic(combiner::F90_COMPLEX, p, r);
        assert_eq!(cplx(1, 1).unwrap(), BasicType::Complex8);
        assert_eq!(cplx(15, 307).unwrap(), BasicType::Complex16);
    }

    #[test]
    fn darray_arguments_are_checked_and_recorded() {
        const B: c_int = DISTRIBUTE_BLOCK;
        const D: c_int = DISTRIBUTE_DFLT_DARG;
        let args = |distribs: &'static [c_int], dargs: &'static [c_int], order| DarrayArgs {
            size: 4,
            rank: 3,
            gsizes: vec![4, 6],
            distribs,
            dargs,
            psizes: vec![2, 2],
            order,
        };
        let int = 0x4c00_0405;
        let (t, c) = darray(args(&[B, B], &[D, D], 56), int).unwrap();
        assert_eq!((t.size(), t.extent(), t.true_lb()), (24, 96, 60));
        assert_eq!(c.combiner, combiner::DARRAY);
        let d = i64::from(D);
        assert_eq!(c.ints, [4, 3, 2, 4, 6, 121, 121, d, d, 2, 2, 56]);
        let e = darray(args(&[B, 99], &[D, D], 56), int).err().unwrap();
        assert!(
            e.message.contains("array_of_distribs[1]` 99"),
            "{}",
            e.message
        );
        assert_eq!(e.class, Class::ARG);
        let e = darray(args(&[B, B], &[D, D], 7), int).err().unwrap();
        assert!(e.message.contains("`order` 7"), "{}", e.message);
        let e = darray(args(&[B, B], &[D, 1], 56), int).err().unwrap();
        assert_eq!(e.class, Class::ARG);
        let bad_rank = DarrayArgs {
            rank: 4,
            ..args(&[B, B], &[D, D], 56)
        };
        assert_eq!(darray(bad_rank, int).err().unwrap().class, Class::RANK);
    }

    #[test]
    fn only_external32_is_a_data_representation() {
        // SAFETY: C string literals.
        unsafe {
            assert!(datarep(c"external32".as_ptr()).is_ok());
            let e = datarep(c"native".as_ptr()).unwrap_err();
            assert_eq!(e.class, Class::ARG);
            assert!(e.message.contains("\"native\""), "{}", e.message);
            assert!(datarep(c"EXTERNAL32".as_ptr()).is_err());
            assert!(datarep(std::ptr::null()).is_err());
        }
    }
}
