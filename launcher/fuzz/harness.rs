//! Fuzz bodies shared by the cargo-fuzz targets and by the launcher's
//! `fuzz_corpus` test, which replays every corpus file without a fuzzer.

use oxmpi::bootstrap::wire::{FrameReader, Framing};
use oxmpi_launcher::agent::pmi::{JobFacts, Session, Store};
use oxmpi_launcher::proto::{split_frame, ToAgent, ToController};

/// Controller <-> agent frames: whatever decodes must re-encode to the
/// same frame; nothing may panic or allocate without bound.
pub fn agent_proto(data: &[u8]) {
    let mut rest = data;
    while let Ok(Some((payload, used))) = split_frame(rest) {
        if let Ok(m) = ToAgent::decode(payload) {
            assert_eq!(&m.encode()[4..], payload, "ToAgent round trip");
        }
        if let Ok(m) = ToController::decode(payload) {
            assert_eq!(&m.encode()[4..], payload, "ToController round trip");
        }
        rest = &rest[used..];
    }
}

/// The agent's PMI server fed hostile bytes in uneven chunks: it must
/// answer or report a violation, never panic, and every reply it queues
/// must itself be a well-formed PMI message.
pub fn pmi_server(data: &[u8]) {
    let job = JobFacts {
        jobid: "kvs_1_0".into(),
        size: 4,
        process_mapping: "(vector,(0,1,4))".into(),
    };
    let mut store = Store::default();
    let mut session = Session::new(0);
    let step = 1 + data.first().copied().unwrap_or(0) as usize % 13;
    let mut replies = FrameReader::new();
    for chunk in data.chunks(step) {
        if session.receive(chunk, &job, &mut store).is_err() {
            return;
        }
        if session.in_fence {
            session.release_fence();
        }
        replies.push(&std::mem::take(&mut session.replies));
        check_replies(&mut replies);
    }
}

/// Replies start as PMI-1 lines and switch to PMI-2 framing after a
/// `pmi_version=2` init answer; all queued replies must be complete.
fn check_replies(r: &mut FrameReader) {
    while r.pending() > 0 {
        match r.next_command() {
            Ok(Some(cmd)) if cmd.get("pmi_version") == Some("2") => {
                r.set_framing(Framing::LengthPrefixed)
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("incomplete reply ({} bytes pending)", r.pending()),
            Err(e) => panic!("malformed reply: {e}"),
        }
    }
}
