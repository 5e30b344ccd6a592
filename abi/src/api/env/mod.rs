//! Environmental management (MPI 4.0 chapters 9-11 and 13.2): init and
//! finalize, abort, versions, timers, processor name (here); error handlers
//! and codes ([`errh`]), info objects ([`info`]), generalized requests
//! ([`grequest`]).

pub mod errh;
pub mod grequest;
pub mod info;
pub mod session;

use std::ffi::{c_char, c_double, c_int};

use oxmpi::Threading;

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{Errhandler, MPI_Aint, MPI_Comm, SELF_SLOT, WORLD_SLOT};
use crate::raise::guard;
use crate::state::{self, CommEntry, WorldModel};

/// `MPI_MAX_PROCESSOR_NAME`.
const MAX_PROCESSOR_NAME: usize = 128;
/// `MPI_MAX_LIBRARY_VERSION_STRING`.
const MAX_LIBRARY_VERSION_STRING: usize = 8192;

fn threading(level: c_int) -> Threading {
    match level {
        i32::MIN..=0 => Threading::Single,
        1 => Threading::Funneled,
        2 => Threading::Serialized,
        _ => Threading::Multiple,
    }
}

fn init(required: c_int) -> Result<c_int, AbiError> {
    // The runtime supports every level; grant what was asked for.
    let provided = required.clamp(0, 3);
    match state::lock().world_model {
        WorldModel::Never => {}
        WorldModel::Active => {
            return Err(AbiError::new(Class::OTHER, "MPI_Init was already called"));
        }
        WorldModel::Finalized => {
            return Err(AbiError::new(
                Class::OTHER,
                "MPI_Finalize was already called; MPI cannot be initialized again",
            ));
        }
    }
    start_runtime(provided)?;
    let mut st = state::lock();
    let (world, self_comm) = {
        let u = st.check_active()?;
        (u.world(), u.self_comm())
    };
    st.comms.put(
        WORLD_SLOT,
        CommEntry {
            comm: world.clone(),
            errhandler: Errhandler::Fatal,
            name: "MPI_COMM_WORLD".into(),
            info: Vec::new(),
        },
    );
    st.comms.put(
        SELF_SLOT,
        CommEntry {
            comm: self_comm.clone(),
            errhandler: Errhandler::Fatal,
            name: "MPI_COMM_SELF".into(),
            info: Vec::new(),
        },
    );
    state::publish_predefined(&world, &self_comm);
    st.provided = provided;
    st.main_thread = Some(std::thread::current().id());
    st.world_model = WorldModel::Active;
    Ok(provided)
}

/// Starts the runtime unless the World Model or a session already runs
/// it (it starts once per process).
pub(crate) fn start_runtime(level: c_int) -> Result<(), AbiError> {
    // Threads opening sessions at once start it once.
    static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    if state::lock().universe.is_some() {
        return Ok(());
    }
    if oxmpi::finalized() {
        return Err(AbiError::new(
            Class::OTHER,
            "the runtime was finalized (by MPI_Finalize, or by the last MPI_Session_finalize \
             outside the World Model) and cannot start again",
        ));
    }
    let (universe, _) = oxmpi::init_thread(threading(level))?;
    // A spawned process connects to its parents now: they wait for it.
    let parent = oxmpi::dynamic::spawn::parent(&universe)?;
    let mut st = state::lock();
    st.comms.clear();
    st.comms.reserve_below(SELF_SLOT + 1);
    st.universe = Some(universe);
    st.provided = level;
    st.parent = match parent {
        Some(p) => st.insert_comm(p, Errhandler::Fatal),
        None => crate::handles::COMM_NULL,
    };
    Ok(())
}

/// Finalizes the runtime once nothing uses it: the World Model is not
/// active and no session is open.
pub(crate) fn release_runtime() -> Result<(), AbiError> {
    let universe = {
        let mut st = state::lock();
        if st.world_model == WorldModel::Active || st.sessions.iter().next().is_some() {
            return Ok(());
        }
        let Some(u) = st.universe.take() else {
            return Ok(());
        };
        // Requests the program never completed are leaked, not waited
        // for (that could hang); their communicators go with the runtime.
        std::mem::forget(std::mem::take(&mut st.requests));
        state::retract_predefined();
        st.comms.clear();
        st.parent = crate::handles::COMM_NULL;
        u
    };
    universe.finalize()?;
    Ok(())
}

/// `MPI_Init`: command-line arguments are not used.
#[no_mangle]
pub extern "C" fn oxabi_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    guard("MPI_Init", ErrObj::None, || init(0).map(|_| ()))
}

/// `MPI_Init_thread`.
///
/// # Safety
/// `provided` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    guard("MPI_Init_thread", ErrObj::None, || {
        let out = out_ptr(provided, "provided")?;
        let level = init(required)?;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = level };
        Ok(())
    })
}

/// `MPI_Initialized`.
///
/// # Safety
/// `flag` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Initialized(flag: *mut c_int) -> c_int {
    guard("MPI_Initialized", ErrObj::None, || {
        let model = state::lock().world_model;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out_ptr(flag, "flag")? = c_int::from(model != WorldModel::Never) };
        Ok(())
    })
}

/// `MPI_Finalized`.
///
/// # Safety
/// `flag` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Finalized(flag: *mut c_int) -> c_int {
    guard("MPI_Finalized", ErrObj::None, || {
        let model = state::lock().world_model;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out_ptr(flag, "flag")? = c_int::from(model == WorldModel::Finalized) };
        Ok(())
    })
}

/// `MPI_Finalize`: finishes detached sends, then the runtime's finalize
/// (a barrier, and leaving the job).
#[no_mangle]
pub extern "C" fn oxabi_Finalize() -> c_int {
    guard("MPI_Finalize", ErrObj::None, || {
        // MPI's finalize hook: attributes on MPI_COMM_SELF (then WORLD) are
        // deleted first, while MPI is still fully usable, because their
        // delete callbacks may call MPI (mpi4py frees keyvals there).
        let (self_comm, world) = {
            let st = state::lock();
            if st.world_model != WorldModel::Active {
                return Err(AbiError::new(
                    Class::OTHER,
                    "MPI_Finalize: MPI_Init was not called, or MPI_Finalize already was",
                ));
            }
            let u = st.check_active()?;
            (u.self_comm(), u.world())
        };
        self_comm.delete_all_attrs()?;
        world.delete_all_attrs()?;
        let detached = {
            let mut st = state::lock();
            st.check_active()?;
            std::mem::take(&mut st.detached)
        };
        // Dropping a runtime request waits for it.
        drop(detached);
        {
            let mut st = state::lock();
            st.world_model = WorldModel::Finalized;
            state::retract_predefined();
            st.comms.remove(WORLD_SLOT);
            st.comms.remove(SELF_SLOT);
        }
        // Open sessions keep the runtime until the last one is finalized.
        release_runtime()
    })
}

/// `MPI_Abort`: ends every process of the job with `errorcode`.
#[no_mangle]
pub extern "C" fn oxabi_Abort(_comm: MPI_Comm, errorcode: c_int) -> c_int {
    let mut st = state::lock();
    match st.universe.take() {
        Some(u) => {
            let rank = u.world().rank();
            u.abort(
                errorcode,
                &format!("MPI_Abort called by rank {rank} with error code {errorcode}"),
            )
        }
        None => std::process::exit(oxmpi::universe::abort_exit_status(errorcode)),
    }
}

/// `MPI_Query_thread`.
///
/// # Safety
/// `provided` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Query_thread(provided: *mut c_int) -> c_int {
    guard("MPI_Query_thread", ErrObj::None, || {
        let out = out_ptr(provided, "provided")?;
        let level = state::lock().provided;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = level };
        Ok(())
    })
}

/// `MPI_Is_thread_main`.
///
/// # Safety
/// `flag` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Is_thread_main(flag: *mut c_int) -> c_int {
    guard("MPI_Is_thread_main", ErrObj::None, || {
        let out = out_ptr(flag, "flag")?;
        let main = state::lock().main_thread;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = c_int::from(main == Some(std::thread::current().id())) };
        Ok(())
    })
}

/// `MPI_Wtime`.
#[no_mangle]
pub extern "C" fn oxabi_Wtime() -> c_double {
    oxmpi::wtime()
}

/// `MPI_Wtick`.
#[no_mangle]
pub extern "C" fn oxabi_Wtick() -> c_double {
    oxmpi::wtick()
}

/// Copies `s` into a C buffer of `cap` bytes (truncated, NUL-terminated)
/// and stores its length.
///
/// # Safety
/// `dst` is valid for `cap` bytes; `len` for a write.
pub(crate) unsafe fn put_string(
    s: &str,
    dst: *mut c_char,
    cap: usize,
    len: *mut c_int,
) -> Result<(), AbiError> {
    let dst = out_ptr(dst, "name")?;
    let len = out_ptr(len, "resultlen")?;
    let n = s.len().min(cap - 1);
    // SAFETY: n + 1 <= cap bytes, the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst.cast(), n);
        *dst.add(n) = 0;
        *len = n as c_int;
    }
    Ok(())
}

/// `MPI_Get_processor_name`.
///
/// # Safety
/// `name` has `MPI_MAX_PROCESSOR_NAME` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Get_processor_name(
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Get_processor_name", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe {
            put_string(
                &oxmpi::processor_name(),
                name,
                MAX_PROCESSOR_NAME,
                resultlen,
            )
        }
    })
}

/// `MPI_Get_version`: MPI 4.0.
///
/// # Safety
/// Both pointers are valid for a write.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    guard("MPI_Get_version", ErrObj::None, || {
        let (v, s) = (
            out_ptr(version, "version")?,
            out_ptr(subversion, "subversion")?,
        );
        // SAFETY: checked non-null; the caller's contract.
        unsafe {
            *v = 4;
            *s = 0;
        }
        Ok(())
    })
}

/// The text of `MPI_Get_library_version`.
pub fn library_version() -> String {
    format!(
        "OxMPI {} (MPICH 4.0.2 ABI, libmpi.so.12)",
        env!("CARGO_PKG_VERSION")
    )
}

/// `MPI_Get_library_version`.
///
/// # Safety
/// `version` has `MPI_MAX_LIBRARY_VERSION_STRING` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Get_library_version", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe {
            put_string(
                &library_version(),
                version,
                MAX_LIBRARY_VERSION_STRING,
                resultlen,
            )
        }
    })
}

/// `MPI_Pcontrol`: profiling control; nothing to do without a profiler.
#[no_mangle]
pub extern "C" fn oxabi_Pcontrol(_level: c_int) -> c_int {
    0
}

/// `MPI_Aint_add`.
#[no_mangle]
pub extern "C" fn oxabi_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

/// `MPI_Aint_diff`.
#[no_mangle]
pub extern "C" fn oxabi_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}
