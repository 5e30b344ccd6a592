//! Datatype queries: `MPI_Type_size`, `_get_extent`, `_get_true_extent`
//! (with their `_c` / `_x` forms and the MPI-1 `MPI_Type_lb` / `_ub` /
//! `_extent`), names, `MPI_Type_get_envelope` / `_get_contents`,
//! `MPI_Type_match_size`, `MPI_Get_address`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

use oxmpi::datatype::Datatype;

use crate::api::datatype::{self as dtm, lookup};
use crate::api::{large_count, CountOut};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Aint, MPI_Count, MPI_Datatype};
use crate::objects::datatype::{combiner, Child, TypeEntry};
use crate::raise::guard;
use crate::state;

/// `MPI_MAX_OBJECT_NAME`.
pub(super) const MAX_OBJECT_NAME: usize = 128;

/// Writes `v` through an output pointer named `arg`.
///
/// # Safety
/// `p` is null (an error) or writable.
pub(super) unsafe fn put<T>(p: *mut T, arg: &'static str, v: T) -> Result<(), AbiError> {
    let p = out_ptr(p, arg)?;
    // SAFETY: checked non-null; the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

large_count! { with_x
    /// Bytes of data in one element.
    ///
    /// # Safety
    /// `size` is writable.
    Type_size(datatype: MPI_Datatype, size: *mut Count) -> c_int {
        guard(NAME, ErrObj::None, || {
            let n = lookup(datatype)?.size();
            // SAFETY: the caller's contract.
            unsafe { put(size, "size", Count::from_count(n as MPI_Count)) }
        })
    }
}

macro_rules! extent_fn {
    ($(#[$doc:meta])* $name:ident, $lb:ident, $ext:ident) => {
        large_count! { with_x
            $(#[$doc])*
            ///
            /// # Safety
            /// Both outputs are writable.
            $name(datatype: MPI_Datatype, lb: *mut Bytes, extent: *mut Bytes) -> c_int {
                guard(NAME, ErrObj::None, || {
                    let t = lookup(datatype)?;
                    // SAFETY: the caller's contract.
                    unsafe {
                        put(lb, "lb", t.$lb() as Bytes)?;
                        put(extent, "extent", t.$ext() as Bytes)
                    }
                })
            }
        }
    };
}

extent_fn!(
    /// Lower bound and extent.
    Type_get_extent,
    lb,
    extent
);
extent_fn!(
    /// Bounds of the data itself.
    Type_get_true_extent,
    true_lb,
    true_extent
);

macro_rules! bound_fn {
    ($name:ident, $mpi:literal, $what:ident, $arg:literal) => {
        #[doc = concat!("`", $mpi, "` (MPI-1, removed in MPI-3; MPICH still exports it).")]
        ///
        /// # Safety
        /// The output is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(datatype: MPI_Datatype, out: *mut MPI_Aint) -> c_int {
            guard($mpi, ErrObj::None, || {
                let v = lookup(datatype)?.$what();
                // SAFETY: the caller's contract.
                unsafe { put(out, $arg, v as MPI_Aint) }
            })
        }
    };
}

bound_fn!(oxabi_Type_lb, "MPI_Type_lb", lb, "displacement");
bound_fn!(oxabi_Type_ub, "MPI_Type_ub", ub, "displacement");
bound_fn!(oxabi_Type_extent, "MPI_Type_extent", extent, "extent");

/// The name of a type: set by the program, or the predefined name.
pub(super) fn name_of(h: MPI_Datatype) -> Result<String, AbiError> {
    if let Some(e) = dtm::entry(h)? {
        return Ok(e.name);
    }
    let st = state::lock();
    Ok(match st.types.names.get(&h) {
        Some(n) => n.clone(),
        None => handles::datatype_name(h).unwrap_or("").to_string(),
    })
}

/// Copies `s` as a C string into `buf` of `cap` bytes (truncated).
///
/// # Safety
/// `buf` is writable for `cap` bytes.
pub unsafe fn write_c_string(buf: *mut c_char, cap: usize, s: &str) -> usize {
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: the caller's contract; n + 1 <= cap.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), buf, n);
        *buf.add(n) = 0;
    }
    n
}

/// `MPI_Type_get_name`.
///
/// # Safety
/// `type_name` has room for `MPI_MAX_OBJECT_NAME` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_name(
    datatype: MPI_Datatype,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_name", ErrObj::None, || {
        let buf = out_ptr(type_name, "type_name")?;
        let len = out_ptr(resultlen, "resultlen")?;
        let name = name_of(datatype)?;
        // SAFETY: the caller's contract.
        unsafe { *len = write_c_string(buf, MAX_OBJECT_NAME, &name) as c_int };
        Ok(())
    })
}

/// `MPI_Type_set_name`.
///
/// # Safety
/// `type_name` is a C string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_set_name(
    datatype: MPI_Datatype,
    type_name: *const c_char,
) -> c_int {
    guard("MPI_Type_set_name", ErrObj::None, || {
        if type_name.is_null() {
            return Err(AbiError::new(Class::ARG, "`type_name` is a null pointer"));
        }
        // SAFETY: non-null; the caller's contract.
        let mut name = unsafe { CStr::from_ptr(type_name) }
            .to_string_lossy()
            .into_owned();
        while name.len() > MAX_OBJECT_NAME - 1 {
            name.pop();
        }
        lookup(datatype)?;
        let mut st = state::lock();
        match handles::derived_type_slot(datatype) {
            Some(slot) => {
                if let Some(e) = st.types.entries.get_mut(slot) {
                    e.name = name;
                }
            }
            None => {
                st.types.names.insert(datatype, name);
            }
        }
        Ok(())
    })
}

/// The constructor record of a type (`None`: predefined).
pub(super) fn contents_of(
    h: MPI_Datatype,
) -> Result<Option<Arc<crate::objects::datatype::Contents>>, AbiError> {
    Ok(dtm::entry(h)?.map(|e| e.contents))
}

/// A type's envelope: numbers of integers, addresses, large counts and
/// datatypes, and the combiner.
pub(super) fn envelope(h: MPI_Datatype) -> Result<([usize; 4], c_int), AbiError> {
    lookup(h)?;
    Ok(match contents_of(h)? {
        None => ([0; 4], combiner::NAMED),
        Some(c) => (
            [c.ints.len(), c.addrs.len(), c.large.len(), c.types.len()],
            c.combiner,
        ),
    })
}

/// The error of a classic query on a type a large-count constructor made.
fn needs_large(h: MPI_Datatype, call: &str) -> AbiError {
    AbiError::new(
        Class::TYPE,
        format!(
            "datatype {h:#010x} was made by a large-count constructor (an MPI_Type_*_c \
             function): its arguments are MPI_Counts, which {call} cannot return; use \
             {call}_c"
        ),
    )
}

/// `MPI_Type_get_envelope`.
///
/// # Safety
/// The outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_envelope(
    datatype: MPI_Datatype,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_envelope", ErrObj::None, || {
        let ([i, a, l, d], c) = envelope(datatype)?;
        if l > 0 {
            return Err(needs_large(datatype, "MPI_Type_get_envelope"));
        }
        let int = |n: usize| {
            c_int::try_from(n).map_err(|_| needs_large(datatype, "MPI_Type_get_envelope"))
        };
        // SAFETY: the caller's contract.
        unsafe {
            put(num_integers, "num_integers", int(i)?)?;
            put(num_addresses, "num_addresses", int(a)?)?;
            put(num_datatypes, "num_datatypes", int(d)?)?;
            put(combiner, "combiner", c)
        }
    })
}

/// `MPI_Type_get_envelope_c`: a large-count constructor's counts are
/// large counts.
///
/// # Safety
/// The outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_envelope_c(
    datatype: MPI_Datatype,
    num_integers: *mut MPI_Count,
    num_addresses: *mut MPI_Count,
    num_large_counts: *mut MPI_Count,
    num_datatypes: *mut MPI_Count,
    combiner: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_envelope_c", ErrObj::None, || {
        let ([i, a, l, d], c) = envelope(datatype)?;
        // SAFETY: the caller's contract.
        unsafe {
            put(num_integers, "num_integers", i as MPI_Count)?;
            put(num_addresses, "num_addresses", a as MPI_Count)?;
            put(num_large_counts, "num_large_counts", l as MPI_Count)?;
            put(num_datatypes, "num_datatypes", d as MPI_Count)?;
            put(combiner, "combiner", c)
        }
    })
}

/// The handle to give back for a constructor's datatype argument: the
/// predefined handle, or a new handle to the derived type.
pub(super) fn child_handle(c: &Child) -> MPI_Datatype {
    match c {
        Child::Named(h) => *h,
        Child::Derived(e) => dtm::insert(TypeEntry::clone(e)),
    }
}

/// Where `MPI_Type_get_contents` (`_c`) writes: each array with the
/// number of entries it has room for.
pub(super) struct Out {
    ints: (*mut c_int, i64),
    addrs: (*mut MPI_Aint, i64),
    /// `None` for the classic form (no large counts).
    large: Option<(*mut MPI_Count, i64)>,
    types: (*mut MPI_Datatype, i64),
}

/// Writes `values` to the array `out` after checking its room.
///
/// # Safety
/// `out.0` has room for `out.1` entries.
unsafe fn fill<T: Copy>(
    out: (*mut T, i64),
    values: impl ExactSizeIterator<Item = Result<T, AbiError>>,
    what: &str,
) -> Result<(), AbiError> {
    let need = values.len();
    if (out.1 as i128) < need as i128 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`max_{what}` is {} but the type has {need}", out.1),
        ));
    }
    if need == 0 {
        return Ok(());
    }
    if out.0.is_null() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`array_of_{what}` is a null pointer but must hold {need} entries"),
        ));
    }
    for (i, v) in values.enumerate() {
        // SAFETY: room checked above; the caller's contract.
        unsafe { out.0.add(i).write(v?) };
    }
    Ok(())
}

/// Fills the contents arrays after checking their sizes.
///
/// # Safety
/// Each array has room for its `max_*` entries.
pub(super) unsafe fn contents(datatype: MPI_Datatype, out: Out) -> Result<(), AbiError> {
    lookup(datatype)?;
    let c = contents_of(datatype)?.ok_or_else(|| {
        AbiError::new(
            Class::ARG,
            "MPI_Type_get_contents on a predefined datatype (its combiner is MPI_COMBINER_NAMED)",
        )
    })?;
    let ints = c.ints.iter().map(|&v| {
        c_int::try_from(v).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("integer argument {v} does not fit an int; use MPI_Type_get_contents_c"),
            )
        })
    });
    let Some(large) = out.large else {
        if !c.large.is_empty() {
            return Err(needs_large(datatype, "MPI_Type_get_contents"));
        }
        // SAFETY: the caller's contract, for each array.
        return unsafe {
            fill(out.ints, ints, "integers")?;
            fill(out.addrs, c.addrs.iter().map(|&v| Ok(v)), "addresses")?;
            fill(
                out.types,
                c.types.iter().map(|k| Ok(child_handle(k))),
                "datatypes",
            )
        };
    };
    // SAFETY: as above.
    unsafe {
        fill(out.ints, ints, "integers")?;
        fill(out.addrs, c.addrs.iter().map(|&v| Ok(v)), "addresses")?;
        fill(large, c.large.iter().map(|&v| Ok(v)), "large_counts")?;
        fill(
            out.types,
            c.types.iter().map(|k| Ok(child_handle(k))),
            "datatypes",
        )
    }
}

/// `MPI_Type_get_contents`.
///
/// # Safety
/// Each array has room for its `max_*` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_contents(
    datatype: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_get_contents", ErrObj::None, || {
        let out = Out {
            ints: (array_of_integers, max_integers.into()),
            addrs: (array_of_addresses, max_addresses.into()),
            large: None,
            types: (array_of_datatypes, max_datatypes.into()),
        };
        // SAFETY: the caller's contract.
        unsafe { contents(datatype, out) }
    })
}

/// `MPI_Type_get_contents_c`: a large-count constructor's counts go to
/// `array_of_large_counts`.
///
/// # Safety
/// Each array has room for its `max_*` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_contents_c(
    datatype: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_large_counts: *mut MPI_Count,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_get_contents_c", ErrObj::None, || {
        let out = Out {
            ints: (array_of_integers, max_integers),
            addrs: (array_of_addresses, max_addresses),
            large: Some((array_of_large_counts, max_large_counts)),
            types: (array_of_datatypes, max_datatypes),
        };
        // SAFETY: the caller's contract.
        unsafe { contents(datatype, out) }
    })
}

/// `MPI_Type_match_size`: the C type of a class and size.
///
/// # Safety
/// `datatype` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_match_size(
    typeclass: c_int,
    size: c_int,
    datatype: *mut MPI_Datatype,
) -> c_int {
    guard("MPI_Type_match_size", ErrObj::None, || {
        // MPI_TYPECLASS_REAL 1, _INTEGER 2, _COMPLEX 3.
        let name = match (typeclass, size) {
            (1, 4) => "MPI_FLOAT",
            (1, 8) => "MPI_DOUBLE",
            (1, 16) => "MPI_LONG_DOUBLE",
            (2, 1) => "MPI_INT8_T",
            (2, 2) => "MPI_INT16_T",
            (2, 4) => "MPI_INT32_T",
            (2, 8) => "MPI_INT64_T",
            (3, 8) => "MPI_C_FLOAT_COMPLEX",
            (3, 16) => "MPI_C_DOUBLE_COMPLEX",
            (3, 32) => "MPI_C_LONG_DOUBLE_COMPLEX",
            (1..=3, _) => {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("no type of class {typeclass} has {size} bytes"),
                ))
            }
            _ => {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("invalid `typeclass` {typeclass}"),
                ))
            }
        };
        let h = handles::BUILTIN_DATATYPES
            .iter()
            .find(|d| d.1 == name)
            .map(|d| d.0)
            .expect("a builtin name");
        // SAFETY: the caller's contract.
        unsafe { put(datatype, "datatype", h) }
    })
}

/// `MPI_Get_address`.
///
/// # Safety
/// `address` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Get_address(
    location: *const c_void,
    address: *mut MPI_Aint,
) -> c_int {
    guard("MPI_Get_address", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { put(address, "address", location as MPI_Aint) }
    })
}

/// `MPI_Address` (MPI-1 name of `MPI_Get_address`).
///
/// # Safety
/// `address` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Address(location: *mut c_void, address: *mut MPI_Aint) -> c_int {
    guard("MPI_Address", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { put(address, "address", location as MPI_Aint) }
    })
}

/// A committed type for moving data.
pub fn committed(h: MPI_Datatype) -> Result<Datatype, AbiError> {
    let t = lookup(h)?;
    if !t.is_committed() {
        return Err(AbiError::new(
            Class::TYPE,
            format!(
                "datatype {h:#010x} is not committed: call MPI_Type_commit before using it \
                 to move data"
            ),
        ));
    }
    Ok(t)
}
