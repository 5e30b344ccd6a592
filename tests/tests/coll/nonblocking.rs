//! Many non-blocking collectives of different kinds outstanding at once,
//! completed in reverse order of starting.

use oxmpi::coll::Blocks;
use oxmpi::ops::Op;
use oxmpi::{Comm, Error, Request};

use crate::exchange_roles::{input, inputs, matmul_op, matrices, product, vcount, UNTOUCHED};

/// Every kind of the new collectives started twice, then waited newest first.
pub fn check(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    const ROUNDS: usize = 2;
    let n = 3000;
    let root = p / 2;
    let counts: Vec<usize> = (0..p).map(|r| vcount(r, 100)).collect();
    let displs = Blocks::packed_displs(&counts);
    let blocks = Blocks::new(&counts, &displs);
    let mine = inputs(rank, n);
    let vmine = inputs(rank, counts[rank]);
    let a2a: Vec<i32> = (0..n * p).map(|k| input(rank * p + k / n, k % n)).collect();
    let rs_in = inputs(rank, n * p);
    let mats = matrices(rank, 5);
    let src: Vec<i32> = (0..n * p).map(|k| input(k / n + 5, k % n)).collect();
    let mut gathered = vec![vec![UNTOUCHED; n * p]; ROUNDS];
    let mut scattered = vec![vec![UNTOUCHED; n]; ROUNDS];
    let mut allv = vec![vec![UNTOUCHED; blocks.extent()]; ROUNDS];
    let mut a2a_out = vec![vec![UNTOUCHED; n * p]; ROUNDS];
    let mut rs_out = vec![vec![UNTOUCHED; n]; ROUNDS];
    let mut scan_out = vec![vec![0u32; mats.len()]; ROUNDS];
    let mut exscan_out = vec![vec![UNTOUCHED; n]; ROUNDS];
    let op = matmul_op();
    {
        let mut reqs: Vec<Request<'_>> = Vec::new();
        let outs = gathered
            .iter_mut()
            .zip(&mut scattered)
            .zip(&mut allv)
            .zip(&mut a2a_out)
            .zip(&mut rs_out)
            .zip(&mut scan_out)
            .zip(&mut exscan_out);
        for ((((((g, s), v), a), r), sc), ex) in outs {
            let at_root = rank == root;
            reqs.push(world.igather(&mine, at_root.then_some(&mut g[..]), root as i32)?);
            reqs.push(world.iscatter(at_root.then_some(&src[..]), s, root as i32)?);
            reqs.push(world.iallgatherv(&vmine, v, blocks)?);
            reqs.push(world.ialltoall(&a2a, a)?);
            reqs.push(world.ireduce_scatter_block(&rs_in, r, &Op::SUM)?);
            reqs.push(world.iscan(&mats, sc, &op)?);
            reqs.push(world.iexscan(&mine, ex, &Op::SUM)?);
            reqs.push(world.ibarrier()?);
        }
        while let Some(r) = reqs.pop() {
            r.wait()?;
        }
    }
    for k in 0..ROUNDS {
        if rank == root {
            let g = &gathered[k];
            assert!(
                g.iter().enumerate().all(|(j, &v)| v == input(j / n, j % n)),
                "igather"
            );
        }
        assert_eq!(scattered[k], inputs(rank + 5, n), "iscatter");
        for r in 0..p {
            assert_eq!(
                allv[k][displs[r]..displs[r] + counts[r]],
                inputs(r, counts[r])[..]
            );
        }
        let a = &a2a_out[k];
        assert!(
            a.iter()
                .enumerate()
                .all(|(j, &v)| v == input((j / n) * p + rank, j % n)),
            "ialltoall"
        );
        let want: Vec<i32> = (0..n)
            .map(|i| (0..p).map(|q| input(q, rank * n + i)).sum())
            .collect();
        assert_eq!(rs_out[k], want, "ireduce_scatter_block");
        assert_eq!(scan_out[k], product(0, rank + 1, 5), "iscan");
        if rank > 0 {
            let want: Vec<i32> = (0..n)
                .map(|i| (0..rank).map(|q| input(q, i)).sum())
                .collect();
            assert_eq!(exscan_out[k], want, "iexscan");
        }
    }
    Ok(())
}
