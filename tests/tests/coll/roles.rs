//! Rank programs of the collective matrix: every result is compared with a
//! serial computation of the same exactly-representable inputs.

use oxmpi::ops::Op;
use oxmpi::{Comm, Error};

/// Element counts tried: empty, one, odd, around the 64 KiB eager limit, 1 MiB.
const COUNTS: &[usize] = &[0, 1, 7, 1000, 8191, 8193, 131_072];
/// 16 MiB of i32 per buffer: each collective once more at this size, with
/// one operation (the counts above cover the operations and types).
pub const LARGE: usize = 4 << 20;

/// Rank `r`'s value at index `i`: small integers, so every sum is exact.
fn input(r: usize, i: usize) -> i32 {
    ((r * 31 + i * 7) % 17) as i32 - 8
}

fn check_allreduce(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    for &n in COUNTS {
        let ints: Vec<i32> = (0..n).map(|i| input(rank, i)).collect();
        let floats: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
        let sum = |i: usize| (0..p).map(|r| input(r, i)).sum::<i32>();
        let max = |i: usize| (0..p).map(|r| input(r, i)).max().unwrap();
        let mut out = vec![0i32; n];
        world.allreduce(&ints, &mut out, &Op::SUM)?;
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == sum(i)),
            "SUM i32 n={n}"
        );
        world.allreduce(&ints, &mut out, &Op::MAX)?;
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == max(i)),
            "MAX i32 n={n}"
        );
        let mut fout = floats.clone();
        world.allreduce_in_place(&mut fout, &Op::SUM)?;
        assert!(
            fout.iter().enumerate().all(|(i, &v)| v == sum(i) as f64),
            "SUM f64 in place n={n}"
        );
        let mut x = vec![0u32; n];
        let bits: Vec<u32> = (0..n).map(|i| 1u32 << ((rank + i) % 32)).collect();
        world.allreduce(&bits, &mut x, &Op::BXOR)?;
        let want = |i: usize| (0..p).fold(0u32, |a, r| a ^ (1u32 << ((r + i) % 32)));
        assert!(
            x.iter().enumerate().all(|(i, &v)| v == want(i)),
            "BXOR u32 n={n}"
        );
    }
    let big: Vec<i32> = (0..LARGE).map(|i| input(rank, i)).collect();
    let mut out = vec![0i32; LARGE];
    world.allreduce(&big, &mut out, &Op::SUM)?;
    let sum = |i: usize| (0..p).map(|r| input(r, i)).sum::<i32>();
    assert!(
        out.iter().enumerate().all(|(i, &v)| v == sum(i)),
        "SUM i32 16 MiB"
    );
    // Invalid op for the type is a clear error.
    let mut f = [0f32; 2];
    let err = world
        .allreduce(&[1.0f32, 2.0], &mut f, &Op::BAND)
        .unwrap_err();
    assert!(err.to_string().contains("MPI_BAND"), "{err}");
    Ok(())
}

/// 2x2 integer matrices multiply in order: a non-commutative operation.
fn matmul_op() -> Op {
    Op::user_typed(false, |a: &[u32], b: &mut [u32]| {
        for (x, y) in a.chunks(4).zip(b.chunks_mut(4)) {
            let r = [
                x[0].wrapping_mul(y[0])
                    .wrapping_add(x[1].wrapping_mul(y[2])),
                x[0].wrapping_mul(y[1])
                    .wrapping_add(x[1].wrapping_mul(y[3])),
                x[2].wrapping_mul(y[0])
                    .wrapping_add(x[3].wrapping_mul(y[2])),
                x[2].wrapping_mul(y[1])
                    .wrapping_add(x[3].wrapping_mul(y[3])),
            ];
            y.copy_from_slice(&r);
        }
    })
}

fn matrix(r: usize, k: usize) -> [u32; 4] {
    [
        1 + r as u32,
        (k % 5) as u32,
        2,
        1 + ((r * 3 + k) % 4) as u32,
    ]
}

fn check_noncommutative(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let op = matmul_op();
    for &mats in &[1usize, 3, 700] {
        let mine: Vec<u32> = (0..mats).flat_map(|k| matrix(rank, k)).collect();
        let mut want: Vec<u32> = (0..mats).flat_map(|k| matrix(0, k)).collect();
        for r in 1..p {
            // want = want * M_r (rank order).
            let next: Vec<u32> = (0..mats).flat_map(|k| matrix(r, k)).collect();
            let mut tmp = next.clone();
            oxmpi::ops::reduce_local(&want, &mut tmp, &op)?;
            want = tmp;
        }
        let mut out = vec![0u32; mine.len()];
        world.allreduce(&mine, &mut out, &op)?;
        assert_eq!(out, want, "non-commutative allreduce, {mats} matrices");
        for root in 0..p as i32 {
            let mut res = vec![0u32; mine.len()];
            let recv = (rank as i32 == root).then_some(&mut res[..]);
            world.reduce(&mine, recv, &op, root)?;
            if rank as i32 == root {
                assert_eq!(res, want, "non-commutative reduce to {root}");
            }
        }
    }
    Ok(())
}

fn check_bcast(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    for &n in COUNTS {
        for root in [0, p - 1, p / 2] {
            let mut buf: Vec<i32> = if rank == root {
                (0..n).map(|i| input(root, i)).collect()
            } else {
                vec![99; n]
            };
            world.bcast(&mut buf, root as i32)?;
            assert!(
                buf.iter().enumerate().all(|(i, &v)| v == input(root, i)),
                "bcast n={n} root={root}"
            );
        }
    }
    let root = p - 1;
    let mut big: Vec<i32> = if rank == root {
        (0..LARGE).map(|i| input(root, i)).collect()
    } else {
        vec![99; LARGE]
    };
    world.bcast(&mut big, root as i32)?;
    assert!(
        big.iter().enumerate().all(|(i, &v)| v == input(root, i)),
        "bcast 16 MiB root={root}"
    );
    check_ibcast_many(world)?;
    // As the C ABI's MPI_Bcast: a blocking call's sequence, where a
    // binomial broadcast runs without a schedule. Back to back, so that
    // roots run ahead of their leaves (by the rings' room at most).
    let _blocking = oxmpi::coll::BlockingCall::enter();
    for k in 0..4000usize {
        let root = k % p;
        let n = [1, 3, 200][k % 3];
        let mut buf = vec![if rank == root { k as u64 } else { u64::MAX }; n];
        world.bcast(&mut buf, root as i32)?;
        assert!(buf.iter().all(|&v| v == k as u64), "blocking bcast {k}");
    }
    Ok(())
}

/// Many non-blocking broadcasts outstanding from several roots, from one
/// element to past the eager limit, completed in an order that differs
/// per rank (waits and test loops); then back-to-back ibcast + wait, so
/// that roots run ahead of their leaves and find the rings full.
fn check_ibcast_many(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    const K: usize = 40;
    let len = |k: usize| [1, 3, 200, 9000, 2][k % 5];
    let root = |k: usize, round: usize| (k * 7 + round) % p;
    let value = |k: usize, round: usize, i: usize| (k * 100_003 + round * 7919 + i) as u64;
    for round in 0..3 {
        let mut bufs: Vec<Vec<u64>> = (0..K)
            .map(|k| {
                (0..len(k))
                    .map(|i| match rank == root(k, round) {
                        true => value(k, round, i),
                        false => u64::MAX,
                    })
                    .collect()
            })
            .collect();
        {
            let mut reqs = Vec::new();
            for (k, b) in bufs.iter_mut().enumerate() {
                reqs.push(Some(world.ibcast(b, root(k, round) as i32)?));
            }
            // A stride coprime with K: every request once, in a rank's own order.
            let stride = [3, 7, 11, 13, 17, 19, 23][rank % 7];
            for j in 0..K {
                let k = (rank * 5 + j * stride) % K;
                let mut r = reqs[k].take().expect("each request once");
                if j % 2 == 0 {
                    r.wait()?;
                } else {
                    while r.test()?.is_none() {}
                }
            }
        }
        for (k, b) in bufs.iter().enumerate() {
            assert!(
                b.iter().enumerate().all(|(i, &v)| v == value(k, round, i)),
                "ibcast {k} of {} elements from {} in round {round}",
                len(k),
                root(k, round)
            );
        }
    }
    for k in 0..3000usize {
        let root = (k / 500) % p;
        let mut x = [u64::MAX; 2];
        if rank == root {
            x = [k as u64, !(k as u64)];
        }
        world.ibcast(&mut x, root as i32)?.wait()?;
        assert_eq!(x, [k as u64, !(k as u64)], "back-to-back ibcast {k}");
    }
    Ok(())
}

fn check_reduce(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    for &n in COUNTS {
        let mine: Vec<i64> = (0..n).map(|i| input(rank, i) as i64).collect();
        let orig = mine.clone();
        for root in 0..p {
            let mut out = vec![0i64; n];
            let recv = (rank == root).then_some(&mut out[..]);
            world.reduce(&mine, recv, &Op::SUM, root as i32)?;
            assert_eq!(mine, orig, "reduce must not modify the send buffer");
            if rank == root {
                assert!(out
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| v == (0..p).map(|r| input(r, i) as i64).sum::<i64>()));
            }
        }
    }
    let big: Vec<i32> = (0..LARGE).map(|i| input(rank, i)).collect();
    let mut out = vec![0i32; LARGE];
    let recv = (rank == 0).then_some(&mut out[..]);
    world.reduce(&big, recv, &Op::SUM, 0)?;
    if rank == 0 {
        assert!(
            out.iter()
                .enumerate()
                .all(|(i, &v)| v == (0..p).map(|r| input(r, i)).sum::<i32>()),
            "reduce 16 MiB"
        );
    }
    Ok(())
}

fn check_allgather(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    // The last: a 16 MiB receive buffer.
    for n in COUNTS.iter().map(|&n| n.min(20_000)).chain([LARGE / p]) {
        let mine: Vec<i32> = (0..n).map(|i| input(rank, i)).collect();
        let mut all = vec![0i32; n * p];
        world.allgather(&mine, &mut all)?;
        for r in 0..p {
            assert!(
                all[r * n..(r + 1) * n]
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| v == input(r, i)),
                "allgather n={n} block {r}"
            );
        }
    }
    Ok(())
}

fn check_nonblocking(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    // Many collectives outstanding at once, completed in reverse order.
    const K: usize = 16;
    let inputs: Vec<Vec<i32>> = (0..K)
        .map(|k| {
            (0..1000 * (k % 3 + 1))
                .map(|i| input(rank + k, i))
                .collect()
        })
        .collect();
    let mut outs: Vec<Vec<i32>> = inputs.iter().map(|v| vec![0; v.len()]).collect();
    let mut bufs: Vec<Vec<i32>> = (0..K)
        .map(|k| {
            if rank == k % p {
                vec![k as i32; 100]
            } else {
                vec![0; 100]
            }
        })
        .collect();
    {
        let mut reqs = Vec::new();
        for ((inp, out), b) in inputs.iter().zip(outs.iter_mut()).zip(bufs.iter_mut()) {
            reqs.push(world.iallreduce(inp, out, &Op::SUM)?);
            let k = reqs.len() / 2;
            reqs.push(world.ibcast(b, (k % p) as i32)?);
        }
        reqs.push(world.ibarrier()?);
        while let Some(r) = reqs.pop() {
            r.wait()?;
        }
    }
    for (k, out) in outs.iter().enumerate() {
        assert!(
            out.iter()
                .enumerate()
                .all(|(i, &v)| v == (0..p).map(|r| input(r + k, i)).sum::<i32>()),
            "iallreduce {k}"
        );
    }
    for (k, b) in bufs.iter().enumerate() {
        assert!(b.iter().all(|&v| v == k as i32), "ibcast {k}");
    }
    Ok(())
}

/// Non-blocking allreduces on the row and the column communicator of a 2D
/// grid, outstanding at the same time and completed in both orders.
fn check_grid(world: &Comm) -> Result<(), Error> {
    let mut dims = [0, 0];
    oxmpi::topo::dims_create(world.size(), &mut dims)?;
    let grid = world
        .cart_create(&dims, &[false, false], false)?
        .expect("every rank is in the grid");
    let coords = grid.cart_coords(grid.rank())?;
    let row = grid.cart_sub(&[false, true])?;
    let col = grid.cart_sub(&[true, false])?;
    let (nrow, ncol) = (dims[1] as i64, dims[0] as i64);
    for round in 0..20i64 {
        let mine = [coords[0] as i64 * 1000 + coords[1] as i64 + round; 257];
        let (mut rsum, mut csum) = ([0i64; 257], [0i64; 257]);
        {
            let r = row.iallreduce(&mine, &mut rsum, &Op::SUM)?;
            let c = col.iallreduce(&mine, &mut csum, &Op::SUM)?;
            if round % 2 == 0 {
                c.wait()?;
                r.wait()?;
            } else {
                r.wait()?;
                c.wait()?;
            }
        }
        // Row: fixed coords[0], coords[1] over 0..nrow.
        let want_row = nrow * (coords[0] as i64 * 1000 + round) + nrow * (nrow - 1) / 2;
        let want_col = 1000 * ncol * (ncol - 1) / 2 + ncol * (coords[1] as i64 + round);
        assert!(rsum.iter().all(|&v| v == want_row), "row sum round {round}");
        assert!(
            csum.iter().all(|&v| v == want_col),
            "column sum round {round}"
        );
    }
    Ok(())
}

/// Allreduce and reduce (commutative and not) and bcast on the world, on the world
/// in reverse order, and on the even ranks followed by the odd ones (so
/// that nodes of consecutive world ranks are not blocks of this order).
fn check_hier(world: &Comm) -> Result<(), Error> {
    let (rank, p) = (world.rank(), world.size());
    let reversed = world.split(0, -rank)?.expect("every rank is a member");
    let interleaved = world
        .split(0, (rank % 2) * p + rank)?
        .expect("every rank is a member");
    for comm in [world, &reversed, &interleaved] {
        check_allreduce(comm)?;
        check_reduce(comm)?;
        check_noncommutative(comm)?;
        check_bcast(comm)?;
    }
    Ok(())
}

/// Runs the role named `role`.
/// A sum of i64 that panics on rank 0.
fn failing_sum(rank: i32) -> Op {
    Op::user_typed(true, move |a: &[i64], b: &mut [i64]| {
        assert!(rank != 0, "user operation failed on purpose");
        b.iter_mut().zip(a).for_each(|(y, x)| *y += x);
    })
}

/// A user operation that panics on rank 0 inside a blocking allreduce (run
/// on the calling thread) of 2 ranks, where both have sent before either
/// reduces: the panic reaches the caller as a panic, not a hang, and the
/// engine is usable afterwards (a barrier and a correct allreduce follow).
fn check_op_panics(world: &Comm) -> Result<(), Error> {
    let rank = world.rank();
    let op = failing_sum(rank);
    let mut out = [0i64; 4];
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.allreduce(&[1i64; 4], &mut out, &op)
    }));
    match caught {
        Err(p) => {
            assert_eq!(rank, 0, "only rank 0's operation panics");
            let text = oxmpi::error::panic_message(p.as_ref());
            assert!(text.contains("failed on purpose"), "{text}");
        }
        Ok(r) => {
            r?;
            assert_ne!(rank, 0, "rank 0's operation must have run and panicked");
        }
    }
    world.barrier()?;
    let mut sum = [0i64; 2];
    world.allreduce(&[rank as i64; 2], &mut sum, &Op::SUM)?;
    let p = world.size() as i64;
    assert_eq!(sum, [p * (p - 1) / 2; 2]);
    Ok(())
}

/// The same panic in a non-blocking allreduce: it does not unwind through
/// the call that happens to progress the engine; the request fails with
/// an error that says so, and the ranks go on.
fn check_op_panics_nonblocking(world: &Comm) -> Result<(), Error> {
    let rank = world.rank();
    let op = failing_sum(rank);
    let send = [1i64; 4];
    let mut out = [0i64; 4];
    let outcome = world.iallreduce(&send, &mut out, &op)?.wait();
    match outcome {
        Err(e) => {
            assert_eq!(rank, 0, "only rank 0's operation fails: {e}");
            let text = e.to_string();
            assert!(
                text.contains("panicked") && text.contains("failed on purpose"),
                "{text}"
            );
        }
        Ok(_) => assert_ne!(rank, 0, "rank 0's request must fail"),
    }
    // The same failure seen first by `peek`: the error is kept for the
    // call that completes the request (here `wait_all`).
    let mut r = world.iallreduce(&send, &mut out, &op)?;
    let peeked_error = loop {
        if let Some(outcome) = r.peek() {
            break outcome.is_err();
        }
    };
    assert_eq!(peeked_error, rank == 0, "rank {rank}: peek");
    let waited = oxmpi::wait_all(vec![r]);
    assert_eq!(waited.is_err(), rank == 0, "rank {rank}: {waited:?}");
    world.barrier()?;
    let mut sum = [0i64; 2];
    world.allreduce(&[rank as i64; 2], &mut sum, &Op::SUM)?;
    let p = world.size() as i64;
    assert_eq!(sum, [p * (p - 1) / 2; 2]);
    Ok(())
}

/// The same panic, not caught: the rank dies, and the job with it (its
/// peers wait in the collective for data rank 0 will never send).
fn check_op_panics_uncaught(world: &Comm) -> Result<(), Error> {
    let mut out = [0i64; 4];
    world.allreduce(&[1i64; 4], &mut out, &failing_sum(world.rank()))
}

pub fn run(role: &str) {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let result = match role {
        "allreduce" => check_allreduce(&world),
        "noncommutative" => check_noncommutative(&world),
        "bcast" => check_bcast(&world),
        "reduce" => check_reduce(&world),
        "allgather" => check_allgather(&world),
        "nonblocking" => check_nonblocking(&world),
        "grid" => check_grid(&world),
        "hier" => check_hier(&world),
        "op_panics" => check_op_panics(&world),
        "op_panics_uncaught" => check_op_panics_uncaught(&world),
        "op_panics_nonblocking" => check_op_panics_nonblocking(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    universe.finalize().expect("finalize");
}
