//! The node-aware algorithms in the schedule simulator
//! ([`crate::coll::sim`]): node maps in blocks, uneven, interleaved and
//! with one rank per node; every root; every flat algorithm in each phase;
//! a non-commutative operation where the layout keeps rank order; and
//! only leaders talking across nodes.

use super::{allreduce, bcast, reduce, AlgoInfo, Args};
use crate::coll::nodes::{consecutive, NodeView};
use crate::coll::sched::{Schedule, Step};
use crate::coll::sim::{self, add, compose, ctx, data, fold};

/// Node maps of `p` ranks (node ids by world rank): blocks of 2, 3 and 4
/// nodes (uneven where they do not divide `p`), interleaved, one rank per
/// node, and a lopsided one whose ids are not in order.
fn maps(p: usize) -> Vec<Vec<usize>> {
    let mut out = vec![];
    for k in 2..=4.min(p) {
        out.push(consecutive(p, k));
        out.push((0..p).map(|r| r % k).collect());
    }
    out.push((0..p).collect());
    out.push(
        (0..p)
            .map(|r| if r == 1 || r + 1 == p { 9 } else { 4 })
            .collect(),
    );
    out.retain(|m| m.iter().any(|&n| n != m[0]));
    out
}

/// Flat algorithms of `all` (the phases' choices).
fn flat(all: &'static [AlgoInfo]) -> impl Iterator<Item = &'static AlgoInfo> + Clone {
    all.iter().filter(|i| !i.multi_node)
}

/// Panics unless every message that crosses nodes goes between leaders.
fn only_leaders_cross(views: &[NodeView], scheds: &[Schedule]) {
    for (r, s) in scheds.iter().enumerate() {
        let v = &views[r];
        for step in &s.steps {
            let peer = match *step {
                Step::Send { to, .. } => to,
                Step::Recv { from, .. } => from as usize,
                _ => continue,
            };
            if v.node_of[peer] != v.node_of[r] {
                assert!(
                    v.leader_of(r) == r && v.leader_of(peer) == peer,
                    "rank {r} talks to {peer} across nodes {:?}",
                    v.node_of
                );
            }
        }
    }
}

/// The node views of every rank of `map` (node ids by world rank) on the
/// world communicator.
fn views_of(map: &[usize]) -> Vec<NodeView> {
    let world: Vec<usize> = (0..map.len()).collect();
    (0..map.len())
        .map(|r| NodeView::new(map, &world, r))
        .collect()
}

/// Builds every rank's schedule with `build`, checks that only leaders
/// talk across nodes and runs them together.
fn simulate(views: &[NodeView], mut build: impl FnMut(usize, &mut Schedule)) {
    let scheds: Vec<Schedule> = (0..views.len())
        .map(|r| {
            let mut s = Schedule::new();
            build(r, &mut s);
            s
        })
        .collect();
    only_leaders_cross(views, &scheds);
    sim::run(scheds);
}

#[test]
fn hierarchical_allreduce_every_layout_and_phase_algorithm() {
    for p in 2..=13 {
        for map in maps(p) {
            let views = views_of(&map);
            let layout = views[0].layout;
            for (commutative, op) in [(true, add()), (false, compose())] {
                if !commutative && !layout.blocked {
                    let a = Args::new(p, 8, false).on(layout);
                    assert!(allreduce::hierarchical::INFO.applicable(&a).is_err());
                    continue;
                }
                for n in [0, 8, 48] {
                    let inputs: Vec<Vec<u8>> = (0..p).map(|r| data(r, n)).collect();
                    let want = fold(&op, &inputs);
                    for leaders in
                        flat(allreduce::ALL).filter(|i| commutative || !i.commutative_only)
                    {
                        for local in flat(bcast::ALL) {
                            let plan = allreduce::hierarchical::Plan {
                                leaders,
                                local,
                                predicted: 0.0,
                            };
                            let mut bufs = inputs.clone();
                            simulate(&views, |r, s| {
                                let red = allreduce::Reduction {
                                    buf: Schedule::user(bufs[r].as_mut_ptr(), n),
                                    count: n / 8,
                                    elem: 8,
                                    op: &op,
                                    commutative,
                                };
                                allreduce::hierarchical::build_on(
                                    &ctx(r, p),
                                    &views[r],
                                    &plan,
                                    s,
                                    &red,
                                    &[],
                                );
                            });
                            for (r, b) in bufs.iter().enumerate() {
                                assert_eq!(
                                    *b, want,
                                    "p={p} map={map:?} n={n} {plan:?} commutative={commutative} rank {r}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn hierarchical_bcast_every_layout_root_and_phase_algorithm() {
    for p in 2..=13 {
        for map in maps(p) {
            let views = views_of(&map);
            for root in 0..p {
                for n in [0, 1, 100] {
                    for leaders in flat(bcast::ALL) {
                        for local in flat(bcast::ALL) {
                            let plan = bcast::hierarchical::Plan {
                                leaders,
                                local,
                                predicted: 0.0,
                            };
                            let mut bufs: Vec<Vec<u8>> = (0..p)
                                .map(|r| if r == root { data(root, n) } else { vec![0; n] })
                                .collect();
                            // The root's message to its leader stays on its node.
                            simulate(&views, |r, s| {
                                let buf = Schedule::user(bufs[r].as_mut_ptr(), n);
                                bcast::hierarchical::build_on(
                                    &ctx(r, p),
                                    &views[r],
                                    &plan,
                                    s,
                                    buf,
                                    root,
                                    &[],
                                );
                            });
                            for (r, b) in bufs.iter().enumerate() {
                                assert_eq!(
                                    *b,
                                    data(root, n),
                                    "p={p} map={map:?} root={root} n={n} {plan:?} rank {r}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn hierarchical_reduce_every_layout_root_and_leader_algorithm() {
    for p in 2..=11 {
        for map in maps(p) {
            let views = views_of(&map);
            let layout = views[0].layout;
            for (commutative, op) in [(true, add()), (false, compose())] {
                if !commutative && !layout.blocked {
                    let a = Args::new(p, 8, false).on(layout);
                    assert!(reduce::hierarchical::INFO.applicable(&a).is_err());
                    continue;
                }
                for root in 0..p {
                    for n in [0, 8, 48] {
                        let inputs: Vec<Vec<u8>> = (0..p).map(|r| data(r, n)).collect();
                        let want = fold(&op, &inputs);
                        for leaders in flat(reduce::ALL) {
                            let plan = reduce::hierarchical::Plan {
                                leaders,
                                predicted: 0.0,
                            };
                            let mut bufs = inputs.clone();
                            // The leader's message to the root stays on its node.
                            simulate(&views, |r, s| {
                                let call = reduce::ToRoot {
                                    buf: Schedule::user(bufs[r].as_mut_ptr(), n),
                                    root,
                                    op: &op,
                                    commutative,
                                };
                                reduce::hierarchical::build_on(
                                    &ctx(r, p),
                                    &views[r],
                                    &plan,
                                    s,
                                    &call,
                                    &[],
                                );
                            });
                            assert_eq!(
                                bufs[root], want,
                                "p={p} map={map:?} root={root} n={n} {plan:?} commutative={commutative}"
                            );
                        }
                    }
                }
            }
        }
    }
}
