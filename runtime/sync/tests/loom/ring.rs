//! The SPSC ring: FIFO order and content across wrap-around, full and
//! empty, every payload read ordered after its write and every reuse of a
//! cell after its read (loom's cells report either mistake).

use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicU32;
use loom::sync::Arc;
use loom::thread;
use oxmpi_sync::ring::{Cells, Receiver, Sender, Tail};

use crate::model;

/// Payload bytes per cell in the models.
const CELL_SIZE: usize = 2;

/// One cell's header and payload.
struct Slot {
    len: u32,
    flags: u32,
    payload: [u8; CELL_SIZE],
}

/// A ring's memory in loom's types.
struct Memory {
    tail: Tail,
    seqs: Vec<AtomicU32>,
    slots: Vec<UnsafeCell<Slot>>,
}

/// One side's view of a ring (both share the memory).
#[derive(Clone)]
pub(crate) struct Side(Arc<Memory>);

// SAFETY: `cell(i)` is slot `i mod cells`, `cells` a power of two; the
// accessors touch that slot only.
unsafe impl Cells for Side {
    type Cell = usize;

    fn tail(&self) -> &Tail {
        &self.0.tail
    }

    fn mask(&self) -> u64 {
        self.0.seqs.len() as u64 - 1
    }

    fn cell_size(&self) -> usize {
        CELL_SIZE
    }

    fn cell(&self, index: u64) -> usize {
        (index & self.mask()) as usize
    }

    fn seq(&self, cell: usize) -> &AtomicU32 {
        &self.0.seqs[cell]
    }

    unsafe fn write_header(&self, cell: usize, len: u32, flags: u32) {
        // SAFETY: loom checks the caller's claim to own the cell.
        self.0.slots[cell].with_mut(|s| unsafe { ((*s).len, (*s).flags) = (len, flags) });
    }

    unsafe fn read_header(&self, cell: usize) -> (u32, u32) {
        // SAFETY: as above.
        self.0.slots[cell].with(|s| unsafe { ((*s).len, (*s).flags) })
    }

    unsafe fn payload_mut(&self, cell: usize) -> &mut [u8] {
        // SAFETY: as above; loom records the access when it is taken.
        self.0.slots[cell].with_mut(|s| unsafe { &mut (&mut (*s).payload)[..] })
    }

    unsafe fn payload(&self, cell: usize, len: usize) -> &[u8] {
        // SAFETY: as above.
        self.0.slots[cell].with(|s| unsafe { &(&(*s).payload)[..len] })
    }
}

/// A fresh, empty ring of `cells` cells (a power of two).
pub(crate) fn ring(cells: usize) -> (Sender<Side>, Receiver<Side>) {
    let memory = Side(Arc::new(Memory {
        tail: Tail::default(),
        seqs: (0..cells).map(|_| AtomicU32::new(0)).collect(),
        slots: (0..cells)
            .map(|_| {
                UnsafeCell::new(Slot {
                    len: 0,
                    flags: 0,
                    payload: [0; CELL_SIZE],
                })
            })
            .collect(),
    }));
    (Sender::new(memory.clone()), Receiver::new(memory))
}

/// Message `i` of a model: its flags and payload.
pub(crate) fn message(i: u32) -> (u32, Vec<u8>) {
    (100 + i, vec![i as u8; 1 + i as usize % CELL_SIZE])
}

/// Pushes message `i`, yielding while the ring is full.
pub(crate) fn push(tx: &Sender<Side>, i: u32) {
    let (flags, bytes) = message(i);
    while !tx.try_push(flags, &[&bytes]) {
        thread::yield_now();
    }
}

/// Pops one message if there is one.
pub(crate) fn pop(rx: &Receiver<Side>) -> Option<(u32, Vec<u8>)> {
    rx.try_pop(|flags, bytes| (flags, bytes.to_vec()))
}

#[test]
fn messages_arrive_in_order_and_whole_across_wrap_around() {
    model(|| {
        // Three messages through two cells: the third waits for a pop and
        // reuses the first cell (a later lap's `seq`).
        const N: u32 = 3;
        let (tx, rx) = ring(2);
        let producer = thread::spawn(move || (0..N).for_each(|i| push(&tx, i)));
        for i in 0..N {
            let got = loop {
                match pop(&rx) {
                    Some(m) => break m,
                    None => thread::yield_now(),
                }
            };
            assert_eq!(got, message(i));
        }
        producer.join().unwrap();
        assert!(rx.is_empty());
    });
}

#[test]
fn a_reservation_publishes_nothing_until_committed() {
    model(|| {
        let (tx, rx) = ring(2);
        let producer = thread::spawn(move || {
            let mut r = tx.try_reserve().expect("an empty ring has room");
            r.payload()[0] = 7;
            drop(r);
            let mut r = tx.try_reserve().expect("the same cell again");
            r.payload()[..2].copy_from_slice(&[8, 9]);
            r.commit(2, 5);
        });
        let got = loop {
            match pop(&rx) {
                Some(m) => break m,
                None => thread::yield_now(),
            }
        };
        assert_eq!(got, (5, vec![8, 9]));
        producer.join().unwrap();
    });
}

#[test]
fn a_full_ring_refuses_until_a_pop_frees_a_cell() {
    model(|| {
        let (tx, rx) = ring(2);
        assert!(tx.try_push(0, &[b"a"]) && tx.try_push(1, &[b"b"]));
        let consumer = thread::spawn(move || {
            let first = pop(&rx);
            (first, rx)
        });
        // Full until the consumer's pop is seen; then exactly one more fits.
        let third = tx.try_push(2, &[b"c"]);
        let (first, rx) = consumer.join().unwrap();
        assert_eq!(first, Some((0, b"a".to_vec())));
        let fourth = tx.try_push(3, &[b"d"]);
        assert!(!(third && fourth), "two pushes into one freed cell");
        assert!(third || fourth, "the freed cell is seen after the join");
        assert_eq!(pop(&rx), Some((1, b"b".to_vec())));
        assert_eq!(pop(&rx).map(|m| m.0), Some(if third { 2 } else { 3 }));
        assert!(rx.is_empty());
    });
}
