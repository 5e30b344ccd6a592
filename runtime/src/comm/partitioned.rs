//! Partitioned point-to-point traffic (MPI 4.0 chapter 4), for the C
//! front end's `MPI_Psend_init` / `MPI_Precv_init`.
//!
//! MPI matches partitioned operations once, in the order their
//! initialization calls were made (per communicator, peer and tag), and
//! never with ordinary point-to-point operations. Each partitioned
//! operation therefore gets a context id of its own, computed on both
//! sides without talking: the n-th partitioned send a process initializes
//! to `(dest, tag)` on a communicator and the n-th partitioned receive its
//! destination initializes from `(source, tag)` on the same communicator
//! both get
//!
//! ```text
//!  bit 31 | bits 16..31              | bits 0..16
//!    1    | communicator's p2p context | n mod 2^16
//! ```
//!
//! Communicator contexts are below 2^12 ([`super::context::MAX_COMMS`]
//! pairs), so these never meet a communicator's own contexts, and a
//! message on one matches only its partner operation (sequence numbers
//! wrap after 65536 operations initialized with the same peer and tag,
//! far more than a program keeps at once). The data of every start travels
//! as one message of the whole buffer; matching queues of these contexts
//! are not purged when the communicator is freed (they are empty once the
//! operations completed).

use std::collections::HashMap;

use super::{lock, Comm};
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::request::Request;
use crate::status::{Status, PROC_NULL};

/// Marks a partitioned operation's context id.
const PARTITIONED_BIT: u32 = 1 << 31;
/// Bits of the per-(peer, tag) sequence number.
const SEQ_BITS: u32 = 16;

/// The context id of the partitioned operation with sequence number `seq`
/// on the communicator whose point-to-point context is `comm_context`.
const fn context_of(comm_context: u32, seq: u32) -> u32 {
    PARTITIONED_BIT | (comm_context << SEQ_BITS) | seq
}

/// Partitioned operations a process initialized on a communicator, per
/// (is a send, peer rank, tag): the next sequence number.
#[derive(Default)]
pub(crate) struct Counters(HashMap<(bool, i32, i32), u32>);

/// The matching of one partitioned operation: its peer, tag and context.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// # if world.size() < 2 { return Ok(()); }
/// match world.rank() {
///     0 => {
///         let ch = world.partitioned_channel(true, 1, 7)?; // MPI_Psend_init to rank 1, tag 7
///         let data = [1u8, 2, 3, 4];
///         // SAFETY: `data` outlives the request, waited on at once.
///         unsafe { world.psend_raw(&ch, data.as_ptr(), data.len()) }?.wait()?;
///     }
///     1 => {
///         let ch = world.partitioned_channel(false, 0, 7)?; // MPI_Precv_init from rank 0, tag 7
///         let mut buf = [0u8; 4];
///         // SAFETY: `buf` outlives the request, waited on at once.
///         unsafe { world.precv_raw(&ch, buf.as_mut_ptr(), buf.len()) }?.wait()?;
///         assert_eq!(buf, [1, 2, 3, 4]);
///     }
///     _ => {}
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionedChannel {
    /// Context id (see the module documentation); unused with `PROC_NULL`.
    context: u32,
    /// Peer rank in the communicator, or `PROC_NULL`.
    peer: i32,
    /// Tag.
    tag: i32,
}

impl Comm {
    /// Binds a partitioned operation to its matching partner
    /// (`MPI_Psend_init` when `send`, else `MPI_Precv_init`): checks the
    /// peer (a rank or `PROC_NULL`) and tag (MPI admits no wildcard for
    /// either, on both sides), and takes the next sequence number for them.
    ///
    /// ```no_run
    /// use oxmpi::{ANY_SOURCE, ANY_TAG, PROC_NULL};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // A receive from PROC_NULL: each start completes at once, receiving nothing.
    /// let none = world.partitioned_channel(false, PROC_NULL, 0)?;
    /// let mut buf = [0u8; 4];
    /// // SAFETY: `buf` outlives the request, waited on at once.
    /// unsafe { world.precv_raw(&none, buf.as_mut_ptr(), buf.len()) }?.wait()?;
    /// // Partitioned operations take no wildcards.
    /// assert!(world.partitioned_channel(false, ANY_SOURCE, 0).is_err());
    /// assert!(world.partitioned_channel(false, 0, ANY_TAG).is_err());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn partitioned_channel(
        &self,
        send: bool,
        peer: i32,
        tag: i32,
    ) -> Result<PartitionedChannel, Error> {
        Self::send_tag(tag)?;
        self.dest(if send { "dest" } else { "source" }, peer)?;
        if peer == PROC_NULL {
            return Ok(PartitionedChannel {
                context: 0,
                peer,
                tag,
            });
        }
        let seq = {
            let mut counters = lock(&self.inner.partitioned);
            let n = counters.0.entry((send, peer, tag)).or_insert(0);
            let seq = *n;
            *n = (seq + 1) % (1 << SEQ_BITS);
            seq
        };
        Ok(PartitionedChannel {
            context: context_of(self.inner.context, seq),
            peer,
            tag,
        })
    }

    /// Starts the send of a partitioned operation: `len` bytes at `buf`,
    /// one message, standard mode.
    ///
    /// # Safety
    /// `buf..buf+len` must stay readable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 2 { return Ok(()); }
    /// if world.rank() == 0 {
    ///     let ch = world.partitioned_channel(true, 1, 0)?; // MPI_Psend_init
    ///     for round in 0..3u8 {
    ///         let data = [round; 16];
    ///         // MPI_Start, then MPI_Wait. SAFETY: `data` outlives the request.
    ///         unsafe { world.psend_raw(&ch, data.as_ptr(), data.len()) }?.wait()?;
    ///     }
    /// } else if world.rank() == 1 {
    ///     let ch = world.partitioned_channel(false, 0, 0)?; // MPI_Precv_init
    ///     for round in 0..3u8 {
    ///         let mut buf = [0u8; 16];
    ///         // SAFETY: `buf` outlives the request.
    ///         unsafe { world.precv_raw(&ch, buf.as_mut_ptr(), buf.len()) }?.wait()?;
    ///         assert_eq!(buf, [round; 16]);
    ///     }
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn psend_raw(
        &self,
        ch: &PartitionedChannel,
        buf: *const u8,
        len: usize,
    ) -> Result<Request<'static>, Error> {
        let Some(peer) = self.dest("dest", ch.peer)? else {
            return Ok(Request::finished(self.rt().clone(), Status::empty()));
        };
        if buf.is_null() && len > 0 {
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer with {len} bytes to send"),
            });
        }
        // SAFETY: the caller's contract.
        let id = unsafe {
            self.rt()
                .engine()
                .start_send(peer, ch.context, self.rank(), ch.tag, buf, len, false)
        };
        Ok(match id {
            Some(id) => Request::pending(self.rt().clone(), id),
            None => Request::finished(self.rt().clone(), Status::empty()),
        })
    }

    /// Starts the receive of a partitioned operation into `cap` bytes at
    /// `buf`.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 2 { return Ok(()); }
    /// if world.rank() == 0 {
    ///     let ch = world.partitioned_channel(true, 1, 5)?;
    ///     // SAFETY: the literal lives for the whole program.
    ///     unsafe { world.psend_raw(&ch, b"abc".as_ptr(), 3) }?.wait()?;
    /// } else if world.rank() == 1 {
    ///     let ch = world.partitioned_channel(false, 0, 5)?;
    ///     let mut buf = [0u8; 8]; // room for more than arrives
    ///     // SAFETY: `buf` outlives the request, waited on at once.
    ///     let st = unsafe { world.precv_raw(&ch, buf.as_mut_ptr(), buf.len()) }?.wait()?;
    ///     assert_eq!((st.count, &buf[..3]), (3, &b"abc"[..]));
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn precv_raw(
        &self,
        ch: &PartitionedChannel,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Request<'static>, Error> {
        if ch.peer == PROC_NULL {
            return Ok(Request::finished(self.rt().clone(), Status::empty()));
        }
        if buf.is_null() && cap > 0 {
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer for {cap} bytes"),
            });
        }
        let pattern = Pattern {
            context: ch.context,
            source: SourceSel::Rank(ch.peer),
            tag: TagSel::Tag(ch.tag),
        };
        // SAFETY: the caller's contract.
        let id = unsafe { self.rt().engine().start_recv(pattern, buf, cap) };
        Ok(Request::pending(self.rt().clone(), id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::context::MAX_COMMS;

    #[test]
    fn contexts_are_apart_from_communicators_and_each_other() {
        let last_comm_context = 2 * MAX_COMMS as u32 - 1;
        let mut seen = std::collections::HashSet::new();
        for comm_context in [0, 2, 4, last_comm_context - 1] {
            for seq in [0, 1, (1 << SEQ_BITS) - 1] {
                let c = context_of(comm_context, seq);
                assert!(c > last_comm_context, "{c:#x} is a communicator's context");
                assert!(seen.insert(c), "{c:#x} given twice");
            }
        }
    }
}
