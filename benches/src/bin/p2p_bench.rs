//! Point-to-point benchmark on the OxMPI Rust API.
//!
//! The same logic as `benches/c/p2p.c` (run against MPICH and Open MPI);
//! keep the two in step. Run by the `p2p` runner, or by hand:
//!
//! ```text
//! oxrun -n 2 target/release/p2p_bench latency [quick]
//! ```
//!
//! Usage: `p2p_bench MODE [quick]`, MODE one of
//!
//! * `latency`: ping-pong between ranks 0 and 1; each message size in
//!   0, 1, 2, 4, ..., 16 MiB gets one untimed warm-up round and then
//!   `rounds` timed rounds of `lat_iters(size)` round trips. Every round
//!   starts with an untimed zero-byte round trip that lines the two ranks
//!   up. Reported per size: half the round-trip time (min and median over
//!   rounds, in µs) and size / median half round trip (MB/s, 1 MB = 1e6
//!   bytes). Ranks beyond 0 and 1 only wait in one barrier that ends the
//!   run (all ranks also pass one barrier before it starts), so `-n 8`
//!   measures a ping-pong between two of eight ranks. Before the first
//!   size, ranks 0 and 1 exchange 4-byte messages for `SETTLE_S` seconds
//!   (rank 0's clock, untimed), so the other ranks have settled into their
//!   wait.
//! * `bandwidth`: streaming from rank 0 to rank 1 for sizes 1 B .. 16 MiB:
//!   rank 0 posts a window of non-blocking sends (64, fewer for large sizes
//!   so that a window holds at most 64 MiB), waits for all of them, then
//!   receives a 4-byte ack that rank 1 sends once it has waited for its
//!   window of non-blocking receives. Rank 0 sends every message of a
//!   window from one buffer; rank 1 receives each message of a window into
//!   its own slot. One warm-up round, then `rounds` rounds of
//!   `bw_iters(size)` windows, each round lined up by a zero-byte round
//!   trip. Reported: bytes / time (max and median over rounds, MB/s).
//!   Other ranks only wait in the closing barrier.
//! * `multipair`: ranks 2k and 2k+1 (k < nranks/2) stream as in
//!   `bandwidth` at the same time; a round runs from a barrier to the
//!   barrier after every pair is done (timed on rank 0). Reported:
//!   aggregate bytes / time (max and median, MB/s).
//! * `memcpy`: no MPI: one `copy_from_slice` of each size 1 B .. 16 MiB.
//!   "cold": a single copy into a freshly allocated, never touched
//!   destination (page faults included); "warm": `rounds` rounds of
//!   `lat_iters(size)` copies between the same two buffers after a warm-up
//!   round (median per copy).
//!
//! `quick` uses fewer rounds and iterations. Output: one CSV line per
//! figure on rank 0's stdout, `impl,mode,ranks,size,metric,value`, written
//! as soon as it is measured, so a run killed by a timeout still leaves the
//! sizes it finished. impl is `oxmpi` (`rust` for memcpy).

use std::hint::black_box;
use std::time::Instant;

use oxmpi::{wait_all, wtime, Comm, Error};
use oxmpi_benches::stats::median;

const MIB: usize = 1 << 20;
const MAX_SIZE: usize = 16 * MIB;
const WINDOW: usize = 64;
const WINDOW_BYTES: usize = 64 * MIB;
const TAG_DATA: i32 = 1;
const TAG_ACK: i32 = 2;
const TAG_SYNC: i32 = 3;
const SETTLE_S: f64 = 0.1;

/// Rounds and iteration budgets; `quick` shrinks them.
struct Params {
    rounds: usize,
    lat_bytes: usize,
    lat_max: usize,
    lat_min: usize,
    bw_bytes: usize,
    bw_max: usize,
    bw_min: usize,
}

impl Params {
    fn new(quick: bool) -> Params {
        if quick {
            Params {
                rounds: 3,
                lat_bytes: 32 * MIB,
                lat_max: 2000,
                lat_min: 2,
                bw_bytes: 64 * MIB,
                bw_max: 50,
                bw_min: 1,
            }
        } else {
            Params {
                rounds: 7,
                lat_bytes: 128 * MIB,
                lat_max: 10000,
                lat_min: 4,
                bw_bytes: 256 * MIB,
                bw_max: 200,
                bw_min: 2,
            }
        }
    }

    /// Round trips per latency round (also copies per memcpy round).
    fn lat_iters(&self, size: usize) -> usize {
        (self.lat_bytes / size.max(1)).clamp(self.lat_min, self.lat_max)
    }

    /// Windows per streaming round.
    fn bw_iters(&self, size: usize) -> usize {
        (self.bw_bytes / (size * window_of(size))).clamp(self.bw_min, self.bw_max)
    }
}

/// Messages per streaming window.
fn window_of(size: usize) -> usize {
    (WINDOW_BYTES / size).clamp(1, WINDOW)
}

/// 0, 1, 2, 4, ..., `MAX_SIZE`.
fn latency_sizes() -> impl Iterator<Item = usize> {
    std::iter::once(0).chain(bandwidth_sizes())
}

/// 1, 2, 4, ..., `MAX_SIZE`.
fn bandwidth_sizes() -> impl Iterator<Item = usize> {
    (0..=MAX_SIZE.trailing_zeros()).map(|k| 1 << k)
}

/// Writes CSV lines for one implementation and rank count.
struct Emitter {
    imp: &'static str,
    ranks: i32,
}

impl Emitter {
    fn emit(&self, mode: &str, size: usize, metric: &str, value: f64) {
        println!(
            "{},{mode},{},{size},{metric},{}",
            self.imp,
            self.ranks,
            g6(value)
        );
    }
}

/// `value` with 6 significant digits, like C's `%.6g` for the values we
/// print (no exponent below 1e15).
fn g6(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = value.abs().log10().floor() as i32;
    let decimals = (5 - digits).max(0) as usize;
    let s = format!("{value:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Untimed zero-byte round trip between ranks `a` (starts) and `b`.
fn line_up(w: &Comm, a: i32, b: i32) -> Result<(), Error> {
    let me = w.rank();
    let mut none = [0u8; 0];
    if me == a {
        w.send(&none, b, TAG_SYNC)?;
        w.recv(&mut none, b, TAG_SYNC)?;
    } else if me == b {
        w.recv(&mut none, a, TAG_SYNC)?;
        w.send(&none, a, TAG_SYNC)?;
    }
    Ok(())
}

/// Ranks 0 and 1 exchange 4-byte messages for `SETTLE_S` seconds; rank 0
/// decides when to stop (a zero in the message).
fn settle(w: &Comm) -> Result<(), Error> {
    let mut go = [1i32];
    if w.rank() == 0 {
        let t0 = wtime();
        while go[0] != 0 {
            go[0] = i32::from(wtime() - t0 < SETTLE_S);
            w.send(&go, 1, TAG_SYNC)?;
            w.recv(&mut go, 1, TAG_SYNC)?;
        }
    } else if w.rank() == 1 {
        while go[0] != 0 {
            w.recv(&mut go, 0, TAG_SYNC)?;
            w.send(&go, 0, TAG_SYNC)?;
        }
    }
    Ok(())
}

fn latency(w: &Comm, p: &Params, out: &Emitter) -> Result<(), Error> {
    let me = w.rank();
    if me >= 2 {
        return Ok(());
    }
    settle(w)?;
    let mut buf = vec![1u8; MAX_SIZE];
    let mut t = vec![0.0; p.rounds];
    let peer = 1 - me;
    for size in latency_sizes() {
        let iters = p.lat_iters(size);
        let msg = &mut buf[..size];
        for round in -1..p.rounds as isize {
            line_up(w, 0, 1)?;
            let t0 = wtime();
            for _ in 0..iters {
                if me == 0 {
                    w.send(msg, peer, TAG_DATA)?;
                    w.recv(msg, peer, TAG_DATA)?;
                } else {
                    w.recv(msg, peer, TAG_DATA)?;
                    w.send(msg, peer, TAG_DATA)?;
                }
            }
            if round >= 0 {
                t[round as usize] = (wtime() - t0) / (2.0 * iters as f64);
            }
        }
        if me == 0 {
            let med = median(&mut t);
            out.emit("latency", size, "lat_us_min", t[0] * 1e6);
            out.emit("latency", size, "lat_us_median", med * 1e6);
            out.emit("latency", size, "bw_MBps_median", size as f64 / med / 1e6);
        }
    }
    Ok(())
}

/// One streaming round from `src` to `dst`: `iters` windows of `win`
/// messages of `sbuf.len()` bytes; the caller times it.
fn stream(
    w: &Comm,
    src: i32,
    dst: i32,
    win: usize,
    iters: usize,
    sbuf: &[u8],
    rslots: &mut [u8],
) -> Result<(), Error> {
    let me = w.rank();
    let size = sbuf.len();
    let mut ack = [0i32; 1];
    for _ in 0..iters {
        if me == src {
            let mut reqs = Vec::with_capacity(win);
            for _ in 0..win {
                reqs.push(w.isend(sbuf, dst, TAG_DATA)?);
            }
            wait_all(reqs)?;
            w.recv(&mut ack, dst, TAG_ACK)?;
        } else if me == dst {
            let mut reqs = Vec::with_capacity(win);
            for slot in rslots.chunks_exact_mut(size).take(win) {
                reqs.push(w.irecv(slot, src, TAG_DATA)?);
            }
            wait_all(reqs)?;
            w.send(&ack, src, TAG_ACK)?;
        }
    }
    Ok(())
}

/// `bandwidth` (one pair, rounds lined up by a round trip) and `multipair`
/// (nranks / 2 pairs, rounds between barriers).
fn bandwidth(w: &Comm, p: &Params, out: &Emitter, multipair: bool) -> Result<(), Error> {
    let mode = if multipair { "multipair" } else { "bandwidth" };
    let me = w.rank();
    let pairs = if multipair { w.size() / 2 } else { 1 };
    let active = me < 2 * pairs;
    if !multipair && !active {
        return Ok(());
    }
    let (src, dst) = (me & !1, (me & !1) + 1);
    let sbuf = vec![1u8; if active { MAX_SIZE } else { 0 }];
    let mut rslots = vec![0u8; if active { WINDOW_BYTES } else { 0 }];
    rslots.fill(0); // touch every page now, as the C version's memset does
    let mut rate = vec![0.0; p.rounds];
    for size in bandwidth_sizes() {
        let (win, iters) = (window_of(size), p.bw_iters(size));
        let bytes = pairs as f64 * size as f64 * win as f64 * iters as f64;
        for round in -1..p.rounds as isize {
            if multipair {
                w.barrier()?;
            } else {
                line_up(w, 0, 1)?;
            }
            let t0 = wtime();
            if active {
                stream(w, src, dst, win, iters, &sbuf[..size], &mut rslots)?;
            }
            if multipair {
                w.barrier()?;
            }
            if round >= 0 {
                rate[round as usize] = bytes / (wtime() - t0) / 1e6;
            }
        }
        if me == 0 {
            let med = median(&mut rate);
            out.emit(mode, size, "bw_MBps_max", rate[p.rounds - 1]);
            out.emit(mode, size, "bw_MBps_median", med);
        }
    }
    Ok(())
}

fn memcpy(p: &Params) {
    let out = Emitter {
        imp: "rust",
        ranks: 1,
    };
    let src = vec![1u8; MAX_SIZE];
    let mut dst = vec![0u8; MAX_SIZE];
    dst.fill(0); // touch every page, as the C version's memset does
    let mut t = vec![0.0; p.rounds];
    for size in bandwidth_sizes() {
        // A fresh allocation: calloc'd memory, not yet touched.
        let mut fresh = vec![0u8; size];
        let t0 = Instant::now();
        fresh.copy_from_slice(black_box(&src[..size]));
        black_box(&mut fresh);
        let cold = t0.elapsed().as_secs_f64();
        drop(fresh);
        let iters = p.lat_iters(size);
        for round in -1..p.rounds as isize {
            let t0 = Instant::now();
            for _ in 0..iters {
                dst[..size].copy_from_slice(black_box(&src[..size]));
                black_box(&mut dst);
            }
            if round >= 0 {
                t[round as usize] = t0.elapsed().as_secs_f64() / iters as f64;
            }
        }
        let med = median(&mut t);
        out.emit("memcpy", size, "cold_us", cold * 1e6);
        out.emit("memcpy", size, "cold_MBps", size as f64 / cold / 1e6);
        out.emit("memcpy", size, "warm_us_median", med * 1e6);
        out.emit("memcpy", size, "warm_MBps_median", size as f64 / med / 1e6);
    }
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("", String::as_str);
    let p = Params::new(args.get(1).is_some_and(|a| a == "quick"));
    if mode == "memcpy" {
        memcpy(&p);
        return Ok(());
    }
    if !matches!(mode, "latency" | "bandwidth" | "multipair") {
        eprintln!("usage: p2p_bench latency|bandwidth|multipair|memcpy [quick]");
        std::process::exit(2);
    }
    let universe = oxmpi::init()?;
    let w = universe.world();
    if w.size() < 2 {
        universe.abort(2, "p2p_bench: needs at least 2 ranks");
    }
    let out = Emitter {
        imp: "oxmpi",
        ranks: w.size(),
    };
    w.barrier()?;
    match mode {
        "latency" => latency(&w, &p, &out)?,
        _ => bandwidth(&w, &p, &out, mode == "multipair")?,
    }
    w.barrier()?;
    universe.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_budgets_match_the_c_version() {
        assert_eq!(latency_sizes().count(), 26);
        assert_eq!(bandwidth_sizes().last(), Some(MAX_SIZE));
        assert_eq!(window_of(1), 64);
        assert_eq!(window_of(MIB), 64);
        assert_eq!(window_of(16 * MIB), 4);
        let p = Params::new(false);
        assert_eq!(p.lat_iters(0), 10000);
        assert_eq!(p.lat_iters(MAX_SIZE), 8);
        assert_eq!(p.bw_iters(1), 200);
        assert_eq!(p.bw_iters(MAX_SIZE), 4);
    }

    #[test]
    fn six_significant_digits() {
        assert_eq!(g6(0.0), "0");
        assert_eq!(g6(0.224608123), "0.224608");
        assert_eq!(g6(4007.7512), "4007.75");
        assert_eq!(g6(123456789.0), "123456789");
        assert_eq!(g6(2.5), "2.5");
    }
}
