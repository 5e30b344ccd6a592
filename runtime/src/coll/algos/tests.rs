//! Every algorithm at rank counts 1..=40 in the schedule simulator
//! ([`crate::coll::sim`]), with uneven and empty blocks, every root where
//! there is one, and a non-commutative operation where one applies.

use crate::coll::algos::{allgatherv, alltoall, gather, reduce_scatter, scan, scatter};
use crate::coll::sched::{Buf, Schedule};
use crate::coll::sim::{self, add, compose, ctx, data, fold};

/// Rank counts: all up to 17, then either side of 32 (scattered's window).
fn ranks() -> impl Iterator<Item = usize> {
    (1..=17).chain([31, 32, 33, 40])
}

fn user(v: &mut [u8]) -> Buf {
    Schedule::user(v.as_mut_ptr(), v.len())
}

/// Uneven sizes with empty ones.
fn uneven(r: usize, unit: usize) -> usize {
    unit * [0, 3, 1, 2, 0, 5][r % 6]
}

#[test]
fn gather_and_scatter_at_every_root() {
    for p in ranks() {
        for block in [0, 1, 12] {
            for root in [0, p / 2, p - 1] {
                let want: Vec<u8> = (0..p).flat_map(|r| data(r, block)).collect();
                for (algo, algo_s) in gather::ALL.iter().zip(scatter::ALL) {
                    assert_eq!(algo.name, algo_s.name);
                    // Gather.
                    let mut mine: Vec<Vec<u8>> = (0..p).map(|r| data(r, block)).collect();
                    let mut all = vec![0u8; p * block];
                    all[root * block..(root + 1) * block].copy_from_slice(&mine[root]);
                    let scheds = (0..p)
                        .map(|r| {
                            let mut s = Schedule::new();
                            let (c, m, a) = (ctx(r, p), user(&mut mine[r]), user(&mut all));
                            let call = gather::Even {
                                mine: m,
                                all: a,
                                block,
                                root,
                            };
                            gather::build(algo, &c, &mut s, &call, &[]);
                            s
                        })
                        .collect();
                    sim::run(scheds);
                    assert_eq!(
                        all, want,
                        "gather {} p={p} block={block} root={root}",
                        algo.name
                    );
                    // Scatter.
                    let mut src = want.clone();
                    let mut got: Vec<Vec<u8>> = (0..p).map(|_| vec![0u8; block]).collect();
                    got[root] = data(root, block);
                    let scheds = (0..p)
                        .map(|r| {
                            let mut s = Schedule::new();
                            let (c, m, a) = (ctx(r, p), user(&mut got[r]), user(&mut src));
                            let call = scatter::Even {
                                mine: m,
                                all: a,
                                block,
                                root,
                            };
                            scatter::build(algo_s, &c, &mut s, &call, &[]);
                            s
                        })
                        .collect();
                    sim::run(scheds);
                    for (r, g) in got.iter().enumerate() {
                        assert_eq!(
                            *g,
                            data(r, block),
                            "scatter {} p={p} root={root}",
                            algo.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn allgatherv_uneven_blocks() {
    for p in ranks() {
        let counts: Vec<usize> = (0..p).map(|r| uneven(r, 3)).collect();
        // Reverse rank order with gaps: never packed.
        let mut displs = vec![0; p];
        let mut at = 0;
        for r in (0..p).rev() {
            displs[r] = at;
            at += counts[r] + 2;
        }
        for packed in [false, true] {
            let displs = if packed {
                crate::coll::Blocks::packed_displs(&counts)
            } else {
                displs.clone()
            };
            let len = at.max(1);
            let mut bufs: Vec<Vec<u8>> = (0..p)
                .map(|r| {
                    let mut b = vec![0u8; len];
                    b[displs[r]..displs[r] + counts[r]].copy_from_slice(&data(r, counts[r]));
                    b
                })
                .collect();
            for algo in allgatherv::ALL
                .iter()
                .filter(|a| !a.pow2_only || p.is_power_of_two())
            {
                let scheds = bufs
                    .iter_mut()
                    .enumerate()
                    .map(|(r, b)| {
                        let mut s = Schedule::new();
                        let buf = user(b);
                        let parts: Vec<Buf> =
                            (0..p).map(|q| buf.slice(displs[q], counts[q])).collect();
                        allgatherv::build(algo, &ctx(r, p), &mut s, &parts, &[]);
                        s
                    })
                    .collect();
                sim::run(scheds);
                for b in &bufs {
                    for q in 0..p {
                        assert_eq!(
                            b[displs[q]..displs[q] + counts[q]],
                            data(q, counts[q])[..],
                            "{} p={p}",
                            algo.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn alltoall_every_algorithm_and_uneven_pairs() {
    let val = |from: usize, to: usize, n: usize| data(from * 41 + to, n);
    for p in ranks() {
        for block in [0, 1, 8] {
            for algo in alltoall::ALL {
                let mut send: Vec<Vec<u8>> = (0..p)
                    .map(|r| (0..p).flat_map(|j| val(r, j, block)).collect())
                    .collect();
                let mut recv = vec![vec![0u8; p * block]; p];
                let scheds = (0..p)
                    .map(|r| {
                        let mut s = Schedule::new();
                        let (sb, rb) = (user(&mut send[r]), user(&mut recv[r]));
                        let call = alltoall::Even {
                            send: sb,
                            recv: rb,
                            block,
                        };
                        alltoall::build(algo, &ctx(r, p), &mut s, &call, &[]);
                        s
                    })
                    .collect();
                sim::run(scheds);
                for (r, got) in recv.iter().enumerate() {
                    let want: Vec<u8> = (0..p).flat_map(|j| val(j, r, block)).collect();
                    assert_eq!(*got, want, "alltoall {} p={p} block={block}", algo.name);
                }
            }
        }
        // Uneven pairs (alltoallv): rank i sends uneven(i + 2j) bytes to j.
        let size = |i: usize, j: usize| uneven(i + 2 * j, 1);
        for algo in alltoall::ALL_V {
            let mut send: Vec<Vec<u8>> = (0..p)
                .map(|i| (0..p).flat_map(|j| val(i, j, size(i, j))).collect())
                .collect();
            let mut recv: Vec<Vec<u8>> = (0..p)
                .map(|j| vec![0u8; (0..p).map(|i| size(i, j)).sum()])
                .collect();
            let scheds = (0..p)
                .map(|r| {
                    let mut s = Schedule::new();
                    let (sb, rb) = (user(&mut send[r]), user(&mut recv[r]));
                    let (mut so, mut ro) = (0, 0);
                    let mut sparts = Vec::new();
                    let mut rparts = Vec::new();
                    for j in 0..p {
                        sparts.push(sb.slice(so, size(r, j)));
                        so += size(r, j);
                        rparts.push(rb.slice(ro, size(j, r)));
                        ro += size(j, r);
                    }
                    let call = alltoall::Parts {
                        send: &sparts,
                        recv: &rparts,
                    };
                    alltoall::build_v(algo, &ctx(r, p), &mut s, &call, &[]);
                    s
                })
                .collect();
            sim::run(scheds);
            for (r, got) in recv.iter().enumerate() {
                let want: Vec<u8> = (0..p).flat_map(|i| val(i, r, size(i, r))).collect();
                assert_eq!(*got, want, "alltoallv {} p={p}", algo.name);
            }
        }
    }
}

#[test]
fn reduce_scatter_keeps_rank_order_where_it_claims_to() {
    for p in ranks() {
        // 8-byte elements (the affine maps); uneven blocks with empty ones.
        let lens: Vec<usize> = (0..p).map(|r| uneven(r, 8)).collect();
        let mut off = vec![0; p + 1];
        for r in 0..p {
            off[r + 1] = off[r] + lens[r];
        }
        for (commutative, op) in [(true, add()), (false, compose())] {
            let inputs: Vec<Vec<u8>> = (0..p).map(|r| data(r, off[p])).collect();
            let want = fold(&op, &inputs);
            for algo in reduce_scatter::ALL
                .iter()
                .filter(|a| commutative || !a.commutative_only)
            {
                let mut inp = inputs.clone();
                let mut out: Vec<Vec<u8>> = (0..p).map(|r| vec![0u8; lens[r]]).collect();
                let scheds = (0..p)
                    .map(|r| {
                        let mut s = Schedule::new();
                        let (i, o) = (user(&mut inp[r]), user(&mut out[r]));
                        let call = reduce_scatter::Split {
                            input: i,
                            off: &off,
                            out: o,
                            op: &op,
                            commutative,
                        };
                        reduce_scatter::build(algo, &ctx(r, p), &mut s, &call, &[]);
                        s
                    })
                    .collect();
                sim::run(scheds);
                for (r, o) in out.iter().enumerate() {
                    assert_eq!(
                        o[..],
                        want[off[r]..off[r + 1]],
                        "{} p={p} commutative={commutative}",
                        algo.name
                    );
                }
                assert_eq!(inp, inputs, "the input must stay untouched");
            }
        }
    }
}

#[test]
fn scan_and_exscan_keep_rank_order() {
    for p in ranks() {
        for n in [0, 8, 24] {
            let inputs: Vec<Vec<u8>> = (0..p).map(|r| data(r, n)).collect();
            for exclusive in [false, true] {
                for in_place in [false, true] {
                    for algo in scan::ALL {
                        let op = compose();
                        let mut inp = inputs.clone();
                        let mut out: Vec<Vec<u8>> = if in_place {
                            inputs.clone()
                        } else {
                            vec![vec![0u8; n]; p]
                        };
                        let scheds = (0..p)
                            .map(|r| {
                                let mut s = Schedule::new();
                                let i = (!in_place).then(|| user(&mut inp[r]));
                                let (c, o) = (ctx(r, p), user(&mut out[r]));
                                let call = scan::Prefix {
                                    input: i,
                                    out: o,
                                    op: &op,
                                    commutative: false,
                                    exclusive,
                                };
                                scan::build(algo, &c, &mut s, &call, &[]);
                                s
                            })
                            .collect();
                        sim::run(scheds);
                        for (r, o) in out.iter().enumerate() {
                            let what = format!(
                                "{} p={p} n={n} exclusive={exclusive} in_place={in_place} rank {r}",
                                algo.name
                            );
                            match (exclusive, r) {
                                (true, 0) if in_place => assert_eq!(*o, inputs[0], "{what}"),
                                (true, 0) => assert!(o.iter().all(|&b| b == 0), "{what}"),
                                (true, _) => assert_eq!(*o, fold(&op, &inputs[..r]), "{what}"),
                                (false, _) => assert_eq!(*o, fold(&op, &inputs[..=r]), "{what}"),
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn every_entry_builds_for_its_own_family() {
    use crate::coll::algos::{Build, Coll};
    for &coll in Coll::ALL {
        for algo in coll.algos() {
            let family = matches!(
                (coll, algo.build),
                (Coll::Allreduce, Build::Allreduce(_))
                    | (Coll::Bcast, Build::Bcast(_))
                    | (Coll::Reduce, Build::Reduce(_))
                    | (Coll::Allgather, Build::Allgather(_))
                    | (Coll::Allgatherv, Build::Allgatherv(_))
                    | (Coll::Gather, Build::Gather(_))
                    | (Coll::Gatherv, Build::Gatherv(_))
                    | (Coll::Scatter, Build::Scatter(_))
                    | (Coll::Scatterv, Build::Scatterv(_))
                    | (Coll::Alltoall, Build::Alltoall(_))
                    | (Coll::Alltoallv | Coll::Alltoallw, Build::Alltoallv(_))
                    | (
                        Coll::ReduceScatter | Coll::ReduceScatterBlock,
                        Build::ReduceScatter(_)
                    )
                    | (Coll::Scan | Coll::Exscan, Build::Scan(_))
            );
            assert!(
                family,
                "{coll:?}: {} builds for {:?}",
                algo.name, algo.build
            );
        }
        let names: Vec<&str> = coll.algos().iter().map(|a| a.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            names.len(),
            unique.len(),
            "{coll:?}: a name twice in {names:?}"
        );
    }
}
