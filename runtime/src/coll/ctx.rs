//! What an algorithm knows about the call: ranks, peers and tags.

use super::area::AreaState;
use super::model::Model;
use super::nodes::NodeView;
use super::sched::{Schedule, Step};
use super::tag;

/// The calling rank's view of one collective call.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// Rank in the communicator.
    pub rank: usize,
    /// Ranks in the communicator.
    pub size: usize,
    /// World rank of every communicator rank.
    pub world_of: std::borrow::Cow<'a, [usize]>,
    /// This call's sequence number on the communicator.
    pub seq: u32,
    /// The node of every rank (node-aware algorithms plan with it); `None`
    /// in a view of part of the communicator ([`Ctx::within`]).
    pub nodes: Option<&'a NodeView>,
    /// The job's cost model (node-aware algorithms plan their phases with it).
    pub model: &'a Model,
    /// The communicator's shared-memory collective area, when every rank
    /// is on this host; `None` in a view of part of the communicator.
    pub area: Option<&'a std::sync::Arc<AreaState>>,
}

impl Ctx<'_> {
    /// The tag of step `step` of this call.
    pub fn tag(&self, step: usize) -> i32 {
        tag::tag(self.seq, step as u32)
    }

    /// World rank of communicator rank `r` (for sends).
    pub fn world(&self, r: usize) -> usize {
        self.world_of[r]
    }

    /// `r` shifted so that `root` becomes 0.
    pub fn relative(&self, r: usize, root: usize) -> usize {
        (r + self.size - root) % self.size
    }

    /// Inverse of [`Ctx::relative`].
    pub fn absolute(&self, rel: usize, root: usize) -> usize {
        (rel + root) % self.size
    }

    /// Adds with `build` this rank's part of a collective among the
    /// members of `group` only, so that any algorithm's builder runs on a
    /// part of the communicator: `build` sees a view in which the members
    /// are ranks `0..len` in `group`'s order (its sends go to their world
    /// ranks) and the receives it adds are turned back into communicator
    /// ranks afterwards. `self` must be the whole communicator's view and
    /// this rank a member. The steps use this call's tags: two groups that
    /// share a pair of ranks must follow each other by dependencies at
    /// both of them (then MPI's non-overtaking order matches their
    /// messages even when the tags are equal).
    pub fn within<R>(
        &self,
        group: Group,
        s: &mut Schedule,
        build: impl FnOnce(&Ctx, &mut Schedule) -> R,
    ) -> R {
        let rank = group
            .ranks
            .iter()
            .position(|&r| r == self.rank)
            .expect("the calling rank is a member of the group");
        let sub = Ctx {
            rank,
            size: group.ranks.len(),
            world_of: std::borrow::Cow::Borrowed(group.world),
            seq: self.seq,
            nodes: None,
            model: self.model,
            area: None,
        };
        let first = s.steps.len();
        let out = build(&sub, s);
        for step in &mut s.steps[first..] {
            if let Step::Recv { from, .. } = step {
                *from = group.ranks[*from as usize] as i32;
            }
        }
        out
    }
}

/// Some ranks of a communicator (see [`Ctx::within`]).
#[derive(Debug, Clone, Copy)]
pub struct Group<'g> {
    /// Their communicator ranks.
    pub ranks: &'g [usize],
    /// Their world ranks, in the same order.
    pub world: &'g [usize],
}

/// Largest power of two not above `n` (`n` >= 1).
pub fn pow2_floor(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Splits `count` elements into `parts` blocks as evenly as possible:
/// (first element, elements) of block `i`.
pub fn block(count: usize, parts: usize, i: usize) -> (usize, usize) {
    let base = count / parts;
    let extra = count % parts;
    let start = i * base + i.min(extra);
    (start, base + usize::from(i < extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_everything_once() {
        for count in 0..20 {
            for parts in 1..7 {
                let mut next = 0;
                for i in 0..parts {
                    let (s, n) = block(count, parts, i);
                    assert_eq!(s, next);
                    next += n;
                }
                assert_eq!(next, count);
            }
        }
        assert_eq!(pow2_floor(1), 1);
        assert_eq!(pow2_floor(6), 4);
        assert_eq!(pow2_floor(8), 8);
    }

    #[test]
    fn a_group_view_sends_to_world_ranks_and_receives_from_communicator_ranks() {
        let whole = Ctx {
            rank: 6,
            size: 8,
            world_of: std::borrow::Cow::Owned((0..8).map(|r| 10 * r).collect()),
            seq: 3,
            nodes: None,
            model: &Model::SHM,
            area: None,
        };
        let mut s = Schedule::new();
        let none = Schedule::user(std::ptr::null_mut(), 0);
        let first = s.send(0, whole.tag(0), none, &[]);
        let group = Group {
            ranks: &[4, 1, 6],
            world: &[40, 10, 60],
        };
        let (rank, size) = whole.within(group, &mut s, |c, s| {
            s.send(c.world(0), c.tag(1), none, &[first]);
            s.recv(0, c.tag(2), none, &[]);
            (c.rank, c.size)
        });
        assert_eq!((rank, size), (2, 3));
        assert!(matches!(s.steps[1], Step::Send { to: 40, .. }));
        assert!(matches!(s.steps[2], Step::Recv { from: 4, tag, .. } if tag == whole.tag(2)));
        // Steps added before the group's are left alone.
        assert!(matches!(s.steps[0], Step::Send { to: 0, .. }));
    }
}
