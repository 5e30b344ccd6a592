//! Hierarchical (node-aware) broadcast, for ranks on several nodes: the
//! root hands the buffer to its node's leader (its lowest rank) unless it
//! is the leader, the leaders broadcast among themselves with the flat
//! algorithm the cost model prefers for them at network prices, then each
//! leader broadcasts to its node (the root left out) with the flat
//! algorithm it prefers there. Only the leaders' phase crosses nodes.

use crate::coll::algos::{choose, AlgoInfo, Args, Build, Coll};
use crate::coll::ctx::{Ctx, Group};
use crate::coll::inter::Pattern;
use crate::coll::model::Model;
use crate::coll::nodes::NodeView;
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub const INFO: AlgoInfo = AlgoInfo {
    name: "hierarchical",
    commutative_only: false,
    pow2_only: false,
    multi_node: true,
    pattern: Pattern::NodeAware,
    cost: |m, a| plan(m, a).predicted,
    phases: Some(|m, a| {
        let p = plan(m, a);
        (p.leaders.name, p.local.name)
    }),
    build: Build::Bcast(build_call),
};

/// Tag step of the root's message to its leader (the only message
/// between those two ranks in the call).
const TO_LEADER_STEP: usize = 0;

/// The flat algorithms of the phases and the predicted time: every rank
/// derives the same from the job's model and the communicator's layout.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Broadcast among the leaders.
    pub leaders: &'static AlgoInfo,
    /// Broadcast within each node.
    pub local: &'static AlgoInfo,
    /// Predicted seconds (the root's node taken to be the largest, with a
    /// root that is not its leader).
    pub predicted: f64,
}

/// The plan for `a` (its layout says how many nodes and ranks per node).
pub fn plan(model: &Model, a: &Args) -> Plan {
    let (nodes, q) = (a.layout.nodes, a.layout.per_node);
    let leaders = choose(
        Coll::Bcast,
        &Args::new(nodes, a.bytes, true),
        &model.inter(),
        None,
    );
    let local = choose(Coll::Bcast, &Args::new(q, a.bytes, true), model, None);
    let to_leader = if q > 1 {
        model.alpha + a.bytes as f64 * model.beta
    } else {
        0.0
    };
    Plan {
        leaders: leaders.algo,
        local: local.algo,
        predicted: to_leader + leaders.predicted + local.predicted,
    }
}

/// Broadcasts `buf` from `root` to all ranks, whose nodes `view` gives.
pub fn build_on(
    ctx: &Ctx,
    view: &NodeView,
    plan: &Plan,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    let (me, head) = (ctx.rank, view.leader_of(root));
    let mut have = after.to_vec();
    if root != head {
        if me == root {
            // The root's part ends here: its node's broadcast leaves it out.
            return vec![s.send(ctx.world(head), ctx.tag(TO_LEADER_STEP), buf, after)];
        }
        if me == head {
            have = vec![s.recv(root as i32, ctx.tag(TO_LEADER_STEP), buf, after)];
        }
    }
    if view.leader_of(me) == me {
        let leaders = Group {
            ranks: &view.leaders,
            world: &view.leaders_world,
        };
        have = ctx.within(leaders, s, |c, s| {
            let call = super::Broadcast {
                buf,
                root: view.node_of[root],
            };
            super::build(plan.leaders, c, s, &call, &have)
        });
    }
    let call = super::Broadcast { buf, root: 0 };
    let local = |c: &Ctx, s: &mut Schedule| super::build(plan.local, c, s, &call, &have);
    match view.local.iter().position(|&r| r == root) {
        Some(at) if root != head => {
            let ranks = [&view.local[..at], &view.local[at + 1..]].concat();
            let world = [&view.local_world[..at], &view.local_world[at + 1..]].concat();
            ctx.within(
                Group {
                    ranks: &ranks,
                    world: &world,
                },
                s,
                local,
            )
        }
        _ => {
            let group = Group {
                ranks: &view.local,
                world: &view.local_world,
            };
            ctx.within(group, s, local)
        }
    }
}

/// [`build_on`] for a call of the registry: the nodes and the model come
/// with `ctx`.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Broadcast,
    after: &[usize],
) -> Vec<usize> {
    match ctx.nodes {
        Some(view) => {
            let plan = plan(
                ctx.model,
                &Args::new(ctx.size, r.buf.len, true).on(view.layout),
            );
            build_on(ctx, view, &plan, s, r.buf, r.root, after)
        }
        // A view of part of a communicator has no nodes, and selection
        // never picks a node-aware algorithm there (one node): flat.
        None => super::binomial::build(ctx, s, r.buf, r.root, 0, after),
    }
}
