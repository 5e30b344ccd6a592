//! A producer that finds the ring full asks for room (`want_room`) and may
//! go to sleep; the consumer, after popping, takes the request and rings
//! the producer's doorbell (`transport/shm/transport.rs`).
//!
//! The request and the pop race: the producer stores `want_room` and then
//! reloads `tail`, the consumer stores `tail` and then loads `want_room`.
//! Without the `SeqCst` fence on each side between its store and its load,
//! loom finds the store-buffering outcome where both read the old value and
//! the producer sleeps with no ring coming.

use loom::sync::Arc;
use loom::thread;

use crate::doorbell::Rank;
use crate::model;
use crate::ring::{message, pop, ring};

#[test]
fn a_producer_waiting_for_room_is_woken_by_the_pop() {
    model(|| {
        let producer = Rank::new();
        let (tx, rx) = ring(2);
        assert!(tx.try_push(0, &[b"a"]) && tx.try_push(1, &[b"b"]));
        let consumer = {
            let producer = Arc::clone(&producer);
            thread::spawn(move || {
                assert!(pop(&rx).is_some());
                if rx.take_room_request() {
                    producer.ring();
                }
                rx
            })
        };
        let (flags, bytes) = message(2);
        producer.wait_for(|| tx.try_push(flags, &[&bytes]).then_some(()));
        let rx = consumer.join().unwrap();
        assert_eq!(pop(&rx).map(|m| m.0), Some(1));
        assert_eq!(pop(&rx), Some(message(2)));
        producer.assert_awake();
    });
}
