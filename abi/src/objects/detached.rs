//! Sends that outlive their request handles.

use oxmpi::Request;

/// A send that outlives its handle: a freed active request, or a buffered
/// send with its own copy of the data.
pub struct Detached {
    /// The running operation.
    pub req: Request<'static>,
    /// The data of a buffered send (read by `req` until it completes).
    pub data: Option<Vec<u8>>,
}
