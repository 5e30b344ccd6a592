//! Events, event sources and enumerations: OxMPI defines none. Counts are
//! 0, indices and names are invalid, and since no registration, event
//! instance or enumeration can exist, calls on one get
//! `MPI_T_ERR_INVALID_HANDLE`.

use std::ffi::{c_char, c_int, c_void};

use super::{
    call, name_arg, ERR_INVALID, ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, SUCCESS,
};
use crate::handles::{MPI_Aint, MPI_Count, MPI_Datatype, MPI_Info};

/// Writes 0 through `num` (a count of things OxMPI has none of).
fn none_of(num: *mut c_int) -> c_int {
    call(|_| {
        if num.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null; the callers' contracts say writable.
        unsafe { *num = 0 };
        SUCCESS
    })
}

/// `MPI_T_event_get_num`: 0.
///
/// # Safety
/// `num_events` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_event_get_num(num_events: *mut c_int) -> c_int {
    none_of(num_events)
}

/// `MPI_T_source_get_num`: 0.
///
/// # Safety
/// `num_sources` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_source_get_num(num_sources: *mut c_int) -> c_int {
    none_of(num_sources)
}

/// `MPI_T_event_get_info`: no index is valid.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_event_get_info(
    _event_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _verbosity: *mut c_int,
    _array_of_datatypes: *mut MPI_Datatype,
    _array_of_displacements: *mut MPI_Aint,
    _num_elements: *mut c_int,
    _enumtype: *mut *mut c_void,
    _info: *mut MPI_Info,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _bind: *mut c_int,
) -> c_int {
    call(|_| ERR_INVALID_INDEX)
}

/// `MPI_T_event_get_index`: no name is known.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_event_get_index(
    name: *const c_char,
    event_index: *mut c_int,
) -> c_int {
    call(|_| {
        // SAFETY: per the caller.
        match (unsafe { name_arg(name) }, event_index.is_null()) {
            (Some(_), false) => ERR_INVALID_NAME,
            _ => ERR_INVALID,
        }
    })
}

/// `MPI_T_event_handle_alloc`: no index is valid.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_event_handle_alloc(
    _event_index: c_int,
    _obj_handle: *mut c_void,
    _info: MPI_Info,
    _event_registration: *mut *mut c_void,
) -> c_int {
    call(|_| ERR_INVALID_INDEX)
}

/// Defines `MPI_T_` functions on registrations, event instances or
/// enumerations, none of which can exist: each answers
/// `MPI_T_ERR_INVALID_HANDLE` (once the interface is initialized).
macro_rules! no_such_handle {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// None (nothing is read or written).
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            $(let _ = $arg;)*
            call(|_| ERR_INVALID_HANDLE)
        }
    )*};
}

no_such_handle! {
    /// `MPI_T_event_handle_free`.
    oxabi_T_event_handle_free(registration: *mut c_void, user_data: *mut c_void, free_cb: *const c_void);
    /// `MPI_T_event_handle_get_info`.
    oxabi_T_event_handle_get_info(registration: *mut c_void, info_used: *mut MPI_Info);
    /// `MPI_T_event_handle_set_info`.
    oxabi_T_event_handle_set_info(registration: *mut c_void, info: MPI_Info);
    /// `MPI_T_event_register_callback`.
    oxabi_T_event_register_callback(
        registration: *mut c_void,
        cb_safety: c_int,
        info: MPI_Info,
        user_data: *mut c_void,
        event_cb: *const c_void
    );
    /// `MPI_T_event_callback_get_info`.
    oxabi_T_event_callback_get_info(registration: *mut c_void, cb_safety: c_int, info_used: *mut MPI_Info);
    /// `MPI_T_event_callback_set_info`.
    oxabi_T_event_callback_set_info(registration: *mut c_void, cb_safety: c_int, info: MPI_Info);
    /// `MPI_T_event_set_dropped_handler`.
    oxabi_T_event_set_dropped_handler(registration: *mut c_void, dropped_cb: *const c_void);
    /// `MPI_T_event_read` (instances exist only inside callbacks, never called).
    oxabi_T_event_read(instance: *mut c_void, element_index: c_int, buffer: *mut c_void);
    /// `MPI_T_event_copy`.
    oxabi_T_event_copy(instance: *mut c_void, buffer: *mut c_void);
    /// `MPI_T_event_get_timestamp`.
    oxabi_T_event_get_timestamp(instance: *mut c_void, timestamp: *mut MPI_Count);
    /// `MPI_T_event_get_source`.
    oxabi_T_event_get_source(instance: *mut c_void, source_index: *mut c_int);
    /// `MPI_T_enum_get_info` (no variable has an enumeration).
    oxabi_T_enum_get_info(enumtype: *mut c_void, num: *mut c_int, name: *mut c_char, name_len: *mut c_int);
    /// `MPI_T_enum_get_item`.
    oxabi_T_enum_get_item(
        enumtype: *mut c_void,
        index: c_int,
        value: *mut c_int,
        name: *mut c_char,
        name_len: *mut c_int
    );
}

/// `MPI_T_source_get_info`: no index is valid.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_source_get_info(
    _source_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _ordering: *mut c_int,
    _ticks_per_second: *mut MPI_Count,
    _max_ticks: *mut MPI_Count,
    _info: *mut MPI_Info,
) -> c_int {
    call(|_| ERR_INVALID_INDEX)
}

/// `MPI_T_source_get_timestamp`: no index is valid.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_source_get_timestamp(
    _source_index: c_int,
    _timestamp: *mut MPI_Count,
) -> c_int {
    call(|_| ERR_INVALID_INDEX)
}
