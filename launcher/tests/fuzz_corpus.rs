//! Replays the launcher's fuzz corpus (launcher/fuzz/corpus) through the same
//! bodies the fuzz targets run, so `cargo test` exercises them without a fuzzer.

#[path = "../fuzz/harness.rs"]
mod harness;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        body(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "empty corpus in {}", dir.display());
}

#[test]
fn agent_proto_corpus() {
    replay("agent_proto", harness::agent_proto);
}

#[test]
fn pmi_server_corpus() {
    replay("pmi_server", harness::pmi_server);
}
