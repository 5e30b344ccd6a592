//! Rank programs of the exchange collective matrix (gather, scatter, the v
//! variants, alltoall*, reduce_scatter*, scan, exscan): shared inputs and
//! helpers, error cases, and many non-blocking collectives at once. Every
//! result is compared with a serial computation of the same exact inputs.

use oxmpi::coll::Blocks;
use oxmpi::ops::Op;
use oxmpi::{Comm, Error, ErrorClass};

/// Elements (i32) per block: empty, one, either side of the 8 KiB shm
/// cell and of the 64 KiB eager limit, 1 MiB.
pub const COUNTS: &[usize] = &[0, 1, 2047, 2049, 16383, 16385, 262_144];
/// 16 MiB of i32: the largest size of the matrix, tried once per collective.
pub const LARGE: usize = 4 << 20;

/// Marks memory a collective must not write.
pub const UNTOUCHED: i32 = -99;

/// Rank `r`'s value at index `i`: small integers, so every sum is exact.
pub fn input(r: usize, i: usize) -> i32 {
    ((r * 31 + i * 7) % 17) as i32 - 8
}

/// Rank `r`'s vector of `n` inputs.
pub fn inputs(r: usize, n: usize) -> Vec<i32> {
    (0..n).map(|i| input(r, i)).collect()
}

/// Uneven block sizes with zeros: rank 0 (and every third) contributes
/// nothing, others `n` or about half of it.
pub fn vcount(r: usize, n: usize) -> usize {
    match r % 3 {
        0 => 0,
        1 => n,
        _ => n / 2 + 1,
    }
}

/// Displacements of `counts` in reverse rank order with one-element gaps.
pub fn reversed_gapped(counts: &[usize]) -> Vec<usize> {
    let mut displs = vec![0; counts.len()];
    let mut at = 1;
    for r in (0..counts.len()).rev() {
        displs[r] = at;
        at += counts[r] + 1;
    }
    displs
}

/// Checks block r of `buf` (laid out by `counts`, `displs`) against
/// `want(r, i)` and every gap against [`UNTOUCHED`].
pub fn check_blocks(
    what: &str,
    buf: &[i32],
    counts: &[usize],
    displs: &[usize],
    want: impl Fn(usize, usize) -> i32,
) {
    let mut covered = vec![false; buf.len()];
    for r in 0..counts.len() {
        for i in 0..counts[r] {
            let at = displs[r] + i;
            covered[at] = true;
            assert_eq!(buf[at], want(r, i), "{what}: block {r} element {i}");
        }
    }
    for (at, _) in covered.iter().enumerate().filter(|(_, c)| !**c) {
        assert_eq!(buf[at], UNTOUCHED, "{what}: gap at {at} was written");
    }
}

/// The roots tried: first, last and middle rank (fewer for large sizes).
pub fn roots(p: usize, n: usize) -> Vec<usize> {
    let mut r = if n > 20_000 {
        vec![p / 2]
    } else {
        vec![0, p - 1, p / 2]
    };
    r.dedup();
    r.sort_unstable();
    r.dedup();
    r
}

/// 2x2 integer matrices multiplied in order: a non-commutative operation
/// (`inout = input * inout`, each matrix four consecutive u32).
pub fn matmul_op() -> Op {
    Op::user_typed(false, |a: &[u32], b: &mut [u32]| {
        for (x, y) in a.chunks(4).zip(b.chunks_mut(4)) {
            let m = |i: usize, j: usize| {
                x[2 * i]
                    .wrapping_mul(y[j])
                    .wrapping_add(x[2 * i + 1].wrapping_mul(y[2 + j]))
            };
            let r = [m(0, 0), m(0, 1), m(1, 0), m(1, 1)];
            y.copy_from_slice(&r);
        }
    })
}

/// Rank `r`'s matrix number `k`.
pub fn matrix(r: usize, k: usize) -> [u32; 4] {
    [
        1 + r as u32,
        (k % 5) as u32,
        2,
        1 + ((r * 3 + k) % 4) as u32,
    ]
}

/// Rank `r`'s `mats` matrices, flattened.
pub fn matrices(r: usize, mats: usize) -> Vec<u32> {
    (0..mats).flat_map(|k| matrix(r, k)).collect()
}

/// The product M_lo * ... * M_{hi-1} of ranks' `mats` matrices, in rank order.
pub fn product(lo: usize, hi: usize, mats: usize) -> Vec<u32> {
    let op = matmul_op();
    let mut acc = matrices(lo, mats);
    for r in lo + 1..hi {
        let mut next = matrices(r, mats);
        oxmpi::ops::reduce_local(&acc, &mut next, &op).unwrap();
        acc = next;
    }
    acc
}

fn expect_arg<T>(what: &str, r: Result<T, Error>, arg: &str) {
    match r {
        Err(Error::InvalidArgument { arg: a, reason }) => {
            assert_eq!(a, arg, "{what}: wrong argument named ({reason})");
            assert!(!reason.is_empty());
        }
        Err(e) => panic!("{what}: expected InvalidArgument {{ arg: {arg} }}, got {e}"),
        Ok(_) => panic!("{what}: expected an error naming {arg}"),
    }
}

fn check_errors(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let counts = vec![1usize; p + 1];
    let displs = Blocks::packed_displs(&counts);
    let mut recv = vec![0i32; p + 1];
    let r = world.allgatherv(&[1], &mut recv, Blocks::new(&counts, &displs));
    expect_arg("allgatherv counts", r, "recvcounts");
    let ok = vec![1usize; p];
    let ok_d = Blocks::packed_displs(&ok);
    let r = world.alltoallv(
        &vec![0i32; p],
        Blocks::new(&ok, &ok_d[1..]),
        &mut vec![0i32; p],
        Blocks::new(&ok, &ok_d),
    );
    expect_arg("alltoallv sdispls", r, "sdispls");
    let r = world.reduce_scatter(
        &[1i32; 2],
        &mut [0],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        &Op::SUM,
    );
    expect_arg("reduce_scatter counts", r, "recvcounts");
    let r = world.allgatherv(&[1], &mut vec![0i32; p], Blocks::new(&ok, &vec![p; p]));
    expect_arg("allgatherv buffer too small", r, "recvbuf");
    if p > 1 {
        let r = world.alltoall(&vec![0i32; p + 1], &mut vec![0i32; p + 1]);
        expect_arg("alltoall uneven", r, "sendbuf");
    }
    let r = world.scan(&[1i32, 2], &mut [0i32], &Op::SUM);
    expect_arg("scan lengths", r, "recvbuf");
    for root in [p as i32, -1] {
        let err = world.gather(&[1i32], None, root).unwrap_err();
        assert!(
            matches!(err, Error::InvalidRank { arg: "root", value, .. } if value == root),
            "{err}"
        );
        assert_eq!(err.class(), ErrorClass::Root);
        let err = world
            .scatterv(None, Blocks::NONE, &mut [0i32], root)
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidRank { arg: "root", .. }),
            "{err}"
        );
    }
    let e = world
        .reduce_scatter_block(&vec![1.0f32; p], &mut [0.0f32], &Op::BAND)
        .unwrap_err();
    assert!(e.to_string().contains("MPI_BAND"), "{e}");
    let e = world
        .exscan(&[1.0f32], &mut [0.0f32], &Op::BAND)
        .unwrap_err();
    assert!(e.to_string().contains("MPI_BAND"), "{e}");
    // Nothing was started: the communicator is still in step.
    let mut all = vec![0i32; p];
    world.allgather(&[rank as i32], &mut all)?;
    assert!(all.iter().enumerate().all(|(r, &v)| v == r as i32));
    Ok(())
}

/// Runs the role named `role`.
pub fn run(role: &str) {
    let universe = oxmpi::init().unwrap_or_else(|e| panic!("init: {e}"));
    let world = universe.world();
    let result = match role {
        "rooted" => crate::rooted::check(&world),
        "allgatherv" => crate::exchange::check_allgatherv(&world),
        "alltoall" => crate::exchange::check_alltoall(&world),
        "reduce_scatter" => crate::reductions::check_reduce_scatter(&world),
        "scan" => crate::reductions::check_scan(&world),
        "errors" => check_errors(&world),
        "nonblocking" => crate::nonblocking::check(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    universe.finalize().expect("finalize");
}
