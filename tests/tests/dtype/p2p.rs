//! Point-to-point roles with derived datatypes through views: halo
//! exchange of matrix columns, struct arrays with a resized extent,
//! subarrays against contiguous buffers, non-contiguous requests completed
//! out of order, and the bounds checks.

use oxmpi::datatype::{BasicType, Datatype, Order, View, ViewMut};
use oxmpi::ops::ElemType;
use oxmpi::{Comm, Error, Scalar, PROC_NULL};

fn committed(t: Datatype) -> Datatype {
    t.commit();
    t
}

fn f64_t() -> Datatype {
    Datatype::basic(BasicType::Double)
}

fn int_t() -> Datatype {
    Datatype::basic(BasicType::Int)
}

/// The value a rank stores at global column `gj` of row `i`.
fn cell(rank: i32, i: usize, gj: i64) -> f64 {
    f64::from(rank) * 1e6 + i as f64 * 1e3 + gj as f64
}

/// One halo exchange on an `nx x ny` block per rank, columns split over
/// the ranks in a ring: local columns 1..=ny are the rank's, 0 and ny+1
/// are ghosts filled from the neighbours with a column vector type.
fn halo_once(world: &Comm, nx: usize, ny: usize) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let w = ny + 2;
    let col = committed(Datatype::vector(nx as isize, 1, w as isize, &f64_t())?);
    let mut a = vec![f64::NAN; nx * w];
    for i in 0..nx {
        for j in 1..=ny {
            a[i * w + j] = cell(me, i, j as i64);
        }
    }
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    // Column j of `a` starts at element j: a view over a[j..].
    let send_first = a.clone();
    // Rightmost interior column to the right, receive the left ghost.
    let st = world.sendrecv_view(
        &View::new(&send_first[ny..], &col, 1)?,
        right,
        1,
        &mut ViewMut::new(&mut a[0..], &col, 1)?,
        left,
        1,
    )?;
    assert_eq!((st.source, st.count), (left, nx * 8));
    assert_eq!(st.count_in(&col), Some(1));
    assert_eq!(st.elements_in(&col), Some(nx));
    // Leftmost interior column to the left, receive the right ghost.
    let st = world.sendrecv_view(
        &View::new(&send_first[1..], &col, 1)?,
        left,
        2,
        &mut ViewMut::new(&mut a[ny + 1..], &col, 1)?,
        right,
        2,
    )?;
    assert_eq!(st.source, right);
    for i in 0..nx {
        assert_eq!(a[i * w], cell(left, i, ny as i64), "left ghost row {i}");
        assert_eq!(a[i * w + ny + 1], cell(right, i, 1), "right ghost row {i}");
        for j in 1..=ny {
            assert_eq!(a[i * w + j], cell(me, i, j as i64), "interior ({i}, {j})");
        }
    }
    Ok(())
}

/// Halo exchange of vector columns of a 2D f64 array: small (eager) and
/// large (rendezvous) columns.
pub fn halo(world: &Comm) -> Result<(), Error> {
    halo_once(world, 4, 3)?;
    halo_once(world, 20_000, 2)?; // 160 kB columns
                                  // Non-periodic ends: PROC_NULL leaves the ghost alone.
    let col = committed(Datatype::vector(3, 1, 2, &f64_t())?);
    let mut g = [7.0f64; 6];
    let st = world.recv_view(&mut ViewMut::new(&mut g, &col, 1)?, PROC_NULL, 0)?;
    assert_eq!((st.source, st.count, g), (PROC_NULL, 0, [7.0; 6]));
    world.send_view(&View::new(&g, &col, 1)?, PROC_NULL, 0)?;
    Ok(())
}

/// A particle as a program stores it: the last field is local only.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Particle {
    pos: [f64; 3],
    id: i64,
    mass: f64,
    scratch: f64,
}

// SAFETY: repr(C), 48 bytes of f64 / i64 fields with no padding; every bit
// pattern is a valid value.
unsafe impl Scalar for Particle {
    const ELEM: Option<ElemType> = None;
}

fn particle(rank: i32, k: usize) -> Particle {
    let x = f64::from(rank) * 100.0 + k as f64;
    Particle {
        pos: [x, x + 0.25, x + 0.5],
        id: (i64::from(rank) << 32) | k as i64,
        mass: 1.0 / (k as f64 + 1.0),
        scratch: -f64::from(rank),
    }
}

/// `{pos, id, mass}` of a [`Particle`], resized to its full 48 bytes so
/// that `scratch` is skipped.
fn particle_type() -> Result<Datatype, Error> {
    let t = Datatype::create_struct(
        &[3, 1, 1],
        &[0, 24, 32],
        &[f64_t(), Datatype::basic(BasicType::Int64), f64_t()],
    )?;
    assert_eq!(t.extent(), 40);
    let t = committed(Datatype::resized(&t, 0, 48)?);
    assert_eq!((t.size(), t.extent()), (40, 48));
    Ok(t)
}

/// Struct arrays with a resized extent, sent around a ring and received
/// both as structs and as packed bytes.
pub fn structs(world: &Comm) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let t = particle_type()?;
    for n in [5usize, 3000] {
        let mine: Vec<Particle> = (0..n).map(|k| particle(me, k)).collect();
        let sentinel = Particle {
            pos: [0.0; 3],
            id: -1,
            mass: 0.0,
            scratch: 42.0,
        };
        let mut got = vec![sentinel; n];
        let r = world.irecv_view(ViewMut::new(&mut got, &t, n)?, left, 3)?;
        world.send_view(&View::new(&mine, &t, n)?, right, 3)?;
        let st = r.wait()?;
        assert_eq!(st.count_in(&t), Some(n));
        assert_eq!(st.elements_in(&t), Some(5 * n));
        for (k, g) in got.iter().enumerate() {
            let want = Particle {
                scratch: 42.0, // never sent, never written
                ..particle(left, k)
            };
            assert_eq!(*g, want, "particle {k} of {n}");
        }
        // The same message as packed bytes: 40 per particle, no gaps.
        let mut bytes = vec![0u8; 40 * n];
        let r = world.irecv(&mut bytes, left, 4)?;
        world.send_view(&View::new(&mine, &t, n)?, right, 4)?;
        assert_eq!(r.wait()?.count, 40 * n);
        let first = f64::from_ne_bytes(bytes[40..48].try_into().expect("8 bytes"));
        let id = i64::from_ne_bytes(bytes[64..72].try_into().expect("8 bytes"));
        assert_eq!(
            (first, id),
            (particle(left, 1).pos[0], particle(left, 1).id)
        );
    }
    Ok(())
}

/// A subarray sent into a contiguous receive, and the contiguous data
/// sent back into the subarray.
pub fn subarray(world: &Comm) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    for (rows, cols) in [(6usize, 8usize), (300, 400)] {
        let (sr, sc) = (rows / 2, cols / 2);
        let (r0, c0) = (rows / 4, cols / 4);
        let sub = committed(Datatype::subarray(
            &[rows as isize, cols as isize],
            &[sr as isize, sc as isize],
            &[r0 as isize, c0 as isize],
            Order::C,
            &int_t(),
        )?);
        let value = |rank: i32, i: usize, j: usize| rank * 1_000_000 + (i * cols + j) as i32;
        let mut a: Vec<i32> = (0..rows * cols)
            .map(|k| value(me, k / cols, k % cols))
            .collect();
        let original = a.clone();
        // Out: my block to the right; in: the left neighbour's, contiguous.
        let mut block = vec![0i32; sr * sc];
        let st = world.sendrecv_view(
            &View::new(&a, &sub, 1)?,
            right,
            5,
            &mut ViewMut::new(&mut block, &int_t(), sr * sc)?,
            left,
            5,
        )?;
        assert_eq!(st.count, 4 * sr * sc);
        for i in 0..sr {
            for j in 0..sc {
                assert_eq!(block[i * sc + j], value(left, r0 + i, c0 + j));
            }
        }
        // Back: negate and return it into the owner's subarray.
        block.iter_mut().for_each(|v| *v = -*v);
        let r = world.irecv_view(ViewMut::new(&mut a, &sub, 1)?, right, 6)?;
        world.send(&block, left, 6)?;
        let st = r.wait()?;
        assert_eq!(st.count_in(&sub), Some(1));
        for i in 0..rows {
            for j in 0..cols {
                let inside = (r0..r0 + sr).contains(&i) && (c0..c0 + sc).contains(&j);
                let want = if inside {
                    -original[i * cols + j]
                } else {
                    original[i * cols + j]
                };
                assert_eq!(a[i * cols + j], want, "({i}, {j}) of {rows}x{cols}");
            }
        }
    }
    Ok(())
}

/// Non-contiguous isend/irecv: several receives into strided views of one
/// array posted first, sends started in reverse order, completions taken
/// in yet another order (and one by dropping its request).
pub fn out_of_order(world: &Comm) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    // Every third f64: a stride-3 vector of `n` doubles.
    let sizes = [4usize, 9000, 1, 30_000];
    let third = |n: usize| -> Result<Datatype, Error> {
        Ok(committed(Datatype::vector(n as isize, 1, 3, &f64_t())?))
    };
    let types: Vec<Datatype> = sizes.iter().map(|&n| third(n)).collect::<Result<_, _>>()?;
    let value =
        |rank: i32, tag: usize, k: usize| f64::from(rank) * 1e7 + tag as f64 * 1e5 + k as f64;
    let mut bufs: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![-1.0; 3 * n]).collect();
    let outs: Vec<Vec<f64>> = sizes
        .iter()
        .enumerate()
        .map(|(tag, &n)| (0..3 * n).map(|k| value(me, tag, k)).collect())
        .collect();
    {
        let mut recvs = Vec::new();
        for ((tag, b), t) in bufs.iter_mut().enumerate().zip(&types) {
            recvs.push(world.irecv_view(ViewMut::new(b, t, 1)?, left, tag as i32)?);
        }
        let mut sends = Vec::new();
        for (tag, (o, t)) in outs.iter().zip(&types).enumerate().rev() {
            sends.push(world.isend_view(&View::new(o, t, 1)?, right, tag as i32)?);
        }
        // Complete out of order: 2, 0, then 1 by waiting any, 3 by drop.
        let last = recvs.pop().expect("four receives");
        let two = recvs.remove(2);
        assert_eq!(two.wait()?.count_in(&types[2]), Some(1));
        let zero = recvs.remove(0);
        assert_eq!(zero.wait()?.elements_in(&types[0]), Some(sizes[0]));
        let (i, st) = oxmpi::wait_any(&mut recvs)?.expect("one receive left");
        assert_eq!((i, st.tag), (0, 1));
        oxmpi::wait_all(sends)?;
        drop(last); // waits, and unpacks
    }
    for (tag, b) in bufs.iter().enumerate() {
        for (k, v) in b.iter().enumerate() {
            let want = if k % 3 == 0 {
                value(left, tag, k)
            } else {
                -1.0
            };
            assert_eq!(*v, want, "message {tag}, element {k}");
        }
    }
    Ok(())
}

/// Views that would leave their slice are refused with an error naming
/// the argument; nothing panics and the communicator keeps working.
pub fn bounds(world: &Comm) -> Result<(), Error> {
    let me = world.rank();
    let col = Datatype::vector(4, 1, 4, &f64_t())?;
    let mut m = [0.0f64; 16];
    // Not committed yet.
    match ViewMut::new(&mut m, &col, 1) {
        Err(Error::InvalidDatatype(msg)) => assert!(msg.contains("commit"), "{msg}"),
        other => panic!("uncommitted type accepted: {other:?}"),
    }
    col.commit();
    // The last column fits; one column further runs past the end.
    assert!(View::new(&m[3..], &col, 1).is_ok());
    for (start, count) in [(4usize, 1usize), (0, 5), (3, 2)] {
        match View::new(&m[start..], &col, count) {
            Err(Error::InvalidArgument { arg: "buf", reason }) => {
                assert!(reason.contains("bytes"), "{reason}")
            }
            other => panic!("view from {start} x {count} accepted: {other:?}"),
        }
    }
    assert!(matches!(
        ViewMut::new(&mut m, &col, usize::MAX),
        Err(Error::InvalidArgument { arg: "count", .. })
    ));
    // A type whose data starts before its address needs an origin.
    let before = committed(Datatype::hindexed(&[1], &[-8], &f64_t())?);
    assert!(View::new(&m, &before, 1).is_err());
    m[0] = 2.5;
    let v = View::with_origin(&m, 8, &before, 1)?;
    // It moves the data before its address (to itself: eager).
    world.send_view(&v, me, 7)?;
    let mut one = [0.0f64];
    world.recv(&mut one, me, 7)?;
    assert_eq!(one[0], 2.5);
    // A receive view too small for the message: truncation, with what
    // fitted unpacked.
    let two = committed(Datatype::vector(2, 1, 2, &f64_t())?);
    world.send(&[1.0f64, 2.0, 3.0], me, 8)?;
    let mut small = [0.0f64; 3];
    match world.recv_view(&mut ViewMut::new(&mut small, &two, 1)?, me, 8) {
        Err(Error::Truncated { status, .. }) => assert_eq!(status.count, 16),
        other => panic!("expected truncation, got {other:?}"),
    }
    assert_eq!(small, [1.0, 0.0, 2.0]);
    // Bad ranks and tags are errors too, and leave nothing behind.
    let v = View::new(&m, &col, 1)?;
    assert!(world.send_view(&v, world.size(), 0).is_err());
    assert!(world.isend_view(&v, 0, -5).is_err());
    let mut into = ViewMut::new(&mut m, &col, 1)?;
    assert!(world
        .sendrecv_view(
            &View::new(&[0.0f64; 4], &f64_t(), 4)?,
            -7,
            0,
            &mut into,
            me,
            0
        )
        .is_err());
    world.barrier()
}
