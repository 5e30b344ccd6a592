//! Hierarchical (node-aware) broadcast, for ranks on several nodes: the
//! root hands the buffer to its node's leader (its lowest rank) unless it
//! is the leader, the leaders broadcast among themselves with the flat
//! algorithm the cost model prefers for them at network prices, then each
//! leader broadcasts to its node (the root left out) with the flat
//! algorithm it prefers there. Only the leaders' phase crosses nodes.

use crate::coll::algos::{AlgoInfo, Args};
use crate::coll::ctx::{Ctx, Group};
use crate::coll::nodes::NodeView;
use crate::coll::sched::{Buf, Schedule};
use crate::coll::select::{choose, Coll, Model};

/// Applicability.
pub const INFO: AlgoInfo = AlgoInfo {
    name: "hierarchical",
    commutative_only: false,
    pow2_only: false,
    multi_node: true,
};

/// Tag step of the root's message to its leader (the only message
/// between those two ranks in the call).
const TO_LEADER_STEP: usize = 0;

/// The flat algorithms of the phases and the predicted time: every rank
/// derives the same from the job's model and the communicator's layout.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Broadcast among the leaders.
    pub leaders: &'static str,
    /// Broadcast within each node.
    pub local: &'static str,
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
        leaders: leaders.algo.name,
        local: local.algo.name,
        predicted: to_leader + leaders.predicted + local.predicted,
    }
}

/// Broadcasts `buf` from `root` to all ranks, whose nodes `view` gives.
pub fn build(
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
            super::build(plan.leaders, c, s, buf, view.node_of[root], &have)
        });
    }
    let local = |c: &Ctx, s: &mut Schedule| super::build(plan.local, c, s, buf, 0, &have);
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
