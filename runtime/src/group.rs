//! Groups (`MPI_Group`): ordered sets of processes, named by world rank.
//! Every operation is local. Argument errors name the argument and the
//! offending value.

use crate::error::Error;
use crate::status::{PROC_NULL, UNDEFINED};

/// Result of comparing groups or communicators (`MPI_IDENT`, ...; the
/// discriminants are MPICH's values).
///
/// ```
/// use oxmpi::{Comparison, Group};
/// assert_eq!(Group::empty().compare(&Group::empty()), Comparison::Ident);
/// assert_eq!(Comparison::Unequal as i32, 3); // MPI_UNEQUAL in the MPICH ABI
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// The same object (communicators) or the same members in the same order (groups).
    Ident = 0,
    /// Communicators with the same members in the same order but different contexts.
    Congruent = 1,
    /// The same members in a different order.
    Similar = 2,
    /// Different members.
    Unequal = 3,
}

/// An ordered set of processes.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let all = world.group();
/// let first_two = all.incl(&[0, 1])?;
/// let rest = all.difference(&first_two);
/// assert_eq!(rest.size(), all.size() - 2);
/// assert_eq!(first_two.translate_ranks(&[1], &all)?, vec![1]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Group {
    /// World rank of each group rank.
    members: Vec<usize>,
    /// This process's world rank, when known.
    me: Option<usize>,
}

impl Group {
    /// `MPI_GROUP_EMPTY`.
    ///
    /// ```
    /// use oxmpi::Group;
    /// let none = Group::empty();
    /// assert_eq!((none.size(), none.rank()), (0, None));
    /// assert!(none.world_ranks().is_empty());
    /// ```
    pub fn empty() -> Group {
        Group {
            members: Vec::new(),
            me: None,
        }
    }

    /// A group of `members` (world ranks, distinct) seen by world rank `me`.
    pub(crate) fn from_world(members: Vec<usize>, me: Option<usize>) -> Group {
        Group { members, me }
    }

    fn derive(&self, members: Vec<usize>) -> Group {
        Group {
            members,
            me: self.me,
        }
    }

    /// Number of processes.
    ///
    /// See the examples on [`Group`] and [`Group::empty`].
    pub fn size(&self) -> i32 {
        self.members.len() as i32
    }

    /// This process's rank in the group, `None` when it is not a member
    /// (`MPI_UNDEFINED`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let last = world.group().incl(&[world.size() - 1])?;
    /// let expected = (world.rank() == world.size() - 1).then_some(0);
    /// assert_eq!(last.rank(), expected); // None outside the group
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn rank(&self) -> Option<i32> {
        let me = self.me?;
        self.members.iter().position(|&w| w == me).map(|r| r as i32)
    }

    /// World rank of each group rank.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let reversed: Vec<i32> = (0..world.size()).rev().collect();
    /// let g = world.group().incl(&reversed)?;
    /// assert_eq!(g.world_ranks()[0], world.size() as usize - 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn world_ranks(&self) -> &[usize] {
        &self.members
    }

    fn check_rank(&self, arg: &'static str, index: usize, rank: i32) -> Result<usize, Error> {
        usize::try_from(rank)
            .ok()
            .filter(|&r| r < self.members.len())
            .ok_or_else(|| Error::InvalidArgument {
                arg,
                reason: format!(
                    "rank {rank} (at index {index}) is outside the group of {} ranks",
                    self.size()
                ),
            })
    }

    /// Checks `ranks` (in range, no repeats) and returns them as indices.
    fn distinct(&self, arg: &'static str, ranks: &[i32]) -> Result<Vec<usize>, Error> {
        let mut seen = vec![false; self.members.len()];
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let r = self.check_rank(arg, i, r)?;
                if std::mem::replace(&mut seen[r], true) {
                    return Err(Error::InvalidArgument {
                        arg,
                        reason: format!("rank {r} appears more than once (again at index {i})"),
                    });
                }
                Ok(r)
            })
            .collect()
    }

    /// The processes at `ranks`, in that order (`MPI_Group_incl`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let pair = all.incl(&[1, 0])?; // world ranks 1 and 0, in that order
    /// assert_eq!(pair.world_ranks(), &[1, 0]);
    /// assert!(all.incl(&[0, 0]).is_err()); // a rank twice
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn incl(&self, ranks: &[i32]) -> Result<Group, Error> {
        let idx = self.distinct("ranks", ranks)?;
        Ok(self.derive(idx.iter().map(|&r| self.members[r]).collect()))
    }

    /// The processes not at `ranks`, in group order (`MPI_Group_excl`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let workers = all.excl(&[0])?; // everyone but rank 0
    /// assert_eq!(workers.size(), all.size() - 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn excl(&self, ranks: &[i32]) -> Result<Group, Error> {
        let idx = self.distinct("ranks", ranks)?;
        let mut out = vec![true; self.members.len()];
        idx.iter().for_each(|&r| out[r] = false);
        Ok(self.derive(
            (0..self.members.len())
                .filter(|&r| out[r])
                .map(|r| self.members[r])
                .collect(),
        ))
    }

    /// Expands MPI ranges `(first, last, stride)`: `first, first + stride,
    /// ...` up to and including `last` if reached; `stride` may be negative
    /// (then `first >= last`), never zero.
    fn expand(&self, ranges: &[(i32, i32, i32)]) -> Result<Vec<i32>, Error> {
        let mut ranks = Vec::new();
        for (i, &(first, last, stride)) in ranges.iter().enumerate() {
            let bad = |why: String| Error::InvalidArgument {
                arg: "ranges",
                reason: format!("range {i} ({first}, {last}, {stride}): {why}"),
            };
            if stride == 0 {
                return Err(bad("the stride is zero".into()));
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return Err(bad(format!(
                    "a stride of {stride} never goes from {first} to {last}"
                )));
            }
            for end in [first, last] {
                if !(0..self.size()).contains(&end) {
                    return Err(bad(format!(
                        "rank {end} is outside the group of {} ranks",
                        self.size()
                    )));
                }
            }
            let count = (last as i64 - first as i64) / stride as i64 + 1;
            ranks.extend((0..count).map(|k| (first as i64 + k * stride as i64) as i32));
        }
        Ok(ranks)
    }

    /// The processes of `ranges` in order (`MPI_Group_range_incl`); a rank
    /// appearing twice across the ranges is an error.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let last = all.size() - 1;
    /// let evens = all.range_incl(&[(0, last, 2)])?;
    /// let backwards = all.range_incl(&[(last, 0, -1)])?;
    /// assert_eq!(backwards.world_ranks()[0], last as usize);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn range_incl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group, Error> {
        let ranks = self.expand(ranges)?;
        let idx = self.distinct("ranges", &ranks)?;
        Ok(self.derive(idx.iter().map(|&r| self.members[r]).collect()))
    }

    /// The processes outside `ranges`, in group order (`MPI_Group_range_excl`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let odds = all.range_excl(&[(0, all.size() - 1, 2)])?; // drop the even ranks
    /// assert!(odds.world_ranks().iter().all(|w| w % 2 == 1));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn range_excl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group, Error> {
        let ranks = self.expand(ranges)?;
        self.distinct("ranges", &ranks)?;
        self.excl(&ranks)
    }

    /// This group's processes, then `other`'s not in it (`MPI_Group_union`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let (a, b) = (all.incl(&[0, 1])?, all.incl(&[1, 2])?);
    /// assert_eq!(a.union(&b).world_ranks(), &[0, 1, 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn union(&self, other: &Group) -> Group {
        let mut members = self.members.clone();
        members.extend(other.members.iter().filter(|w| !self.members.contains(w)));
        Group {
            members,
            me: self.me.or(other.me),
        }
    }

    /// This group's processes that are also in `other`, in this group's
    /// order (`MPI_Group_intersection`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let (a, b) = (all.incl(&[0, 1])?, all.incl(&[2, 1])?);
    /// assert_eq!(a.intersection(&b).world_ranks(), &[1]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn intersection(&self, other: &Group) -> Group {
        self.derive(
            self.members
                .iter()
                .copied()
                .filter(|w| other.members.contains(w))
                .collect(),
        )
    }

    /// This group's processes that are not in `other`, in this group's
    /// order (`MPI_Group_difference`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let root = all.incl(&[0])?;
    /// assert_eq!(all.difference(&root).size(), all.size() - 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn difference(&self, other: &Group) -> Group {
        self.derive(
            self.members
                .iter()
                .copied()
                .filter(|w| !other.members.contains(w))
                .collect(),
        )
    }

    /// The rank in `other` of the processes at `ranks` here
    /// (`MPI_Group_translate_ranks`): [`UNDEFINED`] for processes not in
    /// `other`; `PROC_NULL` stays `PROC_NULL`.
    ///
    /// ```no_run
    /// use oxmpi::UNDEFINED;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let tail = all.range_incl(&[(1, all.size() - 1, 1)])?; // world ranks 1..
    /// assert_eq!(tail.translate_ranks(&[0], &all)?, vec![1]);
    /// assert_eq!(all.translate_ranks(&[0], &tail)?, vec![UNDEFINED]); // not a member
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn translate_ranks(&self, ranks: &[i32], other: &Group) -> Result<Vec<i32>, Error> {
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                if r == PROC_NULL {
                    return Ok(PROC_NULL);
                }
                let w = self.members[self.check_rank("ranks", i, r)?];
                Ok(other
                    .members
                    .iter()
                    .position(|&x| x == w)
                    .map_or(UNDEFINED, |p| p as i32))
            })
            .collect()
    }

    /// Compares with `other` (`MPI_Group_compare`): `Ident` (same members,
    /// same order), `Similar` (same members, other order) or `Unequal`.
    ///
    /// ```no_run
    /// use oxmpi::Comparison;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.group();
    /// let reversed: Vec<i32> = (0..all.size()).rev().collect();
    /// assert_eq!(all.compare(&world.group()), Comparison::Ident);
    /// assert_eq!(all.compare(&all.incl(&reversed)?), Comparison::Similar);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.members == other.members {
            return Comparison::Ident;
        }
        let (mut a, mut b) = (self.members.clone(), other.members.clone());
        a.sort_unstable();
        b.sort_unstable();
        if a == b {
            Comparison::Similar
        } else {
            Comparison::Unequal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(m: &[usize]) -> Group {
        Group::from_world(m.to_vec(), Some(m.first().copied().unwrap_or(0)))
    }

    #[test]
    fn ranges_with_strides() {
        let all = g(&(0..10).collect::<Vec<_>>());
        let r = all.range_incl(&[(0, 9, 3), (8, 2, -3)]).unwrap();
        assert_eq!(r.world_ranks(), &[0, 3, 6, 9, 8, 5, 2]);
        let r = all.range_excl(&[(1, 9, 2)]).unwrap();
        assert_eq!(r.world_ranks(), &[0, 2, 4, 6, 8]);
        let e = all.range_incl(&[(0, 5, 0)]).unwrap_err().to_string();
        assert!(
            e.contains("`ranges`") && e.contains("stride is zero"),
            "{e}"
        );
        let e = all.range_incl(&[(5, 1, 1)]).unwrap_err().to_string();
        assert!(e.contains("never goes from 5 to 1"), "{e}");
        let e = all.range_incl(&[(0, 10, 1)]).unwrap_err().to_string();
        assert!(e.contains("rank 10 is outside the group of 10"), "{e}");
        let e = all.range_incl(&[(0, 4, 2), (4, 4, 1)]).unwrap_err();
        assert!(
            e.to_string().contains("rank 4 appears more than once"),
            "{e}"
        );
    }

    #[test]
    fn incl_errors_name_argument_and_value() {
        let all = g(&[0, 1, 2, 3]);
        let e = all.incl(&[1, 7]).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid argument `ranks`: rank 7 (at index 1) is outside the group of 4 ranks"
        );
        let e = all.excl(&[2, 2]).unwrap_err().to_string();
        assert!(e.contains("rank 2 appears more than once (again at index 1)"));
        assert!(all.incl(&[-1]).is_err());
    }

    #[test]
    fn algebra_and_translation() {
        let a = g(&[4, 1, 3]);
        let b = g(&[3, 5, 4]);
        assert_eq!(a.union(&b).world_ranks(), &[4, 1, 3, 5]);
        assert_eq!(a.intersection(&b).world_ranks(), &[4, 3]);
        assert_eq!(a.difference(&b).world_ranks(), &[1]);
        assert_eq!(
            a.translate_ranks(&[0, 1, 2, PROC_NULL], &b).unwrap(),
            vec![2, UNDEFINED, 0, PROC_NULL]
        );
        assert_eq!(a.compare(&g(&[4, 1, 3])), Comparison::Ident);
        assert_eq!(a.compare(&g(&[1, 3, 4])), Comparison::Similar);
        assert_eq!(a.compare(&b), Comparison::Unequal);
        assert_eq!(Group::empty().compare(&Group::empty()), Comparison::Ident);
        assert_eq!(Group::empty().rank(), None);
        assert_eq!(a.rank(), Some(0));
        assert_eq!(a.incl(&[2, 0]).unwrap().rank(), Some(1));
    }
}
