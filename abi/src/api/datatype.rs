//! Datatypes behind `MPI_Datatype` handles: the table of derived types,
//! the handle lookup every data-moving call goes through, and the type
//! constructors (`MPI_Type_contiguous`, `_vector`, `_create_hvector`,
//! `_indexed`, `_create_hindexed`, `_create_indexed_block`,
//! `_create_hindexed_block`, `_create_struct`, `_create_resized`,
//! `_create_subarray`, `_dup`, their `_c` forms and the MPI-1 names),
//! `MPI_Type_commit` and `MPI_Type_free`.
//!
//! Predefined handles decode without a lookup (their bits say which basic
//! type); derived handles are direct handles into [`TypeTable`]. A freed or
//! made-up handle is `MPI_ERR_TYPE`, never dereferenced. The layouts
//! themselves are the runtime's [`Datatype`]s.
//!
//! Queries (size, extent, names, envelope, pack) are in
//! [`super::datatype_query`]; point-to-point use in [`super::datatype_p2p`];
//! darray, external32 and the f90 types in [`super::datatype_ext`].

use std::ffi::c_int;
use std::sync::Arc;

use oxmpi::datatype::{BasicType, Datatype, Order};

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Aint, MPI_Count, MPI_Datatype, Predefined, DATATYPE_NULL};
use crate::objects::datatype::{combiner, Child, Contents, TypeEntry};
use crate::raise::guard;
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

// ------------------------------------------------------------ C entry points

/// `MPI_Type_contiguous`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_contiguous(
    count: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_contiguous", ErrObj::None, || {
        create(newtype, || contiguous(count.into(), oldtype))
    })
}

/// `MPI_Type_contiguous_c`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_contiguous_c(
    count: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_contiguous_c", ErrObj::None, || {
        create(newtype, || contiguous(count, oldtype))
    })
}

/// `MPI_Type_vector`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_vector", ErrObj::None, || {
        create(newtype, || {
            vector(
                count.into(),
                blocklength.into(),
                stride.into(),
                false,
                oldtype,
            )
        })
    })
}

/// `MPI_Type_vector_c`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_vector_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_vector_c", ErrObj::None, || {
        create(newtype, || {
            vector(count, blocklength, stride, false, oldtype)
        })
    })
}

macro_rules! hvector_fn {
    ($name:ident, $mpi:literal, $cnt:ty) => {
        #[doc = concat!("`", $mpi, "`: a vector with the stride in bytes.")]
        ///
        /// # Safety
        /// `newtype` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: $cnt,
            blocklength: $cnt,
            stride: MPI_Aint,
            oldtype: MPI_Datatype,
            newtype: *mut MPI_Datatype,
        ) -> c_int {
            guard($mpi, ErrObj::None, || {
                create(newtype, || {
                    vector(count.into(), blocklength.into(), stride, true, oldtype)
                })
            })
        }
    };
}

hvector_fn!(oxabi_Type_create_hvector, "MPI_Type_create_hvector", c_int);
hvector_fn!(oxabi_Type_hvector, "MPI_Type_hvector", c_int);
hvector_fn!(
    oxabi_Type_create_hvector_c,
    "MPI_Type_create_hvector_c",
    MPI_Count
);

/// `MPI_Type_indexed`.
///
/// # Safety
/// The arrays hold `count` entries; `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_indexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_indexed", ErrObj::None, || {
        let n = count_arg(count.into(), "count")?;
        // SAFETY: the caller's contract.
        let lens = unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
        // SAFETY: the caller's contract.
        let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
        create(newtype, || indexed(lens, disps, false, oldtype))
    })
}

/// `MPI_Type_indexed_c`.
///
/// # Safety
/// The arrays hold `count` entries; `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_indexed_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_indexed_c", ErrObj::None, || {
        let n = count_arg(count, "count")?;
        // SAFETY: the caller's contract.
        let lens = unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
        // SAFETY: the caller's contract.
        let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
        create(newtype, || indexed(lens, disps, false, oldtype))
    })
}

macro_rules! hindexed_fn {
    ($name:ident, $mpi:literal, $cnt:ty, $len:ty) => {
        #[doc = concat!("`", $mpi, "`: indexed with byte displacements.")]
        ///
        /// # Safety
        /// The arrays hold `count` entries; `newtype` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: $cnt,
            array_of_blocklengths: *const $len,
            array_of_displacements: *const MPI_Aint,
            oldtype: MPI_Datatype,
            newtype: *mut MPI_Datatype,
        ) -> c_int {
            guard($mpi, ErrObj::None, || {
                let n = count_arg(count.into(), "count")?;
                // SAFETY: the caller's contract.
                let lens = unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
                // SAFETY: the caller's contract.
                let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                create(newtype, || indexed(lens, disps, true, oldtype))
            })
        }
    };
}

hindexed_fn!(
    oxabi_Type_create_hindexed,
    "MPI_Type_create_hindexed",
    c_int,
    c_int
);
hindexed_fn!(oxabi_Type_hindexed, "MPI_Type_hindexed", c_int, c_int);
hindexed_fn!(
    oxabi_Type_create_hindexed_c,
    "MPI_Type_create_hindexed_c",
    MPI_Count,
    MPI_Count
);

macro_rules! indexed_block_fn {
    ($name:ident, $mpi:literal, $cnt:ty, $disp:ty, $bytes:expr) => {
        #[doc = concat!("`", $mpi, "`: equal-length blocks.")]
        ///
        /// # Safety
        /// `array_of_displacements` holds `count` entries; `newtype` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: $cnt,
            blocklength: $cnt,
            array_of_displacements: *const $disp,
            oldtype: MPI_Datatype,
            newtype: *mut MPI_Datatype,
        ) -> c_int {
            guard($mpi, ErrObj::None, || {
                let n = count_arg(count.into(), "count")?;
                // SAFETY: the caller's contract.
                let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                create(newtype, || {
                    indexed_block(blocklength.into(), disps, $bytes, oldtype)
                })
            })
        }
    };
}

indexed_block_fn!(
    oxabi_Type_create_indexed_block,
    "MPI_Type_create_indexed_block",
    c_int,
    c_int,
    false
);
indexed_block_fn!(
    oxabi_Type_create_indexed_block_c,
    "MPI_Type_create_indexed_block_c",
    MPI_Count,
    MPI_Count,
    false
);
indexed_block_fn!(
    oxabi_Type_create_hindexed_block,
    "MPI_Type_create_hindexed_block",
    c_int,
    MPI_Aint,
    true
);
indexed_block_fn!(
    oxabi_Type_create_hindexed_block_c,
    "MPI_Type_create_hindexed_block_c",
    MPI_Count,
    MPI_Count,
    true
);

macro_rules! struct_fn {
    ($name:ident, $mpi:literal, $cnt:ty, $len:ty, $markers:expr) => {
        #[doc = concat!("`", $mpi, "`.")]
        ///
        /// # Safety
        /// The arrays hold `count` entries; `newtype` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: $cnt,
            array_of_blocklengths: *const $len,
            array_of_displacements: *const MPI_Aint,
            array_of_types: *const MPI_Datatype,
            newtype: *mut MPI_Datatype,
        ) -> c_int {
            guard($mpi, ErrObj::None, || {
                let n = count_arg(count.into(), "count")?;
                // SAFETY: the caller's contract.
                let lens = unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
                // SAFETY: the caller's contract.
                let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                // SAFETY: the caller's contract.
                let types = unsafe { array(array_of_types, n, "array_of_types") }?;
                create(newtype, || structure(lens, disps, types, $markers))
            })
        }
    };
}

struct_fn!(
    oxabi_Type_create_struct,
    "MPI_Type_create_struct",
    c_int,
    c_int,
    false
);
struct_fn!(
    oxabi_Type_create_struct_c,
    "MPI_Type_create_struct_c",
    MPI_Count,
    MPI_Count,
    false
);
struct_fn!(oxabi_Type_struct, "MPI_Type_struct", c_int, c_int, true);

/// `MPI_Type_create_resized`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_resized(
    oldtype: MPI_Datatype,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_create_resized", ErrObj::None, || {
        create(newtype, || resized(oldtype, lb, extent))
    })
}

/// `MPI_Type_create_resized_c`.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_resized_c(
    oldtype: MPI_Datatype,
    lb: MPI_Count,
    extent: MPI_Count,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_create_resized_c", ErrObj::None, || {
        create(newtype, || resized(oldtype, lb, extent))
    })
}

macro_rules! subarray_fn {
    ($name:ident, $mpi:literal, $elem:ty) => {
        #[doc = concat!("`", $mpi, "`.")]
        ///
        /// # Safety
        /// The arrays hold `ndims` entries; `newtype` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            ndims: c_int,
            array_of_sizes: *const $elem,
            array_of_subsizes: *const $elem,
            array_of_starts: *const $elem,
            order: c_int,
            oldtype: MPI_Datatype,
            newtype: *mut MPI_Datatype,
        ) -> c_int {
            guard($mpi, ErrObj::None, || {
                let n = usize::try_from(ndims)
                    .map_err(|_| AbiError::new(Class::ARG, format!("invalid `ndims` {ndims}")))?;
                // SAFETY: the caller's contract (three arrays of `ndims`).
                let (sizes, subsizes, starts) = unsafe {
                    (
                        isizes(array_of_sizes, n, "array_of_sizes")?,
                        isizes(array_of_subsizes, n, "array_of_subsizes")?,
                        isizes(array_of_starts, n, "array_of_starts")?,
                    )
                };
                create(newtype, || {
                    subarray(sizes, subsizes, starts, order, oldtype)
                })
            })
        }
    };
}

subarray_fn!(
    oxabi_Type_create_subarray,
    "MPI_Type_create_subarray",
    c_int
);
subarray_fn!(
    oxabi_Type_create_subarray_c,
    "MPI_Type_create_subarray_c",
    MPI_Count
);

/// `MPI_Type_dup`: same layout and committed state; no name.
///
/// # Safety
/// `newtype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_dup(
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_dup", ErrObj::None, || {
        create(newtype, || {
            let (old, c) = child(oldtype)?;
            Ok((old.dup(), contents(combiner::DUP, vec![], vec![], vec![c])))
        })?;
        // Attributes follow their copy callbacks. SAFETY: `create` checked
        // `newtype` and wrote it.
        super::type_attr::on_dup(oldtype, unsafe { *newtype })
    })
}

/// `MPI_Type_commit`: predefined types are always committed.
///
/// # Safety
/// `datatype` is readable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_commit(datatype: *mut MPI_Datatype) -> c_int {
    guard("MPI_Type_commit", ErrObj::None, || {
        let p = out_ptr(datatype, "datatype")?;
        // SAFETY: checked non-null; the caller's contract.
        lookup(unsafe { *p })?.commit();
        Ok(())
    })
}

/// `MPI_Type_free`: sets the handle to `MPI_DATATYPE_NULL`. Operations
/// still using the type keep it alive; predefined types cannot be freed.
///
/// # Safety
/// `datatype` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    guard("MPI_Type_free", ErrObj::None, || {
        let p = out_ptr(datatype, "datatype")?;
        // SAFETY: checked non-null; the caller's contract.
        let h = unsafe { *p };
        if handles::predefined_type(h).is_some() {
            return Err(AbiError::new(
                Class::TYPE,
                format!(
                    "{} is a predefined datatype and cannot be freed",
                    handles::datatype_name(h).unwrap_or("the datatype")
                ),
            ));
        }
        let slot = handles::derived_type_slot(h).ok_or_else(|| handles::bad_datatype(h))?;
        match state::lock().types.entries.get(slot) {
            None => return Err(freed(h)),
            Some(e) if e.is_f90() => {
                return Err(AbiError::new(
                    Class::TYPE,
                    format!(
                        "datatype {h:#010x} comes from MPI_Type_create_f90_*: it is predefined \
                         and cannot be freed"
                    ),
                ))
            }
            Some(_) => {}
        }
        // Attribute delete callbacks run first (they get the handle).
        super::type_attr::on_free(h)?;
        let removed = state::lock().types.entries.remove(slot);
        // Dropped outside the lock (it may hold other entries).
        removed.ok_or_else(|| freed(h))?;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *p = DATATYPE_NULL };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_predefined_handle_decodes_to_its_size() {
        for &(h, name) in handles::BUILTIN_DATATYPES {
            let p = handles::predefined_type(h).unwrap_or_else(|| panic!("{name} undecoded"));
            let t = predefined(p);
            assert_eq!(t.size(), (h as u32 >> 8 & 0xff) as usize, "{name}");
            assert!(t.is_committed(), "{name}");
            if let Predefined::Basic(b) = p {
                let want = if name == "MPI_LONG_LONG_INT" {
                    "MPI_LONG_LONG"
                } else {
                    name
                };
                assert_eq!(b.name(), want);
            }
        }
        for &(h, name, extent) in handles::PAIR_DATATYPES {
            let t = predefined(handles::predefined_type(h).unwrap());
            assert_eq!(t.extent() as usize, extent, "{name}");
            // Padded pairs (MPI_DOUBLE_INT: 12 bytes in 16) travel packed.
            assert_eq!(t.is_contiguous(), t.size() as isize == t.extent(), "{name}");
        }
        assert_eq!(handles::predefined_type(0x4c00_0010), None); // MPI_LB
        assert_eq!(handles::predefined_type(0x4c00_04ff), None);
        assert_eq!(handles::predefined_type(DATATYPE_NULL), None);
    }

    #[test]
    fn derived_handles_round_trip_and_never_alias_predefined_ones() {
        for slot in [0, 1, 1000] {
            let h = handles::derived_type_handle(slot);
            assert_eq!(handles::derived_type_slot(h), Some(slot));
            assert_eq!(handles::predefined_type(h), None);
        }
        for &(h, _, _) in handles::PAIR_DATATYPES {
            assert_eq!(handles::derived_type_slot(h), None);
        }
        assert_eq!(handles::derived_type_slot(DATATYPE_NULL), None);
        assert_eq!(
            lookup(handles::derived_type_handle(123_456))
                .unwrap_err()
                .class,
            Class::TYPE
        );
        assert_eq!(lookup(0x1234_5678).unwrap_err().class, Class::TYPE);
    }

    #[test]
    fn constructors_record_their_arguments() {
        let (t, c) = vector(3, 2, 5, false, 0x4c00_080b).unwrap();
        assert_eq!((t.size(), t.extent()), (48, 8 * 12));
        assert_eq!(
            (c.combiner, &c.ints[..]),
            (combiner::VECTOR, &[3, 2, 5][..])
        );
        let (t, c) = structure(
            vec![1, 1],
            vec![0, 8],
            &[handles::MPI_LB, 0x4c00_0405],
            true,
        )
        .unwrap();
        assert_eq!((t.size(), t.lb(), t.true_lb()), (4, 0, 8));
        assert_eq!(c.types.len(), 2);
        assert!(subarray(vec![4], vec![2], vec![1], 99, 0x4c00_0405).is_err());
        assert_eq!(
            contiguous(-1, 0x4c00_0405).err().unwrap().class,
            Class::COUNT
        );
    }
}
