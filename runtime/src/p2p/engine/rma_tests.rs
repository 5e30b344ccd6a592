//! Rendezvous by RMA read, engine side, over a loopback transport that
//! offers reads (one process: a read copies from the exposed address):
//! the Rts carries the exposure, the receiver reads and answers Fin, and
//! every path ends the exposure: Fin, a Cts from a receiver that cannot
//! read (typed), and a failed read that falls back to a stream.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Engine;
use crate::datatype::{BasicType, Cursor, Datatype};
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::protocol::{self, Kind, Packet, FLAG_RMA};
use crate::p2p::request::ReqId;
use crate::status::Status;
use crate::transport::{Caps, RemoteBuf, Transport};

const EAGER_LIMIT: usize = 100;
const MAX_PACKET: usize = 256;

type Done = Vec<(u64, Result<usize, Error>)>;

/// What both ends share.
#[derive(Default)]
struct Net {
    queues: Mutex<[VecDeque<Vec<u8>>; 2]>,
    /// Kinds and flags of the packets sent, in order.
    log: Mutex<Vec<(Kind, u8)>>,
    /// Exposures: token (the key), address, length.
    exposed: Mutex<Vec<(u64, usize, usize)>>,
    /// Finished reads, per reader.
    done: Mutex<[Done; 2]>,
    fail_reads: bool,
}

struct End {
    me: usize,
    net: Arc<Net>,
}

impl Transport for End {
    fn name(&self) -> &'static str {
        "rma-loop"
    }
    fn caps(&self) -> Caps {
        Caps::INTER_HOST
    }
    fn reaches(&self, _peer: usize) -> bool {
        true
    }
    fn max_packet(&self, _peer: usize) -> usize {
        MAX_PACKET
    }
    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        let packet = parts.concat();
        let entry = match protocol::decode(&packet) {
            Some(Packet::Msg(h, _)) => (h.kind, h.flags),
            Some(Packet::Ctrl { kind, .. }) => (kind, 0),
            Some(Packet::Data { .. }) => (Kind::Data, 0),
            _ => (Kind::Cont, 0),
        };
        self.net.log.lock().unwrap().push(entry);
        self.net.queues.lock().unwrap()[peer].push_back(packet);
        true
    }
    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        let mut packet = vec![0u8; len];
        fill(&mut packet);
        // SAFETY: as the caller's.
        unsafe { self.try_send(peer, &[&packet]) }
    }
    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        let mut n = 0;
        loop {
            let packet = self.net.queues.lock().unwrap()[self.me].pop_front();
            let Some(packet) = packet else { return n };
            sink(1 - self.me, &packet);
            n += 1;
        }
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
        Err(Error::Unsupported(format!("no CMA with rank {peer}")))
    }
    fn offers_read(&self, _peer: usize) -> bool {
        true
    }
    unsafe fn expose(
        &self,
        _peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        self.net
            .exposed
            .lock()
            .unwrap()
            .push((token, buf as usize, len));
        Ok(RemoteBuf {
            addr: buf as u64,
            key: token,
        })
    }
    unsafe fn conceal(&self, _peer: usize, token: u64) {
        self.net.exposed.lock().unwrap().retain(|e| e.0 != token);
    }
    unsafe fn post_read(
        &self,
        _peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        let exposed = self.net.exposed.lock().unwrap();
        let found = exposed
            .iter()
            .find(|e| e.0 == remote.key && e.1 as u64 == remote.addr && len <= e.2);
        let outcome = match found {
            Some(_) if !self.net.fail_reads => {
                // SAFETY: one process; the sender keeps the exposed buffer
                // until it is concealed, the receiver its own until done.
                unsafe { std::ptr::copy_nonoverlapping(remote.addr as *const u8, buf, len) };
                Ok(len)
            }
            _ => Err(Error::Unsupported("the read failed".into())),
        };
        self.net.done.lock().unwrap()[self.me].push((token, outcome));
        Ok(())
    }
    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        let finished = std::mem::take(&mut self.net.done.lock().unwrap()[self.me]);
        for (token, outcome) in finished {
            done(token, outcome);
        }
    }
    fn wait_token(&self) -> u32 {
        0
    }
    fn wait(&self, _token: u32, _timeout: Duration) {}
    fn wake(&self, _peer: usize) {}
}

fn pair(fail_reads: bool) -> (Engine, Engine, Arc<Net>) {
    let net = Arc::new(Net {
        fail_reads,
        ..Net::default()
    });
    let mk = |me| {
        let end = End {
            me,
            net: Arc::clone(&net),
        };
        Engine::new(me, 2, Arc::new(end), EAGER_LIMIT)
    };
    (mk(0), mk(1), net)
}

fn tag5() -> Pattern {
    Pattern {
        context: 7,
        source: SourceSel::Any,
        tag: TagSel::Tag(5),
    }
}

/// Progresses both engines until send `s` and receive `r` finish.
fn finish(a: &mut Engine, b: &mut Engine, s: ReqId, r: ReqId) -> Result<Status, Error> {
    let (mut sent, mut got) = (None, None);
    for _ in 0..100_000 {
        a.progress();
        b.progress();
        sent = sent.or_else(|| a.reqs.take_finished(s));
        got = got.or_else(|| b.reqs.take_finished(r));
        if sent.is_none() || got.is_none() {
            continue;
        }
        if let (Some(sent), Some(got)) = (sent.take(), got.take()) {
            sent.expect("the send");
            return got;
        }
    }
    panic!("the transfer never finished");
}

fn kinds(net: &Net, kind: Kind) -> usize {
    net.log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.0 == kind)
        .count()
}

#[test]
fn the_receiver_reads_the_exposed_buffer_and_fin_ends_the_exposure() {
    let data: Vec<u8> = (0..5000).map(|i| (i % 241) as u8).collect();
    // The receive posted first, then the offer arriving unexpected (its
    // description kept until the receive comes), then a receive that
    // has room for part of it only.
    for (late, cap) in [(false, 5000), (true, 5000), (false, 1234)] {
        let (mut a, mut b, net) = pair(false);
        let mut dst = vec![0u8; cap];
        // SAFETY: `data` and `dst` outlive the transfer.
        let post = |b: &mut Engine, dst: &mut Vec<u8>| unsafe {
            b.start_recv(tag5(), dst.as_mut_ptr(), dst.len())
        };
        let early = (!late).then(|| post(&mut b, &mut dst));
        let s = unsafe { a.start_send(1, 7, 0, 5, data.as_ptr(), data.len(), false) }
            .expect("a rendezvous send");
        assert_eq!(net.exposed.lock().unwrap().len(), 1);
        if late {
            b.progress();
        }
        let r = early.unwrap_or_else(|| post(&mut b, &mut dst));
        let st = finish(&mut a, &mut b, s, r).expect("received");
        assert_eq!(st.count, cap);
        assert_eq!(st.truncated_from, (cap < data.len()).then_some(data.len()));
        assert_eq!(dst[..], data[..cap]);
        let log = net.log.lock().unwrap().clone();
        assert!(log.contains(&(Kind::Rts, FLAG_RMA)), "{log:?}");
        assert_eq!((kinds(&net, Kind::Cts), kinds(&net, Kind::Data)), (0, 0));
        assert_eq!(kinds(&net, Kind::Fin), 1);
        assert!(net.exposed.lock().unwrap().is_empty(), "exposure ended");
        assert!(!a.busy() && !b.busy());
    }
}

#[test]
fn a_receiver_that_cannot_read_answers_cts_which_ends_the_exposure() {
    let (mut a, mut b, net) = pair(false);
    let n = 700;
    let data: Vec<u8> = (0..n * 8).map(|i| (i % 251) as u8).collect();
    // Every other f64: not one run, so no read.
    let dt = Datatype::vector(n as isize, 1, 2, &Datatype::basic(BasicType::Double)).unwrap();
    dt.commit();
    let mut wide = vec![0u8; 2 * n * 8];
    // SAFETY: `data` and `wide` outlive the transfer.
    let (r, s) = unsafe {
        let cur = Cursor::new(&dt, wide.as_mut_ptr(), 1).unwrap();
        let r = b.start_recv_typed(tag5(), cur);
        let s = a.start_send(1, 7, 0, 5, data.as_ptr(), data.len(), false);
        (r, s.expect("a rendezvous send"))
    };
    finish(&mut a, &mut b, s, r).expect("received");
    for i in 0..n {
        assert_eq!(
            wide[16 * i..16 * i + 8],
            data[8 * i..8 * i + 8],
            "element {i}"
        );
    }
    assert_eq!(kinds(&net, Kind::Cts), 1);
    assert!(kinds(&net, Kind::Data) > 0, "streamed");
    assert!(net.exposed.lock().unwrap().is_empty(), "exposure ended");
}

#[test]
fn a_failed_read_falls_back_to_a_stream() {
    let (mut a, mut b, net) = pair(true);
    let data: Vec<u8> = (0..3000).map(|i| (i % 239) as u8).collect();
    let mut dst = vec![0u8; data.len()];
    // SAFETY: `data` and `dst` outlive the transfer.
    let (r, s) = unsafe {
        let r = b.start_recv(tag5(), dst.as_mut_ptr(), dst.len());
        let s = a.start_send(1, 7, 0, 5, data.as_ptr(), data.len(), false);
        (r, s.expect("a rendezvous send"))
    };
    let st = finish(&mut a, &mut b, s, r).expect("received");
    assert_eq!(st.count, data.len());
    assert_eq!(dst, data);
    assert_eq!((kinds(&net, Kind::Cts), kinds(&net, Kind::Fin)), (1, 0));
    assert!(kinds(&net, Kind::Data) > 0, "streamed");
    assert!(net.exposed.lock().unwrap().is_empty(), "exposure ended");
}
