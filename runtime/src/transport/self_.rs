//! A transport that reaches nobody: the world of a singleton (messages to
//! self never leave the engine).

use std::time::Duration;

use super::{Caps, Transport};
use crate::error::Error;

/// No peers at all.
#[derive(Debug, Default)]
pub struct NoPeers;

impl Transport for NoPeers {
    fn name(&self) -> &'static str {
        "self"
    }
    fn caps(&self) -> Caps {
        Caps::empty()
    }
    fn reaches(&self, _peer: usize) -> bool {
        false
    }
    fn max_packet(&self, _peer: usize) -> usize {
        64 * 1024
    }
    unsafe fn try_send(&self, _peer: usize, _parts: &[&[u8]]) -> bool {
        false
    }
    unsafe fn try_send_with(
        &self,
        _peer: usize,
        _len: usize,
        _fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        false
    }
    unsafe fn poll(&self, _sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        0
    }
    fn can_read_remote(&self, _peer: usize) -> bool {
        false
    }
    fn read_remote(
        &self,
        peer: usize,
        _pid: u32,
        _addr: u64,
        _dst: &mut [u8],
    ) -> Result<(), Error> {
        Err(Error::Unsupported(format!(
            "no transport reaches rank {peer}"
        )))
    }
    fn wait_token(&self) -> u32 {
        0
    }
    fn wait(&self, _token: u32, timeout: Duration) {
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
    }
    fn wake(&self, _peer: usize) {}
}
