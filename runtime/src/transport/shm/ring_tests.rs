//! Ring tests within one process: two threads over an anonymous shared mapping.

use super::*;

fn pattern(seq: u64, len: usize) -> impl Iterator<Item = u8> {
    (0..len).map(move |i| (seq as usize).wrapping_mul(31).wrapping_add(i * 7) as u8)
}

#[test]
fn fifo_gather_and_full() {
    let (tx, rx) = anonymous(64, 4);
    assert_eq!(tx.max_payload(), 64);
    assert!(rx.is_empty() && rx.try_pop(|_, _| ()).is_none());
    for i in 0..4u8 {
        assert!(tx.try_push(u32::from(i), &[&[i], &[i, i], &[]]));
    }
    assert!(
        !tx.try_push(0, &[b"x"]),
        "a fifth push must find the ring full"
    );
    for i in 0..4u8 {
        let got = rx.try_pop(|flags, b| (flags, b.to_vec())).unwrap();
        assert_eq!(got, (u32::from(i), vec![i, i, i]));
    }
    assert!(rx.try_pop(|_, _| ()).is_none());
    assert!(tx.try_push(9, &[&[0u8; 64]]), "room again after pops");
    assert_eq!(rx.try_pop(|f, b| (f, b.len())), Some((9, 64)));
}

#[test]
fn a_full_ring_asks_for_room_once() {
    let (tx, rx) = anonymous(64, 4);
    for _ in 0..4 {
        assert!(tx.try_push(0, &[b"a"]));
    }
    assert!(rx.try_pop(|_, _| ()).is_some());
    assert!(!rx.take_room_request(), "the producer never found it full");
    assert!(tx.try_push(0, &[b"c"]));
    assert!(!tx.try_push(0, &[b"d"]) && !tx.try_push(0, &[b"d"]));
    assert!(rx.try_pop(|_, _| ()).is_some());
    assert!(rx.take_room_request(), "full twice: one request");
    assert!(!rx.take_room_request(), "taken: asked no more");
    assert!(tx.try_push(0, &[b"d"]), "room again");
}

#[test]
fn reservation_fills_in_place_and_abandons_cleanly() {
    let (tx, rx) = anonymous(64, 4);
    let mut r = tx.try_reserve().unwrap();
    assert!(tx.try_reserve().is_none() && !tx.try_push(0, &[]));
    r.payload()[..3].copy_from_slice(b"abc");
    drop(r);
    assert!(rx.is_empty(), "an abandoned reservation publishes nothing");
    let mut r = tx.try_reserve().unwrap();
    r.payload()[..2].copy_from_slice(b"hi");
    r.commit(2, 7);
    assert_eq!(
        rx.try_pop(|f, b| (f, b.to_vec())),
        Some((7, b"hi".to_vec()))
    );
}

#[test]
fn nested_pop_is_refused_and_panicking_callback_keeps_message() {
    let (tx, rx) = anonymous(64, 4);
    assert!(tx.try_push(1, &[b"a"]) && tx.try_push(2, &[b"b"]));
    let inner = rx.try_pop(|_, _| rx.try_pop(|_, _| ()));
    assert_eq!(inner, Some(None));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rx.try_pop(|_, _| panic!("engine bug"));
    }));
    assert!(caught.is_err());
    assert_eq!(rx.try_pop(|f, _| f), Some(2), "message survives a panic");
}

#[test]
#[should_panic(expected = "exceeds the 64-byte cell")]
fn oversized_push_panics() {
    let (tx, _rx) = anonymous(64, 4);
    tx.try_push(0, &[&[0u8; 40], &[0u8; 40]]);
}

/// Millions of messages of varying size between two threads; order and
/// content checked on every one.
#[test]
fn two_thread_stress_keeps_order_and_content() {
    const N: u64 = 2_000_000;
    let (tx, rx) = anonymous(120, 16);
    let producer = std::thread::spawn(move || {
        let mut buf = [0u8; 112];
        for seq in 0..N {
            let len = (seq % 113) as usize;
            for (b, v) in buf.iter_mut().zip(pattern(seq, len)) {
                *b = v;
            }
            let head = seq.to_le_bytes();
            while !tx.try_push(seq as u32, &[&head, &buf[..len]]) {
                std::thread::yield_now();
            }
        }
    });
    let mut seq = 0u64;
    while seq < N {
        let ok = rx.try_pop(|flags, b| {
            assert_eq!(flags, seq as u32);
            assert_eq!(u64::from_le_bytes(b[..8].try_into().unwrap()), seq);
            let len = (seq % 113) as usize;
            assert_eq!(b.len(), 8 + len, "length of message {seq}");
            assert!(
                b[8..].iter().copied().eq(pattern(seq, len)),
                "bytes of {seq}"
            );
        });
        if ok.is_some() {
            seq += 1;
        } else {
            std::thread::yield_now();
        }
    }
    producer.join().unwrap();
    assert!(rx.is_empty());
}
