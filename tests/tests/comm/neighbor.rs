//! Rank programs of the neighborhood collective suite: allgather(v) and
//! alltoall(v), blocking and not, on 2-D cartesian grids (periodic, open,
//! mixed), a ring graph (`graph_create`) and an irregular distributed
//! graph (`dist_graph_create_adjacent` and `dist_graph_create`, with
//! self-loops and a repeated edge). Every result is compared with what a
//! serial computation over every rank's neighbor lists expects. And
//! persistent collectives (tags reserved at initialization) started in
//! different orders on different ranks.

use std::collections::HashMap;

use oxmpi::coll::Blocks;
use oxmpi::topo::Neighbors;
use oxmpi::{dims_create, Comm, Error, ErrorClass, Topology, PROC_NULL};

/// The neighbor lists of every rank, computed serially.
type NeighborsOf<'a> = &'a dyn Fn(i32) -> Neighbors;

/// What a receive block holds when nothing arrives (a `PROC_NULL` neighbor).
const UNTOUCHED: i32 = -7;

/// The position of the `k`-th occurrence of `me` in `list`.
fn kth(list: &[i32], me: i32, k: usize) -> usize {
    list.iter()
        .enumerate()
        .filter(|(_, &x)| x == me)
        .nth(k)
        .map(|(j, _)| j)
        .expect("the edges of the two ends agree")
}

/// For each in-neighbor slot of `me`: the sender and the sender's
/// out-neighbor slot whose block lands there, `None` for `PROC_NULL`. Of
/// the m messages a rank sends to `me`, the k-th fills the (m-1-k)-th slot
/// of that rank (the geometric meaning on periodic grids of extent 1 or 2,
/// and MPICH's pairing).
fn pairing(me: i32, nb: NeighborsOf) -> Vec<Option<(i32, usize)>> {
    let sources = nb(me).sources;
    let mut seen: HashMap<i32, usize> = HashMap::new();
    sources
        .iter()
        .map(|&s| {
            if s == PROC_NULL {
                return None;
            }
            let m = sources.iter().filter(|&&x| x == s).count();
            let k = seen.entry(s).or_insert(0);
            *k += 1;
            Some((s, kth(&nb(s).destinations, me, m - *k)))
        })
        .collect()
}

/// Displacements of blocks of `counts` laid out in reverse order with a
/// one-element gap after each; and the buffer length.
fn reversed_with_gaps(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut displs = vec![0; counts.len()];
    let mut at = 0;
    for i in (0..counts.len()).rev() {
        displs[i] = at;
        at += counts[i] + 1;
    }
    (displs, at)
}

/// Every neighborhood collective on `comm`, checked against `nb`.
fn check_all(comm: &Comm, nb: NeighborsOf, label: &str) -> Result<(), Error> {
    let me = comm.rank();
    let mine = nb(me);
    assert_eq!(comm.neighbors()?, mine, "{label}: neighbor lists");
    let pairs = pairing(me, nb);
    let (indeg, outdeg) = (mine.sources.len(), mine.destinations.len());

    // Allgather: two elements per rank.
    let mut got = vec![UNTOUCHED; 2 * indeg];
    comm.neighbor_allgather(&[me * 10 + 1, me * 10 + 2], &mut got)?;
    let want: Vec<i32> = pairs
        .iter()
        .flat_map(|p| p.map_or([UNTOUCHED; 2], |(s, _)| [s * 10 + 1, s * 10 + 2]))
        .collect();
    assert_eq!(got, want, "{label}: neighbor_allgather");

    // Alltoall: block j (to out-neighbor j) is [100 me + j, -(100 me + j)].
    let block = |s: i32, j: usize| {
        let v = s * 100 + j as i32;
        [v, -v]
    };
    let send: Vec<i32> = (0..outdeg).flat_map(|j| block(me, j)).collect();
    let mut got = vec![UNTOUCHED; 2 * indeg];
    comm.neighbor_alltoall(&send, &mut got)?;
    let want: Vec<i32> = pairs
        .iter()
        .flat_map(|p| p.map_or([UNTOUCHED; 2], |(s, j)| block(s, j)))
        .collect();
    assert_eq!(got, want, "{label}: neighbor_alltoall");

    // Allgatherv: rank s sends s % 3 + 1 elements; blocks reversed, gaps.
    let len = |r: i32| (r % 3 + 1) as usize;
    let counts: Vec<usize> = pairs.iter().map(|p| p.map_or(2, |(s, _)| len(s))).collect();
    let (displs, total) = reversed_with_gaps(&counts);
    let send: Vec<i32> = (0..len(me) as i32).map(|e| me * 10 + e).collect();
    let mut got = vec![UNTOUCHED; total];
    comm.neighbor_allgatherv(&send, &mut got, Blocks::new(&counts, &displs))?;
    let mut want = vec![UNTOUCHED; total];
    for (i, p) in pairs.iter().enumerate() {
        if let Some((s, _)) = p {
            for e in 0..len(*s) {
                want[displs[i] + e] = s * 10 + e as i32;
            }
        }
    }
    assert_eq!(got, want, "{label}: neighbor_allgatherv");

    // Alltoallv: (s + j) % 3 elements (zero included) from s's slot j.
    let c = |s: i32, j: usize| (s as usize + j) % 3;
    let value = |s: i32, j: usize, e: usize| s * 1000 + j as i32 * 10 + e as i32;
    let scounts: Vec<usize> = (0..outdeg).map(|j| c(me, j)).collect();
    let sdispls = Blocks::packed_displs(&scounts);
    let send: Vec<i32> = (0..outdeg)
        .flat_map(|j| (0..c(me, j)).map(move |e| value(me, j, e)))
        .collect();
    let rcounts: Vec<usize> = pairs
        .iter()
        .map(|p| p.map_or(1, |(s, j)| c(s, j)))
        .collect();
    let (rdispls, total) = reversed_with_gaps(&rcounts);
    let mut got = vec![UNTOUCHED; total];
    comm.neighbor_alltoallv(
        &send,
        Blocks::new(&scounts, &sdispls),
        &mut got,
        Blocks::new(&rcounts, &rdispls),
    )?;
    let mut want = vec![UNTOUCHED; total];
    for (i, p) in pairs.iter().enumerate() {
        if let Some((s, j)) = *p {
            for e in 0..c(s, j) {
                want[rdispls[i] + e] = value(s, j, e);
            }
        }
    }
    assert_eq!(got, want, "{label}: neighbor_alltoallv");

    // Two non-blocking ones outstanding at once, completed in reverse order.
    let send: Vec<i32> = (0..outdeg).flat_map(|j| block(me + 1, j)).collect();
    let mut got_a = vec![UNTOUCHED; 2 * indeg];
    let mut got_b = vec![UNTOUCHED; indeg];
    let a = comm.ineighbor_alltoall(&send, &mut got_a)?;
    let minus_me = [-me];
    let b = comm.ineighbor_allgather(&minus_me, &mut got_b)?;
    b.wait()?;
    a.wait()?;
    let want_a: Vec<i32> = pairs
        .iter()
        .flat_map(|p| p.map_or([UNTOUCHED; 2], |(s, j)| block(s + 1, j)))
        .collect();
    let want_b: Vec<i32> = pairs
        .iter()
        .map(|p| p.map_or(UNTOUCHED, |(s, _)| -s))
        .collect();
    assert_eq!(got_a, want_a, "{label}: ineighbor_alltoall");
    assert_eq!(got_b, want_b, "{label}: ineighbor_allgather");
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

fn cart(world: &Comm) -> Result<(), Error> {
    let mut dims = [0, 0];
    dims_create(world.size(), &mut dims)?;
    for periods in [[true, true], [false, false], [true, false]] {
        let grid = world.cart_create(&dims, &periods, false)?.unwrap();
        let nb = |r: i32| {
            let coords = [r / dims[1], r % dims[1]];
            let mut v = Vec::new();
            for d in 0..2 {
                for delta in [-1, 1] {
                    let mut c = coords;
                    c[d] += delta;
                    v.push(rank_at(&dims, &periods, &c));
                }
            }
            Neighbors {
                sources: v.clone(),
                destinations: v,
            }
        };
        check_all(&grid, &nb, &format!("cart {dims:?} {periods:?}"))?;
    }
    let e = world.neighbor_allgather(&[1], &mut [0]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Topology, "{e}");
    Ok(())
}

fn graph(world: &Comm) -> Result<(), Error> {
    let n = world.size();
    let index: Vec<i32> = (1..=n).map(|i| 2 * i).collect();
    let edges: Vec<i32> = (0..n)
        .flat_map(|i| [(i + n - 1) % n, (i + 1) % n])
        .collect();
    let ring = world.graph_create(&index, &edges, true)?.unwrap();
    assert!(matches!(ring.topology(), Topology::Graph(_)));
    assert_eq!(ring.graphdims_get()?, (n, 2 * n));
    assert_eq!(ring.graph_get()?.index(), index.as_slice());
    assert_eq!(ring.graph_get()?.edges(), edges.as_slice());
    for r in 0..n {
        assert_eq!(ring.graph_neighbors_count(r)?, 2);
        assert_eq!(ring.graph_neighbors(r)?, &edges[2 * r as usize..][..2]);
    }
    assert_eq!(world.graph_map(&index, &edges)?, world.rank());
    let nb = |r: i32| {
        let v = vec![(r + n - 1) % n, (r + 1) % n];
        Neighbors {
            sources: v.clone(),
            destinations: v,
        }
    };
    check_all(&ring, &nb, "ring graph")?;
    // A graph of the first rank only: the others get None.
    let one = world.graph_create(&[0], &[], false)?;
    assert_eq!(one.is_some(), world.rank() == 0);
    assert_eq!(
        world.graph_map(&[0], &[])?,
        if world.rank() == 0 {
            0
        } else {
            oxmpi::UNDEFINED
        }
    );
    // Errors.
    let e = ring.graph_neighbors(n).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Rank, "{e}");
    let e = world.graph_neighbors_count(0).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Topology, "{e}");
    let e = ring.dist_graph_neighbors_count().unwrap_err();
    assert_eq!(e.class(), ErrorClass::Topology, "{e}");
    let e = world.graph_create(&[1], &[1], false).unwrap_err();
    assert!(e.to_string().contains("edges[0] is 1"), "{e}");
    Ok(())
}

/// The irregular graph's out-neighbors of `r`: next, 2r + 1, itself when
/// r % 3 == 0, and next again (a repeated edge) for odd r.
fn dests(r: i32, n: i32) -> Vec<i32> {
    let mut v = vec![(r + 1) % n, (2 * r + 1) % n];
    if r % 3 == 0 {
        v.push(r);
    }
    if r % 2 == 1 {
        v.push((r + 1) % n);
    }
    v
}

/// Weight of source `s`'s out-edge number `j`.
fn weight(s: i32, j: usize) -> i32 {
    s * 10 + j as i32
}

/// The in-edges of `r` as (source, source's slot), sources in the order
/// `order` lists them.
fn in_edges(r: i32, n: i32, order: &[i32]) -> Vec<(i32, usize)> {
    order
        .iter()
        .flat_map(|&s| {
            dests(s, n)
                .into_iter()
                .enumerate()
                .filter(move |&(_, d)| d == r)
                .map(move |(j, _)| (s, j))
        })
        .collect()
}

fn dist(world: &Comm) -> Result<(), Error> {
    let (me, n) = (world.rank(), world.size());
    let by_rank: Vec<i32> = (0..n).collect();
    let neighbors_with = |order: &[i32], r: i32| Neighbors {
        sources: in_edges(r, n, order).iter().map(|e| e.0).collect(),
        destinations: dests(r, n),
    };
    // Adjacent, weighted.
    let ins = in_edges(me, n, &by_rank);
    let sources: Vec<i32> = ins.iter().map(|e| e.0).collect();
    let sw: Vec<i32> = ins.iter().map(|&(s, j)| weight(s, j)).collect();
    let dw: Vec<i32> = (0..dests(me, n).len()).map(|j| weight(me, j)).collect();
    let g = world.dist_graph_create_adjacent(&sources, &dests(me, n), Some((&sw, &dw)), false)?;
    assert!(matches!(g.topology(), Topology::DistGraph(_)));
    let indeg = sources.len() as i32;
    let outdeg = dests(me, n).len() as i32;
    assert_eq!(g.dist_graph_neighbors_count()?, (indeg, outdeg, true));
    let info = g.dist_graph_neighbors()?;
    assert_eq!(
        (info.source_weights(), info.dest_weights()),
        (sw.as_slice(), dw.as_slice())
    );
    check_all(&g, &|r| neighbors_with(&by_rank, r), "adjacent dist graph")?;
    // Adjacent, unweighted.
    let u = world.dist_graph_create_adjacent(&sources, &dests(me, n), None, false)?;
    assert_eq!(u.dist_graph_neighbors_count()?, (indeg, outdeg, false));
    assert!(u.dist_graph_neighbors()?.source_weights().is_empty());
    // The same graph given by other ranks: rank (s + 1) % n gives the
    // edges of source s, so in-edges arrive ordered by that rank.
    let s = (me + n - 1) % n;
    let d = dests(s, n);
    let w: Vec<i32> = (0..d.len()).map(|j| weight(s, j)).collect();
    let g2 = world.dist_graph_create(&[s], &[d.len() as i32], &d, Some(&w), false)?;
    let order: Vec<i32> = (0..n).map(|giver| (giver + n - 1) % n).collect();
    let info = g2.dist_graph_neighbors()?;
    let ins = in_edges(me, n, &order);
    assert_eq!(info.destinations(), dests(me, n).as_slice());
    assert_eq!(info.dest_weights(), dw.as_slice());
    let want_sw: Vec<i32> = ins.iter().map(|&(s, j)| weight(s, j)).collect();
    assert_eq!(info.source_weights(), want_sw.as_slice());
    check_all(&g2, &|r| neighbors_with(&order, r), "dist graph")?;
    // Errors.
    let e = world
        .dist_graph_create_adjacent(&[n], &[], None, false)
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::Rank, "{e}");
    let e = world
        .dist_graph_create(&[0], &[2], &[0], None, false)
        .unwrap_err();
    assert!(e.to_string().contains("`destinations`"), "{e}");
    let e = g.graph_neighbors_count(0).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Topology, "{e}");
    Ok(())
}

/// Two persistent collectives (a neighbor alltoall on a periodic ring and
/// an allreduce), their tags reserved in the same order everywhere, then
/// started in different orders on even and odd ranks with an ordinary
/// collective in between, several rounds with new data each.
fn persistent(world: &Comm) -> Result<(), Error> {
    let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    let (me, n) = (ring.rank(), ring.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let a = ring.persistent_coll_seq();
    let b = ring.persistent_coll_seq();
    let mut got = [0i32; 2];
    let mut x = [0i64];
    let mut total = [0i64];
    for round in 0..4 {
        let send = [100 * round + me, -(100 * round + me)];
        x[0] = i64::from(round * me);
        let mut start_a = || {
            // SAFETY: waited on below, before the buffers are touched.
            ring.start_persistent(a, || unsafe {
                ring.ineighbor_alltoall_raw(send.as_ptr().cast(), 4, got.as_mut_ptr().cast(), 4)
            })
        };
        let mut start_b = || {
            // SAFETY: as above.
            ring.start_persistent(b, || unsafe {
                ring.iallreduce_raw(
                    Some(x.as_ptr().cast()),
                    total.as_mut_ptr().cast(),
                    oxmpi::coll::Elems {
                        count: 1,
                        size: 8,
                        ty: Some(oxmpi::ops::ElemType::I64),
                    },
                    &oxmpi::ops::Op::SUM,
                )
            })
        };
        let mut ordinary = [0i32];
        let (ra, rb) = if me % 2 == 0 {
            let ra = start_a()?;
            ring.allreduce(&[1], &mut ordinary, &oxmpi::ops::Op::SUM)?;
            (ra, start_b()?)
        } else {
            let rb = start_b()?;
            let ra = start_a()?;
            ring.allreduce(&[1], &mut ordinary, &oxmpi::ops::Op::SUM)?;
            (ra, rb)
        };
        rb.wait()?;
        ra.wait()?;
        assert_eq!(ordinary[0], n);
        let sum: i64 = (0..n).map(|r| i64::from(round * r)).sum();
        assert_eq!(total[0], sum, "round {round}: persistent allreduce");
        if n > 2 {
            // Block 0 goes left, block 1 right: from the left comes its
            // block 1, from the right its block 0.
            let want = [-(100 * round + left), 100 * round + right];
            assert_eq!(got, want, "round {round}: persistent neighbor alltoall");
        }
    }
    Ok(())
}

/// Runs the role `role` on this rank.
pub fn run(role: &str) {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let result = match role {
        "neighbor_cart" => cart(&world),
        "neighbor_graph" => graph(&world),
        "neighbor_dist" => dist(&world),
        "neighbor_persistent" => persistent(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    drop(world);
    universe.finalize().expect("finalize");
}
