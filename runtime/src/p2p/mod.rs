//! Point-to-point messaging: matching of messages to receives, send
//! protocols and requests (see `docs/ARCHITECTURE.md`).

mod bufpool;
pub(crate) mod engine;
pub mod matching;
pub(crate) mod protocol;
pub(crate) mod request;
pub(crate) mod small_copy;
