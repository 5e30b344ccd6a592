//! Point-to-point messaging: matching of messages to receives, send
//! protocols and requests (see `docs/ARCHITECTURE.md`).

pub mod engine;
pub mod matching;
pub mod protocol;
pub mod request;
