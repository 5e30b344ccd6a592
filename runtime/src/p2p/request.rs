//! The request table: every pending send and receive, addressed by a
//! generation-checked id so a stale id (from a packet or a freed handle)
//! can never reach a recycled slot.

use crate::datatype::Cursor;
use crate::status::Status;

/// A request id: slot index in the low 32 bits, generation in the high 32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqId(pub u64);

impl ReqId {
    fn new(slot: usize, generation: u32) -> ReqId {
        ReqId(((generation as u64) << 32) | slot as u64)
    }
    fn slot(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }
    fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// A running request named in [`Ticket::BITS`] bits, so that the C front
/// end's `MPI_Request` handle can carry it (no table entry of its own):
/// the request's slot (below 2^17) and the low 8 bits of its generation.
/// Stale tickets are caught as stale ids are, except one whose slot was
/// reused a multiple of 256 times since (a program using a request it
/// already completed is erroneous anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u32);

impl Ticket {
    const SLOT_BITS: u32 = 17;
    /// Bits a ticket takes.
    pub const BITS: u32 = Self::SLOT_BITS + 8;

    /// The ticket of `id`, if its slot fits.
    #[inline]
    pub(crate) fn of(id: ReqId) -> Option<Ticket> {
        let slot = id.slot() as u32;
        (slot < 1 << Self::SLOT_BITS)
            .then(|| Ticket(((id.generation() & 0xff) << Self::SLOT_BITS) | slot))
    }

    /// The ticket as [`Ticket::BITS`] bits.
    #[inline]
    pub fn to_bits(self) -> u32 {
        self.0
    }

    /// The ticket [`Ticket::to_bits`] gave (higher bits are ignored).
    #[inline]
    pub fn from_bits(bits: u32) -> Ticket {
        Ticket(bits & ((1 << Self::BITS) - 1))
    }

    fn slot(self) -> usize {
        (self.0 & ((1 << Self::SLOT_BITS) - 1)) as usize
    }

    fn generation_low(self) -> u32 {
        self.0 >> Self::SLOT_BITS
    }
}

/// Where a send stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendState {
    /// Waiting for the receiver to match a synchronous eager send (Ack).
    AwaitAck,
    /// Rendezvous offered; waiting for Fin (receiver read it) or Cts.
    AwaitFin,
    /// Handed whole to the transport as a direct transfer; waiting for it.
    Direct,
    /// Streaming the data in Data packets to receive `recv_id`; `offset` bytes sent.
    Streaming {
        /// Receiver's request id.
        recv_id: u64,
        /// Bytes already pushed.
        offset: usize,
    },
}

/// What a pending request is doing.
#[derive(Debug)]
pub enum Pending {
    /// A send whose buffer is still in use.
    Send {
        /// Destination world rank.
        peer: usize,
        /// Start of the user's buffer.
        buf: *const u8,
        /// Its length.
        len: usize,
        /// Progress.
        state: SendState,
        /// A non-contiguous buffer: where the packed stream stands (`buf`
        /// is then unused; `len` counts packed bytes).
        typed: Option<Box<Cursor>>,
    },
    /// A collective schedule running in the engine.
    Coll,
    /// A receive, posted or matched.
    Recv {
        /// Start of the user's buffer.
        buf: *mut u8,
        /// Its capacity in bytes.
        cap: usize,
        /// Filled in when matched: sender's rank, tag, message length.
        matched: Option<(i32, i32, usize)>,
        /// Bytes written so far (streamed or assembled).
        received: usize,
        /// A non-contiguous buffer: where the next packed byte goes (`buf`
        /// is then unused; `cap` counts packed bytes).
        typed: Option<Box<Cursor>>,
    },
}

/// A request's lifecycle.
#[derive(Debug)]
pub enum ReqState {
    /// Still running.
    Pending(Pending),
    /// Finished with this status.
    Done(Status),
    /// Finished with an error (a collective whose reduction failed, ...).
    Failed(crate::error::Error),
}

struct Slot {
    generation: u32,
    state: Option<ReqState>,
}

/// The table of requests.
#[derive(Default)]
pub struct Requests {
    slots: Vec<Slot>,
    free: Vec<usize>,
}

// SAFETY: the raw buffer pointers inside are only dereferenced by the engine
// under its lock, while the owning `Request` guarantees the buffer lives.
unsafe impl Send for Requests {}

impl Requests {
    /// Adds a request in `state`.
    pub fn insert(&mut self, state: ReqState) -> ReqId {
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.slots[i];
                slot.state = Some(state);
                ReqId::new(i, slot.generation)
            }
            None => {
                self.slots.push(Slot {
                    generation: 1,
                    state: Some(state),
                });
                ReqId::new(self.slots.len() - 1, 1)
            }
        }
    }

    /// The request `id`, if it is still live.
    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut ReqState> {
        let slot = self.slots.get_mut(id.slot())?;
        if slot.generation != id.generation() {
            return None;
        }
        slot.state.as_mut()
    }

    /// Read-only view of `id`.
    pub fn get(&self, id: ReqId) -> Option<&ReqState> {
        let slot = self.slots.get(id.slot())?;
        if slot.generation != id.generation() {
            return None;
        }
        slot.state.as_ref()
    }

    /// Marks `id` finished with `status`.
    pub fn complete(&mut self, id: ReqId, status: Status) {
        if let Some(state) = self.get_mut(id) {
            *state = ReqState::Done(status);
        }
    }

    /// Marks `id` failed with `error`.
    pub fn fail(&mut self, id: ReqId, error: crate::error::Error) {
        if let Some(state) = self.get_mut(id) {
            *state = ReqState::Failed(error);
        }
    }

    /// Removes a finished request and returns its outcome; `None` if it is
    /// still pending (it stays) or unknown.
    #[inline]
    pub fn take_finished(&mut self, id: ReqId) -> Option<Result<Status, crate::error::Error>> {
        match self.take_ok(id) {
            Some(s) => Some(Ok(s)),
            None => self.take_failed(id).map(Err),
        }
    }

    /// Removes a request that failed and returns its error; `None` leaves
    /// the request as it is.
    pub fn take_failed(&mut self, id: ReqId) -> Option<crate::error::Error> {
        let slot = self.slots.get_mut(id.slot())?;
        if slot.generation != id.generation() || !matches!(slot.state, Some(ReqState::Failed(_))) {
            return None;
        }
        let state = slot.state.take();
        self.release(id.slot());
        match state {
            Some(ReqState::Failed(e)) => Some(e),
            _ => None,
        }
    }

    /// Removes a request that finished with a status (not an error) and
    /// returns the status: the common completion, without moving a whole
    /// `Result` around. `None` leaves the request as it is.
    #[inline]
    pub fn take_ok(&mut self, id: ReqId) -> Option<Status> {
        let slot = self.slots.get_mut(id.slot())?;
        if slot.generation != id.generation() {
            return None;
        }
        let Some(ReqState::Done(s)) = slot.state else {
            return None;
        };
        slot.state = None;
        self.release(id.slot());
        Some(s)
    }

    /// Frees `slot` (its state taken) for reuse under a new generation.
    #[inline]
    fn release(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        slot.generation = slot.generation.wrapping_add(1).max(1);
        self.free.push(i);
    }

    /// Like [`Requests::take_finished`] for requests that cannot fail.
    pub fn take_done(&mut self, id: ReqId) -> Option<Status> {
        self.take_finished(id)
            .map(|r| r.unwrap_or_else(|_| Status::empty()))
    }

    /// The live request a ticket names.
    #[inline]
    pub fn resolve(&self, t: Ticket) -> Option<ReqId> {
        let slot = self.slots.get(t.slot())?;
        (slot.state.is_some() && slot.generation & 0xff == t.generation_low())
            .then(|| ReqId::new(t.slot(), slot.generation))
    }

    /// Whether the request a ticket names has finished, or there is none
    /// (a stale ticket: its completion reports it).
    pub fn ticket_finished(&self, t: Ticket) -> bool {
        self.resolve(t).is_none_or(|id| self.is_done(id))
    }

    /// Removes a request that finished with a status that is no error
    /// (not truncated) and returns it: `Ok(status)`; else `Err(true)`
    /// when it finished otherwise (it stays) and `Err(false)` while it
    /// runs.
    #[inline]
    pub fn take_clean(&mut self, id: ReqId) -> Result<Status, bool> {
        match self.get(id) {
            Some(ReqState::Pending(_)) => Err(false),
            Some(ReqState::Done(s)) if s.truncated_from.is_none() => self.take_ok(id).ok_or(true),
            _ => Err(true),
        }
    }

    /// Whether `id` has finished (successfully or not).
    pub fn is_done(&self, id: ReqId) -> bool {
        matches!(self.get(id), Some(ReqState::Done(_) | ReqState::Failed(_)))
    }

    /// Live (pending or finished, not yet taken) requests.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_never_reach_recycled_slots() {
        let mut t = Requests::default();
        let a = t.insert(ReqState::Done(Status::empty()));
        assert!(t.take_done(a).is_some());
        let b = t.insert(ReqState::Done(Status::empty()));
        assert_ne!(a, b);
        assert!(t.get(a).is_none());
        assert!(t.take_done(a).is_none());
        assert!(t.take_done(b).is_some());
        assert_eq!(t.live(), 0);
    }

    #[test]
    fn tickets_name_live_requests_only() {
        let mut t = Requests::default();
        let a = t.insert(ReqState::Done(Status::empty()));
        let ta = Ticket::of(a).unwrap();
        assert_eq!(Ticket::from_bits(ta.to_bits() | 1 << 31), ta);
        assert_eq!(t.resolve(ta), Some(a));
        assert!(t.take_clean(a).is_ok());
        assert_eq!(t.resolve(ta), None); // taken
        let b = t.insert(ReqState::Failed(crate::error::Error::State("x".into())));
        assert_eq!(t.resolve(ta), None); // the slot's next request
        assert_eq!(t.take_clean(b).err(), Some(true));
        let mut big = Requests::default();
        for _ in 0..(1 << 17) {
            big.insert(ReqState::Done(Status::empty()));
        }
        let last = big.insert(ReqState::Done(Status::empty()));
        assert_eq!(Ticket::of(last), None);
    }
}
