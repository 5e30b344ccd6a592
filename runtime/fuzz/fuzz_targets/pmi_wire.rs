#![no_main]
//! Fuzzes the PMI framings: FrameReader in both modes, the one-message
//! decoders, and encode/decode round trips of whatever decodes.

#[path = "../harness.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::pmi_wire(data));
