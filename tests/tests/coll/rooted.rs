//! Gather, scatter, gatherv and scatterv at every root, in place and not.

use oxmpi::coll::Blocks;
use oxmpi::{Comm, Error};

use crate::exchange_roles::{
    check_blocks, input, inputs, reversed_gapped, roots, vcount, COUNTS, UNTOUCHED,
};

fn gather(world: &Comm, n: usize, root: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let mine = inputs(rank, n);
    let want = |r: usize, i: usize| input(r, i);
    let mut all = vec![UNTOUCHED; n * p];
    world.gather(&mine, (rank == root).then_some(&mut all[..]), root as i32)?;
    if rank == root {
        assert!(
            all.iter()
                .enumerate()
                .all(|(k, &v)| v == want(k / n, k % n)),
            "gather n={n} root={root}"
        );
        let mut all = vec![UNTOUCHED; n * p];
        all[root * n..(root + 1) * n].copy_from_slice(&mine);
        world.gather_in_place(&mut all, root as i32)?;
        assert!(
            all.iter()
                .enumerate()
                .all(|(k, &v)| v == want(k / n, k % n)),
            "gather in place n={n} root={root}"
        );
    } else {
        world.gather(&mine, None, root as i32)?;
    }
    Ok(())
}

fn scatter(world: &Comm, n: usize, root: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let src: Vec<i32> = (0..n * p).map(|k| input(k / n + 7, k % n)).collect();
    let mut got = vec![UNTOUCHED; n];
    world.scatter((rank == root).then_some(&src[..]), &mut got, root as i32)?;
    assert_eq!(got, inputs(rank + 7, n), "scatter n={n} root={root}");
    if rank == root {
        world.scatter_in_place(&src, root as i32)?;
    } else {
        let mut got = vec![UNTOUCHED; n];
        world.scatter(None, &mut got, root as i32)?;
        assert_eq!(
            got,
            inputs(rank + 7, n),
            "scatter in place n={n} root={root}"
        );
    }
    Ok(())
}

fn gatherv(world: &Comm, n: usize, root: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let counts: Vec<usize> = (0..p).map(|r| vcount(r, n)).collect();
    let mine = inputs(rank, counts[rank]);
    for displs in [Blocks::packed_displs(&counts), reversed_gapped(&counts)] {
        let blocks = Blocks::new(&counts, &displs);
        let mut all = vec![UNTOUCHED; blocks.extent() + 1];
        if rank == root {
            world.gatherv(&mine, Some(&mut all), blocks, root as i32)?;
            check_blocks("gatherv", &all, &counts, &displs, input);
            let mut all = vec![UNTOUCHED; blocks.extent() + 1];
            if counts[root] > 0 {
                let d = displs[root];
                all[d..d + counts[root]].copy_from_slice(&mine);
            }
            world.gatherv_in_place(&mut all, blocks, root as i32)?;
            check_blocks("gatherv in place", &all, &counts, &displs, input);
        } else {
            // Only the root's counts matter: the others pass none.
            world.gatherv(&mine, None, Blocks::NONE, root as i32)?;
            world.gatherv(&mine, None, Blocks::NONE, root as i32)?;
        }
    }
    Ok(())
}

fn scatterv(world: &Comm, n: usize, root: usize) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let counts: Vec<usize> = (0..p).map(|r| vcount(r + 1, n)).collect();
    for displs in [Blocks::packed_displs(&counts), reversed_gapped(&counts)] {
        let blocks = Blocks::new(&counts, &displs);
        let mut src = vec![UNTOUCHED; blocks.extent()];
        for r in (0..p).filter(|&r| counts[r] > 0) {
            let want = inputs(r + 3, counts[r]);
            src[displs[r]..displs[r] + counts[r]].copy_from_slice(&want);
        }
        let mut got = vec![UNTOUCHED; counts[rank]];
        if rank == root {
            world.scatterv(Some(&src), blocks, &mut got, root as i32)?;
            world.scatterv_in_place(&src, blocks, root as i32)?;
        } else {
            world.scatterv(None, Blocks::NONE, &mut got, root as i32)?;
            let mut again = vec![UNTOUCHED; counts[rank]];
            world.scatterv(None, Blocks::NONE, &mut again, root as i32)?;
            assert_eq!(got, again, "scatterv in place n={n} root={root}");
        }
        assert_eq!(
            got,
            inputs(rank + 3, counts[rank]),
            "scatterv n={n} root={root}"
        );
    }
    Ok(())
}

/// Every rooted collective at every size and a few roots.
pub fn check(world: &Comm) -> Result<(), Error> {
    let p = world.size() as usize;
    for &n in COUNTS {
        for root in roots(p, n) {
            gather(world, n, root)?;
            scatter(world, n, root)?;
            gatherv(world, n, root)?;
            scatterv(world, n, root)?;
        }
    }
    Ok(())
}
