//! The type constructors, `MPI_Type_commit` and `MPI_Type_free`.

use std::ffi::c_int;

use crate::api::datatype::{
    array, child, contents, contiguous, count_arg, create, create_as, freed, indexed,
    indexed_block, isizes, lookup, resized, structure, subarray, vector,
};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Aint, MPI_Datatype, DATATYPE_NULL};
use crate::objects::datatype::combiner;
use crate::raise::guard;
use crate::state;

large_count! {
    /// # Safety
    /// `newtype` is writable.
    Type_contiguous(count: Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        guard(NAME, ErrObj::None, || {
            create_as(NAME, newtype, || contiguous(wide(count), oldtype))
        })
    }
}

large_count! {
    /// # Safety
    /// `newtype` is writable.
    Type_vector(
        count: Count,
        blocklength: Count,
        stride: Count,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            create_as(NAME, newtype, || {
                vector(wide(count), wide(blocklength), wide(stride), false, oldtype)
            })
        })
    }
}

macro_rules! hvector_fn {
    ($name:ident) => {
        hvector_fn!(@emit [] $name);
    };
    (int_only $name:ident) => {
        hvector_fn!(@emit [int_only] $name);
    };
    (@emit [$($form:ident)?] $name:ident) => {
        large_count! { $($form)?
            /// A vector with the stride in bytes.
            ///
            /// # Safety
            /// `newtype` is writable.
            $name(
                count: Count,
                blocklength: Count,
                stride: MPI_Aint,
                oldtype: MPI_Datatype,
                newtype: *mut MPI_Datatype,
            ) -> c_int {
                guard(NAME, ErrObj::None, || {
                    create_as(NAME, newtype, || {
                        vector(wide(count), wide(blocklength), stride, true, oldtype)
                    })
                })
            }
        }
    };
}

hvector_fn!(Type_create_hvector);
hvector_fn!(int_only Type_hvector);

large_count! {
    /// # Safety
    /// The arrays hold `count` entries; `newtype` is writable.
    Type_indexed(
        count: Count,
        array_of_blocklengths: *const Count,
        array_of_displacements: *const Count,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            let n = count_arg(wide(count), "count")?;
            // SAFETY: the caller's contract.
            let lens = unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
            // SAFETY: the caller's contract.
            let disps = unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
            create_as(NAME, newtype, || indexed(lens, disps, false, oldtype))
        })
    }
}

macro_rules! hindexed_fn {
    ($name:ident) => {
        hindexed_fn!(@emit [] $name);
    };
    (int_only $name:ident) => {
        hindexed_fn!(@emit [int_only] $name);
    };
    (@emit [$($form:ident)?] $name:ident) => {
        large_count! { $($form)?
            /// Indexed with byte displacements.
            ///
            /// # Safety
            /// The arrays hold `count` entries; `newtype` is writable.
            $name(
                count: Count,
                array_of_blocklengths: *const Count,
                array_of_displacements: *const MPI_Aint,
                oldtype: MPI_Datatype,
                newtype: *mut MPI_Datatype,
            ) -> c_int {
                guard(NAME, ErrObj::None, || {
                    let n = count_arg(wide(count), "count")?;
                    // SAFETY: the caller's contract.
                    let lens =
                        unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
                    // SAFETY: the caller's contract.
                    let disps =
                        unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                    create_as(NAME, newtype, || indexed(lens, disps, true, oldtype))
                })
            }
        }
    };
}

hindexed_fn!(Type_create_hindexed);
hindexed_fn!(int_only Type_hindexed);

macro_rules! indexed_block_fn {
    ($name:ident, $disp:ty, $bytes:expr) => {
        large_count! {
            /// Equal-length blocks.
            ///
            /// # Safety
            /// `array_of_displacements` holds `count` entries; `newtype` is writable.
            $name(
                count: Count,
                blocklength: Count,
                array_of_displacements: *const $disp,
                oldtype: MPI_Datatype,
                newtype: *mut MPI_Datatype,
            ) -> c_int {
                guard(NAME, ErrObj::None, || {
                    let n = count_arg(wide(count), "count")?;
                    // SAFETY: the caller's contract.
                    let disps =
                        unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                    create_as(NAME, newtype, || {
                        indexed_block(wide(blocklength), disps, $bytes, oldtype)
                    })
                })
            }
        }
    };
}

indexed_block_fn!(Type_create_indexed_block, Count, false);
indexed_block_fn!(Type_create_hindexed_block, Bytes, true);

macro_rules! struct_fn {
    ($name:ident, $markers:expr) => {
        struct_fn!(@emit [] $name, $markers);
    };
    (int_only $name:ident, $markers:expr) => {
        struct_fn!(@emit [int_only] $name, $markers);
    };
    (@emit [$($form:ident)?] $name:ident, $markers:expr) => {
        large_count! { $($form)?
            /// # Safety
            /// The arrays hold `count` entries; `newtype` is writable.
            $name(
                count: Count,
                array_of_blocklengths: *const Count,
                array_of_displacements: *const MPI_Aint,
                array_of_types: *const MPI_Datatype,
                newtype: *mut MPI_Datatype,
            ) -> c_int {
                guard(NAME, ErrObj::None, || {
                    let n = count_arg(wide(count), "count")?;
                    // SAFETY: the caller's contract.
                    let lens =
                        unsafe { isizes(array_of_blocklengths, n, "array_of_blocklengths") }?;
                    // SAFETY: the caller's contract.
                    let disps =
                        unsafe { isizes(array_of_displacements, n, "array_of_displacements") }?;
                    // SAFETY: the caller's contract.
                    let types = unsafe { array(array_of_types, n, "array_of_types") }?;
                    create_as(NAME, newtype, || structure(lens, disps, types, $markers))
                })
            }
        }
    };
}

struct_fn!(Type_create_struct, false);
struct_fn!(int_only Type_struct, true);

large_count! {
    /// # Safety
    /// `newtype` is writable.
    Type_create_resized(
        oldtype: MPI_Datatype,
        lb: Bytes,
        extent: Bytes,
        newtype: *mut MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            create_as(NAME, newtype, || resized(oldtype, lb, extent))
        })
    }
}

large_count! {
    /// # Safety
    /// The arrays hold `ndims` entries; `newtype` is writable.
    Type_create_subarray(
        ndims: c_int,
        array_of_sizes: *const Count,
        array_of_subsizes: *const Count,
        array_of_starts: *const Count,
        order: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
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
            create_as(NAME, newtype, || {
                subarray(sizes, subsizes, starts, order, oldtype)
            })
        })
    }
}

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
    use crate::api::datatype::predefined;
    use crate::handles::Predefined;

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
