//! The C front end's global state: the initialized runtime, and the tables
//! behind direct handles (communicators, requests, error handlers). One
//! mutex guards it all; no call blocks while holding it (blocking calls
//! take what they need out of the tables first).

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use oxmpi::request::Sweep;
use oxmpi::{Comm, Group, Status, Universe};

use crate::errors::{AbiError, Class};
use crate::handles::{self, Errhandler, MPI_Comm, MPI_Datatype, MPI_Request};
use crate::objects::datatype::TypeTable;
use crate::objects::detached::Detached;
use crate::objects::info::InfoEntry;
use crate::objects::request::{PendingIdup, ReqEntry};
use crate::objects::stage::Staged;
use crate::objects::table::Table;

/// A communicator as the C front end sees it.
pub struct CommEntry {
    /// The runtime's communicator.
    pub comm: Comm,
    /// Its error handler.
    pub errhandler: Errhandler,
    /// Its name (`MPI_Comm_set_name`).
    pub name: String,
    /// Hints from `MPI_Comm_set_info` (kept for `MPI_Comm_get_info`; OxMPI
    /// acts on none of them).
    pub info: Vec<(String, String)>,
}

/// A window as the C front end sees it.
pub struct WinEntry {
    /// The runtime's window.
    pub win: oxmpi::rma::Win,
    /// Its error handler (`MPI_ERRORS_ARE_FATAL` at creation, as MPI specifies).
    pub errhandler: Errhandler,
    /// Its name (`MPI_Win_set_name`).
    pub name: String,
    /// Hints given at creation or by `MPI_Win_set_info`.
    pub info: Vec<(String, String)>,
    /// The predefined attributes' values, where `MPI_Win_get_attr` points:
    /// size, displacement unit, create flavor, memory model.
    pub attrs: Box<WinAttrs>,
    /// Values of user keyvals (`MPI_Win_set_attr`), by keyval number.
    pub user_attrs: BTreeMap<i32, usize>,
}

/// The values behind `MPI_WIN_SIZE`, `MPI_WIN_DISP_UNIT`,
/// `MPI_WIN_CREATE_FLAVOR` and `MPI_WIN_MODEL` (the attribute is a pointer
/// to one of them, so they live as long as the window).
pub struct WinAttrs {
    /// `MPI_WIN_BASE`'s value (the base address itself).
    pub base: usize,
    /// `MPI_WIN_SIZE`.
    pub size: handles::MPI_Aint,
    /// `MPI_WIN_DISP_UNIT`.
    pub disp_unit: c_int,
    /// `MPI_WIN_CREATE_FLAVOR`.
    pub flavor: c_int,
    /// `MPI_WIN_MODEL` (always `MPI_WIN_UNIFIED`).
    pub model: c_int,
}

/// An open file as the C front end sees it.
pub struct FileEntry {
    /// The runtime's file.
    pub file: oxmpi::io::File,
    /// Its error handler (`MPI_FILE_NULL`'s when it was opened).
    pub errhandler: Errhandler,
    /// The status of a split collective begun and not yet ended.
    pub split: Option<Result<Status, oxmpi::Error>>,
    /// The view's etype and filetype as the program named them (a derived
    /// one is kept, so `MPI_File_get_view` can hand out a copy after the
    /// program freed it).
    pub view_types: [ViewType; 2],
    /// The view's representation when the program registered it
    /// (`MPI_Register_datarep`): its name.
    pub user_datarep: Option<String>,
}

/// A type of a file view: its handle, and its entry when derived.
pub type ViewType = (MPI_Datatype, Option<crate::objects::datatype::TypeEntry>);

/// `MPI_BYTE`: a new file's etype and filetype.
pub const VIEW_BYTE: MPI_Datatype = 0x4c00_010d;

/// A session (`MPI_Session_init`).
pub struct SessionEntry {
    /// Its error handler.
    pub errhandler: Errhandler,
    /// The hints it was made with (`MPI_Session_get_info`).
    pub info: Vec<(String, String)>,
}

/// Where the World Model (`MPI_Init` .. `MPI_Finalize`) stands; the
/// runtime itself may run for sessions outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldModel {
    /// `MPI_Init` not called yet.
    Never,
    /// Between `MPI_Init` and `MPI_Finalize`.
    Active,
    /// `MPI_Finalize` called.
    Finalized,
}

/// `MPI_Comm_errhandler_function`: `void (*)(MPI_Comm *, int *, ...)`.
pub type CommErrhandlerFn = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);

/// `MPI_File_errhandler_function`: `void (*)(MPI_File *, int *, ...)`.
pub type FileErrhandlerFn = unsafe extern "C" fn(*mut usize, *mut c_int, ...);

/// A user error handler (`MPI_Comm_create_errhandler`).
pub struct UserErrhandler {
    /// The function to call.
    pub func: CommErrhandlerFn,
}

/// `MPI_User_function`: `void (*)(void *invec, void *inoutvec, int *len, MPI_Datatype *type)`.
pub type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);

/// `MPI_User_function_c`: the large-count form (`MPI_Count *len`).
pub type UserFnC =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut handles::MPI_Count, *mut MPI_Datatype);

/// The C function of a user operation.
#[derive(Clone, Copy)]
pub enum UserFunc {
    /// From `MPI_Op_create`.
    Int(UserFn),
    /// From `MPI_Op_create_c`.
    Count(UserFnC),
}

/// A user reduction operation (`MPI_Op_create`, `MPI_Op_create_c`).
#[derive(Clone, Copy)]
pub struct UserOp {
    /// The function.
    pub func: UserFunc,
    /// Whether operands may be reordered.
    pub commute: bool,
}

/// Everything the C front end keeps between calls.
pub struct State {
    /// The runtime, between `MPI_Init` (or the first `MPI_Session_init`)
    /// and `MPI_Finalize` (or the last `MPI_Session_finalize`).
    pub universe: Option<Universe>,
    /// Thread level granted by `MPI_Init_thread`.
    pub provided: c_int,
    /// The thread that initialized the library.
    pub main_thread: Option<ThreadId>,
    /// Communicators: slot 0 `MPI_COMM_WORLD`, 1 `MPI_COMM_SELF`, then user ones.
    pub comms: Table<CommEntry>,
    /// Requests and matched-probe messages.
    pub requests: Table<ReqEntry>,
    /// The table slots of ticket-carrying request handles a call other
    /// than a wait or test gave an entry (`requests::slot_of`).
    pub tickets: BTreeMap<MPI_Request, usize>,
    /// The same, by slot.
    pub ticket_slots: BTreeMap<usize, MPI_Request>,
    /// User error handlers.
    pub errhandlers: Table<UserErrhandler>,
    /// Groups (`MPI_Comm_group` and the group constructors).
    pub groups: Table<Group>,
    /// User reduction operations.
    pub ops: Table<UserOp>,
    /// Derived datatypes (and names of predefined ones).
    pub types: TypeTable,
    /// Info objects.
    pub infos: Table<InfoEntry>,
    /// Temporary buffers of requests with non-contiguous datatypes.
    pub staged: Staged,
    /// Operations still running without a handle.
    pub detached: Vec<Detached>,
    /// The buffer of `MPI_Buffer_attach` (address, size): kept to hand back.
    pub bsend_buffer: Option<(usize, handles::MPI_Count)>,
    /// The communicators of running `MPI_Comm_idup`s, by request slot.
    pub idups: BTreeMap<usize, PendingIdup>,
    /// Windows.
    pub wins: Table<WinEntry>,
    /// Open sessions (the runtime runs while one is open or the World
    /// Model is active).
    pub sessions: Table<SessionEntry>,
    /// The World Model's state (`MPI_Initialized`, `MPI_Finalized`).
    pub world_model: WorldModel,
    /// `MPI_Comm_get_parent`'s answer: the intercommunicator with the
    /// parents of a spawned process until it is freed, else `MPI_COMM_NULL`.
    pub parent: MPI_Comm,
    /// Open files.
    pub files: Table<FileEntry>,
    /// `MPI_FILE_NULL`'s error handler: what files get when opened
    /// (`MPI_ERRORS_RETURN` unless the program sets another).
    pub file_null_errhandler: Errhandler,
}

static STATE: Mutex<State> = Mutex::new(State {
    universe: None,
    provided: 0,
    main_thread: None,
    comms: Table::new(),
    requests: Table::new(),
    tickets: BTreeMap::new(),
    ticket_slots: BTreeMap::new(),
    errhandlers: Table::new(),
    groups: Table::new(),
    ops: Table::new(),
    types: TypeTable::new(),
    infos: Table::new(),
    staged: Staged::new(),
    detached: Vec::new(),
    bsend_buffer: None,
    idups: BTreeMap::new(),
    wins: Table::new(),
    sessions: Table::new(),
    world_model: WorldModel::Never,
    parent: handles::COMM_NULL,
    files: Table::new(),
    file_null_errhandler: Errhandler::Return,
});

/// Locks the state (a panic while it was held does not make it unusable).
pub fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    /// Fails unless the library is between `MPI_Init` and `MPI_Finalize`.
    pub fn check_active(&self) -> Result<&Universe, AbiError> {
        self.universe.as_ref().ok_or_else(not_active)
    }

    /// The communicator a handle names.
    pub fn comm_entry(&self, h: MPI_Comm) -> Result<&CommEntry, AbiError> {
        let slot = handles::comm_slot(h)?;
        self.check_active()?;
        self.comms.get(slot).ok_or_else(|| freed_comm(h))
    }

    /// The communicator a handle names, mutably.
    pub fn comm_entry_mut(&mut self, h: MPI_Comm) -> Result<&mut CommEntry, AbiError> {
        let slot = handles::comm_slot(h)?;
        self.check_active()?;
        self.comms.get_mut(slot).ok_or_else(|| freed_comm(h))
    }

    /// The window a handle names.
    pub fn win_entry(&self, h: handles::MPI_Win) -> Result<&WinEntry, AbiError> {
        let slot = handles::win_slot(h)?;
        self.check_active()?;
        self.wins.get(slot).ok_or_else(|| freed_win(h))
    }

    /// The window a handle names, mutably.
    pub fn win_entry_mut(&mut self, h: handles::MPI_Win) -> Result<&mut WinEntry, AbiError> {
        let slot = handles::win_slot(h)?;
        self.check_active()?;
        self.wins.get_mut(slot).ok_or_else(|| freed_win(h))
    }

    /// Registers a new communicator (e.g. from `MPI_Comm_dup`) and returns
    /// its handle; it starts with `errhandler` (MPI: the parent's).
    pub fn insert_comm(&mut self, comm: Comm, errhandler: Errhandler) -> MPI_Comm {
        // Slots 0 and 1 are the predefined communicators.
        self.comms.reserve_below(handles::SELF_SLOT + 1);
        let slot = self.comms.insert(CommEntry {
            comm,
            errhandler,
            name: String::new(),
            info: Vec::new(),
        });
        handles::comm_handle(slot)
    }

    /// The request in `slot` completed with `r`: unpacks its temporaries
    /// (see [`Staged::complete`]) and gives an `MPI_Comm_idup`'s
    /// communicator its handle, written to the program's `newcomm`.
    pub fn complete_request(
        &mut self,
        slot: usize,
        r: Result<Status, oxmpi::Error>,
    ) -> Result<Status, oxmpi::Error> {
        let r = self.staged.complete(slot, r);
        let Some(idup) = self.idups.remove(&slot) else {
            return r;
        };
        r.and_then(|s| {
            let comm = idup.pending.into_comm()?;
            let errhandler = self
                .comm_entry(idup.parent)
                .map_or(Errhandler::Fatal, |e| e.errhandler);
            let h = self.insert_comm(comm, errhandler);
            // SAFETY: `newcomm` of MPI_Comm_idup, which MPI lets the library
            // write until the request completes (checked non-null then).
            unsafe { *(idup.out as *mut MPI_Comm) = h };
            Ok(s)
        })
    }

    /// Completes whatever detached operations have finished.
    pub fn reap_detached(&mut self) {
        self.reap_detached_in(&mut Sweep::each());
    }

    /// [`State::reap_detached`] within a sweep of the engine.
    #[inline]
    pub fn reap_detached_in(&mut self, sweep: &mut Sweep<'_>) {
        if !self.detached.is_empty() {
            self.detached
                .retain_mut(|d| !matches!(sweep.test(&mut d.req), Ok(Some(_)) | Err(_)));
        }
    }
}

fn not_active() -> AbiError {
    if oxmpi::finalized() {
        AbiError::new(Class::OTHER, "MPI_Finalize has already been called")
    } else {
        AbiError::new(Class::OTHER, "MPI_Init has not been called")
    }
}

fn freed_win(h: handles::MPI_Win) -> AbiError {
    AbiError::new(
        Class(45),
        format!("window {h:#010x} does not exist (freed, or never created)"),
    )
}

fn freed_comm(h: MPI_Comm) -> AbiError {
    AbiError::new(
        Class::COMM,
        format!("communicator {h:#010x} does not exist (freed, or never created)"),
    )
}

/// `MPI_COMM_WORLD` and `MPI_COMM_SELF` for lookups without the lock or
/// thread-local storage (every point-to-point and collective call asks):
/// set by `MPI_Init`, cleared by `MPI_Finalize`. Each points to a copy
/// leaked on purpose (two per `MPI_Init`, which a process calls once), so a
/// thread that read a pointer just before `MPI_Finalize` still holds a live
/// communicator, and a request made on one (`Comm::irecv_raw_static`) may
/// refer to its runtime without a reference count.
static PREDEFINED: [AtomicPtr<Comm>; 2] = [AtomicPtr::new(null_mut()), AtomicPtr::new(null_mut())];

/// Publishes the predefined communicators (`MPI_Init`).
pub fn publish_predefined(world: &Comm, self_comm: &Comm) {
    for (slot, c) in PREDEFINED.iter().zip([world, self_comm]) {
        slot.store(Box::into_raw(Box::new(c.clone())), Ordering::Release);
    }
}

/// Withdraws the predefined communicators (`MPI_Finalize`); later lookups
/// go to the (emptied) table and fail there.
pub fn retract_predefined() {
    for slot in &PREDEFINED {
        slot.store(null_mut(), Ordering::Release);
    }
}

/// Predefined communicator `i` (0 world, 1 self), if published.
#[inline]
fn predefined(i: usize) -> Option<&'static Comm> {
    let p = PREDEFINED[i].load(Ordering::Acquire);
    // SAFETY: published pointers come from `Box::into_raw` and are never freed.
    unsafe { p.as_ref() }
}

/// `MPI_COMM_WORLD` or `MPI_COMM_SELF` while they are published (no lock,
/// no table): what most calls name.
#[inline(always)]
pub fn predefined_comm(h: MPI_Comm) -> Option<&'static Comm> {
    match h {
        handles::COMM_WORLD => predefined(0),
        handles::COMM_SELF => predefined(1),
        _ => None,
    }
}

/// A sweep of the engine for the completion calls: one engine lock and
/// one poll for many requests (bound to no runtime before `MPI_Init` and
/// after `MPI_Finalize`).
#[inline]
pub fn sweep() -> Sweep<'static> {
    predefined_comm(handles::COMM_WORLD).map_or_else(Sweep::each, Comm::sweep)
}

/// The runtime communicator a handle names (cloned, so no lock is held).
pub fn comm(h: MPI_Comm) -> Result<Comm, AbiError> {
    with_comm(h, |c| Ok(c.clone()))
}

/// Runs `f` on the runtime communicator a handle names, without holding
/// the lock (`f` may block). The cheap form of [`comm`] for the calls
/// every program makes per message.
#[inline]
pub fn with_comm<R>(
    h: MPI_Comm,
    f: impl FnOnce(&Comm) -> Result<R, AbiError>,
) -> Result<R, AbiError> {
    if let Some(c) = predefined_comm(h) {
        return f(c);
    }
    let c = lock().comm_entry(h).map(|e| e.comm.clone())?;
    f(&c)
}
