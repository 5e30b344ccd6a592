//! The doorbell: a rank that decides to sleep while a peer pushes and rings
//! is woken (no lost wake-up), composed with the ring as the runtime uses
//! both (`shm_link.rs`, `progress.rs`). The model futex never times out,
//! so a lost wake-up is a deadlock, which loom reports.

use std::time::Duration;

use loom::sync::atomic::AtomicU32;
use loom::sync::atomic::Ordering::{Relaxed, SeqCst};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use oxmpi_sync::doorbell::{Bell, Futex, Wake};
use oxmpi_sync::ring::{Receiver, Sender};

use crate::model;
use crate::ring::{message, pop, ring, Side};

/// `FUTEX_WAIT` / `FUTEX_WAKE` as the kernel does them: the compare of the
/// word and the sleep are atomic with respect to a wake (the hash bucket's
/// lock, after a full barrier).
#[derive(Default)]
struct ModelFutex {
    bucket: Mutex<()>,
    sleepers: Condvar,
}

impl Futex for ModelFutex {
    fn wait(&self, word: &AtomicU32, seen: u32, _timeout: Option<Duration>) -> Wake {
        let bucket = self.bucket.lock().unwrap();
        if word.load(SeqCst) == seen {
            drop(self.sleepers.wait(bucket).unwrap());
        }
        Wake::Woken
    }

    fn wake(&self, _word: &AtomicU32) {
        let _bucket = self.bucket.lock().unwrap();
        self.sleepers.notify_all();
    }
}

/// One rank's doorbell and the node's count of sleeping ranks.
#[derive(Default)]
pub(crate) struct Rank {
    bell: Bell,
    asleep: AtomicU32,
    futex: ModelFutex,
}

impl Rank {
    pub(crate) fn new() -> Arc<Rank> {
        let rank = Rank::default();
        // The segment's initialisation. Loom orders a SeqCst load only
        // after SeqCst stores, so the first value is stored SeqCst like
        // every later write of these words.
        rank.bell.seq.store(0, SeqCst);
        rank.bell.sleepers.store(0, SeqCst);
        Arc::new(rank)
    }

    /// The progress loop's last look before a sleep: take the token, look
    /// once more (`look`), sleep unless the bell moved since the token.
    pub(crate) fn wait_for<T>(&self, mut look: impl FnMut() -> Option<T>) -> T {
        loop {
            let seen = self.bell.current();
            if let Some(v) = look() {
                return v;
            }
            self.bell.wait(seen, None, &self.asleep, &self.futex);
        }
    }

    pub(crate) fn ring(&self) {
        self.bell.ring(&self.futex);
    }

    pub(crate) fn assert_awake(&self) {
        assert_eq!(self.bell.sleepers.load(SeqCst), 0);
        assert_eq!(self.asleep.load(Relaxed), 0);
    }
}

fn send(tx: &Sender<Side>, to: &Rank, i: u32) {
    let (flags, bytes) = message(i);
    assert!(
        tx.try_push(flags, &[&bytes]),
        "the models never fill a ring"
    );
    to.ring();
}

#[test]
fn a_push_and_ring_wakes_a_rank_deciding_to_sleep() {
    model(|| {
        let me = Rank::new();
        let (tx, rx) = ring(2);
        let peer = {
            let me = Arc::clone(&me);
            thread::spawn(move || send(&tx, &me, 0))
        };
        assert_eq!(me.wait_for(|| pop(&rx)), message(0));
        peer.join().unwrap();
        me.assert_awake();
    });
}

#[test]
fn two_peers_ringing_at_once_wake_the_sleeper_for_both() {
    model(|| {
        let me = Rank::new();
        let rings: Vec<(Sender<Side>, Receiver<Side>)> = (0..2).map(|_| ring(2)).collect();
        let mut rxs = Vec::new();
        let peers: Vec<_> = rings
            .into_iter()
            .enumerate()
            .map(|(i, (tx, rx))| {
                rxs.push(rx);
                let me = Arc::clone(&me);
                thread::spawn(move || send(&tx, &me, i as u32))
            })
            .collect();
        let mut got = [None, None];
        for _ in 0..2 {
            me.wait_for(|| {
                let i = (0..2).find(|&i| got[i].is_none() && !rxs[i].is_empty())?;
                got[i] = pop(&rxs[i]);
                Some(())
            });
        }
        assert_eq!(got, [Some(message(0)), Some(message(1))]);
        peers.into_iter().for_each(|p| p.join().unwrap());
        me.assert_awake();
    });
}
