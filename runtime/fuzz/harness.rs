//! Checks shared by the fuzz targets and by `runtime/tests/wire_corpus.rs`,
//! which replays the seed corpus under plain `cargo test`.
//!
//! Every function must return normally for any input; a panic is a bug.

use oxmpi::bootstrap::mapping;
use oxmpi::bootstrap::wire::{framed, line, Command, FrameReader, Framing, MAX_MESSAGE};

/// Input layout: byte 0 picks the framing (`'1'` lines, `'2'` length-prefixed,
/// anything else: both); the rest is the byte stream from the peer.
pub fn pmi_wire(data: &[u8]) {
    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    match mode {
        b'1' => reader(Framing::Line, stream),
        b'2' => reader(Framing::LengthPrefixed, stream),
        _ => {
            reader(Framing::Line, stream);
            reader(Framing::LengthPrefixed, stream);
        }
    }
    if let Ok(cmd) = line::decode(stream) {
        round_trip(&cmd);
    }
    if let Ok(cmd) = framed::decode(stream) {
        round_trip(&cmd);
    }
    if let Ok(len) = framed::decode_len(&stream[..stream.len().min(6)]) {
        assert!(len <= MAX_MESSAGE);
    }
}

/// Feeds `stream` in uneven chunks and drains every complete message.
fn reader(framing: Framing, stream: &[u8]) {
    let mut r = FrameReader::new();
    r.set_framing(framing);
    let chunk = 1 + stream.len() % 13;
    for piece in stream.chunks(chunk) {
        r.push(piece);
        loop {
            match r.next_command() {
                Ok(Some(cmd)) => round_trip(&cmd),
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// Whatever decodes must survive encode -> decode unchanged in each framing
/// that can encode it.
fn round_trip(cmd: &Command) {
    if let Ok(bytes) = line::encode(cmd) {
        assert_eq!(line::decode(&bytes).as_ref(), Ok(cmd), "PMI-1 round trip");
    }
    if let Ok(bytes) = framed::encode(cmd) {
        let mut r = FrameReader::new();
        r.set_framing(Framing::LengthPrefixed);
        r.push(&bytes);
        assert_eq!(
            r.next_command().as_ref(),
            Ok(&Some(cmd.clone())),
            "PMI-2 round trip"
        );
        assert_eq!(r.pending(), 0);
    }
}

/// Input layout: bytes 0..2 are the job size (little endian, so at most
/// 65535); the rest is the mapping text.
pub fn process_mapping(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let size = u16::from_le_bytes([data[0], data[1]]) as usize;
    let Ok(text) = std::str::from_utf8(&data[2..]) else {
        return;
    };
    let Ok(nodes) = mapping::decode(text, size) else {
        return;
    };
    assert_eq!(nodes.len(), size);
    let again = mapping::encode(&nodes);
    assert_eq!(
        mapping::decode(&again, size).as_ref(),
        Ok(&nodes),
        "{again}"
    );
}
