//! Two engines in one process over a loopback transport with tiny
//! packets (payloads of 35 (27 for a synchronous send) in a message's
//! first packet, 51 in the rest, 43 in streamed data: every packet
//! boundary falls inside a run, most inside a basic element) and short queues (so packets
//! wait in the engine's per-peer queue): typed sends and receives against
//! each other and against contiguous buffers, eager and rendezvous (CMA
//! scatter reads or streams), posted and unexpected, synchronous,
//! wildcard and truncated.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Engine;
use crate::datatype::{BasicType, Cursor, Datatype};
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::protocol::{self, Kind, Packet, FLAG_PACKED};
use crate::p2p::request::ReqId;
use crate::status::Status;
use crate::transport::{Caps, Transport};

const MAX_PACKET: usize = protocol::MSG_HEADER + 11;
const EAGER_LIMIT: usize = 700;

/// What both ends share: a queue per destination and what went through.
#[derive(Default)]
struct Wire {
    queues: Mutex<[VecDeque<Vec<u8>>; 2]>,
    /// Kinds (and Rts flags) of the packets sent, in order.
    log: Mutex<Vec<(Kind, u8)>>,
    scatter_reads: AtomicUsize,
}

struct Loop {
    me: usize,
    wire: Arc<Wire>,
    /// Packets a queue holds before the sender must wait.
    room: usize,
    cma: bool,
    /// `stop_poll` was called during the poll.
    stop: std::sync::atomic::AtomicBool,
}

impl Loop {
    fn send(&self, peer: usize, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        assert!(len <= MAX_PACKET, "a {len}-byte packet");
        let mut q = self.wire.queues.lock().unwrap();
        if q[peer].len() >= self.room {
            return false;
        }
        let mut packet = vec![0u8; len];
        fill(&mut packet);
        if let Some(Packet::Msg(h, _)) = protocol::decode(&packet) {
            self.wire.log.lock().unwrap().push((h.kind, h.flags));
        } else if let Some(&k) = packet.first() {
            let kind = [
                Kind::Cont,
                Kind::Fin,
                Kind::Ack,
                Kind::Cts,
                Kind::Data,
                Kind::Credit,
            ]
            .into_iter()
            .find(|&x| x as u8 == k)
            .unwrap_or(Kind::Wrote);
            self.wire.log.lock().unwrap().push((kind, 0));
        }
        q[peer].push_back(packet);
        true
    }
}

impl Transport for Loop {
    fn name(&self) -> &'static str {
        "loop"
    }
    fn caps(&self) -> Caps {
        if self.cma {
            Caps::REMOTE_READ
        } else {
            Caps::empty()
        }
    }
    fn reaches(&self, _peer: usize) -> bool {
        true
    }
    fn max_packet(&self, _peer: usize) -> usize {
        MAX_PACKET
    }
    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        let len = parts.iter().map(|p| p.len()).sum();
        self.send(peer, len, &mut |out| {
            let mut at = 0;
            for p in parts {
                out[at..at + p.len()].copy_from_slice(p);
                at += p.len();
            }
        })
    }
    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        self.send(peer, len, fill)
    }
    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        let mut n = 0;
        self.stop.store(false, Relaxed);
        loop {
            if self.stop.load(Relaxed) {
                return n;
            }
            let packet = self.wire.queues.lock().unwrap()[self.me].pop_front();
            let Some(packet) = packet else { return n };
            sink(1 - self.me, &packet);
            n += 1;
        }
    }
    fn can_read_remote(&self, _peer: usize) -> bool {
        self.cma
    }
    fn read_remote(&self, _peer: usize, _pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), Error> {
        // One process: the sender's buffer is ours to read.
        // SAFETY: the sending engine keeps its buffer alive until Fin.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
    unsafe fn read_remote_scatter(
        &self,
        _peer: usize,
        _pid: u32,
        addr: u64,
        local: &[(usize, usize)],
    ) -> Result<(), Error> {
        assert!(local.len() <= 1024, "{} iovecs in one call", local.len());
        self.wire.scatter_reads.fetch_add(1, Relaxed);
        let mut from = addr as usize;
        for &(to, n) in local {
            // SAFETY: as in `read_remote`; the runs are the receive's.
            unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, n) };
            from += n;
        }
        Ok(())
    }
    fn stop_poll(&self) {
        self.stop.store(true, Relaxed);
    }
    fn wait_token(&self) -> u32 {
        0
    }
    fn wait(&self, _token: u32, _timeout: Duration) {}
    fn wake(&self, _peer: usize) {}
}

/// Engines 0 (sender) and 1 (receiver) over one wire.
fn pair(cma: bool, protocol: &str) -> (Engine, Engine, Arc<Wire>) {
    let wire = Arc::new(Wire::default());
    let mk = |me| {
        let t = Loop {
            me,
            wire: Arc::clone(&wire),
            room: 3,
            cma,
            stop: Default::default(),
        };
        let mut e = Engine::new(me, 2, Arc::new(t), EAGER_LIMIT);
        e.set_rndv_protocol(protocol);
        e
    };
    (mk(0), mk(1), wire)
}

fn run_until(
    a: &mut Engine,
    b: &mut Engine,
    mut done: impl FnMut(&mut Engine, &mut Engine) -> bool,
) {
    for _ in 0..100_000 {
        if done(a, b) {
            return;
        }
        a.progress();
        b.progress();
    }
    panic!("the transfer never finished");
}

fn committed(t: Datatype) -> Datatype {
    t.commit();
    t
}

/// Layouts with runs of 1, 4, 8 and 16 bytes and gaps, element extents
/// that are not multiples of the packet payloads.
fn layouts() -> Vec<Datatype> {
    let d = Datatype::basic(BasicType::Double);
    let st = Datatype::create_struct(
        &[1, 1, 2],
        &[0, 3, 16],
        &[
            Datatype::basic(BasicType::Byte),
            d.clone(),
            Datatype::basic(BasicType::Int),
        ],
    )
    .unwrap();
    vec![
        committed(Datatype::vector(3, 1, 2, &d).unwrap()),
        committed(
            Datatype::indexed(&[2, 1, 3], &[5, 0, 9], &Datatype::basic(BasicType::Int)).unwrap(),
        ),
        committed(Datatype::resized(&st, 0, 32).unwrap()),
    ]
}

/// A buffer holding `count` elements of `dt`, bytes numbered from `seed`.
fn source(dt: &Datatype, count: usize, seed: u8) -> Vec<u8> {
    let span = dt.data_span(count).unwrap().map_or(0, |r| r.end as usize);
    (0..span)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn packed(dt: &Datatype, count: usize, src: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; dt.pack_size(count).unwrap()];
    // SAFETY: `src` covers the data span.
    unsafe { dt.pack_raw(src.as_ptr(), count, 0, &mut out).unwrap() };
    out
}

fn unpacked(dt: &Datatype, count: usize, bytes: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` covers the data span.
    unsafe { dt.unpack_raw(out.as_mut_ptr(), count, 0, bytes).unwrap() };
    out
}

fn any(tag: i32) -> Pattern {
    Pattern {
        context: 7,
        source: SourceSel::Any,
        tag: TagSel::Tag(tag),
    }
}

fn finished(e: &mut Engine, id: Option<ReqId>) -> Option<Result<Status, Error>> {
    match id {
        None => Some(Ok(Status::empty())),
        Some(id) => e.reqs.take_finished(id),
    }
}

struct Case {
    send_typed: bool,
    recv_typed: bool,
    /// Post the receive only once the whole message is unexpected.
    late: bool,
    cma: bool,
    sync: bool,
}

/// Sends `count` elements of `dt` (typed, or their packed bytes) and
/// receives them (typed, or as bytes); checks the data and the status.
fn transfer(dt: &Datatype, count: usize, c: &Case) -> Arc<Wire> {
    let (mut a, mut b, wire) = pair(c.cma, if c.cma { "cma" } else { "stream" });
    let src = source(dt, count, 3);
    let want = packed(dt, count, &src);
    let mut dst = vec![0u8; src.len()];
    let mut flat = vec![0u8; want.len()];
    let post = |b: &mut Engine, dst: &mut Vec<u8>, flat: &mut Vec<u8>| unsafe {
        // SAFETY: `dst` / `flat` outlive the transfer.
        if c.recv_typed {
            b.start_recv_typed(any(5), Cursor::new(dt, dst.as_mut_ptr(), count).unwrap())
        } else {
            b.start_recv(any(5), flat.as_mut_ptr(), flat.len())
        }
    };
    let mut recv = (!c.late).then(|| post(&mut b, &mut dst, &mut flat));
    // SAFETY: `src` / `want` outlive the transfer.
    let send = unsafe {
        if c.send_typed {
            let cur = Cursor::new(dt, src.as_ptr(), count).unwrap();
            a.start_send_typed(1, 7, 0, 5, cur, c.sync)
        } else {
            a.start_send(1, 7, 0, 5, want.as_ptr(), want.len(), c.sync)
        }
    };
    if c.late {
        // Everything eager arrives (or the Rts) before the receive exists.
        run_until(&mut a, &mut b, |a, b| {
            a.progress();
            b.progress();
            !a.busy() && a.outq.iter().all(VecDeque::is_empty) && !b.progress()
        });
        recv = Some(post(&mut b, &mut dst, &mut flat));
    }
    let recv = recv.expect("posted");
    let mut got = None;
    let mut sent = None;
    run_until(&mut a, &mut b, |a, b| {
        got = got.take().or_else(|| b.reqs.take_finished(recv));
        sent = sent.take().or_else(|| finished(a, send));
        got.is_some() && sent.is_some()
    });
    let st = got.unwrap().expect("received");
    sent.unwrap().expect("sent");
    assert_eq!((st.source, st.tag, st.count), (0, 5, want.len()));
    if c.recv_typed {
        assert_eq!(dst, unpacked(dt, count, &want, src.len()));
    } else {
        assert_eq!(flat, want);
    }
    wire
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (send_typed, recv_typed) in [(true, true), (true, false), (false, true)] {
        for late in [false, true] {
            for cma in [false, true] {
                v.push(Case {
                    send_typed,
                    recv_typed,
                    late,
                    cma,
                    sync: late && cma,
                });
            }
        }
    }
    v
}

#[test]
fn typed_transfers_at_every_size_and_packet_boundary() {
    for dt in layouts() {
        // One packet, several eager cells, and rendezvous sizes.
        for bytes in [10usize, 600, 2000, 9000] {
            let count = bytes.div_ceil(dt.size());
            for c in cases() {
                let wire = transfer(&dt, count, &c);
                let log = wire.log.lock().unwrap();
                let rts = log.iter().find(|(k, _)| *k == Kind::Rts);
                let data = log.iter().filter(|(k, _)| *k == Kind::Data).count();
                let scatter = wire.scatter_reads.load(Relaxed);
                let size = count * dt.size();
                if size <= EAGER_LIMIT {
                    assert!(rts.is_none() && data == 0 && scatter == 0);
                    continue;
                }
                let (_, flags) = rts.expect("rendezvous");
                // A typed sender has no address to offer: flagged, streamed.
                assert_eq!(*flags & FLAG_PACKED != 0, c.send_typed);
                let streamed = c.send_typed || !c.cma;
                assert_eq!(data > 0, streamed, "{size} bytes");
                // A typed receiver reads with CMA through its segments.
                let scattered = !streamed && c.recv_typed;
                assert_eq!(scatter > 0, scattered, "{size} bytes");
            }
        }
    }
}

#[test]
fn truncated_typed_receives_keep_what_fits() {
    let dt = &layouts()[2];
    for (count, fits) in [(3usize, 2usize), (100, 37), (400, 399)] {
        for cma in [false, true] {
            let (mut a, mut b, _) = pair(cma, if cma { "cma" } else { "stream" });
            let src = source(dt, count, 9);
            let want = packed(dt, count, &src);
            let mut dst = vec![0u8; src.len()];
            // SAFETY: `dst` and `src` outlive the transfer.
            let (r, s) = unsafe {
                let r =
                    b.start_recv_typed(any(5), Cursor::new(dt, dst.as_mut_ptr(), fits).unwrap());
                // With CMA, a contiguous sender: the scattered read stops at the layout's end.
                let s = if cma {
                    a.start_send(1, 7, 0, 5, want.as_ptr(), want.len(), false)
                } else {
                    let cur = Cursor::new(dt, src.as_ptr(), count).unwrap();
                    a.start_send_typed(1, 7, 0, 5, cur, false)
                };
                (r, s)
            };
            let mut got = None;
            run_until(&mut a, &mut b, |a, b| {
                got = got.take().or_else(|| b.reqs.take_finished(r));
                got.is_some() && finished(a, s).is_some()
            });
            let st = got.unwrap().unwrap();
            let cap = fits * dt.size();
            assert_eq!((st.count, st.truncated_from), (cap, Some(want.len())));
            let mut expect = unpacked(dt, fits, &want[..cap], src.len());
            expect.truncate(src.len());
            assert_eq!(dst, expect, "{fits} of {count} elements");
        }
    }
}

#[test]
fn typed_sends_to_self_and_matched_probes() {
    let dt = &layouts()[0];
    let (mut a, _, _) = pair(false, "auto");
    let src = source(dt, 500, 1); // 12 kB: one packet to itself
    let want = packed(dt, 500, &src);
    // SAFETY: `src` outlives the send, which completes at once.
    let s = unsafe {
        a.start_send_typed(
            0,
            7,
            0,
            5,
            Cursor::new(dt, src.as_ptr(), 500).unwrap(),
            false,
        )
    };
    assert!(s.is_none(), "eager to self completes at once");
    let (msg, st) = a.mprobe(&any(5)).expect("arrived");
    assert_eq!(st.count, want.len());
    let mut dst = vec![0u8; src.len()];
    // SAFETY: `dst` outlives the receive.
    let r = unsafe { a.start_mrecv_typed(msg, Cursor::new(dt, dst.as_mut_ptr(), 500).unwrap()) };
    assert_eq!(a.reqs.take_finished(r).unwrap().unwrap().count, want.len());
    assert_eq!(dst, unpacked(dt, 500, &want, src.len()));
}

/// Past its eager budget at a receiver a sender goes rendezvous; once the
/// receiver matches the eager messages it returns the credit and eager
/// sends resume.
#[test]
fn eager_budget_switches_to_rendezvous_until_credit_returns() {
    let (mut a, mut b, wire) = pair(false, "stream");
    a.set_eager_budget(1000);
    b.set_eager_budget(1000);
    let src = vec![7u8; 300];
    let send = |a: &mut Engine, tag| {
        // SAFETY: `src` outlives every send (each is waited for below).
        unsafe { a.start_send(1, 7, 0, tag, src.as_ptr(), src.len(), false) }
    };
    let mut sends: Vec<_> = (0..5).map(|t| send(&mut a, t)).collect();
    // Nothing is received yet: the first three fit the budget.
    run_until(&mut a, &mut b, |a, _| !a.busy());
    let msgs: Vec<Kind> = wire.log.lock().unwrap().iter().map(|&(k, _)| k).collect();
    let heads: Vec<Kind> = msgs
        .iter()
        .copied()
        .filter(|k| matches!(k, Kind::Eager | Kind::Rts))
        .collect();
    assert_eq!(
        heads,
        [Kind::Eager, Kind::Eager, Kind::Eager, Kind::Rts, Kind::Rts]
    );
    let mut dst = vec![vec![0u8; 300]; 5];
    let mut recvs: Vec<Option<ReqId>> = dst
        .iter_mut()
        .enumerate()
        // SAFETY: `dst` outlives the receives.
        .map(|(t, d)| Some(unsafe { b.start_recv(any(t as i32), d.as_mut_ptr(), 300) }))
        .collect();
    run_until(&mut a, &mut b, |a, b| {
        for (e, ids) in [(a, &mut sends), (b, &mut recvs)] {
            for id in ids.iter_mut() {
                if id.is_some_and(|i| e.reqs.take_finished(i).is_some()) {
                    *id = None;
                }
            }
        }
        sends.iter().chain(&recvs).all(Option::is_none)
    });
    assert!(dst.iter().all(|d| d == &src));
    assert!(wire
        .log
        .lock()
        .unwrap()
        .iter()
        .any(|&(k, _)| k == Kind::Credit));
    // Credit is back: eager again.
    let before = wire.log.lock().unwrap().len();
    let again = send(&mut a, 9);
    assert!(again.is_none(), "an eager send completes at once");
    assert_eq!(wire.log.lock().unwrap()[before].0, Kind::Eager);
}

#[test]
fn a_blocking_receive_stops_the_poll_once_its_message_is_in() {
    let (mut a, mut b, wire) = pair(false, "stream");
    let sent = [[1u8; 4], [2; 4], [3; 4]];
    for (tag, m) in sent.iter().enumerate() {
        // SAFETY: 4 bytes go eagerly: copied out before the call returns.
        let id = unsafe { a.start_send(1, 7, 0, tag as i32, m.as_ptr(), 4, false) };
        assert!(id.is_none(), "an eager send completes at once");
    }
    let mut got = [[0u8; 4]; 3];
    for (tag, g) in got.iter_mut().enumerate() {
        // SAFETY: `g` outlives the receive, finished below.
        let id = unsafe { b.start_recv(any(tag as i32), g.as_mut_ptr(), 4) };
        b.awaited = Some(id);
        b.progress();
        assert!(b.reqs.take_finished(id).is_some(), "receive {tag} done");
        let left = wire.queues.lock().unwrap()[1].len();
        assert_eq!(left, 2 - tag, "later messages stay with the transport");
    }
    assert_eq!(got, sent);
}
