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
    LAST.with(|last| {
        // Borrowed only while `with_win` runs a body that looked up another window.
        if let Ok(mut cached) = last.try_borrow_mut() {
            *cached = Some((h, generation, w.clone()));
        }
    });
    Ok(w)
}

/// Runs `f` with the window `h` names, borrowed in place from this
/// thread's last lookup when that is it (no reference-count traffic on
/// the common path of an epoch's operations), else as [`win`] finds it.
pub(crate) fn with_win<R>(
    h: MPI_Win,
    f: impl FnOnce(&Win) -> Result<R, AbiError>,
) -> Result<R, AbiError> {
    let generation = GENERATION.load(Ordering::Acquire);
    let mut f = Some(f);
    if !oxmpi::finalized() {
        let done = LAST.with(|last| {
            let cached = last.try_borrow().ok()?;
            match cached.as_ref() {
                Some((lh, lg, w)) if *lh == h && *lg == generation => f.take().map(|f| f(w)),
                _ => None,
            }
        });
        if let Some(r) = done {
            return r;
        }
    }
    let w = win(h)?;
    (f.take().expect("called at most once"))(&w)
}

/// Runs `f` on the window `h` names when this thread's last lookup was
/// it: the operations' fast paths, with no lock, no reference count and
/// no error to carry (`false`: not cached, or `f` declined; the caller
/// then goes the general way, which reports any error).
#[inline(always)]
pub(crate) fn try_cached(h: MPI_Win, f: impl FnOnce(&Win) -> bool) -> bool {
    if oxmpi::finalized() {
        return false;
    }
    let generation = GENERATION.load(Ordering::Acquire);
    // `try_with`: no panic while the thread's locals are being destroyed.
    LAST.try_with(|last| match last.try_borrow().as_deref() {
        Ok(Some((lh, lg, w))) if *lh == h && *lg == generation => f(w),
        _ => false,
    })
    .unwrap_or(false)
}

/// Handle `h` is about to stop naming its window: every thread's
/// remembered lookup becomes stale.
pub(crate) fn forget(h: MPI_Win) {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    LAST.with(|last| {
        if let Ok(mut cached) = last.try_borrow_mut() {
            if cached.as_ref().is_some_and(|(lh, _, _)| *lh == h) {
                *cached = None;
            }
        }
    });
}
