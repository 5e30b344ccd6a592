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

use oxmpi::rma::Win;

use crate::errors::AbiError;
use crate::handles::MPI_Win;
use crate::state;

/// The runtime window a handle names (cloned: no lock is held while it is used).
pub(crate) fn win(h: MPI_Win) -> Result<Win, AbiError> {
    state::lock().win_entry(h).map(|e| e.win.clone())
}
