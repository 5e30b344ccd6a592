//! Rank programs of the cartesian topology suite: dims_create, periodic
//! and non-periodic shifts with a halo exchange, cart_sub reductions.

use oxmpi::topo::CartInfo;
use oxmpi::{dims_create, Comm, Error, ErrorClass, Topology, PROC_NULL};

use crate::comm::sum;

fn dims(_world: &Comm) -> Result<(), Error> {
    let cases: &[(i32, &[i32], &[i32])] = &[
        (1, &[0], &[1]),
        (2, &[0, 0], &[2, 1]),
        (4, &[0, 0], &[2, 2]),
        (6, &[0, 0], &[3, 2]),
        (7, &[0, 0], &[7, 1]),
        (9, &[0, 0], &[3, 3]),
        (12, &[0, 0, 0], &[3, 2, 2]),
        (16, &[0, 0, 0, 0], &[2, 2, 2, 2]),
        (18, &[0, 0, 0], &[3, 3, 2]),
        (24, &[0, 0, 0], &[4, 3, 2]),
        (60, &[0, 0, 0], &[5, 4, 3]),
        (100, &[0, 0], &[10, 10]),
        (6, &[0, 3, 0], &[2, 3, 1]),
        (20, &[0, 0, 5], &[2, 2, 5]),
        (8, &[2, 0, 2], &[2, 2, 2]),
        (5, &[5], &[5]),
        (1 << 20, &[0, 0], &[1024, 1024]),
        (2 * 3 * 5 * 7 * 11, &[0, 0, 0], &[15, 14, 11]),
    ];
    for &(n, given, want) in cases {
        let mut d = given.to_vec();
        dims_create(n, &mut d)?;
        assert_eq!(d, want, "dims_create({n}, {given:?})");
        assert_eq!(d.iter().product::<i32>(), n);
    }
    for (n, given, arg) in [
        (7, vec![0, 3, 0], "`dims`"),
        (6, vec![4, 0], "`dims`"),
        (6, vec![2, 2], "`dims`"),
        (4, vec![0, -2], "dims[1] is -2"),
        (0, vec![0], "`nnodes`"),
        (-3, vec![0], "`nnodes`"),
    ] {
        let mut d = given.clone();
        let e = dims_create(n, &mut d).unwrap_err();
        assert!(
            e.to_string().contains(arg),
            "dims_create({n}, {given:?}): {e}"
        );
        assert_eq!(d, given, "dims untouched on error");
        assert_eq!(e.class(), ErrorClass::Dims);
    }
    Ok(())
}

/// Rank at `coords` computed directly (row-major, wrapping periodic dims).
fn rank_at(dims: &[i32], periods: &[bool], coords: &[i32]) -> i32 {
    let mut r = 0;
    for i in 0..dims.len() {
        let c = coords[i];
        let c = if periods[i] {
            c.rem_euclid(dims[i])
        } else if (0..dims[i]).contains(&c) {
            c
        } else {
            return PROC_NULL;
        };
        r = r * dims[i] + c;
    }
    r
}

/// Halo exchange along every dimension and both directions: sends this
/// rank's number to `dest` and checks what `source` sent.
fn halo(grid: &Comm, dims: &[i32], periods: &[bool]) -> Result<(), Error> {
    let me = grid.cart_coords(grid.rank())?;
    for dim in 0..dims.len() {
        for disp in [1, -1, 2] {
            let (source, dest) = grid.cart_shift(dim as i32, disp)?;
            let mut at = me.clone();
            at[dim] -= disp;
            assert_eq!(
                source,
                rank_at(dims, periods, &at),
                "source dim {dim} disp {disp}"
            );
            at[dim] += 2 * disp;
            assert_eq!(
                dest,
                rank_at(dims, periods, &at),
                "dest dim {dim} disp {disp}"
            );
            let tag = 10 * dim as i32 + disp + 5;
            let mut got = [-7i32; 2];
            grid.sendrecv(&[grid.rank(), tag], dest, tag, &mut got, source, tag)?;
            if source == PROC_NULL {
                assert_eq!(got, [-7, -7], "nothing arrives from PROC_NULL");
            } else {
                assert_eq!(got, [source, tag]);
            }
        }
    }
    Ok(())
}

fn cart2d(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let mut dims = [0, 0];
    dims_create(size, &mut dims)?;
    for periods in [[true, true], [false, false], [true, false]] {
        let grid = world.cart_create(&dims, &periods, true)?.unwrap();
        assert_eq!(grid.rank(), rank);
        assert!(matches!(grid.topology(), Topology::Cart(c) if c.dims() == dims));
        assert_eq!(grid.cartdim_get()?, 2);
        let coords = vec![rank / dims[1], rank % dims[1]];
        assert_eq!(
            grid.cart_get()?,
            CartInfo {
                dims: dims.to_vec(),
                periods: periods.to_vec(),
                coords: coords.clone(),
            }
        );
        for r in 0..size {
            let c = grid.cart_coords(r)?;
            assert_eq!(grid.cart_rank(&c)?, r);
        }
        halo(&grid, &dims, &periods)?;
        // Wrapping and its absence in cart_rank.
        let off = [coords[0] + dims[0], coords[1] - dims[1]];
        match periods {
            [true, true] => assert_eq!(grid.cart_rank(&off)?, rank),
            _ => {
                let e = grid.cart_rank(&off).unwrap_err();
                assert!(e.to_string().contains("outside the grid"), "{e}");
            }
        }
        // A dup keeps the topology.
        let d = grid.dup()?;
        assert_eq!(d.topology(), grid.topology());
    }
    // A 3-D periodic grid when there are enough ranks.
    let mut d3 = [0, 0, 0];
    dims_create(size, &mut d3)?;
    let grid = world
        .cart_create(&d3, &[true, false, true], false)?
        .unwrap();
    halo(&grid, &d3, &[true, false, true])?;
    // Smaller grid: the ranks beyond it get None.
    if size > 1 {
        let g = world.cart_create(&[size - 1], &[false], false)?;
        assert_eq!(g.is_none(), rank == size - 1);
        if let Some(g) = g {
            assert_eq!(
                g.cart_shift(0, 1)?.1,
                if rank == size - 2 {
                    PROC_NULL
                } else {
                    rank + 1
                }
            );
        }
    }
    // Errors.
    let e = world.cart_create(&[size + 1], &[true], false).unwrap_err();
    assert!(e.to_string().contains("needs more than"), "{e}");
    let e = world.cart_create(&[1, 1], &[true], false).unwrap_err();
    assert!(e.to_string().contains("`periods`"), "{e}");
    let e = world.cart_create(&[0], &[true], false).unwrap_err();
    assert!(e.to_string().contains("dims[0] is 0"), "{e}");
    let e = world.cart_shift(0, 1).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Topology);
    let e = grid.cart_shift(3, 1).unwrap_err();
    assert!(e.to_string().contains("dimension 3"), "{e}");
    assert_eq!(world.topology(), &Topology::None);
    Ok(())
}

fn cartsub(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let mut dims = [0, 0];
    dims_create(size, &mut dims)?;
    let grid = world.cart_create(&dims, &[false, true], false)?.unwrap();
    let (row, col) = (rank / dims[1], rank % dims[1]);
    // Rows keep dimension 1: the ranks of my row, in column order.
    let rows = grid.cart_sub(&[false, true])?;
    assert_eq!((rows.size(), rows.rank()), (dims[1], col));
    assert_eq!(rows.cart_get()?.dims, vec![dims[1]]);
    assert_eq!(rows.cart_get()?.periods, vec![true]);
    let want: i64 = (0..dims[1]).map(|c| (row * dims[1] + c) as i64).sum();
    assert_eq!(sum(&rows, rank as i64, 1)?, want, "row {row}");
    // Columns keep dimension 0.
    let cols = grid.cart_sub(&[true, false])?;
    assert_eq!((cols.size(), cols.rank()), (dims[0], row));
    let want: i64 = (0..dims[0]).map(|r| (r * dims[1] + col) as i64).sum();
    assert_eq!(sum(&cols, rank as i64, 1)?, want, "column {col}");
    // Rows and columns are isolated from each other and from the grid.
    assert_eq!(sum(&grid, 1, 1)?, size as i64);
    // Shifts inside a row wrap (dimension 1 is periodic).
    let (s, d) = rows.cart_shift(0, 1)?;
    assert_eq!((s, d), ((col + dims[1] - 1) % dims[1], (col + 1) % dims[1]));
    // Keep everything: congruent to the grid; keep nothing: just me.
    let all = grid.cart_sub(&[true, true])?;
    assert_eq!(all.compare(&grid), oxmpi::Comparison::Congruent);
    let me = grid.cart_sub(&[false, false])?;
    assert_eq!((me.size(), me.cartdim_get()?), (1, 0));
    // A 3-D grid cut into planes.
    let mut d3 = [0, 0, 0];
    dims_create(size, &mut d3)?;
    let cube = world
        .cart_create(&d3, &[false, false, false], false)?
        .unwrap();
    let c = cube.cart_coords(rank)?;
    let plane = cube.cart_sub(&[true, false, true])?;
    assert_eq!(plane.size(), d3[0] * d3[2]);
    let want: i64 = (0..d3[0])
        .flat_map(|x| (0..d3[2]).map(move |z| (x, z)))
        .map(|(x, z)| ((x * d3[1] + c[1]) * d3[2] + z) as i64)
        .sum();
    assert_eq!(sum(&plane, rank as i64, 2)?, want);
    let e = grid.cart_sub(&[true]).unwrap_err();
    assert!(e.to_string().contains("`remain_dims`"), "{e}");
    Ok(())
}

/// Runs the role `role` on this rank.
pub fn run(role: &str) {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let result = match role {
        "dims" => dims(&world),
        "cart2d" => cart2d(&world),
        "cartsub" => cartsub(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    drop(world);
    universe.finalize().expect("finalize");
}
