//! Replays the fuzz seed corpus (`runtime/fuzz/corpus/<target>/`) through the
//! same checks the fuzz targets run, so `cargo test` covers it without a fuzzer.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("corpus entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "corpus file {} fails", path.display());
        count += 1;
    }
    assert!(count > 0, "no corpus files in {}", dir.display());
}

#[test]
fn pmi_wire_corpus() {
    replay("pmi_wire", harness::pmi_wire);
}

#[test]
fn process_mapping_corpus() {
    replay("process_mapping", harness::process_mapping);
}
