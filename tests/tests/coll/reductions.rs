//! Reduce_scatter, reduce_scatter_block, scan and exscan: built-in
//! operations against serial sums, and a non-commutative operation
//! (matrix product) proving rank order; in place and not.

use oxmpi::ops::Op;
use oxmpi::{Comm, Error};

use crate::exchange_roles::{
    input, inputs, matmul_op, matrices, product, vcount, COUNTS, LARGE, UNTOUCHED,
};

/// Sum over ranks `lo..hi` of element `i`.
fn sum(lo: usize, hi: usize, i: usize) -> i32 {
    (lo..hi).map(|r| input(r, i)).sum()
}

fn block_sums(world: &Comm, n: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let send = inputs(rank, n * p);
    let want: Vec<i32> = (0..n).map(|i| sum(0, p, rank * n + i)).collect();
    let mut got = vec![UNTOUCHED; n];
    world.reduce_scatter_block(&send, &mut got, &Op::SUM)?;
    assert_eq!(got, want, "reduce_scatter_block n={n}");
    let mut buf = send.clone();
    world.reduce_scatter_block_in_place(&mut buf, &Op::SUM)?;
    assert_eq!(buf[..n], want[..], "reduce_scatter_block in place n={n}");
    // f64 and MAX over the same values.
    let fsend: Vec<f64> = send.iter().map(|&v| v as f64).collect();
    let mut fgot = vec![0.0; n];
    world.reduce_scatter_block(&fsend, &mut fgot, &Op::MAX)?;
    let fmax = |i: usize| (0..p).map(|r| input(r, rank * n + i)).max().unwrap() as f64;
    assert!(
        fgot.iter().enumerate().all(|(i, &v)| v == fmax(i)),
        "MAX f64 n={n}"
    );
    Ok(())
}

fn uneven_sums(world: &Comm, n: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let counts: Vec<usize> = (0..p).map(|r| vcount(r + 2, n)).collect();
    let total: usize = counts.iter().sum();
    let start: usize = counts[..rank].iter().sum();
    let send = inputs(rank, total);
    let want: Vec<i32> = (0..counts[rank]).map(|i| sum(0, p, start + i)).collect();
    let mut got = vec![UNTOUCHED; counts[rank]];
    world.reduce_scatter(&send, &mut got, &counts, &Op::SUM)?;
    assert_eq!(got, want, "reduce_scatter n={n}");
    let mut buf = send.clone();
    world.reduce_scatter_in_place(&mut buf, &counts, &Op::SUM)?;
    assert_eq!(
        buf[..counts[rank]],
        want[..],
        "reduce_scatter in place n={n}"
    );
    Ok(())
}

fn noncommutative_reduce_scatter(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let op = matmul_op();
    for &mats in &[1usize, 3, 700] {
        // Block r holds `m(r)` matrices; some blocks are empty.
        let m = |r: usize| if r % 4 == 3 { 0 } else { mats + r };
        let counts: Vec<usize> = (0..p).map(|r| 4 * m(r)).collect();
        let total: usize = counts.iter().sum::<usize>() / 4;
        let start: usize = counts[..rank].iter().sum();
        let want = &product(0, p, total)[start..start + counts[rank]];
        let mut got = vec![0u32; counts[rank]];
        world.reduce_scatter(&matrices(rank, total), &mut got, &counts, &op)?;
        assert_eq!(got, want, "non-commutative reduce_scatter, {mats} matrices");
        let mut buf = matrices(rank, total);
        world.reduce_scatter_in_place(&mut buf, &counts, &op)?;
        assert_eq!(&buf[..counts[rank]], want, "non-commutative in place");
        let mut got = vec![0u32; 4 * mats];
        world.reduce_scatter_block(&matrices(rank, mats * p), &mut got, &op)?;
        let all = product(0, p, mats * p);
        assert_eq!(got, all[rank * 4 * mats..(rank + 1) * 4 * mats], "block");
    }
    Ok(())
}

/// Reduce_scatter and reduce_scatter_block.
pub fn check_reduce_scatter(world: &Comm) -> Result<(), Error> {
    for &n in COUNTS {
        block_sums(world, n)?;
        uneven_sums(world, n)?;
    }
    // 16 MiB of i32 to reduce in all.
    block_sums(world, LARGE / world.size() as usize)?;
    noncommutative_reduce_scatter(world)
}

fn scan_sums(world: &Comm, n: usize) -> Result<(), Error> {
    let rank = world.rank() as usize;
    let mine = inputs(rank, n);
    let incl: Vec<i32> = (0..n).map(|i| sum(0, rank + 1, i)).collect();
    let excl: Vec<i32> = (0..n).map(|i| sum(0, rank, i)).collect();
    let mut got = vec![UNTOUCHED; n];
    world.scan(&mine, &mut got, &Op::SUM)?;
    assert_eq!(got, incl, "scan n={n}");
    let mut buf = mine.clone();
    world.scan_in_place(&mut buf, &Op::SUM)?;
    assert_eq!(buf, incl, "scan in place n={n}");
    let mut got = vec![UNTOUCHED; n];
    world.exscan(&mine, &mut got, &Op::SUM)?;
    if rank == 0 {
        assert!(got.iter().all(|&v| v == UNTOUCHED), "exscan wrote rank 0");
    } else {
        assert_eq!(got, excl, "exscan n={n}");
    }
    let mut buf = mine.clone();
    world.exscan_in_place(&mut buf, &Op::SUM)?;
    assert_eq!(
        buf,
        if rank == 0 { mine } else { excl },
        "exscan in place n={n}"
    );
    Ok(())
}

/// Scan and exscan.
pub fn check_scan(world: &Comm) -> Result<(), Error> {
    let rank = world.rank() as usize;
    for &n in COUNTS {
        scan_sums(world, n)?;
    }
    let op = matmul_op();
    for &mats in &[1usize, 3, 700] {
        let mine = matrices(rank, mats);
        let mut got = vec![0u32; mine.len()];
        world.scan(&mine, &mut got, &op)?;
        assert_eq!(got, product(0, rank + 1, mats), "non-commutative scan");
        let mut got = vec![7u32; mine.len()];
        world.exscan(&mine, &mut got, &op)?;
        if rank > 0 {
            assert_eq!(got, product(0, rank, mats), "non-commutative exscan");
        }
        let mut buf = mine.clone();
        world.exscan_in_place(&mut buf, &op)?;
        if rank > 0 {
            assert_eq!(
                buf,
                product(0, rank, mats),
                "non-commutative exscan in place"
            );
        }
    }
    Ok(())
}
