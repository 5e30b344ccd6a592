//! Transports and the choice of one per peer. `self_` serves a world of
//! one; `shm/` connects ranks on one host; `ofi/` wraps the system
//! libfabric and carries packets between hosts; `router` gives each peer
//! of a multi-host job its endpoint; `select` decides, once, at start.

pub(crate) mod bridge;
pub(crate) mod ofi;
mod router;
mod select;
pub(crate) mod self_;
pub mod shm;
mod traits;

pub(crate) use select::{connect, fabric_config};
pub(crate) use traits::{Caps, RemoteBuf, Transport};
