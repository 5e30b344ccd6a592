//! Control variables and their categories.
//!
//! One variable per tunable (the runtime's registry, then the collectives'
//! algorithm overrides), in that order, named by its environment variable.
//! Booleans are `MPI_INT` (0 or 1), byte counts and counts
//! `MPI_UNSIGNED_LONG_LONG`, the others `MPI_CHAR` strings. All are
//! `MPI_T_SCOPE_READONLY` (MPI reads them when it starts) and bound to no
//! object. Each belongs to exactly one category, by its name.

use std::ffi::{c_char, c_int, c_ulonglong, c_void};

use oxmpi::config::{current_text, Entry, FromSetting, Kind, REGISTRY};

use super::{
    call, name_arg, put, put_indices, put_string, ERR_CVAR_SET_NEVER, ERR_INVALID,
    ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, SUCCESS,
};
use crate::handles::MPI_Datatype;

/// `MPI_INT`, `MPI_UNSIGNED_LONG_LONG`, `MPI_CHAR` (mpi.h).
const MPI_INT: MPI_Datatype = 0x4c00_0405;
const MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x4c00_0819;
const MPI_CHAR: MPI_Datatype = 0x4c00_0101;
/// `MPI_T_VERBOSITY_TUNER_BASIC`, `MPI_T_BIND_NO_OBJECT`, `MPI_T_SCOPE_READONLY`.
const VERBOSITY_TUNER_BASIC: c_int = 224;
const BIND_NO_OBJECT: c_int = 9700;
const SCOPE_READONLY: c_int = 60439;
/// The element count of a string variable's handle: its buffer size.
const STRING_COUNT: c_int = 1024;

/// Every control variable, in index order.
fn variables() -> impl Iterator<Item = &'static Entry> {
    REGISTRY
        .iter()
        .chain(oxmpi::coll::select::OVERRIDES)
        .copied()
}

fn variable(index: c_int) -> Option<&'static Entry> {
    usize::try_from(index).ok().and_then(|i| variables().nth(i))
}

/// A category of control variables.
struct Category {
    name: &'static str,
    desc: &'static str,
    /// Whether a variable (its environment name without `OXMPI_`) belongs.
    holds: fn(&str) -> bool,
}

/// The categories; a variable belongs to the first that holds it (the last
/// holds the rest).
const CATEGORIES: [Category; 5] = [
    Category {
        name: "oxmpi_collectives",
        desc: "Collectives: the cost model, forced algorithms, the shared-memory area",
        holds: |n| n.starts_with("COLL") || n.starts_with("SHM_COLL") || n.ends_with("_ALGO"),
    },
    Category {
        name: "oxmpi_p2p",
        desc:
            "Point-to-point within a host: eager limits, shared-memory rings, single-copy transfers",
        holds: |n| {
            ["EAGER", "SHM", "CMA", "RNDV"]
                .iter()
                .any(|p| n.starts_with(p))
        },
    },
    Category {
        name: "oxmpi_fabric",
        desc: "The libfabric transport between hosts",
        holds: |n| n.starts_with("OFI"),
    },
    Category {
        name: "oxmpi_cuda",
        desc: "CUDA device buffers: driver, IPC and the pinned pipeline",
        holds: |n| n.starts_with("CUDA"),
    },
    Category {
        name: "oxmpi_general",
        desc: "Diagnostics, ports and the name service",
        holds: |_| true,
    },
];

/// The category of `entry`.
fn category_of(entry: &Entry) -> usize {
    let short = entry.env.trim_start_matches("OXMPI_");
    CATEGORIES
        .iter()
        .position(|c| (c.holds)(short))
        .unwrap_or(CATEGORIES.len() - 1)
}

/// Indices of the variables of category `cat`.
fn members(cat: usize) -> impl Iterator<Item = usize> {
    variables()
        .enumerate()
        .filter(move |(_, e)| category_of(e) == cat)
        .map(|(i, _)| i)
}

fn category(index: c_int) -> Option<usize> {
    usize::try_from(index)
        .ok()
        .filter(|&i| i < CATEGORIES.len())
}

/// The MPI datatype and handle count of `entry`'s value.
fn datatype_of(entry: &Entry) -> (MPI_Datatype, c_int) {
    match entry.kind {
        Kind::Bool => (MPI_INT, 1),
        Kind::Bytes | Kind::Count => (MPI_UNSIGNED_LONG_LONG, 1),
        Kind::List(_) | Kind::Path | Kind::Text => (MPI_CHAR, STRING_COUNT),
    }
}

/// `MPI_T_cvar_get_num`.
///
/// # Safety
/// `num_cvar` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
    call(|_| {
        if num_cvar.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        unsafe { *num_cvar = variables().count() as c_int };
        SUCCESS
    })
}

/// `MPI_T_cvar_get_info`.
///
/// # Safety
/// Every pointer is null or valid for what MPI says it holds.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut *mut c_void,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> c_int {
    call(|_| {
        let Some(entry) = variable(cvar_index) else {
            return ERR_INVALID_INDEX;
        };
        let text = format!(
            "{} [{}; default {:?}]",
            entry.doc, entry.kind, entry.default
        );
        // SAFETY: per the caller.
        unsafe {
            put_string(entry.env, name, name_len);
            put(verbosity, VERBOSITY_TUNER_BASIC);
            put(datatype, datatype_of(entry).0);
            put(enumtype, std::ptr::null_mut());
            put_string(&text, desc, desc_len);
            put(bind, BIND_NO_OBJECT);
            put(scope, SCOPE_READONLY);
        }
        SUCCESS
    })
}

/// `MPI_T_cvar_get_index`.
///
/// # Safety
/// `name` is a NUL-terminated string; `cvar_index` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_get_index(
    name: *const c_char,
    cvar_index: *mut c_int,
) -> c_int {
    call(|_| {
        // SAFETY: per the caller.
        let (Some(name), false) = (unsafe { name_arg(name) }, cvar_index.is_null()) else {
            return ERR_INVALID;
        };
        match variables().position(|e| e.env == name) {
            // SAFETY: checked non-null.
            Some(i) => unsafe {
                *cvar_index = i as c_int;
                SUCCESS
            },
            None => ERR_INVALID_NAME,
        }
    })
}

/// `MPI_T_cvar_handle_alloc`: no variable is bound to an object, so
/// `obj_handle` is ignored.
///
/// # Safety
/// `handle` and `count` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_handle_alloc(
    cvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut *mut c_void,
    count: *mut c_int,
) -> c_int {
    call(|tool| {
        let Some(entry) = variable(cvar_index) else {
            return ERR_INVALID_INDEX;
        };
        if handle.is_null() || count.is_null() {
            return ERR_INVALID;
        }
        let h = tool.cvar_handles.insert(cvar_index as usize);
        // SAFETY: checked non-null.
        unsafe {
            *handle = h as *mut c_void;
            *count = datatype_of(entry).1;
        }
        SUCCESS
    })
}

/// `MPI_T_cvar_handle_free`: the handle becomes `MPI_T_CVAR_HANDLE_NULL`.
///
/// # Safety
/// `handle` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_handle_free(handle: *mut *mut c_void) -> c_int {
    call(|tool| {
        if handle.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        let h = unsafe { *handle } as usize;
        if tool.cvar_handles.remove(h).is_none() {
            return ERR_INVALID_HANDLE;
        }
        // SAFETY: checked non-null.
        unsafe { *handle = std::ptr::null_mut() };
        SUCCESS
    })
}

/// `MPI_T_cvar_read`: the variable's value now, in its datatype (a string
/// truncated to the handle's count, terminator included).
///
/// # Safety
/// `buf` holds the handle's count of the variable's datatype.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_read(handle: *mut c_void, buf: *mut c_void) -> c_int {
    call(|tool| {
        let Some(&index) = tool.cvar_handles.get(handle as usize) else {
            return ERR_INVALID_HANDLE;
        };
        if buf.is_null() {
            return ERR_INVALID;
        }
        let entry = variable(index as c_int).expect("handles name existing variables");
        // An unreadable or invalid value (MPI_Init would refuse it) reads as
        // the default.
        let text = current_text(entry).unwrap_or_else(|_| entry.default.to_string());
        // SAFETY: `buf` holds the handle's count of the datatype, per the caller.
        unsafe {
            match entry.kind {
                Kind::Bool => {
                    let on = bool::from_setting(&text, entry.kind)
                        .or_else(|_| bool::from_setting(entry.default, entry.kind))
                        .unwrap_or(false);
                    *buf.cast::<c_int>() = c_int::from(on);
                }
                Kind::Bytes | Kind::Count => {
                    let n = usize::from_setting(&text, entry.kind)
                        .or_else(|_| usize::from_setting(entry.default, entry.kind))
                        .unwrap_or(0);
                    *buf.cast::<c_ulonglong>() = n as c_ulonglong;
                }
                Kind::List(_) | Kind::Path | Kind::Text => {
                    let mut len = STRING_COUNT;
                    put_string(&text, buf.cast::<c_char>(), &mut len);
                }
            }
        }
        SUCCESS
    })
}

/// `MPI_T_cvar_write`: every variable is read-only once MPI has started.
///
/// # Safety
/// None beyond a valid handle.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_cvar_write(handle: *mut c_void, _buf: *const c_void) -> c_int {
    call(|tool| match tool.cvar_handles.get(handle as usize) {
        Some(_) => ERR_CVAR_SET_NEVER,
        None => ERR_INVALID_HANDLE,
    })
}

/// `MPI_T_category_get_num`.
///
/// # Safety
/// `num_cat` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_num(num_cat: *mut c_int) -> c_int {
    call(|_| {
        if num_cat.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        unsafe { *num_cat = CATEGORIES.len() as c_int };
        SUCCESS
    })
}

/// `MPI_T_category_get_info`: no category holds performance variables or
/// other categories.
///
/// # Safety
/// Every pointer is null or valid for what MPI says it holds.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> c_int {
    call(|_| {
        let Some(cat) = category(cat_index) else {
            return ERR_INVALID_INDEX;
        };
        let c = &CATEGORIES[cat];
        // SAFETY: per the caller.
        unsafe {
            put_string(c.name, name, name_len);
            put_string(c.desc, desc, desc_len);
            put(num_cvars, members(cat).count() as c_int);
            put(num_pvars, 0);
            put(num_categories, 0);
        }
        SUCCESS
    })
}

/// `MPI_T_category_get_index`.
///
/// # Safety
/// `name` is a NUL-terminated string; `cat_index` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_index(
    name: *const c_char,
    cat_index: *mut c_int,
) -> c_int {
    call(|_| {
        // SAFETY: per the caller.
        let (Some(name), false) = (unsafe { name_arg(name) }, cat_index.is_null()) else {
            return ERR_INVALID;
        };
        match CATEGORIES.iter().position(|c| c.name == name) {
            // SAFETY: checked non-null.
            Some(i) => unsafe {
                *cat_index = i as c_int;
                SUCCESS
            },
            None => ERR_INVALID_NAME,
        }
    })
}

/// `MPI_T_category_get_cvars`: the first `len` variables of the category.
///
/// # Safety
/// `indices` has `len` writable ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_cvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    call(|_| match category(cat_index) {
        // SAFETY: per the caller.
        Some(cat) => unsafe { put_indices(members(cat), len, indices) },
        None => ERR_INVALID_INDEX,
    })
}

/// The answer for the kinds of member no category has (pvars, categories,
/// events): none, for a valid category.
///
/// # Safety
/// `indices` has `len` writable ints.
unsafe fn no_members(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
    call(|_| match category(cat_index) {
        // SAFETY: per the caller.
        Some(_) => unsafe { put_indices(std::iter::empty(), len, indices) },
        None => ERR_INVALID_INDEX,
    })
}

/// `MPI_T_category_get_pvars`: none.
///
/// # Safety
/// `indices` has `len` writable ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_pvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: per the caller.
    unsafe { no_members(cat_index, len, indices) }
}

/// `MPI_T_category_get_categories`: none (the categories are flat).
///
/// # Safety
/// `indices` has `len` writable ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: per the caller.
    unsafe { no_members(cat_index, len, indices) }
}

/// `MPI_T_category_get_num_events`: none.
///
/// # Safety
/// `num_events` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> c_int {
    call(|_| match (category(cat_index), num_events.is_null()) {
        (None, _) => ERR_INVALID_INDEX,
        (Some(_), true) => ERR_INVALID,
        // SAFETY: checked non-null.
        (Some(_), false) => unsafe {
            *num_events = 0;
            SUCCESS
        },
    })
}

/// `MPI_T_category_get_events`: none.
///
/// # Safety
/// `indices` has `len` writable ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_get_events(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: per the caller.
    unsafe { no_members(cat_index, len, indices) }
}

/// `MPI_T_category_changed`: the categories never change, so the number
/// stays 0.
///
/// # Safety
/// `update_number` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_category_changed(update_number: *mut c_int) -> c_int {
    call(|_| {
        if update_number.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        unsafe { *update_number = 0 };
        SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_has_one_category_and_a_unique_name() {
        let all: Vec<&Entry> = variables().collect();
        let in_categories: usize = (0..CATEGORIES.len()).map(|c| members(c).count()).sum();
        assert_eq!(in_categories, all.len());
        let mut names: Vec<&str> = all.iter().map(|e| e.env).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(members(0).any(|i| all[i].env == "OXMPI_ALLREDUCE_ALGO"));
        assert!(members(0).any(|i| all[i].env == "OXMPI_SHM_COLL_BYTES"));
        assert!(members(1).any(|i| all[i].env == "OXMPI_EAGER_LIMIT"));
    }
}
