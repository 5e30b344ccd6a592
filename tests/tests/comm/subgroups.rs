//! Rank programs for the constructors that do not involve every rank of
//! the parent at once: `create_group` (its group's members only) and the
//! non-blocking `idup`. Each panics on any deviation.

use oxmpi::{Comm, Comparison, Error, Group};

use crate::comm::{ring, sum};

/// Even and odd ranks build their own communicators at the same time (the
/// same tag), then only ranks 1.. build one while rank 0 waits for a
/// message rank 1 sends once its communicator works; a process outside
/// the group gets `None`.
pub fn create_group(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    for round in 0..10 {
        let mine: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).collect();
        let g = world.group().incl(&mine)?;
        let half = world
            .create_group(&g, 3)?
            .expect("a member of its own group");
        assert_eq!(half.size(), mine.len() as i32);
        let at = mine.iter().position(|&r| r == rank).unwrap() as i32;
        assert_eq!(half.rank(), at);
        let total: i64 = mine.iter().map(|&r| r as i64).sum();
        assert_eq!(sum(&half, rank as i64, round)?, total);
        let hs = half.size();
        assert_eq!(ring(&half, round, 5)?, [(at + hs - 1) % hs, round]);
        half.free()?;
    }
    if size > 1 {
        if rank == 0 {
            let mut v = [0i32];
            world.recv(&mut v, 1, 8)?;
            assert_eq!(v[0], 99);
        } else {
            let rest: Vec<i32> = (1..size).rev().collect();
            let g = world.group().incl(&rest)?;
            let c = world.create_group(&g, 0)?.expect("a member");
            assert_eq!(c.rank(), size - 1 - rank);
            assert_eq!(sum(&c, 1, 1)?, (size - 1) as i64);
            if rank == 1 {
                world.send(&[99i32], 0, 8)?;
            }
        }
    }
    assert!(world.create_group(&Group::empty(), 0)?.is_none());
    let bad = world.create_group(&world.group(), -1).unwrap_err();
    assert_eq!(bad.class(), oxmpi::ErrorClass::Tag);
    Ok(())
}

/// Idups of two communicators started in opposite orders on even and odd
/// ranks, completed together.
pub fn idup(world: &Comm) -> Result<(), Error> {
    let rank = world.rank();
    let (a, b) = (world.dup()?, world.dup()?);
    for _ in 0..10 {
        let ((ra, pa), (rb, pb)) = if rank % 2 == 0 {
            let x = a.idup()?;
            (x, b.idup()?)
        } else {
            let y = b.idup()?;
            (a.idup()?, y)
        };
        oxmpi::wait_all(vec![ra, rb])?;
        let (na, nb) = (pa.into_comm()?, pb.into_comm()?);
        assert_eq!(na.compare(&a), Comparison::Congruent);
        assert_ne!(na.id(), nb.id());
        assert_eq!(sum(&na, 1, 0)?, world.size() as i64);
        assert_eq!(sum(&nb, 2, 0)?, 2 * world.size() as i64);
        na.free()?;
        nb.free()?;
    }
    Ok(())
}
