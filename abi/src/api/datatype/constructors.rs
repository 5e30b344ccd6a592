//! The type constructors, `MPI_Type_commit` and `MPI_Type_free`.

use crate::api::datatype::array;
use crate::api::datatype::child;
use crate::api::datatype::contents;
use crate::api::datatype::contiguous;
use crate::api::datatype::count_arg;
use crate::api::datatype::create;
use crate::api::datatype::freed;
use crate::api::datatype::indexed;
use crate::api::datatype::indexed_block;
use crate::api::datatype::isizes;
use crate::api::datatype::lookup;
use crate::api::datatype::resized;
use crate::api::datatype::structure;
use crate::api::datatype::subarray;
use crate::api::datatype::vector;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Aint, MPI_Count, MPI_Datatype, DATATYPE_NULL};
use crate::objects::datatype::combiner;
use crate::raise::guard;
use crate::state;
use std::ffi::c_int;

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
        crate::api::comm::type_attr::on_dup(oldtype, unsafe { *newtype })
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
        crate::api::comm::type_attr::on_free(h)?;
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
