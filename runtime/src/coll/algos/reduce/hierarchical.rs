//! Hierarchical (node-aware) reduce, for ranks on several nodes: a
//! binomial reduce to each node's leader (its lowest rank), a reduce among
//! the leaders to the root's leader with the flat algorithm the cost model
//! prefers for them at network prices, then, when the root is not its
//! node's leader, one message from that leader to the root. Only the
//! leaders' phase crosses nodes, with one message per node at a time.
//!
//! Rank order: the node-local reduce combines its node's ranks in rank
//! order and the leaders combine in node order, so the result is in rank
//! order when every node's ranks are consecutive, which applicability
//! requires of non-commutative operations.

use super::ToRoot;
use crate::coll::algos::{choose, AlgoInfo, Args, Build, Coll};
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
    phases: Some(|m, a| (plan(m, a).leaders.name, "binomial")),
    build: Build::Reduce(build_call),
};

/// Tag step of the leader's message to a root that is not the leader
/// (apart from the phases' steps, which use the low ones).
const TO_ROOT_STEP: usize = 200;

/// The flat algorithm of the leaders' phase and the predicted time: every
/// rank derives the same from the job's model and the communicator's
/// layout.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Reduce among the leaders.
    pub leaders: &'static AlgoInfo,
    /// Predicted seconds: the largest node's reduce, the leaders' and the
    /// move to a root that is not its node's leader.
    pub predicted: f64,
}

/// The plan for `a` (its layout says how many nodes and ranks per node).
pub fn plan(model: &Model, a: &Args) -> Plan {
    let (nodes, q) = (a.layout.nodes, a.layout.per_node);
    let leaders = choose(
        Coll::Reduce,
        &Args::new(nodes, a.bytes, a.commutative),
        &model.inter(),
        None,
    );
    let local = model.predict(
        Coll::Reduce,
        "binomial",
        &Args::new(q, a.bytes, a.commutative),
    );
    let to_root = if q > 1 {
        model.alpha + a.bytes as f64 * model.beta
    } else {
        0.0
    };
    Plan {
        leaders: leaders.algo,
        predicted: local + leaders.predicted + to_root,
    }
}

/// Reduces `r` to its root across all ranks, whose nodes `view` gives.
pub fn build_on(
    ctx: &Ctx,
    view: &NodeView,
    plan: &Plan,
    s: &mut Schedule,
    r: &ToRoot,
    after: &[usize],
) -> Vec<usize> {
    let (me, head) = (ctx.rank, view.leader_of(r.root));
    let local = Group {
        ranks: &view.local,
        world: &view.local_world,
    };
    let mut last = ctx.within(local, s, |c, s| {
        super::binomial::build_in_place(c, s, r.buf, 0, r.op, r.commutative, after)
    });
    if view.leader_of(me) == me {
        let leaders = Group {
            ranks: &view.leaders,
            world: &view.leaders_world,
        };
        last = ctx.within(leaders, s, |c, s| {
            let call = ToRoot {
                root: view.node_of[r.root],
                ..*r
            };
            super::build(plan.leaders, c, s, &call, &last)
        });
    }
    if r.root != head {
        if me == head {
            last = vec![s.send(ctx.world(r.root), ctx.tag(TO_ROOT_STEP), r.buf, &last)];
        } else if me == r.root {
            last = vec![s.recv(head as i32, ctx.tag(TO_ROOT_STEP), r.buf, &last)];
        }
    }
    last
}

/// [`build_on`] for a call of the registry: the nodes and the model come
/// with `ctx`.
pub(super) fn build_call(ctx: &Ctx, s: &mut Schedule, r: &ToRoot, after: &[usize]) -> Vec<usize> {
    match ctx.nodes {
        Some(view) => {
            let plan = plan(
                ctx.model,
                &Args::new(ctx.size, r.buf.len, r.commutative).on(view.layout),
            );
            build_on(ctx, view, &plan, s, r, after)
        }
        // A view of part of a communicator has no nodes, and selection
        // never picks a node-aware algorithm there (one node): flat.
        None => super::binomial::build_call(ctx, s, r, after),
    }
}
