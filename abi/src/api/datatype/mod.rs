//! Datatypes (MPI 4.0 chapter 5) behind `MPI_Datatype` handles: here, the
//! handle lookup every data-moving call goes through; the type constructors
//! (`MPI_Type_contiguous`, `_vector`, `_create_hvector`, `_indexed`,
//! `_create_hindexed`, `_create_indexed_block`, `_create_hindexed_block`,
//! `_create_struct`, `_create_resized`, `_create_subarray`, `_dup`, their
//! `_c` forms and the MPI-1 names), `MPI_Type_commit` and `MPI_Type_free`
//! in [`constructors`].
//!
//! Predefined handles decode without a lookup (their bits say which basic
//! type); derived handles are direct handles into the table of
//! [`crate::objects::datatype`]. A freed or made-up handle is
//! `MPI_ERR_TYPE`, never dereferenced. The layouts themselves are the
//! runtime's [`Datatype`]s.
//!
//! Queries (size, extent, names, envelope) are in [`query`], packing in
//! [`pack`]; point-to-point use in [`p2p`]; darray, external32 and the f90
//! types in [`external`].

pub mod constructors;
pub mod external;
pub mod p2p;
pub mod pack;
pub mod query;

use std::ffi::c_int;
use std::sync::Arc;

use oxmpi::datatype::{BasicType, Datatype, Order};

use crate::errors::{out_ptr, AbiError, Class};
use crate::handles::{self, MPI_Datatype, Predefined};
use crate::objects::datatype::{combiner, Child, Contents, TypeEntry};
use crate::state;

/// `MPI_ORDER_C`.
const ORDER_C: c_int = 56;
/// `MPI_ORDER_FORTRAN`.
const ORDER_FORTRAN: c_int = 57;

/// An `order` argument (`MPI_ORDER_C` / `MPI_ORDER_FORTRAN`).
pub fn order_arg(order: c_int) -> Result<Order, AbiError> {
    match order {
        ORDER_C => Ok(Order::C),
        ORDER_FORTRAN => Ok(Order::Fortran),
        _ => Err(AbiError::new(
            Class::ARG,
            format!("invalid `order` {order}: expected MPI_ORDER_C or MPI_ORDER_FORTRAN"),
        )),
    }
}

/// The runtime type of a predefined handle.
pub fn predefined(p: Predefined) -> Datatype {
    match p {
        Predefined::Basic(b) => Datatype::basic(b),
        Predefined::Bytes(n) => {
            let t = Datatype::contiguous(n as isize, &Datatype::basic(BasicType::Byte))
                .expect("a small contiguous type");
            t.commit();
            t
        }
    }
}

fn freed(h: MPI_Datatype) -> AbiError {
    AbiError::new(
        Class::TYPE,
        format!("datatype {h:#010x} does not exist (freed, or never created)"),
    )
}

/// The type a handle names (predefined or live derived).
pub fn lookup(h: MPI_Datatype) -> Result<Datatype, AbiError> {
    if let Some(p) = handles::predefined_type(h) {
        return Ok(predefined(p));
    }
    let slot = handles::derived_type_slot(h).ok_or_else(|| handles::bad_datatype(h))?;
    let st = state::lock();
    st.types
        .entries
        .get(slot)
        .map(|e| e.dt.clone())
        .ok_or_else(|| freed(h))
}

/// The derived type a handle names, or `None` for a predefined one.
pub fn entry(h: MPI_Datatype) -> Result<Option<TypeEntry>, AbiError> {
    if handles::predefined_type(h).is_some() {
        return Ok(None);
    }
    let slot = handles::derived_type_slot(h).ok_or_else(|| handles::bad_datatype(h))?;
    let st = state::lock();
    st.types
        .entries
        .get(slot)
        .cloned()
        .map(Some)
        .ok_or_else(|| freed(h))
}

/// A constructor argument: the type and how to remember it.
pub fn child(h: MPI_Datatype) -> Result<(Datatype, Child), AbiError> {
    match entry(h)? {
        None => Ok((lookup(h)?, Child::Named(h))),
        Some(e) if e.is_f90() => Ok((e.dt.clone(), Child::Named(h))),
        Some(e) => Ok((e.dt.clone(), Child::Derived(e))),
    }
}

/// Registers a new derived type and returns its handle.
pub fn insert(e: TypeEntry) -> MPI_Datatype {
    let slot = state::lock().types.entries.insert(e);
    handles::derived_type_handle(slot)
}

/// A C array argument of `n` elements.
///
/// # Safety
/// `p` is null or valid for reads of `n` elements.
pub unsafe fn array<'a, T>(p: *const T, n: usize, arg: &'static str) -> Result<&'a [T], AbiError> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer but {n} entries are needed"),
        ));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A count argument.
pub fn count_arg(v: i64, arg: &'static str) -> Result<usize, AbiError> {
    usize::try_from(v).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("invalid `{arg}` {v}: counts cannot be negative"),
        )
    })
}

/// An array of C integers as the runtime's signed sizes.
///
/// # Safety
/// As [`array()`].
pub unsafe fn isizes<T: Copy + Into<i64>>(
    p: *const T,
    n: usize,
    arg: &'static str,
) -> Result<Vec<isize>, AbiError> {
    // SAFETY: the caller's contract.
    Ok(unsafe { array(p, n, arg) }?
        .iter()
        .map(|&v| v.into() as isize)
        .collect())
}

/// [`create`] for the constructor called `name`: a large-count (`_c`)
/// one keeps its count arguments as large counts.
pub fn create_as(
    name: &str,
    newtype: *mut MPI_Datatype,
    make: impl FnOnce() -> Result<(Datatype, Contents), AbiError>,
) -> Result<(), AbiError> {
    if name.ends_with("_c") {
        create(newtype, || make().map(|(dt, c)| (dt, c.into_large())))
    } else {
        create(newtype, make)
    }
}

/// Builds a type from `make` and stores its handle in `*newtype`.
pub fn create(
    newtype: *mut MPI_Datatype,
    make: impl FnOnce() -> Result<(Datatype, Contents), AbiError>,
) -> Result<(), AbiError> {
    let out = out_ptr(newtype, "newtype")?;
    let (dt, contents) = make()?;
    let h = insert(TypeEntry {
        dt,
        name: String::new(),
        contents: Arc::new(contents),
    });
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// A constructor record.
pub fn contents(combiner: c_int, ints: Vec<i64>, addrs: Vec<i64>, types: Vec<Child>) -> Contents {
    Contents {
        combiner,
        ints,
        addrs,
        large: Vec::new(),
        types,
    }
}

fn contiguous(count: i64, oldtype: MPI_Datatype) -> Result<(Datatype, Contents), AbiError> {
    let n = count_arg(count, "count")?;
    let (old, c) = child(oldtype)?;
    let dt = Datatype::contiguous(n as isize, &old)?;
    Ok((
        dt,
        contents(combiner::CONTIGUOUS, vec![count], vec![], vec![c]),
    ))
}

fn vector(
    count: i64,
    blocklength: i64,
    stride: i64,
    bytes: bool,
    oldtype: MPI_Datatype,
) -> Result<(Datatype, Contents), AbiError> {
    let n = count_arg(count, "count")?;
    let (old, c) = child(oldtype)?;
    let (b, s) = (blocklength as isize, stride as isize);
    Ok(if bytes {
        let dt = Datatype::hvector(n as isize, b, s, &old)?;
        let k = contents(
            combiner::HVECTOR,
            vec![count, blocklength],
            vec![stride],
            vec![c],
        );
        (dt, k)
    } else {
        let dt = Datatype::vector(n as isize, b, s, &old)?;
        let k = contents(
            combiner::VECTOR,
            vec![count, blocklength, stride],
            vec![],
            vec![c],
        );
        (dt, k)
    })
}

/// `MPI_Type_indexed` (`bytes` false) / `_create_hindexed` (true).
fn indexed(
    lens: Vec<isize>,
    disps: Vec<isize>,
    bytes: bool,
    oldtype: MPI_Datatype,
) -> Result<(Datatype, Contents), AbiError> {
    let (old, c) = child(oldtype)?;
    let n = lens.len() as i64;
    let mut ints: Vec<i64> = std::iter::once(n)
        .chain(lens.iter().map(|&v| v as i64))
        .collect();
    Ok(if bytes {
        let dt = Datatype::hindexed(&lens, &disps, &old)?;
        let addrs = disps.iter().map(|&v| v as i64).collect();
        (dt, contents(combiner::HINDEXED, ints, addrs, vec![c]))
    } else {
        let dt = Datatype::indexed(&lens, &disps, &old)?;
        ints.extend(disps.iter().map(|&v| v as i64));
        (dt, contents(combiner::INDEXED, ints, vec![], vec![c]))
    })
}

fn indexed_block(
    blocklength: i64,
    disps: Vec<isize>,
    bytes: bool,
    oldtype: MPI_Datatype,
) -> Result<(Datatype, Contents), AbiError> {
    let (old, c) = child(oldtype)?;
    let mut ints = vec![disps.len() as i64, blocklength];
    let b = blocklength as isize;
    Ok(if bytes {
        let dt = Datatype::hindexed_block(b, &disps, &old)?;
        let addrs = disps.iter().map(|&v| v as i64).collect();
        (dt, contents(combiner::HINDEXED_BLOCK, ints, addrs, vec![c]))
    } else {
        let dt = Datatype::indexed_block(b, &disps, &old)?;
        ints.extend(disps.iter().map(|&v| v as i64));
        (dt, contents(combiner::INDEXED_BLOCK, ints, vec![], vec![c]))
    })
}

/// `MPI_Type_create_struct`; with `markers`, `MPI_LB` / `MPI_UB` entries
/// (MPI-1's `MPI_Type_struct`) set the bounds instead of adding data.
fn structure(
    lens: Vec<isize>,
    disps: Vec<isize>,
    types: &[MPI_Datatype],
    markers: bool,
) -> Result<(Datatype, Contents), AbiError> {
    let mut kids = Vec::new();
    let mut dts = Vec::new();
    let (mut l2, mut d2) = (Vec::new(), Vec::new());
    let (mut lb, mut ub): (Option<isize>, Option<isize>) = (None, None);
    for (i, &h) in types.iter().enumerate() {
        if markers && (h == handles::MPI_LB || h == handles::MPI_UB) {
            let d = disps[i];
            if h == handles::MPI_LB {
                lb = Some(lb.map_or(d, |v| v.min(d)));
            } else {
                ub = Some(ub.map_or(d, |v| v.max(d)));
            }
            kids.push(Child::Named(h));
            continue;
        }
        let (dt, c) = child(h)
            .map_err(|e| AbiError::new(e.class, format!("array_of_types[{i}]: {}", e.message)))?;
        dts.push(dt);
        kids.push(c);
        l2.push(lens[i]);
        d2.push(disps[i]);
    }
    let mut dt = Datatype::create_struct(&l2, &d2, &dts)?;
    if lb.is_some() || ub.is_some() {
        let lo = lb.unwrap_or(dt.lb());
        let hi = ub.unwrap_or(dt.ub());
        dt = Datatype::resized(&dt, lo, hi - lo)?;
    }
    let ints = std::iter::once(lens.len() as i64)
        .chain(lens.iter().map(|&v| v as i64))
        .collect();
    let addrs = disps.iter().map(|&v| v as i64).collect();
    Ok((dt, contents(combiner::STRUCT, ints, addrs, kids)))
}

fn resized(oldtype: MPI_Datatype, lb: i64, extent: i64) -> Result<(Datatype, Contents), AbiError> {
    let (old, c) = child(oldtype)?;
    let dt = Datatype::resized(&old, lb as isize, extent as isize)?;
    Ok((
        dt,
        contents(combiner::RESIZED, vec![], vec![lb, extent], vec![c]),
    ))
}

fn subarray(
    sizes: Vec<isize>,
    subsizes: Vec<isize>,
    starts: Vec<isize>,
    order: c_int,
    oldtype: MPI_Datatype,
) -> Result<(Datatype, Contents), AbiError> {
    let o = order_arg(order)?;
    let (old, c) = child(oldtype)?;
    let dt = Datatype::subarray(&sizes, &subsizes, &starts, o, &old)?;
    let ints = std::iter::once(sizes.len() as i64)
        .chain(sizes.iter().map(|&v| v as i64))
        .chain(subsizes.iter().map(|&v| v as i64))
        .chain(starts.iter().map(|&v| v as i64))
        .chain(std::iter::once(i64::from(order)))
        .collect();
    Ok((dt, contents(combiner::SUBARRAY, ints, vec![], vec![c])))
}
