//! Transports, tried in priority order for each peer. `self_` serves a
//! world of one; `shm/` connects ranks on one host; `ofi/` wraps the system
//! libfabric (provider discovery only so far).

pub mod ofi;
mod select;
pub mod self_;
pub mod shm;
pub mod shm_link;
mod traits;

pub use select::connect;
pub use traits::{Caps, MemKind, Transport};
