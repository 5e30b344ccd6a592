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
//! Non-blocking operations keep their temporary buffer in [`Staged`],
//! keyed by request slot; the completion code in [`crate::requests`]
//! calls [`Staged::complete`] / [`Staged::start`] / [`Staged::free`].
//!
//! Zero-copy: the runtime moves bytes between one contiguous range per
//! side. A non-contiguous send could instead hand the transport the
//! type's segment iterator (`Datatype::segments_range`, resumable at any
//! packed offset) and copy each segment straight into the eager cells or
//! the rendezvous stream, and a receive could scatter incoming chunks with
//! `unpack_raw(.., from, ..)`; that belongs in `isend_raw` / `irecv_raw`
//! (a `(ptr, Datatype, count)` variant of each) and would remove the
//! temporary buffers here.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::OnceLock;

use oxmpi::datatype::Datatype;
use oxmpi::{Error, Status};

use super::datatype_query::committed;
use crate::errors::{AbiError, Class};
use crate::handles::{self, MPI_Count, MPI_Datatype, Predefined};

/// How `count` elements of a type at an address move.
pub enum Plan {
    /// One run of `len` bytes at `ptr`.
    Bytes {
        /// First byte (the buffer address plus the type's true lower bound).
        ptr: *mut u8,
        /// Bytes.
        len: usize,
    },
    /// Packed through a temporary buffer.
    Packed(Layout),
}

/// A non-contiguous buffer: `count` elements of `dt` at address `buf`.
#[derive(Clone)]
pub struct Layout {
    /// The (committed) type.
    pub dt: Datatype,
    /// The buffer address (may be `MPI_BOTTOM` with absolute displacements).
    pub buf: usize,
    /// Elements.
    pub count: usize,
    /// Packed bytes.
    pub len: usize,
}

impl Layout {
    /// Packs the elements into a new buffer.
    ///
    /// # Safety
    /// The buffer holds the elements.
    pub unsafe fn pack(&self) -> Result<Vec<u8>, AbiError> {
        let mut out = vec![0u8; self.len];
        // SAFETY: the caller's contract.
        unsafe { self.pack_into(&mut out) }?;
        Ok(out)
    }

    /// Packs the elements into `out` (`len` bytes).
    ///
    /// # Safety
    /// The buffer holds the elements.
    pub unsafe fn pack_into(&self, out: &mut [u8]) -> Result<(), AbiError> {
        // SAFETY: the caller's contract.
        unsafe { self.dt.pack_raw(self.buf as *const u8, self.count, 0, out) }?;
        Ok(())
    }

    /// Unpacks the first `bytes` packed bytes of `tmp` into the buffer
    /// (a short message fills the leading elements only).
    ///
    /// # Safety
    /// The buffer has room for the elements.
    pub unsafe fn unpack(&self, tmp: &[u8], bytes: usize) -> Result<(), Error> {
        let n = bytes.min(tmp.len());
        // SAFETY: the caller's contract.
        unsafe {
            self.dt
                .unpack_raw(self.buf as *mut u8, self.count, 0, &tmp[..n])
        }
    }
}

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
    plan_derived(p, n, count, datatype)
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
fn plan_derived(
    p: *const u8,
    n: usize,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<Plan, AbiError> {
    let dt = committed(datatype)?;
    let len = dt.pack_size(n).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("count {count} of datatype {datatype:#010x} overflows the address space"),
        )
    })?;
    if dt.is_contiguous() {
        let ptr = if len == 0 {
            p
        } else {
            p.wrapping_offset(dt.true_lb())
        };
        return Ok(Plan::Bytes {
            ptr: ptr.cast_mut(),
            len,
        });
    }
    Ok(Plan::Packed(Layout {
        dt,
        buf: p as usize,
        count: n,
        len,
    }))
}

/// Data ready to send: `len` bytes at `ptr`, owned by `owned` if packed.
pub struct SendData {
    /// First byte.
    pub ptr: *const u8,
    /// Bytes.
    pub len: usize,
    /// The packed copy `ptr` points into (keep it until the send completes).
    pub owned: Option<Vec<u8>>,
}

impl Plan {
    /// The bytes to send (packing if needed).
    ///
    /// # Safety
    /// The buffer holds the elements.
    #[inline]
    pub unsafe fn send_data(self) -> Result<SendData, AbiError> {
        Ok(match self {
            Plan::Bytes { ptr, len } => SendData {
                ptr: ptr.cast_const(),
                len,
                owned: None,
            },
            Plan::Packed(l) => {
                // SAFETY: the caller's contract.
                let v = unsafe { l.pack() }?;
                SendData {
                    ptr: v.as_ptr(),
                    len: v.len(),
                    owned: Some(v),
                }
            }
        })
    }

    /// Where to receive: `(ptr, capacity, unpack step)`.
    #[inline]
    pub fn recv_target(self) -> RecvTarget {
        match self {
            Plan::Bytes { ptr, len } => RecvTarget {
                ptr,
                cap: len,
                unpack: None,
            },
            Plan::Packed(l) => {
                let mut tmp = vec![0u8; l.len];
                RecvTarget {
                    ptr: tmp.as_mut_ptr(),
                    cap: tmp.len(),
                    unpack: Some(Unpack { layout: l, tmp }),
                }
            }
        }
    }
}

impl Plan {
    /// The buffer of a persistent send (`MPI_Send_init`, `MPI_Psend_init`):
    /// `(address, bytes, stage)`; a non-contiguous type is packed into
    /// the stage's temporary buffer at each start.
    pub fn persistent_send(self) -> (usize, usize, Option<Stage>) {
        match self {
            Plan::Bytes { ptr, len } => (ptr as usize, len, None),
            Plan::Packed(l) => {
                let tmp = vec![0u8; l.len];
                let (p, len) = (tmp.as_ptr() as usize, tmp.len());
                (p, len, Some(Stage::PersistentSend(l, tmp)))
            }
        }
    }

    /// The buffer of a persistent receive (`MPI_Recv_init`,
    /// `MPI_Precv_init`): `(address, capacity, stage)`; a non-contiguous
    /// type is unpacked from the stage at each completion.
    pub fn persistent_recv(self) -> (usize, usize, Option<Stage>) {
        let t = self.recv_target();
        (t.ptr as usize, t.cap, t.unpack.map(Stage::PersistentRecv))
    }
}

/// Where a receive lands.
pub struct RecvTarget {
    /// First byte.
    pub ptr: *mut u8,
    /// Capacity in bytes.
    pub cap: usize,
    /// For packed types: the temporary buffer `ptr` points into, and where
    /// to unpack it.
    pub unpack: Option<Unpack>,
}

/// A received temporary buffer and where it goes.
pub struct Unpack {
    /// The user buffer.
    pub layout: Layout,
    /// The temporary buffer (its heap block never moves).
    pub tmp: Vec<u8>,
}

impl Unpack {
    /// Unpacks what a completed receive stored, keeping its outcome.
    ///
    /// # Safety
    /// The user buffer has room for the elements.
    pub unsafe fn finish(&self, r: Result<Status, Error>) -> Result<Status, Error> {
        let got = match &r {
            Ok(s) | Err(Error::Truncated { status: s, .. }) => s.count,
            Err(_) => 0,
        };
        if got > 0 {
            // SAFETY: the caller's contract.
            unsafe { self.layout.unpack(&self.tmp, got) }?;
        }
        r
    }
}

/// The temporaries of a collective whose datatypes are not contiguous:
/// packed copies the runtime moves, where the data to send comes from
/// before the operation starts, and where received data goes once it
/// completes.
#[derive(Default)]
pub struct CollStage {
    /// Packed temporaries (their heap blocks never move while the
    /// operation runs).
    pub bufs: Vec<Vec<u8>>,
    /// Before each start: `layout` is packed into `bufs[i]` from `offset`,
    /// as `(layout, i, offset)`.
    pub packs: Vec<(Layout, usize, usize)>,
    /// After completion: `layout.len` bytes of `bufs[i]` from `offset` go
    /// to `layout`, as `(layout, i, offset)`.
    pub unpacks: Vec<(Layout, usize, usize)>,
}

impl CollStage {
    /// Whether the collective needed no temporaries.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// Packs what the operation will read into the temporaries.
    ///
    /// # Safety
    /// The program's buffers hold their elements.
    pub unsafe fn pack(&mut self) -> Result<(), AbiError> {
        for (layout, i, offset) in &self.packs {
            let dst = &mut self.bufs[*i][*offset..*offset + layout.len];
            // SAFETY: the caller's contract.
            unsafe { layout.pack_into(dst) }?;
        }
        Ok(())
    }

    /// Unpacks what the completed operation received.
    ///
    /// # Safety
    /// The program's buffers have room for their elements.
    pub unsafe fn finish(&self) -> Result<(), Error> {
        for (layout, i, offset) in &self.unpacks {
            let src = &self.bufs[*i][*offset..*offset + layout.len];
            // SAFETY: the caller's contract.
            unsafe { layout.unpack(src, layout.len) }?;
        }
        Ok(())
    }
}

/// A temporary buffer behind a request.
pub enum Stage {
    /// A non-blocking send's packed copy.
    Send(Vec<u8>),
    /// A non-blocking receive, unpacked at completion.
    Recv(Unpack),
    /// A persistent send: packed again at each start into `tmp`.
    PersistentSend(Layout, Vec<u8>),
    /// A persistent receive: unpacked at each completion.
    PersistentRecv(Unpack),
    /// A non-blocking collective's temporaries, unpacked at completion.
    Collective(CollStage),
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
            Some(Stage::PersistentSend(l, tmp)) => unsafe { l.pack_into(tmp) },
            // SAFETY: the same rule for MPI_<Coll>_init.
            Some(Stage::PersistentColl(c)) => unsafe { c.pack() },
            _ => Ok(()),
        }
    }

    /// The request in `slot` completed with `r`: unpacks a staged receive
    /// and releases non-persistent stages.
    pub fn complete(&mut self, slot: usize, r: Result<Status, Error>) -> Result<Status, Error> {
        let persistent = matches!(
            self.0.get(&slot),
            Some(Stage::PersistentSend(..) | Stage::PersistentRecv(_) | Stage::PersistentColl(_))
        );
        let out = match self.0.get(&slot) {
            // SAFETY: MPI's contract: the receive buffer is the program's
            // until the request completes, which is now.
            Some(Stage::Recv(u) | Stage::PersistentRecv(u)) => unsafe { u.finish(r) },
            // SAFETY: as above, for the collective's receive buffers.
            Some(Stage::Collective(c) | Stage::PersistentColl(c)) if r.is_ok() => {
                unsafe { c.finish() }.and(r)
            }
            _ => r,
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
            Stage::Send(v) | Stage::PersistentSend(_, v) => Some(v),
            Stage::Recv(u) | Stage::PersistentRecv(u) => Some(u.tmp),
            Stage::PersistentColl(c) if !running => {
                drop(c);
                None
            }
            Stage::Collective(c) | Stage::PersistentColl(c) => {
                // Freeing an active collective's request is erroneous
                // (MPI 4.0, 6.12 and 6.13); the operation may still use
                // the temporaries, so they are leaked rather than
                // released under it.
                std::mem::forget(c.bufs);
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
