//! Allgatherv and the alltoall family, in place and not, with uneven and
//! zero counts and gapped, reordered layouts.

use oxmpi::coll::Blocks;
use oxmpi::{Comm, Error};

use crate::exchange_roles::{
    check_blocks, input, inputs, reversed_gapped, vcount, COUNTS, LARGE, UNTOUCHED,
};

/// Allgatherv with uneven counts (packed and gapped layouts) and equal
/// counts, in place and not.
pub fn check_allgatherv(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    for &n in COUNTS {
        let uneven: Vec<usize> = (0..p).map(|r| vcount(r, n)).collect();
        let even = vec![n; p];
        for counts in [uneven, even] {
            let mine = inputs(rank, counts[rank]);
            for displs in [Blocks::packed_displs(&counts), reversed_gapped(&counts)] {
                let blocks = Blocks::new(&counts, &displs);
                let mut all = vec![UNTOUCHED; blocks.extent() + 1];
                world.allgatherv(&mine, &mut all, blocks)?;
                check_blocks("allgatherv", &all, &counts, &displs, input);
                let mut all = vec![UNTOUCHED; blocks.extent() + 1];
                if counts[rank] > 0 {
                    let d = displs[rank];
                    all[d..d + counts[rank]].copy_from_slice(&mine);
                }
                world.allgatherv_in_place(&mut all, blocks)?;
                check_blocks("allgatherv in place", &all, &counts, &displs, input);
            }
        }
    }
    Ok(())
}

/// Rank `from`'s element `i` for rank `to`.
fn val(from: usize, to: usize, i: usize) -> i32 {
    ((from * 7 + to * 13 + i * 3) % 23) as i32 - 11
}

/// Elements rank `from` sends rank `to` in alltoallv: uneven, some zero.
fn vc(from: usize, to: usize, n: usize) -> usize {
    match (from + 2 * to) % 4 {
        0 => 0,
        1 => n,
        2 => n / 3,
        _ => 1,
    }
}

fn alltoall(world: &Comm, n: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let send: Vec<i32> = (0..n * p).map(|k| val(rank, k / n, k % n)).collect();
    let want = |k: usize| val(k / n, rank, k % n);
    let mut recv = vec![UNTOUCHED; n * p];
    world.alltoall(&send, &mut recv)?;
    assert!(
        recv.iter().enumerate().all(|(k, &v)| v == want(k)),
        "alltoall n={n}"
    );
    let mut buf = send.clone();
    world.alltoall_in_place(&mut buf)?;
    assert!(
        buf.iter().enumerate().all(|(k, &v)| v == want(k)),
        "alltoall in place n={n}"
    );
    Ok(())
}

fn alltoallv(world: &Comm, n: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let scounts: Vec<usize> = (0..p).map(|j| vc(rank, j, n)).collect();
    let rcounts: Vec<usize> = (0..p).map(|j| vc(j, rank, n)).collect();
    let sdispls = reversed_gapped(&scounts);
    let rdispls = reversed_gapped(&rcounts);
    let (sb, rb) = (
        Blocks::new(&scounts, &sdispls),
        Blocks::new(&rcounts, &rdispls),
    );
    let mut send = vec![UNTOUCHED; sb.extent()];
    for j in 0..p {
        for i in 0..scounts[j] {
            send[sdispls[j] + i] = val(rank, j, i);
        }
    }
    let mut recv = vec![UNTOUCHED; rb.extent() + 1];
    world.alltoallv(&send, sb, &mut recv, rb)?;
    check_blocks("alltoallv", &recv, &rcounts, &rdispls, |j, i| {
        val(j, rank, i)
    });
    // In place needs symmetric counts: rank i sends j what j sends i.
    let sym: Vec<usize> = (0..p).map(|j| vc(rank.min(j), rank.max(j), n)).collect();
    let displs = reversed_gapped(&sym);
    let blocks = Blocks::new(&sym, &displs);
    let mut buf = vec![UNTOUCHED; blocks.extent() + 1];
    for j in 0..p {
        for i in 0..sym[j] {
            buf[displs[j] + i] = val(rank, j, i);
        }
    }
    world.alltoallv_in_place(&mut buf, blocks)?;
    check_blocks("alltoallv in place", &buf, &sym, &displs, |j, i| {
        val(j, rank, i)
    });
    Ok(())
}

fn alltoallw(world: &Comm, n: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    // Odd byte counts at odd byte displacements.
    let bytes = |from: usize, to: usize| 3 * vc(from, to, n) + usize::from((from + to) % 2 == 1);
    let byte = |from: usize, to: usize, i: usize| (from * 41 + to * 11 + i) as u8;
    let scounts: Vec<usize> = (0..p).map(|j| bytes(rank, j)).collect();
    let rcounts: Vec<usize> = (0..p).map(|j| bytes(j, rank)).collect();
    let sdispls = Blocks::packed_displs(&scounts);
    let rdispls = reversed_gapped(&rcounts);
    let (sb, rb) = (
        Blocks::new(&scounts, &sdispls),
        Blocks::new(&rcounts, &rdispls),
    );
    let mut send = vec![0u8; sb.extent()];
    for j in 0..p {
        for i in 0..scounts[j] {
            send[sdispls[j] + i] = byte(rank, j, i);
        }
    }
    let mut recv = vec![0xEEu8; rb.extent() + 1];
    world.alltoallw(&send, sb, &mut recv, rb)?;
    for j in 0..p {
        for i in 0..rcounts[j] {
            assert_eq!(
                recv[rdispls[j] + i],
                byte(j, rank, i),
                "alltoallw from {j} byte {i}"
            );
        }
    }
    assert_eq!(recv[0], 0xEE, "alltoallw wrote a gap");
    // In place, symmetric counts.
    let sym: Vec<usize> = (0..p).map(|j| bytes(rank.min(j), rank.max(j))).collect();
    let displs = Blocks::packed_displs(&sym);
    let mut buf = vec![0u8; Blocks::new(&sym, &displs).extent()];
    for j in 0..p {
        for i in 0..sym[j] {
            buf[displs[j] + i] = byte(rank, j, i);
        }
    }
    world.alltoallw_in_place(&mut buf, Blocks::new(&sym, &displs))?;
    for j in 0..p {
        for i in 0..sym[j] {
            assert_eq!(buf[displs[j] + i], byte(j, rank, i), "alltoallw in place");
        }
    }
    Ok(())
}

/// Alltoall, alltoallv and alltoallw at every size.
pub fn check_alltoall(world: &Comm) -> Result<(), Error> {
    for &n in COUNTS {
        alltoall(world, n)?;
        alltoallv(world, n)?;
        alltoallw(world, n)?;
    }
    // 16 MiB of i32 to send from each rank.
    alltoall(world, LARGE / world.size() as usize)
}
