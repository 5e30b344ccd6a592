//! How a rank learns who it is: PMI wire formats and clients, singleton start.

pub mod mapping;
pub mod wire;
