//! Collective benchmark on the OxMPI Rust API.
//!
//! The same logic as `benches/c/coll.c` (run against MPICH and Open MPI);
//! keep the two in step. Run by the `coll` runner, or by hand:
//!
//! ```text
//! oxrun -n 4 target/release/coll_bench [quick] [COLL...] [sizes=N,N,...]
//! ```
//!
//! COLL is any of `allreduce` (f32 sum), `bcast` (bytes, root 0),
//! `allgather` (bytes), `alltoall` (bytes), `reduce_scatter`
//! ([`oxmpi::Comm::reduce_scatter_block`], f32 sum); none named means all
//! five, in that order. Sizes default to 8 B, 32 B, 128 B, ... (x4) ...
//! 32 MiB, then 64 MiB. A size is the per-rank buffer as nccl-tests counts
//! it: the buffer for allreduce and bcast, the whole receive buffer for
//! allgather (each rank contributes size/p), the whole send buffer for
//! alltoall (size/p to each peer) and for reduce_scatter (size/p of the
//! result per rank). Counts round down (at least one element per block),
//! so the bytes really moved (`bytes`) can differ a little from the
//! nominal size.
//!
//! Per collective and size: fill the buffers; a barrier; `warm_iters`
//! warm-up calls, timed together; the largest per-call warm-up time over
//! the ranks (allreduce, max) sets the iterations per round so that a
//! round takes about `target` seconds (clamped to `[min_iters,
//! max_iters]`); then `rounds` rounds, each a barrier and `iters` timed
//! calls. A round's time is the largest average per call over the ranks
//! (allreduce, max); the reported time is the smallest round's (many short
//! rounds, so that on a shared machine some of them run undisturbed). Afterwards
//! a few elements of the result are checked (a failed check aborts the
//! job).
//!
//! Reported per size, one CSV line per figure on rank 0's stdout,
//! `impl,coll,ranks,size,metric,value`, written as soon as it is measured
//! (so a run killed by a timeout keeps the sizes it finished): `bytes`,
//! `iters`, `time_us`, `algbw_GBps` = bytes / time and `busbw_GBps` =
//! algbw times the nccl-tests factor (allreduce 2(p-1)/p; bcast 1;
//! allgather, alltoall, reduce_scatter (p-1)/p); GB = 1e9 bytes. impl is
//! `oxmpi`. `quick` uses fewer rounds and shorter rounds.

use oxmpi::ops::Op;
use oxmpi::{wtime, Comm, Error};

const MIB: usize = 1 << 20;

/// Rounds and iteration budgets; `quick` shrinks them.
struct Params {
    rounds: usize,
    target: f64,
    min_iters: usize,
    max_iters: usize,
    warm_bytes: usize,
    warm_min: usize,
    warm_max: usize,
}

impl Params {
    fn new(quick: bool) -> Params {
        if quick {
            Params {
                rounds: 7,
                target: 0.003,
                min_iters: 1,
                max_iters: 500,
                warm_bytes: 8 * MIB,
                warm_min: 1,
                warm_max: 10,
            }
        } else {
            Params {
                rounds: 15,
                target: 0.01,
                min_iters: 1,
                max_iters: 2000,
                warm_bytes: 32 * MIB,
                warm_min: 2,
                warm_max: 20,
            }
        }
    }

    /// Warm-up calls at `size` bytes.
    fn warm_iters(&self, size: usize) -> usize {
        (self.warm_bytes / size.max(1)).clamp(self.warm_min, self.warm_max)
    }

    /// Timed calls per round, from the slowest rank's warm-up time per call.
    fn round_iters(&self, per_call: f64) -> usize {
        let want = if per_call > 0.0 {
            self.target / per_call
        } else {
            self.max_iters as f64
        };
        if want >= self.max_iters as f64 {
            return self.max_iters;
        }
        (want as usize).clamp(self.min_iters, self.max_iters)
    }
}

/// The collectives measured, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coll {
    Allreduce,
    Bcast,
    Allgather,
    Alltoall,
    ReduceScatter,
}

const COLLS: [Coll; 5] = [
    Coll::Allreduce,
    Coll::Bcast,
    Coll::Allgather,
    Coll::Alltoall,
    Coll::ReduceScatter,
];

impl Coll {
    fn name(self) -> &'static str {
        match self {
            Coll::Allreduce => "allreduce",
            Coll::Bcast => "bcast",
            Coll::Allgather => "allgather",
            Coll::Alltoall => "alltoall",
            Coll::ReduceScatter => "reduce_scatter",
        }
    }

    fn floats(self) -> bool {
        matches!(self, Coll::Allreduce | Coll::ReduceScatter)
    }

    /// Elements per block at nominal `size` on `p` ranks: the whole buffer
    /// for allreduce and bcast, one rank's block for the others.
    fn block_elems(self, size: usize, p: usize) -> usize {
        let e = match self {
            Coll::Allreduce => size / 4,
            Coll::Bcast => size,
            Coll::Allgather | Coll::Alltoall => size / p,
            Coll::ReduceScatter => size / (4 * p),
        };
        e.max(1)
    }

    /// Elements in the largest buffer (the whole buffer, all blocks).
    fn buffer_elems(self, size: usize, p: usize) -> usize {
        let e = self.block_elems(size, p);
        match self {
            Coll::Allreduce | Coll::Bcast => e,
            _ => e * p,
        }
    }

    /// Bytes moved at nominal `size` (as nccl-tests counts them).
    fn bytes(self, size: usize, p: usize) -> usize {
        self.buffer_elems(size, p) * if self.floats() { 4 } else { 1 }
    }

    /// The nccl-tests bus bandwidth factor.
    fn bus_factor(self, p: usize) -> f64 {
        let n = p as f64;
        match self {
            Coll::Allreduce => 2.0 * (n - 1.0) / n,
            Coll::Bcast => 1.0,
            _ => (n - 1.0) / n,
        }
    }
}

/// `value` like C's `%.10g` for the values we print (no exponent).
fn g10(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = value.abs().log10().floor() as i32;
    let decimals = (9 - digits).max(0) as usize;
    let s = format!("{value:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Buffers for one collective.
enum Bufs {
    Floats(Vec<f32>, Vec<f32>),
    Bytes(Vec<u8>, Vec<u8>),
}

struct Bench<'a> {
    w: &'a Comm,
    me: usize,
    p: usize,
    prm: Params,
}

impl Bench<'_> {
    fn emit(&self, coll: Coll, size: usize, metric: &str, value: f64) {
        println!(
            "oxmpi,{},{},{size},{metric},{}",
            coll.name(),
            self.p,
            g10(value)
        );
    }

    /// Fills the inputs of `c` at `size`.
    fn fill(&self, c: Coll, size: usize, b: &mut Bufs) {
        let n = c.block_elems(size, self.p);
        let mark = (self.me + 1) as u8;
        match (c, b) {
            (Coll::Allreduce, Bufs::Floats(s, _)) => s[..n].fill(1.0),
            (Coll::ReduceScatter, Bufs::Floats(s, _)) => s[..n * self.p].fill(1.0),
            (Coll::Bcast, Bufs::Bytes(_, r)) => r[..n].fill(if self.me == 0 { 0x5a } else { 0 }),
            (Coll::Allgather, Bufs::Bytes(s, _)) => s[..n].fill(mark),
            (Coll::Alltoall, Bufs::Bytes(s, _)) => s[..n * self.p].fill(mark),
            _ => unreachable!("buffers of the wrong type"),
        }
    }

    /// One call of `c` at `size`.
    fn call(&self, c: Coll, size: usize, b: &mut Bufs) -> Result<(), Error> {
        let n = c.block_elems(size, self.p);
        let all = n * self.p;
        match (c, b) {
            (Coll::Allreduce, Bufs::Floats(s, r)) => {
                self.w.allreduce(&s[..n], &mut r[..n], &Op::SUM)
            }
            (Coll::Bcast, Bufs::Bytes(_, r)) => self.w.bcast(&mut r[..n], 0),
            (Coll::Allgather, Bufs::Bytes(s, r)) => self.w.allgather(&s[..n], &mut r[..all]),
            (Coll::Alltoall, Bufs::Bytes(s, r)) => self.w.alltoall(&s[..all], &mut r[..all]),
            (Coll::ReduceScatter, Bufs::Floats(s, r)) => {
                self.w
                    .reduce_scatter_block(&s[..all], &mut r[..n], &Op::SUM)
            }
            _ => unreachable!("buffers of the wrong type"),
        }
    }

    /// Checks the first and last element of the result (and of the first
    /// and last block where there are blocks).
    fn verify(&self, c: Coll, size: usize, b: &Bufs) -> bool {
        let (p, n) = (self.p, c.block_elems(size, self.p));
        match b {
            Bufs::Floats(_, r) => r[0] == p as f32 && r[n - 1] == p as f32,
            Bufs::Bytes(_, r) if c == Coll::Bcast => r[0] == 0x5a && r[n - 1] == 0x5a,
            Bufs::Bytes(_, r) => {
                r[0] == 1 && r[n - 1] == 1 && r[(p - 1) * n] == p as u8 && r[p * n - 1] == p as u8
            }
        }
    }

    fn max_over_ranks(&self, v: f64) -> Result<f64, Error> {
        let mut m = [0.0f64];
        self.w.allreduce(&[v], &mut m, &Op::MAX)?;
        Ok(m[0])
    }

    fn run(&self, c: Coll, sizes: &[usize]) -> Result<(), Error> {
        let p = self.p;
        let most = sizes
            .iter()
            .map(|&s| c.buffer_elems(s, p))
            .max()
            .unwrap_or(1);
        let mut b = if c.floats() {
            Bufs::Floats(vec![0.0; most], vec![0.0; most])
        } else {
            Bufs::Bytes(vec![0; most], vec![0; most])
        };
        for &size in sizes {
            let warm = self.prm.warm_iters(size);
            self.fill(c, size, &mut b);
            self.w.barrier()?;
            let t0 = wtime();
            for _ in 0..warm {
                self.call(c, size, &mut b)?;
            }
            let per_call = self.max_over_ranks((wtime() - t0) / warm as f64)?;
            let iters = self.prm.round_iters(per_call);
            let mut best = f64::INFINITY;
            for _ in 0..self.prm.rounds {
                self.w.barrier()?;
                let t0 = wtime();
                for _ in 0..iters {
                    self.call(c, size, &mut b)?;
                }
                let t = self.max_over_ranks((wtime() - t0) / iters as f64)?;
                best = best.min(t);
            }
            if !self.verify(c, size, &b) {
                eprintln!(
                    "coll_bench: rank {}: wrong result for {} at {size} bytes",
                    self.me,
                    c.name()
                );
                std::process::exit(1);
            }
            if self.me == 0 {
                let bytes = c.bytes(size, p) as f64;
                let algbw = bytes / best / 1e9;
                self.emit(c, size, "bytes", bytes);
                self.emit(c, size, "iters", iters as f64);
                self.emit(c, size, "time_us", best * 1e6);
                self.emit(c, size, "algbw_GBps", algbw);
                self.emit(c, size, "busbw_GBps", algbw * c.bus_factor(p));
            }
        }
        Ok(())
    }
}

/// 8, 32, ..., 32 MiB, 64 MiB.
fn default_sizes() -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(8usize), |s| Some(s * 4))
        .take_while(|&s| s <= 32 * MIB)
        .collect();
    v.push(64 * MIB);
    v
}

/// Parses "N,N,..." (positive sizes).
fn parse_sizes(list: &str) -> Option<Vec<usize>> {
    let v: Option<Vec<usize>> = list
        .split(',')
        .map(|s| s.parse().ok().filter(|&n: &usize| n > 0))
        .collect();
    v.filter(|v| !v.is_empty() && v.len() <= 64)
}

/// Quick flag, collectives (all when none named) and sizes.
fn parse_args(args: &[String]) -> Option<(bool, Vec<Coll>, Vec<usize>)> {
    let (mut quick, mut colls, mut sizes) = (false, Vec::new(), default_sizes());
    for a in args {
        if a == "quick" {
            quick = true;
        } else if let Some(list) = a.strip_prefix("sizes=") {
            sizes = parse_sizes(list)?;
        } else {
            colls.push(*COLLS.iter().find(|c| c.name() == a)?);
        }
    }
    let colls = COLLS
        .into_iter()
        .filter(|c| colls.is_empty() || colls.contains(c))
        .collect();
    Some((quick, colls, sizes))
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let universe = oxmpi::init()?;
    let w = universe.world();
    let Some((quick, colls, sizes)) = parse_args(&args) else {
        if w.rank() == 0 {
            eprintln!(
                "usage: coll_bench [quick] [allreduce|bcast|allgather|alltoall|\
                 reduce_scatter ...] [sizes=N,N,...]"
            );
        }
        universe.finalize()?;
        std::process::exit(2);
    };
    let bench = Bench {
        w: &w,
        me: w.rank() as usize,
        p: w.size() as usize,
        prm: Params::new(quick),
    };
    w.barrier()?;
    for c in colls {
        bench.run(c, &sizes)?;
    }
    w.barrier()?;
    universe.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_counts_and_budgets_match_the_c_version() {
        let s = default_sizes();
        assert_eq!(s.len(), 13);
        assert_eq!((s[0], s[11], s[12]), (8, 32 * MIB, 64 * MIB));
        assert_eq!(Coll::Allreduce.bytes(8, 4), 8);
        assert_eq!(Coll::Allgather.bytes(8, 8), 8);
        assert_eq!(Coll::Alltoall.bytes(32, 8), 32);
        assert_eq!(Coll::ReduceScatter.bytes(8, 8), 32);
        assert_eq!(Coll::ReduceScatter.bytes(1024, 4), 1024);
        let p = Params::new(true);
        assert_eq!(p.warm_iters(8), 10);
        assert_eq!(p.warm_iters(64 * MIB), 1);
        assert_eq!(p.round_iters(0.0), 500);
        assert_eq!(p.round_iters(1e-4), 30);
        assert_eq!(p.round_iters(1.0), 1);
        assert!((Coll::Allreduce.bus_factor(4) - 1.5).abs() < 1e-12);
    }

    #[test]
    fn arguments() {
        let a = |v: &[&str]| parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let (q, c, s) = a(&["quick", "bcast", "sizes=8,64"]).unwrap();
        assert!(q);
        assert_eq!(c, vec![Coll::Bcast]);
        assert_eq!(s, vec![8, 64]);
        assert_eq!(a(&[]).unwrap().1.len(), 5);
        assert!(a(&["bogus"]).is_none());
        assert!(a(&["sizes=0"]).is_none());
    }

    #[test]
    fn ten_significant_digits() {
        assert_eq!(g10(67108864.0), "67108864");
        assert_eq!(g10(29.90612345678), "29.90612346");
        assert_eq!(g10(0.5), "0.5");
    }
}
