//! Collectives on intercommunicators (MPI 4.0 section 6.2.2), as
//! schedules of point-to-point steps on the intercommunicator's collective
//! context, so that the blocking, non-blocking and persistent forms all
//! come from the `plan_*` entry points (which call these first when the
//! communicator is an intercommunicator).
//!
//! Rooted calls: the root passes [`ROOT`], the other ranks of its group
//! [`PROC_NULL`](crate::PROC_NULL) (they take no part), and the remote
//! group the root's rank there. Data flows between the groups: the root
//! sends to (or receives from) every remote rank directly; the "all"
//! calls have every rank exchange with every remote rank; reductions fold
//! the remote group's contributions in rank order (`b0 op (b1 op ...)`),
//! so non-commutative operations see MPI's order. Reduce-scatter sends
//! every contribution to the remote group's rank 0, which folds them and
//! hands each local rank its block (both groups reduce vectors of the same
//! length, MPI 4.0 section 6.11.2: each group's counts add up to it). The barrier gathers each group at its rank 0,
//! which exchange a message and release their groups.
//!
//! Steps within a group and across the groups share the source ranks of
//! their envelopes (both groups number from 0), so they use different step
//! numbers of the call's tag: [`CROSS`] across, [`LOCAL`] within.

use super::blocks::{span, Blocks};
use super::sched::{Buf, Schedule};
use super::{user, Elems, Planned};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::{ElemType, Op, Reducer};
use crate::status::PROC_NULL;

/// `MPI_ROOT`: the root of a rooted collective on an intercommunicator.
///
/// ```no_run
/// use oxmpi::{PROC_NULL, ROOT};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let color = world.rank() % 2;
/// let half = world.split(color, 0)?.unwrap();
/// let inter = half.intercomm_create(0, Some(&world), 1 - color, 5)?;
/// // Rank 0 of the even group broadcasts to the odd group.
/// let root = match (color, inter.rank()) {
///     (0, 0) => ROOT,
///     (0, _) => PROC_NULL,
///     _ => 0,
/// };
/// let mut x = [if root == ROOT { 42 } else { 0 }];
/// inter.bcast(&mut x, root)?;
/// assert!(color == 0 || x[0] == 42);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const ROOT: i32 = -3;

/// Step number of messages across the groups.
const CROSS: usize = 0;
/// Step number of messages within a group.
const LOCAL: usize = 1;

/// This rank's part in a rooted intercommunicator collective.
#[derive(Clone, Copy)]
pub(super) enum Side {
    /// The root ([`ROOT`]).
    Root,
    /// Another rank of the root's group ([`PROC_NULL`]).
    Idle,
    /// A rank of the other group; the root's rank in the remote group.
    Leaf(usize),
}

/// The tags of a call: across, within.
struct Tags {
    cross: i32,
    local: i32,
}

pub(super) fn no_in_place(arg: &'static str) -> Error {
    Error::InvalidArgument {
        arg,
        reason: "MPI_IN_PLACE is not allowed on an intercommunicator".into(),
    }
}

/// Folds the remote group's contributions `parts` (in remote rank order,
/// each received by the step in `recvs`) into `out`: `b0 op (b1 op ...)`.
fn fold_into(s: &mut Schedule, f: &Reducer, parts: &[Buf], recvs: &[usize], out: Buf) {
    let m = parts.len();
    let mut last = s.copy(parts[m - 1], out, &[recvs[m - 1]]);
    for j in (0..m - 1).rev() {
        last = s.reduce(f, parts[j], out, &[recvs[j], last]);
    }
}

impl Comm {
    /// Where this rank stands in a rooted call with `root`.
    pub(super) fn side(&self, root: i32) -> Result<Side, Error> {
        match root {
            ROOT => Ok(Side::Root),
            PROC_NULL => Ok(Side::Idle),
            r if (0..self.peer_count()).contains(&r) => Ok(Side::Leaf(r as usize)),
            r => Err(Error::InvalidRank {
                arg: "root",
                value: r,
                size: self.peer_count(),
            }),
        }
    }

    /// Whether this rank is the root of a rooted call with `root` (on an
    /// intercommunicator, the rank passing [`ROOT`]).
    pub(super) fn is_root(&self, root: i32) -> Result<bool, Error> {
        if self.is_inter() {
            return Ok(matches!(self.side(root)?, Side::Root));
        }
        Ok(self.root(root)? == self.rank() as usize)
    }

    /// Takes the call's sequence number (every rank of both groups does,
    /// whatever its part) and gives its tags.
    fn inter_tags(&self) -> Tags {
        let ctx = self.coll_ctx();
        Tags {
            cross: ctx.tag(CROSS),
            local: ctx.tag(LOCAL),
        }
    }

    /// Sends `part(j)` to every remote rank j and receives remote rank j's
    /// message into `into(j)`; returns the receive steps.
    fn with_every_remote(
        &self,
        s: &mut Schedule,
        tag: i32,
        part: impl Fn(usize) -> Buf,
        into: impl Fn(usize) -> Buf,
    ) -> Vec<usize> {
        let peers = self.peers().to_vec();
        let mut recvs = Vec::with_capacity(peers.len());
        for (j, &w) in peers.iter().enumerate() {
            s.send(w, tag, part(j), &[]);
            let b = into(j);
            recvs.push(s.recv(j as i32, tag, b, &[]));
        }
        recvs
    }

    pub(super) fn inter_barrier(&self) -> Planned<'_> {
        let t = self.inter_tags();
        let mut s = Schedule::new();
        let empty = Schedule::user(std::ptr::null_mut(), 0);
        let (me, n) = (self.rank() as usize, self.size() as usize);
        if me == 0 {
            let arrived: Vec<usize> = (1..n)
                .map(|j| s.recv(j as i32, t.local, empty, &[]))
                .collect();
            let sent = s.send(self.peers()[0], t.cross, empty, &arrived);
            let heard = s.recv(0, t.cross, empty, &[]);
            for &w in &self.world_ranks()[1..] {
                s.send(w, t.local, empty, &[sent, heard]);
            }
        } else {
            let arrived = s.send(self.world_ranks()[0], t.local, empty, &[]);
            s.recv(0, t.local, empty, &[arrived]);
        }
        self.plan(s)
    }

    pub(super) unsafe fn inter_bcast(
        &self,
        buf: *mut u8,
        len: usize,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let side = self.side(root)?;
        let t = self.inter_tags();
        let mut s = Schedule::new();
        let b = Schedule::user(buf, len);
        match side {
            Side::Root => {
                for &w in self.peers() {
                    s.send_some(w, t.cross, b, &[]);
                }
            }
            Side::Leaf(k) => {
                s.recv_some(k as i32, t.cross, b, &[]);
            }
            Side::Idle => {}
        }
        Ok(self.plan(s))
    }

    pub(super) unsafe fn inter_gatherv(
        &self,
        send: Option<*const u8>,
        send_bytes: usize,
        recv: *mut u8,
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let side = self.side(root)?;
        let t = self.inter_tags();
        let mut s = Schedule::new();
        match side {
            Side::Root => {
                blocks.check(self.peer_count() as usize, "recvcounts", "displs")?;
                for (j, part) in blocks.parts(span(recv, &blocks)).into_iter().enumerate() {
                    s.recv_some(j as i32, t.cross, part, &[]);
                }
            }
            Side::Leaf(k) => {
                let p = send.ok_or_else(|| no_in_place("sendbuf"))?;
                s.send_some(self.peers()[k], t.cross, user(p, send_bytes), &[]);
            }
            Side::Idle => {}
        }
        Ok(self.plan(s))
    }

    pub(super) unsafe fn inter_scatterv(
        &self,
        send: *const u8,
        blocks: Blocks<'_>,
        recv: Option<*mut u8>,
        recv_bytes: usize,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let side = self.side(root)?;
        let t = self.inter_tags();
        let mut s = Schedule::new();
        match side {
            Side::Root => {
                blocks.check(self.peer_count() as usize, "sendcounts", "displs")?;
                let parts = blocks.parts(span(send as *mut u8, &blocks));
                for (part, &w) in parts.into_iter().zip(self.peers()) {
                    s.send_some(w, t.cross, part, &[]);
                }
            }
            Side::Leaf(k) => {
                let p = recv.ok_or_else(|| no_in_place("recvbuf"))?;
                s.recv_some(k as i32, t.cross, Schedule::user(p, recv_bytes), &[]);
            }
            Side::Idle => {}
        }
        Ok(self.plan(s))
    }

    /// Every rank sends `sparts[j]` to remote rank j and receives remote
    /// rank j's block into `rparts[j]` (allgather: the same send block to all).
    pub(super) fn inter_exchange(
        &self,
        sparts: &[Buf],
        rparts: &[Buf],
    ) -> Result<Planned<'_>, Error> {
        let m = self.peer_count() as usize;
        for (arg, len) in [("sendcounts", sparts.len()), ("recvcounts", rparts.len())] {
            if len != m {
                return Err(Error::InvalidArgument {
                    arg,
                    reason: format!("has {len} entries for a remote group of {m} ranks"),
                });
            }
        }
        let t = self.inter_tags();
        let mut s = Schedule::new();
        for (j, &w) in self.peers().iter().enumerate() {
            s.send_some(w, t.cross, sparts[j], &[]);
            s.recv_some(j as i32, t.cross, rparts[j], &[]);
        }
        Ok(self.plan(s))
    }

    pub(super) unsafe fn inter_reduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let side = self.side(root)?;
        let t = self.inter_tags();
        let n = e.bytes();
        let mut s = Schedule::new();
        match side {
            Side::Root => {
                // Only the root reduces (the others' type and operation
                // are not looked at).
                let f = op.reducer(e.ty)?;
                let m = self.peer_count() as usize;
                let parts: Vec<Buf> = (0..m).map(|_| s.temp(n)).collect();
                let recvs: Vec<usize> = (0..m)
                    .map(|j| s.recv(j as i32, t.cross, parts[j], &[]))
                    .collect();
                fold_into(&mut s, &f, &parts, &recvs, Schedule::user(recv, n));
            }
            Side::Leaf(k) => {
                let p = send.ok_or_else(|| no_in_place("sendbuf"))?;
                s.send(self.peers()[k], t.cross, user(p, n), &[]);
            }
            Side::Idle => {}
        }
        Ok(self.plan(s))
    }

    pub(super) unsafe fn inter_allreduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        let p = send.ok_or_else(|| no_in_place("sendbuf"))?;
        let f = op.reducer(e.ty)?;
        let t = self.inter_tags();
        let n = e.bytes();
        let mut s = Schedule::new();
        let m = self.peer_count() as usize;
        let parts: Vec<Buf> = (0..m).map(|_| s.temp(n)).collect();
        let recvs = self.with_every_remote(&mut s, t.cross, |_| user(p, n), |j| parts[j]);
        fold_into(&mut s, &f, &parts, &recvs, Schedule::user(recv, n));
        Ok(self.plan(s))
    }

    /// Reduce-scatter: every rank's `send` (`theirs` bytes, as long as the
    /// remote group's blocks together) goes to remote rank 0; rank 0 here folds what it
    /// receives (`ours[i]` bytes for local rank i) and sends each block.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn inter_reduce_scatter(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        theirs: usize,
        ours: &[usize],
        ty: Option<ElemType>,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        let p = send.ok_or_else(|| no_in_place("sendbuf"))?;
        let f = op.reducer(ty)?;
        let t = self.inter_tags();
        let mut s = Schedule::new();
        s.send(self.peers()[0], t.cross, user(p, theirs), &[]);
        let me = self.rank() as usize;
        let mine = Schedule::user(recv, ours[me]);
        if me == 0 {
            let total: usize = ours.iter().sum();
            let m = self.peer_count() as usize;
            let parts: Vec<Buf> = (0..m).map(|_| s.temp(total)).collect();
            let recvs: Vec<usize> = (0..m)
                .map(|j| s.recv(j as i32, t.cross, parts[j], &[]))
                .collect();
            let sum = s.temp(total);
            fold_into(&mut s, &f, &parts, &recvs, sum);
            let folded = s.steps.len() - 1;
            let mut off = 0;
            for (i, &len) in ours.iter().enumerate() {
                let block = sum.slice(off, len);
                if i == 0 {
                    s.copy_some(block, mine, &[folded]);
                } else {
                    s.send_some(self.world_ranks()[i], t.local, block, &[folded]);
                }
                off += len;
            }
        } else {
            s.recv_some(0, t.local, mine, &[]);
        }
        Ok(self.plan(s))
    }
}
