//! The engine lock: mutual exclusion, and what one holder wrote is seen by
//! the next (loom's cell reports any access not ordered after the last).

use loom::sync::Arc;
use loom::thread;
use oxmpi_sync::engine_lock::EngineLock;

use crate::model;

/// Two threads, each locking twice: every hand-over in either direction
/// (a third thread would spin against the second without end, which loom
/// reports as a model too large to explore).
#[test]
fn holders_exclude_each_other_and_see_each_others_writes() {
    model(|| {
        let lock = Arc::new(EngineLock::new(0u32));
        let other = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || (0..2).for_each(|_| *lock.lock() += 1))
        };
        (0..2).for_each(|_| *lock.lock() += 1);
        other.join().unwrap();
        assert_eq!(*lock.lock(), 4);
    });
}
