//! Hierarchical (node-aware) allreduce, for ranks on several nodes: a
//! binomial reduce to each node's leader (its lowest rank), an allreduce
//! among the leaders with the flat algorithm the cost model prefers for
//! them at network prices, then a broadcast from each leader to its node
//! with the flat broadcast it prefers there. Only the leaders' phase
//! crosses nodes, with one message per node at a time.
//!
//! Rank order: the node-local reduce combines its node's ranks in rank
//! order, and the leaders, ascending and so in node order, combine with an
//! algorithm that keeps their order when the operation is not commutative
//! (the plan chooses among those that apply). The result is therefore in
//! rank order when every node's ranks are consecutive, which
//! applicability requires of non-commutative operations.

use super::Reduction;
use crate::coll::algos::{bcast, reduce, AlgoInfo, Args};
use crate::coll::ctx::{Ctx, Group};
use crate::coll::nodes::NodeView;
use crate::coll::sched::Schedule;
use crate::coll::select::{choose, Coll, Model};

/// Applicability.
pub const INFO: AlgoInfo = AlgoInfo {
    name: "hierarchical",
    commutative_only: false,
    pow2_only: false,
    multi_node: true,
};

/// The flat algorithms of the phases and the predicted time: every rank
/// derives the same from the job's model and the communicator's layout.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Allreduce among the leaders.
    pub leaders: &'static str,
    /// Broadcast within each node.
    pub local: &'static str,
    /// Predicted seconds: the largest node's phases plus the leaders'.
    pub predicted: f64,
}

/// The plan for `a` (its layout says how many nodes and ranks per node).
pub fn plan(model: &Model, a: &Args) -> Plan {
    let (nodes, q) = (a.layout.nodes, a.layout.per_node);
    let leaders = choose(
        Coll::Allreduce,
        &Args::new(nodes, a.bytes, a.commutative),
        &model.inter(),
        None,
    );
    let local = choose(Coll::Bcast, &Args::new(q, a.bytes, true), model, None);
    let reduce = model.predict(
        Coll::Reduce,
        "binomial",
        &Args::new(q, a.bytes, a.commutative),
    );
    Plan {
        leaders: leaders.algo.name,
        local: local.algo.name,
        predicted: reduce + leaders.predicted + local.predicted,
    }
}

/// Reduces `r` across all ranks, whose nodes `view` gives.
pub fn build(
    ctx: &Ctx,
    view: &NodeView,
    plan: &Plan,
    s: &mut Schedule,
    r: &Reduction,
    after: &[usize],
) -> Vec<usize> {
    let local = Group {
        ranks: &view.local,
        world: &view.local_world,
    };
    let reduced = ctx.within(local, s, |c, s| {
        reduce::binomial::build_in_place(c, s, r.buf, 0, r.op, r.commutative, after)
    });
    let combined = if view.leader_of(ctx.rank) == ctx.rank {
        let leaders = Group {
            ranks: &view.leaders,
            world: &view.leaders_world,
        };
        ctx.within(leaders, s, |c, s| {
            super::build(plan.leaders, c, s, r, &reduced)
        })
    } else {
        reduced
    };
    ctx.within(local, s, |c, s| {
        bcast::build(plan.local, c, s, r.buf, 0, &combined)
    })
}
