//! Datatypes in point-to-point: what a `(buf, count, datatype)` triple
//! means for the runtime's raw-byte entry points.
//!
//! A contiguous type (every predefined type except the value-index pairs,
//! and derived types whose data is one run per element with no gaps) is
//! sent from and received into the user buffer directly. Any other type is
//! packed into a temporary buffer before sending, and received into a
//! temporary buffer that is unpacked into the user's once the receive
//! completes. What travels is always the packed bytes (`count * size`), so
//! status counts are in packed bytes and `MPI_Get_count` /
//! `MPI_Get_elements` read them with the type's size and signature.
//!
//! The mechanism (plans, packed copies, unpacking, collective temporaries)
//! is the runtime's [`oxmpi::datatype::stage`], which the Rust API's views
//! use too; this module decodes handles into it. Non-blocking operations
//! keep their temporary buffer in [`Staged`], keyed by request slot; the
//! completion code in [`crate::requests`] calls [`Staged::complete`] /
//! [`Staged::start`] / [`Staged::free`].
//!
//! Zero-copy: the runtime moves bytes between one contiguous range per
//! side. A non-contiguous send could instead hand the transport the
//! type's segment iterator (`Datatype::segments_range`, resumable at any
//! packed offset) and copy each segment straight into the eager cells or
//! the rendezvous stream, and a receive could scatter incoming chunks with
//! `unpack_raw(.., from, ..)`; that belongs in `isend_raw` / `irecv_raw`
//! (a `(ptr, Datatype, count)` variant of each) and would remove the
//! temporaries of `oxmpi::datatype::stage`, for the C ABI and the Rust
//! API's views alike.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::OnceLock;

use oxmpi::datatype::stage::{CollStage, Placed, Unpack};
pub use oxmpi::datatype::stage::{Plan, RecvTarget, SendData, Staging};
use oxmpi::datatype::Datatype;
use oxmpi::{Error, Status};

use super::datatype_query::committed;
use crate::errors::{AbiError, Class};
use crate::handles::{self, MPI_Count, MPI_Datatype, Predefined};

/// Bytes per element of a contiguous predefined datatype (all but the
/// value-index pairs): the fast path of [`plan`], which needs no
/// `Datatype` for them. One table indexed by the handle's low byte (unique
/// among builtins), holding `(handle, size)`, so a lookup is one load and
/// one compare.
#[inline]
fn contiguous_predefined(h: MPI_Datatype) -> Option<usize> {
    static TABLE: OnceLock<[(MPI_Datatype, usize); 256]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        // Handle 0 is never a datatype, so empty entries never match.
        let mut t = [(0, 0); 256];
        for &(handle, _) in handles::BUILTIN_DATATYPES {
            let size = match handles::predefined_type(handle) {
                Some(Predefined::Basic(b)) => {
                    let d = Datatype::basic(b);
                    d.is_contiguous().then_some(d.size())
                }
                Some(Predefined::Bytes(n)) => Some(n),
                None => None,
            };
            if let Some(size) = size {
                t[(handle & 0xff) as usize] = (handle, size);
            }
        }
        t
    });
    let (handle, size) = table[(h & 0xff) as usize];
    (handle == h && h != 0).then_some(size)
}

/// The common case of [`plan`], decided without building one: a
/// predefined contiguous type and a valid count give `(address, bytes)`;
/// anything else (including every error) is `None`, for [`plan`] to sort out.
#[inline]
pub fn contiguous_bytes(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Option<(*mut u8, usize)> {
    if buf as usize == handles::IN_PLACE {
        return None;
    }
    let n = usize::try_from(count).ok()?;
    let len = contiguous_predefined(datatype)?.checked_mul(n)?;
    Some((buf.cast::<u8>().cast_mut(), len))
}

/// Decodes a point-to-point buffer argument. Inlined: a predefined
/// contiguous type (nearly every call) needs a table lookup only.
#[inline]
pub fn plan(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    arg: &'static str,
) -> Result<Plan, AbiError> {
    if let Some((ptr, len)) = contiguous_bytes(buf, count, datatype) {
        return Ok(Plan::Bytes { ptr, len });
    }
    let p = handles::p2p_buffer(buf, arg)?;
    let n = usize::try_from(count).map_err(|_| negative_count(count))?;
    plan_derived(p, n, datatype)
}

#[cold]
fn negative_count(count: MPI_Count) -> AbiError {
    AbiError::new(
        Class::COUNT,
        format!("invalid count {count}: counts cannot be negative"),
    )
}

/// [`plan`] for derived types and the value-index pairs.
#[inline(never)]
fn plan_derived(p: *const u8, n: usize, datatype: MPI_Datatype) -> Result<Plan, AbiError> {
    let dt = committed(datatype)?;
    Ok(Plan::new(&dt, p, n)?)
}

/// The buffer of a persistent send (`MPI_Send_init`, `MPI_Psend_init`):
/// `(address, bytes, stage)`; a non-contiguous type is packed into the
/// stage's temporary buffer at each start.
pub fn persistent_send(plan: Plan) -> (usize, usize, Option<Stage>) {
    match plan {
        Plan::Bytes { ptr, len } => (ptr as usize, len, None),
        Plan::Packed(l) => {
            let tmp = vec![0u8; l.len];
            let (p, len) = (tmp.as_ptr() as usize, tmp.len());
            (p, len, Some(Stage::PersistentSend(l, tmp)))
        }
    }
}

/// The buffer of a persistent receive (`MPI_Recv_init`,
/// `MPI_Precv_init`): `(address, capacity, stage)`; a non-contiguous type
/// is unpacked from the stage at each completion.
pub fn persistent_recv(plan: Plan) -> (usize, usize, Option<Stage>) {
    let t = plan.recv_target();
    (t.ptr as usize, t.cap, t.unpack.map(Stage::PersistentRecv))
}

/// A temporary buffer behind a request.
pub enum Stage {
    /// A non-blocking operation's temporaries (a send's packed copy, a
    /// receive or collective unpacked at completion), released with it.
    Once(Staging),
    /// A persistent send: packed again at each start into `tmp`.
    PersistentSend(Placed, Vec<u8>),
    /// A persistent receive: unpacked at each completion.
    PersistentRecv(Unpack),
    /// A persistent collective's temporaries: packed again at each start,
    /// unpacked at each completion.
    PersistentColl(CollStage),
}

// SAFETY: the raw addresses in a stage are the program's buffers, which MPI
// lets any thread complete; the state lock serialises access.
unsafe impl Send for Stage {}

/// The stages of live requests, by request table slot.
pub struct Staged(BTreeMap<usize, Stage>);

impl Staged {
    /// No stages.
    pub const fn new() -> Staged {
        Staged(BTreeMap::new())
    }

    /// Attaches `stage` to request slot `slot`.
    pub fn put(&mut self, slot: usize, stage: Stage) {
        self.0.insert(slot, stage);
    }

    /// Forgets whatever a previous request in `slot` left (a new request
    /// takes the slot).
    pub fn clear(&mut self, slot: usize) {
        self.0.remove(&slot);
    }

    /// A persistent request in `slot` starts: packs its send data.
    pub fn start(&mut self, slot: usize) -> Result<(), AbiError> {
        match self.0.get_mut(&slot) {
            // SAFETY: MPI's rule: the buffer given to MPI_Send_init holds
            // the data whenever the request is started.
            Some(Stage::PersistentSend(l, tmp)) => Ok(unsafe { l.pack_into(tmp) }?),
            // SAFETY: the same rule for MPI_<Coll>_init.
            Some(Stage::PersistentColl(c)) => Ok(unsafe { c.pack() }?),
            _ => Ok(()),
        }
    }

    /// The request in `slot` completed with `r`: unpacks a staged receive
    /// and releases non-persistent stages.
    pub fn complete(&mut self, slot: usize, r: Result<Status, Error>) -> Result<Status, Error> {
        let (out, persistent) = match self.0.get(&slot) {
            None => (r, false),
            // SAFETY: MPI's contract: the program's buffers are the
            // operation's until the request completes, which is now.
            Some(Stage::Once(s)) => (unsafe { s.finish(r) }, false),
            Some(Stage::PersistentSend(..)) => (r, true),
            // SAFETY: as above.
            Some(Stage::PersistentRecv(u)) => (unsafe { u.finish(r) }, true),
            // SAFETY: as above.
            Some(Stage::PersistentColl(c)) => (unsafe { c.complete(r) }, true),
        };
        if !persistent {
            self.0.remove(&slot);
        }
        out
    }

    /// The request in `slot` is freed, `running` or not: returns the
    /// temporary buffer to keep alive until it completes (a freed
    /// receive's data is not unpacked: MPI leaves the buffer undefined
    /// for a program that cannot tell when it completed).
    pub fn free(&mut self, slot: usize, running: bool) -> Option<Vec<u8>> {
        match self.0.remove(&slot)? {
            Stage::Once(Staging::Send(v)) | Stage::PersistentSend(_, v) => Some(v),
            Stage::Once(Staging::Recv(u)) | Stage::PersistentRecv(u) => Some(u.tmp),
            Stage::PersistentColl(c) if !running => {
                drop(c);
                None
            }
            Stage::Once(Staging::Coll(c)) | Stage::PersistentColl(c) => {
                // Freeing an active collective's request is erroneous
                // (MPI 4.0, 6.12 and 6.13); the operation may still use
                // the temporaries, so they are leaked rather than
                // released under it.
                std::mem::forget(c.into_buffers());
                None
            }
        }
    }
}

impl Default for Staged {
    fn default() -> Self {
        Staged::new()
    }
}
