//! Helpers shared by the cross-crate integration tests.
