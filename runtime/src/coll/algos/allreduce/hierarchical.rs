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
use crate::coll::algos::{bcast, choose, reduce, AlgoInfo, Args, Build, Coll};
use crate::coll::ctx::{Ctx, Group};
use crate::coll::inter::Pattern;
use crate::coll::model::Model;
use crate::coll::nodes::NodeView;
use crate::coll::sched::Schedule;

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
    build: Build::Allreduce(build_call),
};

/// The flat algorithms of the phases and the predicted time: every rank
/// derives the same from the job's model and the communicator's layout.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Allreduce among the leaders.
    pub leaders: &'static AlgoInfo,
    /// Broadcast within each node.
    pub local: &'static AlgoInfo,
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
        leaders: leaders.algo,
        local: local.algo,
        predicted: reduce + leaders.predicted + local.predicted,
    }
}

/// Reduces `r` across all ranks, whose nodes `view` gives.
pub fn build_on(
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
        let call = bcast::Broadcast {
            buf: r.buf,
            root: 0,
        };
        bcast::build(plan.local, c, s, &call, &combined)
    })
}

/// [`build_on`] for a call of the registry: the nodes and the model come
/// with `ctx`.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction,
    after: &[usize],
) -> Vec<usize> {
    match ctx.nodes {
        Some(view) => {
            let plan = plan(
                ctx.model,
                &Args::new(ctx.size, r.count * r.elem, r.commutative).on(view.layout),
            );
            build_on(ctx, view, &plan, s, r, after)
        }
        // A view of part of a communicator has no nodes, and selection
        // never picks a node-aware algorithm there (one node): flat.
        None => super::recursive_doubling::build(ctx, s, r.buf, r.op, after),
    }
}
