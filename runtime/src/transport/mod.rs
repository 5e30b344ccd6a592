//! Transports, tried in priority order for each peer. `self_` serves a
//! world of one; `shm/` connects ranks on one host; `ofi/` wraps the system
//! libfabric (provider discovery only so far).

pub(crate) mod ofi;
mod select;
pub(crate) mod self_;
pub mod shm;
pub(crate) mod shm_link;
mod traits;

pub(crate) use select::connect;
pub(crate) use traits::{Caps, Transport};
