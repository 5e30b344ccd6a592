//! Transports. `ofi/` wraps the system libfabric.
