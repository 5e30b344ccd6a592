#![no_main]
//! Fuzzes the `PMI_process_mapping` decoder (and re-encodes what decodes).

#[path = "../harness.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::process_mapping(data));
