//! The driver's state: one process-wide `Mutex` around everything (entry
//! points are short, and kernels run synchronously under it), plus each
//! thread's context stack.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::abi::{code, CUresult};
use crate::kernels::Kernel;
use crate::memory::{FileId, Memory};

/// Most devices `CUDA_DOUBLE_DEVICES` may ask for.
pub(crate) const MAX_DEVICES: i32 = 64;

/// A context: primary (one per device) or made by `cuCtxCreate`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Context {
    /// Its device ordinal.
    pub device: i32,
}

/// A device's primary context.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Primary {
    /// Its handle (always registered in `State::contexts`).
    pub handle: usize,
    /// `cuDevicePrimaryCtxRetain` count.
    pub refs: u32,
    /// `cuDevicePrimaryCtxSetFlags` flags.
    pub flags: u32,
}

/// An event: creation flags and when it was last recorded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    /// `CU_EVENT_*` flags.
    pub flags: u32,
    /// Last `cuEventRecord` (work is synchronous, so it completed then).
    pub recorded: Option<Instant>,
}

/// A loaded module: the `.entry` names its PTX declares.
#[derive(Clone, Debug)]
pub(crate) struct Module {
    /// Entry names, in PTX order.
    pub entries: Vec<String>,
}

/// A function handle: a carried kernel found in a module.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Function {
    /// The module it came from (unloading the module retires it).
    pub module: usize,
    /// The host-compiled kernel.
    pub kernel: &'static Kernel,
}

/// Another process's allocation mapped here by `cuIpcOpenMemHandle`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Import {
    /// Owner pid and the memfd's identity: opening the same handle again
    /// maps nothing new.
    pub key: (u32, FileId),
    /// Opens not yet closed.
    pub refs: u32,
}

/// Everything the driver tracks.
pub(crate) struct State {
    /// Device count; `None` until `cuInit` succeeded.
    pub devices: Option<i32>,
    /// Live contexts by handle.
    pub contexts: BTreeMap<usize, Context>,
    /// Primary contexts, by device ordinal.
    pub primary: Vec<Primary>,
    /// Memory.
    pub mem: Memory,
    /// Streams by handle -> owning context.
    pub streams: BTreeMap<usize, usize>,
    /// Events by handle.
    pub events: BTreeMap<usize, Event>,
    /// Modules by handle.
    pub modules: BTreeMap<usize, Module>,
    /// Functions by handle.
    pub functions: BTreeMap<usize, Function>,
    /// IPC imports by device address.
    pub imports: BTreeMap<usize, Import>,
    last_handle: usize,
}

/// Handles are opaque non-null values, spaced apart and never reused;
/// nothing dereferences them.
const HANDLE_BASE: usize = 0xd0b1_e000_0000;

static STATE: Mutex<State> = Mutex::new(State {
    devices: None,
    contexts: BTreeMap::new(),
    primary: Vec::new(),
    mem: Memory::new(),
    streams: BTreeMap::new(),
    events: BTreeMap::new(),
    modules: BTreeMap::new(),
    functions: BTreeMap::new(),
    imports: BTreeMap::new(),
    last_handle: HANDLE_BASE,
});

thread_local! {
    /// This thread's context stack; the top is the current context.
    static CONTEXT_STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The state, whether or not `cuInit` has run.
pub(crate) fn lock_any() -> MutexGuard<'static, State> {
    // A panic while locked was caught at the boundary; the state is still
    // consistent enough for a test double.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The state, or `NOT_INITIALIZED` before `cuInit`.
pub(crate) fn lock() -> Result<MutexGuard<'static, State>, CUresult> {
    let st = lock_any();
    match st.devices {
        Some(_) => Ok(st),
        None => Err(code::NOT_INITIALIZED),
    }
}

/// Runs `f` on this thread's context stack.
pub(crate) fn with_stack<R>(f: impl FnOnce(&mut Vec<usize>) -> R) -> R {
    CONTEXT_STACK.with(|stack| f(&mut stack.borrow_mut()))
}

impl State {
    /// A fresh opaque handle.
    pub(crate) fn new_handle(&mut self) -> usize {
        self.last_handle += 0x40;
        self.last_handle
    }

    /// Checks a device ordinal (`INVALID_DEVICE`).
    pub(crate) fn check_device(&self, device: i32) -> Result<(), CUresult> {
        match self.devices {
            Some(n) if (0..n).contains(&device) => Ok(()),
            _ => Err(code::INVALID_DEVICE),
        }
    }

    /// The calling thread's current context as `(handle, context)`;
    /// `INVALID_CONTEXT` if there is none or it was destroyed.
    pub(crate) fn current(&self) -> Result<(usize, Context), CUresult> {
        let top = with_stack(|stack| stack.last().copied()).ok_or(code::INVALID_CONTEXT)?;
        let ctx = self.contexts.get(&top).ok_or(code::INVALID_CONTEXT)?;
        Ok((top, *ctx))
    }

    /// Checks a stream handle: the default streams (null, legacy,
    /// per-thread) or one from `cuStreamCreate` (`INVALID_HANDLE`).
    pub(crate) fn check_stream(&self, stream: usize) -> Result<(), CUresult> {
        use crate::abi::{STREAM_LEGACY, STREAM_PER_THREAD};
        if stream == 0
            || stream == STREAM_LEGACY
            || stream == STREAM_PER_THREAD
            || self.streams.contains_key(&stream)
        {
            Ok(())
        } else {
            Err(code::INVALID_HANDLE)
        }
    }
}
