#![no_main]
//! See ../harness.rs.

#[path = "../harness.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::agent_proto(data));
