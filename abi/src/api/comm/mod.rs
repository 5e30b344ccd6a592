//! Communicators for the C front end: queries (rank, size, names,
//! compare, group), the constructors (dup, split, split_type, create,
//! create_group), free; the intercommunicator calls are in [`inter`].
//! Groups, attributes (caching) and their keyvals: MPI 4.0 chapter 7, with
//! this.

pub mod attr;
pub mod dynamic;
pub mod group;
pub mod inter;
pub mod spawn;
pub mod type_attr;

use std::ffi::{c_char, c_int, CStr};

use oxmpi::machine::HwLevel;
use oxmpi::{Comm, Comparison, SplitType};

use crate::api::comm::group::{group_of, insert_group};
use crate::api::env::put_string;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, Errhandler, MPI_Comm, MPI_Group, MPI_Request, COMM_NULL, INFO_NULL, UNDEFINED,
};
use crate::objects::request::{PendingIdup, ReqEntry};
use crate::raise::guard;
use crate::{requests, state};

/// `MPI_MAX_OBJECT_NAME`.
const MAX_OBJECT_NAME: usize = 128;

/// `MPI_Comm_rank`.
///
/// # Safety
/// `rank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
    guard("MPI_Comm_rank", ErrObj::Comm(comm), || {
        let out = out_ptr(rank, "rank")?;
        let r = state::lock().comm_entry(comm)?.comm.rank();
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Comm_size`.
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_size", ErrObj::Comm(comm), || {
        let out = out_ptr(size, "size")?;
        let n = state::lock().comm_entry(comm)?.comm.size();
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Comm_get_name`.
///
/// # Safety
/// `comm_name` has `MPI_MAX_OBJECT_NAME` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_name", ErrObj::Comm(comm), || {
        let name = state::lock().comm_entry(comm)?.name.clone();
        // SAFETY: the caller's contract.
        unsafe { put_string(&name, comm_name, MAX_OBJECT_NAME, resultlen) }
    })
}

/// `MPI_Comm_set_name` (names longer than `MPI_MAX_OBJECT_NAME - 1` bytes are cut).
///
/// # Safety
/// `comm_name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> c_int {
    guard("MPI_Comm_set_name", ErrObj::Comm(comm), || {
        if comm_name.is_null() {
            return Err(AbiError::new(Class::ARG, "`comm_name` is a null pointer"));
        }
        // SAFETY: non-null, NUL-terminated: the caller's contract.
        let bytes = unsafe { CStr::from_ptr(comm_name) }.to_bytes();
        let bytes = &bytes[..bytes.len().min(MAX_OBJECT_NAME - 1)];
        let name = String::from_utf8_lossy(bytes).into_owned();
        state::lock().comm_entry_mut(comm)?.name = name;
        Ok(())
    })
}

// ------------------------------------------------------------ constructors

/// Registers `new` (a communicator made from `parent`, or `None` on ranks
/// left out) and writes its handle, or `MPI_COMM_NULL`, to `out`. The new
/// communicator starts with the parent's error handler, as MPI specifies.
///
/// # Safety
/// `out` is writable (checked non-null by the caller).
pub(crate) unsafe fn put_new(parent: MPI_Comm, new: Option<Comm>, out: *mut MPI_Comm) {
    let h = match new {
        Some(c) => {
            let mut st = state::lock();
            let errhandler = st
                .comm_entry(parent)
                .map_or(Errhandler::Fatal, |e| e.errhandler);
            st.insert_comm(c, errhandler)
        }
        None => COMM_NULL,
    };
    // SAFETY: the caller's contract.
    unsafe { *out = h };
}

/// `MPI_Comm_dup`: attributes are copied through their keyvals' copy
/// callbacks; the name is not copied.
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    guard("MPI_Comm_dup", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let new = state::comm(comm)?.dup()?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, Some(new), out) };
        Ok(())
    })
}

/// `MPI_Comm_dup_with_info`: as `MPI_Comm_dup` (no info key changes what
/// OxMPI does with a communicator).
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_dup_with_info(
    comm: MPI_Comm,
    _info: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_dup_with_info", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let new = state::comm(comm)?.dup()?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, Some(new), out) };
        Ok(())
    })
}

/// Starts a non-blocking dup: the new handle is written to `newcomm`
/// when the request completes.
///
/// # Safety
/// `newcomm` and `request` are writable (checked non-null).
unsafe fn idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), AbiError> {
    let out = out_ptr(newcomm, "newcomm")?;
    let req = out_ptr(request, "request")?;
    let (r, pending) = state::comm(comm)?.idup()?;
    let h = requests::insert(ReqEntry::Active { req: Some(r), comm });
    let slot = handles::request_slot(h)?.expect("a new request is not MPI_REQUEST_NULL");
    state::lock().idups.insert(
        slot,
        PendingIdup {
            pending,
            out: out as usize,
            parent: comm,
        },
    );
    // SAFETY: checked non-null.
    unsafe { *req = h };
    Ok(())
}

/// `MPI_Comm_idup`: the context ids are agreed in the background; the
/// new communicator's handle is written to `newcomm` when the request
/// completes. Attributes are copied at the call.
///
/// # Safety
/// `newcomm` and `request` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    guard("MPI_Comm_idup", ErrObj::Comm(comm), || unsafe {
        idup(comm, newcomm, request)
    })
}

/// `MPI_Comm_idup_with_info`: as `MPI_Comm_idup`.
///
/// # Safety
/// `newcomm` and `request` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_idup_with_info(
    comm: MPI_Comm,
    _info: c_int,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    guard("MPI_Comm_idup_with_info", ErrObj::Comm(comm), || unsafe {
        idup(comm, newcomm, request)
    })
}

/// `MPI_Comm_split`: `MPI_UNDEFINED` as color gives `MPI_COMM_NULL`.
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_split", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let new = state::comm(comm)?.split(color, key)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, new, out) };
        Ok(())
    })
}

/// `MPI_COMM_TYPE_SHARED`.
const COMM_TYPE_SHARED: c_int = 1;
/// `MPI_COMM_TYPE_HW_GUIDED`.
const COMM_TYPE_HW_GUIDED: c_int = 2;
/// `MPI_COMM_TYPE_HW_UNGUIDED`.
const COMM_TYPE_HW_UNGUIDED: c_int = 3;
/// The info key naming a hardware level.
const HW_RESOURCE_TYPE: &str = "mpi_hw_resource_type";

/// The hardware level `info` asks for (`mpi_hw_resource_type`): `None`
/// when the key is missing or names a level OxMPI does not know, which
/// gives the process `MPI_COMM_NULL`.
fn guided_level(info: c_int) -> Result<Option<HwLevel>, AbiError> {
    if info == handles::INFO_NULL {
        return Ok(None);
    }
    let hints = crate::api::env::info::read(info)?;
    Ok(hints
        .pairs
        .iter()
        .find(|(k, _)| k == HW_RESOURCE_TYPE)
        .and_then(|(_, v)| HwLevel::from_name(v)))
}

/// `MPI_Comm_split_type` (MPI 4.0, section 7.4.2): `MPI_COMM_TYPE_SHARED`
/// (the ranks of this node), `MPI_COMM_TYPE_HW_GUIDED` (the ranks in this
/// process's object of the level `mpi_hw_resource_type` names:
/// `mpi_shared_memory`, or hwloc's `Package`, `NUMANode`, `L3Cache`,
/// `L2Cache`, `L1Cache`, `Core`, `PU`), `MPI_COMM_TYPE_HW_UNGUIDED` (the
/// first level, largest objects first, that gives a strict subset) and
/// `MPI_UNDEFINED`. A process outside any object of the level gets
/// `MPI_COMM_NULL`; a new communicator of a hardware split has
/// `mpi_hw_resource_type` in its info.
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_split_type", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let (new, level) = match split_type {
            COMM_TYPE_SHARED => (c.split_type(SplitType::Shared, key)?, None),
            UNDEFINED => (c.split_type(SplitType::Undefined, key)?, None),
            COMM_TYPE_HW_GUIDED => match guided_level(info)? {
                Some(l) => (c.split_type(SplitType::Hardware(l), key)?, Some(l)),
                None => (c.split_type(SplitType::Undefined, key)?, None),
            },
            COMM_TYPE_HW_UNGUIDED => match c.split_hw_unguided(key)? {
                Some((new, l)) => (Some(new), Some(l)),
                None => (None, None),
            },
            _ => {
                return Err(AbiError::new(
                    Class::ARG,
                    format!(
                        "`split_type` {split_type} is not supported: OxMPI splits by \
                         MPI_COMM_TYPE_SHARED ({COMM_TYPE_SHARED}), MPI_COMM_TYPE_HW_GUIDED \
                         ({COMM_TYPE_HW_GUIDED}), MPI_COMM_TYPE_HW_UNGUIDED \
                         ({COMM_TYPE_HW_UNGUIDED}) or MPI_UNDEFINED"
                    ),
                ))
            }
        };
        // SAFETY: checked non-null.
        unsafe { put_new(comm, new, out) };
        if let Some(l) = level {
            // SAFETY: written just above.
            let h = unsafe { *out };
            if h != COMM_NULL {
                state::lock().comm_entry_mut(h)?.info =
                    vec![(HW_RESOURCE_TYPE.into(), l.name().into())];
                // An unguided split says in the caller's info which level it
                // chose (MPI 4.0, 7.4.2), as MPICH does.
                if split_type == COMM_TYPE_HW_UNGUIDED && info != INFO_NULL {
                    crate::api::env::info::set_key(info, HW_RESOURCE_TYPE, l.name())?;
                }
            }
        }
        Ok(())
    })
}

/// `MPI_Comm_create`: ranks outside `group` get `MPI_COMM_NULL`.
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_create", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let g = group_of(group)?;
        let new = c.create(&g)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, new, out) };
        Ok(())
    })
}

/// `MPI_Comm_create_group`: collective over `group` only (its members
/// agree on the context ids among themselves, over `comm` with `tag`); a
/// process outside `group` gets `MPI_COMM_NULL`.
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_create_group", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let g = group_of(group)?;
        let new = c.create_group(&g, tag)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, new, out) };
        Ok(())
    })
}

/// Frees the communicator `*comm` and sets it to `MPI_COMM_NULL`: its
/// attributes are deleted (delete callbacks see the handle still valid).
///
/// # Safety
/// `comm` is readable and writable.
unsafe fn free(comm: *mut MPI_Comm) -> Result<(), AbiError> {
    let p = out_ptr(comm, "comm")?;
    // SAFETY: checked non-null.
    let h = unsafe { *p };
    let c = state::comm(h)?;
    if c.is_predefined() {
        let name = state::lock().comm_entry(h)?.name.clone();
        return Err(AbiError::new(
            Class::COMM,
            format!("{name} is predefined and cannot be freed"),
        ));
    }
    let result = c.free();
    let slot = handles::comm_slot(h)?;
    let mut st = state::lock();
    st.comms.remove(slot);
    if st.parent == h {
        st.parent = COMM_NULL;
    }
    drop(st);
    // SAFETY: checked non-null.
    unsafe { *p = COMM_NULL };
    result.map_err(AbiError::from)
}

/// `MPI_Comm_free`.
///
/// # Safety
/// `comm` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_free(comm: *mut MPI_Comm) -> c_int {
    let h = if comm.is_null() {
        COMM_NULL
    } else {
        unsafe { *comm }
    };
    // SAFETY: the caller's contract.
    guard("MPI_Comm_free", ErrObj::Comm(h), || unsafe { free(comm) })
}

/// `MPI_Comm_disconnect`: waits for the operations started on the
/// communicator to finish (their requests keep the outcomes), then frees it.
///
/// # Safety
/// `comm` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_disconnect(comm: *mut MPI_Comm) -> c_int {
    let h = if comm.is_null() {
        COMM_NULL
    } else {
        unsafe { *comm }
    };
    guard("MPI_Comm_disconnect", ErrObj::Comm(h), || {
        if h != COMM_NULL && !state::comm(h)?.is_predefined() {
            finish_pending(h);
        }
        // SAFETY: the caller's contract.
        unsafe { free(comm) }
    })
}

/// Drives progress until every request started on `h` has finished; the
/// outcomes stay in the requests, for the program's own wait or test
/// (`MPI_Comm_disconnect` waits for the pending communication on the
/// communicator to complete internally).
fn finish_pending(h: MPI_Comm) {
    loop {
        let done = {
            let mut st = state::lock();
            let mut sweep = state::sweep();
            let slots: Vec<usize> = st
                .requests
                .iter()
                .filter(|(_, e)| e.comm() == h)
                .map(|(slot, _)| slot)
                .collect();
            slots.into_iter().all(|slot| {
                st.requests
                    .get_mut(slot)
                    .is_none_or(|e| e.settled(&mut sweep))
            })
        };
        if done {
            return;
        }
        std::thread::yield_now();
    }
}

// ---------------------------------------------------------------- queries

/// `MPI_Comm_compare`.
///
/// # Safety
/// `result` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_compare(
    comm1: MPI_Comm,
    comm2: MPI_Comm,
    result: *mut c_int,
) -> c_int {
    guard("MPI_Comm_compare", ErrObj::Comm(comm1), || {
        let out = out_ptr(result, "result")?;
        let a = state::comm(comm1).map_err(|e| e.on(ErrObj::Comm(comm1)))?;
        let b = state::comm(comm2)?;
        let r = if comm1 == comm2 {
            Comparison::Ident
        } else {
            a.compare(&b)
        };
        // SAFETY: checked non-null.
        unsafe { *out = r as c_int };
        Ok(())
    })
}

/// `MPI_Comm_group`.
///
/// # Safety
/// `group` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    guard("MPI_Comm_group", ErrObj::Comm(comm), || {
        let out = out_ptr(group, "group")?;
        let g = state::comm(comm)?.group();
        // SAFETY: checked non-null.
        unsafe { *out = insert_group(g) };
        Ok(())
    })
}

/// `MPI_Comm_get_parent`: `MPI_COMM_NULL` (no dynamic processes).
///
/// # Safety
/// `parent` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
    guard("MPI_Comm_get_parent", ErrObj::None, || {
        let out = out_ptr(parent, "parent")?;
        let st = state::lock();
        st.check_active()?;
        // SAFETY: checked non-null.
        unsafe { *out = st.parent };
        Ok(())
    })
}

/// `MPI_Comm_set_info`: the hints replace those of the same keys (others
/// stay); OxMPI acts on none of them but `MPI_Comm_get_info` gives them
/// back. `MPI_INFO_NULL` changes nothing.
#[no_mangle]
pub extern "C" fn oxabi_Comm_set_info(comm: MPI_Comm, info: c_int) -> c_int {
    guard("MPI_Comm_set_info", ErrObj::Comm(comm), || {
        state::comm(comm)?;
        if info == handles::INFO_NULL {
            return Ok(());
        }
        let hints = crate::api::env::info::read(info)?;
        let mut st = state::lock();
        let kept = &mut st.comm_entry_mut(comm)?.info;
        for (k, v) in hints.pairs {
            match kept.iter_mut().find(|(key, _)| *key == k) {
                Some(pair) => pair.1 = v,
                None => kept.push((k, v)),
            }
        }
        Ok(())
    })
}

/// `MPI_Comm_get_info`: a new info object with the hints set so far.
///
/// # Safety
/// `info_used` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_info(comm: MPI_Comm, info_used: *mut c_int) -> c_int {
    guard("MPI_Comm_get_info", ErrObj::Comm(comm), || {
        let out = out_ptr(info_used, "info_used")?;
        let pairs = state::lock().comm_entry(comm)?.info.clone();
        let h = crate::api::env::info::store(crate::objects::info::InfoEntry { pairs });
        // SAFETY: checked non-null.
        unsafe { *out = h };
        Ok(())
    })
}
