//! Transports. `ofi/` wraps the system libfabric.

pub mod ofi;
