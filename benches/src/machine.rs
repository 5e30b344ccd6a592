//! The state of the machine itself, measured without any MPI: how long a
//! cache line takes to go from one core to another and back.
//!
//! The VM these benchmarks run on changes speed for minutes at a time
//! (the same code's latency triples, for every implementation alike). A
//! runner measures this before each job, prints it beside the job, and
//! can run again a job that caught the machine in a slower state than
//! the rest of the run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// Half the round trip of one cache line between the first two CPUs this
/// process may run on (two threads, each bound to one of them, bouncing a
/// counter for `window`), in nanoseconds. `None` with fewer than two CPUs.
///
/// ```no_run
/// use std::time::Duration;
/// let ns = oxmpi_benches::machine::core_to_core_ns(Duration::from_millis(20));
/// println!("core to core: {ns:?} ns");
/// ```
pub fn core_to_core_ns(window: Duration) -> Option<f64> {
    let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
    let mut cpus = (0..CpuSet::count()).filter(|&c| allowed.is_set(c).unwrap_or(false));
    let (a, b) = (cpus.next()?, cpus.next()?);
    let ball = Arc::new(AtomicU64::new(0));
    let stop = u64::MAX;
    let other = {
        let ball = Arc::clone(&ball);
        std::thread::spawn(move || {
            bind(b);
            // Answer every odd value with the next even one until told to stop.
            loop {
                let v = ball.load(Ordering::Acquire);
                if v == stop {
                    return;
                }
                if v % 2 == 1 {
                    ball.store(v + 1, Ordering::Release);
                }
                std::hint::spin_loop();
            }
        })
    };
    let mine = std::thread::spawn(move || {
        bind(a);
        let start = Instant::now();
        let mut trips = 0u64;
        while start.elapsed() < window {
            for _ in 0..1000 {
                let sent = 2 * trips + 1;
                ball.store(sent, Ordering::Release);
                while ball.load(Ordering::Acquire) != sent + 1 {
                    std::hint::spin_loop();
                }
                trips += 1;
            }
        }
        let ns = start.elapsed().as_nanos() as f64 / (2 * trips) as f64;
        ball.store(stop, Ordering::Release);
        ns
    });
    let ns = mine.join().ok();
    other.join().ok()?;
    ns
}

/// Binds the calling thread to `cpu` (best effort: unbound if refused).
fn bind(cpu: usize) {
    let mut set = CpuSet::new();
    if set.set(cpu).is_ok() {
        let _ = sched_setaffinity(Pid::from_raw(0), &set);
    }
}

/// A job that saw the machine's core-to-core latency above this factor of
/// the best seen caught it in a slow state (for every implementation
/// alike) and is worth running again.
pub const SLOW: f64 = 1.5;

/// Whether a job that saw `ns` caught the machine slower than [`SLOW`]
/// times the best seen (unknown: no).
pub fn too_slow(ns: Option<f64>, best: f64) -> bool {
    matches!(ns, Some(ns) if ns > SLOW * best)
}

/// Whether a run that saw `ns` saw a faster machine than one that saw `kept`.
pub fn faster(ns: Option<f64>, kept: Option<f64>) -> bool {
    match (ns, kept) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_a_figure_when_two_cpus_exist() {
        // How fast is the benchmarks' business, not a test's: a loaded VM
        // may take any time. The figure must exist and be a real duration.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        match core_to_core_ns(Duration::from_millis(5)) {
            Some(ns) => assert!(ns.is_finite() && ns > 0.0, "{ns} ns"),
            None => assert!(cpus < 2, "two CPUs but no figure"),
        }
    }

    #[test]
    fn slow_machine_runs_are_told_apart() {
        assert!(too_slow(Some(40.0), 25.0) && !too_slow(Some(30.0), 25.0));
        assert!(!too_slow(None, 25.0), "unprobed: kept");
        assert!(faster(Some(24.0), Some(220.0)) && !faster(Some(230.0), Some(220.0)));
        assert!(faster(Some(24.0), None) && !faster(None, Some(24.0)));
    }
}
