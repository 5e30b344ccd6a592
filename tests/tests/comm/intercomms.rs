//! Rank program for intercommunicators through the Rust API: world split
//! into uneven groups (ranks divisible by 3 against the rest), made into an
//! intercommunicator over the world bridge, then point-to-point across,
//! rooted and all-to-all collectives with `ROOT` / `PROC_NULL`, merge in
//! both orders, dup, split, `intercomm_from_groups` and
//! `create_from_group`; every result compared with a serial computation.
//! Panics on any deviation.

use oxmpi::coll::intercomm::ROOT;
use oxmpi::ops::Op;
use oxmpi::{Comm, Error, ErrorClass, PROC_NULL};

/// World ranks of group `color` (0: multiples of 3; 1: the others).
fn members(size: i32, color: i32) -> Vec<i32> {
    (0..size)
        .filter(|r| i32::from(r % 3 != 0) == color)
        .collect()
}

pub fn intercomm(world: &Comm) -> Result<(), Error> {
    let (me, size) = (world.rank(), world.size());
    if size < 2 {
        assert!(world.remote_size().is_err());
        return Ok(());
    }
    let color = i32::from(me % 3 != 0);
    let (mine, theirs) = (members(size, color), members(size, 1 - color));
    let half = world.split(color, me)?.expect("every rank has a color");
    // A bad remote leader fails the whole local group, not only its leader.
    let e = half
        .intercomm_create(0, Some(world), size + 5, 11)
        .unwrap_err();
    let class = if half.rank() == 0 {
        ErrorClass::Rank
    } else {
        ErrorClass::Comm
    };
    assert_eq!(e.class(), class, "{e}");
    // Leaders: world ranks 0 and 1.
    let inter = half.intercomm_create(0, Some(world), 1 - color, 11)?;
    assert!(inter.is_inter());
    assert_eq!(inter.size(), mine.len() as i32);
    assert_eq!(inter.remote_size()?, theirs.len() as i32);
    let remote: Vec<i32> = inter
        .remote_group()?
        .world_ranks()
        .iter()
        .map(|&w| w as i32)
        .collect();
    assert_eq!(remote, theirs);
    let rank = inter.rank();

    // Point-to-point: every rank sends its world rank to every remote rank.
    for r in 0..inter.remote_size()? {
        inter.send(&[me], r, 4)?;
    }
    for r in 0..inter.remote_size()? {
        let mut got = [-1i32];
        let st = inter.recv(&mut got, r, 4)?;
        assert_eq!((got[0], st.source), (theirs[r as usize], r));
    }

    // Rooted: the last rank of each group is the root in turn.
    for root_color in 0..2 {
        let root = members(size, root_color).len() as i32 - 1;
        let arg = if color == root_color {
            if rank == root {
                ROOT
            } else {
                PROC_NULL
            }
        } else {
            root
        };
        let mut v = if arg == ROOT {
            [7i64, me as i64]
        } else {
            [0, 0]
        };
        inter.bcast(&mut v, arg)?;
        let root_world = members(size, root_color)[root as usize] as i64;
        match arg {
            PROC_NULL => assert_eq!(v, [0, 0]),
            _ => assert_eq!(v, [7, root_world]),
        }
        let mut total = [0i64];
        let at_root = arg == ROOT;
        inter.reduce(
            &[me as i64 * 2],
            at_root.then_some(&mut total[..]),
            &Op::SUM,
            arg,
        )?;
        if at_root {
            let want: i64 = theirs.iter().map(|&w| w as i64 * 2).sum();
            assert_eq!(total[0], want);
        }
    }

    // All: each group gets the other's data.
    let mut sum = [0i64];
    inter.allreduce(&[me as i64], &mut sum, &Op::SUM)?;
    assert_eq!(sum[0], theirs.iter().map(|&w| w as i64).sum::<i64>());
    let mut all = vec![-1i32; theirs.len()];
    inter.allgather(&[me], &mut all)?;
    assert_eq!(all, theirs);
    let send: Vec<i32> = (0..theirs.len() as i32).map(|j| me * 100 + j).collect();
    let mut recv = vec![-1i32; theirs.len()];
    inter.alltoall(&send, &mut recv)?;
    let want: Vec<i32> = theirs.iter().map(|&w| w * 100 + rank).collect();
    assert_eq!(recv, want);
    // Neither barrier returns before the other group has entered it: group
    // 1 enters 100 ms late (a lower bound only, which a slow machine keeps).
    for blocking in [true, false] {
        if color == 1 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let t0 = oxmpi::wtime();
        if blocking {
            inter.barrier()?;
        } else {
            inter.ibarrier()?.wait()?;
        }
        if color == 0 {
            let waited = oxmpi::wtime() - t0;
            assert!(waited >= 0.09, "barrier returned after {waited}s");
        }
    }
    let e = inter.scan(&[1i32], &mut [0], &Op::SUM).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Comm);

    // Merge: the group passing high = true comes second.
    for high_color in 0..2 {
        let merged = inter.merge(color == high_color)?;
        let order = [members(size, 1 - high_color), members(size, high_color)].concat();
        let ranks: Vec<i32> = merged.world_ranks().iter().map(|&w| w as i32).collect();
        assert_eq!(ranks, order, "merge with group {high_color} high");
        let mut s = [0i64];
        merged.allreduce(&[me as i64], &mut s, &Op::SUM)?;
        assert_eq!(s[0], (size as i64) * (size as i64 - 1) / 2);
        merged.free()?;
    }

    // Dup and split of the intercommunicator.
    let dup = inter.dup()?;
    assert!(dup.is_inter() && dup.remote_size()? == inter.remote_size()?);
    let mut s = [0i64];
    dup.allreduce(&[1i64], &mut s, &Op::SUM)?;
    assert_eq!(s[0], theirs.len() as i64);
    dup.free()?;
    let firsts = inter.split(i32::from(rank != 0), 0)?;
    if rank == 0 {
        let f = firsts.expect("both groups have a rank 0");
        assert_eq!((f.size(), f.remote_size()?), (1, 1));
        f.free()?;
    }

    // Parentless constructors.
    let g = world.group();
    let (gm, gt) = (g.incl(&mine)?, g.incl(&theirs)?);
    let fg = world.intercomm_from_groups(&gm, &gt, "rust-halves")?;
    assert_eq!(fg.remote_size()?, theirs.len() as i32);
    let mut s = [0i64];
    fg.allreduce(&[me as i64], &mut s, &Op::MAX)?;
    assert_eq!(s[0], *theirs.iter().max().unwrap() as i64);
    let all = world
        .create_from_group(&g, "rust-everyone")?
        .expect("a member");
    let mut s = [0i64];
    all.allreduce(&[1i64], &mut s, &Op::SUM)?;
    assert_eq!(s[0], size as i64);
    Ok(())
}
