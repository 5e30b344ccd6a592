//! One-sided communication (MPI 4.0 chapter 12) over the runtime's
//! windows (`oxmpi::rma`): memory ([`window`]: `MPI_Alloc_mem`,
//! `MPI_Free_mem`), windows and their attributes, names, error handlers
//! and info ([`window`], [`attrs`], [`keyvals`]), the operations ([`ops`]) and the
//! synchronization calls ([`sync`]). Window handles are direct handles
//! into the state's window table; errors are raised on the window's own
//! error handler (`MPI_ERRORS_ARE_FATAL` until the program sets another).

pub mod attrs;
pub mod keyvals;
pub mod ops;
pub mod sync;
pub mod window;

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use oxmpi::rma::Win;

use crate::errors::AbiError;
use crate::handles::MPI_Win;
use crate::state;

/// Bumped whenever a window handle stops naming its window
/// (`MPI_Win_free`): what each thread's last lookup is checked against.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's last window lookup: (handle, generation, window).
    static LAST: RefCell<Option<(MPI_Win, u64, Win)>> = const { RefCell::new(None) };
}

/// The runtime window a handle names (cloned: no lock is held while it
/// is used). A thread's last lookup is remembered, so the operations of an
/// epoch do not take the state's lock; freeing any window forgets it.
pub(crate) fn win(h: MPI_Win) -> Result<Win, AbiError> {
    let generation = GENERATION.load(Ordering::Acquire);
    let hit = LAST.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(lh, lg, _)| *lh == h && *lg == generation)
            .map(|(_, _, w)| w.clone())
    });
    if let Some(w) = hit.filter(|_| !oxmpi::finalized()) {
        return Ok(w);
    }
    let w = state::lock().win_entry(h).map(|e| e.win.clone())?;
    LAST.with(|last| *last.borrow_mut() = Some((h, generation, w.clone())));
    Ok(w)
}

/// Handle `h` is about to stop naming its window: every thread's
/// remembered lookup becomes stale.
pub(crate) fn forget(h: MPI_Win) {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    LAST.with(|last| {
        if last.borrow().as_ref().is_some_and(|(lh, _, _)| *lh == h) {
            *last.borrow_mut() = None;
        }
    });
}
