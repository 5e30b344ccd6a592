//! Collective roles with derived datatypes through views, each checked
//! against a serial computation of what every rank holds.

use oxmpi::datatype::{BasicType, Datatype, Order, View, ViewMut};
use oxmpi::ops::Op;
use oxmpi::{Comm, Error};

fn committed(t: Datatype) -> Datatype {
    t.commit();
    t
}

fn f64_t() -> Datatype {
    Datatype::basic(BasicType::Double)
}

/// A deterministic value: rank `r`, then two indices.
fn f(r: i32, a: usize, b: usize) -> f64 {
    f64::from(r) * 1e6 + a as f64 * 1e3 + b as f64
}

/// Column type of a `rows x cols` row-major f64 matrix, resized so that
/// consecutive elements are consecutive columns.
fn columns(rows: usize, cols: usize) -> Result<Datatype, Error> {
    let v = Datatype::vector(rows as isize, 1, cols as isize, &f64_t())?;
    Ok(committed(Datatype::resized(&v, 0, 8)?))
}

fn bcast(world: &Comm, n: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    // The n/2 x n/2 block at (n/4, n/4) of an n x n matrix.
    let (s, o) = (n / 2, n / 4);
    let sub = committed(Datatype::subarray(
        &[n as isize, n as isize],
        &[s as isize, s as isize],
        &[o as isize, o as isize],
        Order::C,
        &f64_t(),
    )?);
    for root in 0..p {
        let mut m = vec![-1.0f64; n * n];
        if me == root {
            m.iter_mut()
                .enumerate()
                .for_each(|(k, v)| *v = f(root, k / n, k % n));
        }
        world.bcast_view(&mut ViewMut::new(&mut m, &sub, 1)?, root)?;
        for i in 0..n {
            for j in 0..n {
                let inside = (o..o + s).contains(&i) && (o..o + s).contains(&j);
                let want = if inside || me == root {
                    f(root, i, j)
                } else {
                    -1.0
                };
                assert_eq!(m[i * n + j], want, "bcast from {root}: ({i}, {j}) of {n}");
            }
        }
    }
    Ok(())
}

fn gather_scatter(world: &Comm, k: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let pu = p as usize;
    let cols = columns(k, pu)?;
    let every_other = committed(Datatype::vector(k as isize, 1, 2, &f64_t())?);
    for root in 0..p {
        // Gather: each rank's every-other elements become column `me` of
        // the root's k x p matrix.
        let mine: Vec<f64> = (0..2 * k).map(|i| f(me, i, 0)).collect();
        let mut m = vec![0.0f64; k * pu];
        let mut recv = ViewMut::new(&mut m, &cols, pu)?;
        let recv = (me == root).then_some(&mut recv);
        world.gather_view(&View::new(&mine, &every_other, 1)?, recv, root)?;
        if me == root {
            for i in 0..k {
                for r in 0..pu {
                    assert_eq!(m[i * pu + r], f(r as i32, 2 * i, 0), "gather ({i}, {r})");
                }
            }
        }
        // Scatter: column r of the root's matrix to rank r's every-other
        // elements.
        let src: Vec<f64> = (0..k * pu).map(|x| f(root, x / pu, x % pu)).collect();
        let send = View::new(&src, &cols, pu)?;
        let mut got = vec![-1.0f64; 2 * k];
        let send = (me == root).then_some(&send);
        world.scatter_view(send, &mut ViewMut::new(&mut got, &every_other, 1)?, root)?;
        for (i, v) in got.iter().enumerate() {
            let want = if i % 2 == 0 {
                f(root, i / 2, me as usize)
            } else {
                -1.0
            };
            assert_eq!(*v, want, "scatter from {root}: element {i}");
        }
    }
    Ok(())
}

fn allgather_alltoall(world: &Comm, k: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let pu = p as usize;
    let cols = columns(k, pu)?;
    // Allgather: my column 1 of a k x 2 matrix -> column `me` of k x p.
    let local: Vec<f64> = (0..2 * k).map(|x| f(me, x / 2, x % 2)).collect();
    let col1 = committed(Datatype::vector(k as isize, 1, 2, &f64_t())?);
    let mut m = vec![0.0f64; k * pu];
    world.allgather_view(
        &View::new(&local[1..], &col1, 1)?,
        &mut ViewMut::new(&mut m, &cols, pu)?,
    )?;
    for i in 0..k {
        for r in 0..pu {
            assert_eq!(m[i * pu + r], f(r as i32, i, 1), "allgather ({i}, {r})");
        }
    }
    // Alltoall, a distributed transpose: row j of my p x k matrix goes to
    // rank j, which stores rank r's row as column r of its k x p matrix.
    let a: Vec<f64> = (0..pu * k).map(|x| f(me, x / k, x % k)).collect();
    let mut t = vec![0.0f64; k * pu];
    world.alltoall_view(
        &View::new(&a, &f64_t(), pu * k)?,
        &mut ViewMut::new(&mut t, &cols, pu)?,
    )?;
    for i in 0..k {
        for r in 0..pu {
            assert_eq!(
                t[i * pu + r],
                f(r as i32, me as usize, i),
                "alltoall ({i}, {r})"
            );
        }
    }
    Ok(())
}

fn reductions(world: &Comm, k: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    // Column 2 of my k x 3 matrix, reduced into column 0 of a k x 2 one.
    let local: Vec<f64> = (0..3 * k).map(|x| f(me, x / 3, x % 3)).collect();
    let col_of_3 = committed(Datatype::vector(k as isize, 1, 3, &f64_t())?);
    let col_of_2 = committed(Datatype::vector(k as isize, 1, 2, &f64_t())?);
    let sum = |i: usize| (0..p).map(|r| f(r, i, 2)).sum::<f64>();
    let mut out = vec![-1.0f64; 2 * k];
    world.allreduce_view(
        &View::new(&local[2..], &col_of_3, 1)?,
        &mut ViewMut::new(&mut out, &col_of_2, 1)?,
        &Op::SUM,
    )?;
    for i in 0..k {
        assert_eq!(
            (out[2 * i], out[2 * i + 1]),
            (sum(i), -1.0),
            "allreduce row {i}"
        );
    }
    for root in 0..p {
        let mut out = vec![-1.0f64; 2 * k];
        let mut recv = ViewMut::new(&mut out, &col_of_2, 1)?;
        let recv = (me == root).then_some(&mut recv);
        world.reduce_view(&View::new(&local[2..], &col_of_3, 1)?, recv, &Op::MAX, root)?;
        for i in 0..k {
            let want = if me == root { f(p - 1, i, 2) } else { -1.0 };
            assert_eq!(out[2 * i], want, "reduce to {root}: row {i}");
        }
    }
    Ok(())
}

/// Several non-blocking collectives on views started together and
/// completed in reverse order.
fn nonblocking(world: &Comm, k: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let pu = p as usize;
    let cols = columns(k, pu)?;
    let every_other = committed(Datatype::vector(k as isize, 1, 2, &f64_t())?);
    let mine: Vec<f64> = (0..2 * k).map(|i| f(me, i, 7)).collect();
    let mut gathered = vec![0.0f64; k * pu];
    let mut summed = vec![0.0f64; 2 * k];
    let mut bc = vec![0.0f64; 2 * k];
    if me == 0 {
        bc.iter_mut().enumerate().for_each(|(i, v)| *v = f(0, i, 9));
    }
    {
        let send = View::new(&mine, &every_other, 1)?;
        let reqs = vec![
            world.iallgather_view(&send, ViewMut::new(&mut gathered, &cols, pu)?)?,
            world.iallreduce_view(&send, ViewMut::new(&mut summed, &every_other, 1)?, &Op::SUM)?,
            world.ibcast_view(ViewMut::new(&mut bc, &every_other, 1)?, 0)?,
        ];
        for r in reqs.into_iter().rev() {
            r.wait()?;
        }
    }
    for i in 0..k {
        for r in 0..pu {
            assert_eq!(gathered[i * pu + r], f(r as i32, 2 * i, 7));
        }
        let s: f64 = (0..p).map(|r| f(r, 2 * i, 7)).sum();
        assert_eq!(summed[2 * i], s);
        assert_eq!(summed[2 * i + 1], 0.0);
        assert_eq!(bc[2 * i], f(0, 2 * i, 9));
        let untouched = if me == 0 { f(0, 2 * i + 1, 9) } else { 0.0 };
        assert_eq!(bc[2 * i + 1], untouched);
    }
    Ok(())
}

/// Errors every rank detects before communicating.
fn errors(world: &Comm) -> Result<(), Error> {
    let p = world.size() as usize;
    // A struct of an int and a double has no single basic type to reduce.
    let mixed = committed(Datatype::create_struct(
        &[1, 1],
        &[0, 8],
        &[Datatype::basic(BasicType::Int), f64_t()],
    )?);
    let data = [0u8; 16];
    let mut out = [0u8; 16];
    match world.allreduce_view(
        &View::new(&data, &mixed, 1)?,
        &mut ViewMut::new(&mut out, &mixed, 1)?,
        &Op::SUM,
    ) {
        Err(Error::InvalidDatatype(msg)) => assert!(msg.contains("one basic type"), "{msg}"),
        other => panic!("mixed reduction accepted: {other:?}"),
    }
    // Allgather into a buffer that packs to the wrong size.
    let one = [1.0f64];
    let mut few = vec![0.0f64; p + 1];
    assert!(matches!(
        world.allgather_view(
            &View::new(&one, &f64_t(), 1)?,
            &mut ViewMut::new(&mut few, &f64_t(), p + 1)?,
        ),
        Err(Error::InvalidArgument { arg: "recvbuf", .. })
    ));
    // Alltoall of data that does not split into p blocks.
    if p > 1 {
        let odd = vec![0.0f64; p + 1];
        let mut back = vec![0.0f64; p + 1];
        assert!(world
            .alltoall_view(
                &View::new(&odd, &f64_t(), p + 1)?,
                &mut ViewMut::new(&mut back, &f64_t(), p + 1)?,
            )
            .is_err());
    }
    world.barrier()
}

/// Every collective role, small and with blocks over the eager limit.
pub fn all(world: &Comm) -> Result<(), Error> {
    for (n, k) in [(4usize, 3usize), (240, 9000)] {
        bcast(world, n)?;
        gather_scatter(world, k)?;
        allgather_alltoall(world, k)?;
        reductions(world, k)?;
        nonblocking(world, k)?;
    }
    errors(world)
}
