//! Datatypes in point-to-point: what a `(buf, count, datatype)` triple
//! means for the runtime's raw-byte entry points.
//!
//! A contiguous type (every predefined type except the value-index pairs,
//! and derived types whose data is one run per element with no gaps) is
//! sent from and received into the user buffer directly ([`Plan::Bytes`]).
//! Any other type is a [`Plan::Typed`]: the runtime's typed point-to-point
//! paths (`Comm::isend_plan`, `Comm::irecv_plan`, `Message::irecv_plan`)
//! pack each packet straight from the user's layout and unpack each
//! arriving one straight into it, with no temporary buffer. What travels
//! is always the packed bytes (`count * size`), so status counts are in
//! packed bytes and `MPI_Get_count` / `MPI_Get_elements` read them with
//! the type's size and signature.
//!
//! Temporaries remain where an operation needs the packed bytes
//! themselves: collectives (packed around the byte-level collectives,
//! `CollStage`), buffered sends and the send half of
//! `MPI_Sendrecv_replace` (a copy by definition), and partitioned
//! requests (whose channel moves bytes). Those are kept in [`Staged`](crate::objects::stage::Staged),
//! keyed by request slot; the completion code in [`crate::requests`]
//! calls `Staged::complete` / `start` / `free`.

use std::ffi::c_void;
use std::sync::OnceLock;

use oxmpi::datatype::stage::Placed;
pub use oxmpi::datatype::stage::Plan;
use oxmpi::datatype::{BasicType, Datatype};

use crate::api::datatype::query::committed;
use crate::errors::{AbiError, Class};
use crate::handles::{self, MPI_Count, MPI_Datatype, Predefined};
use crate::objects::stage::Stage;

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

/// `plan` as placed elements when its bytes cannot be used in place by a
/// channel that moves host bytes: a non-contiguous type, or device memory.
fn staged_placed(plan: Plan) -> Result<Placed, (usize, usize)> {
    match plan {
        Plan::Bytes { ptr, len } if len > 0 && oxmpi::mem::cuda::is_device(ptr) => {
            Placed::new(&Datatype::basic(BasicType::Byte), ptr, len)
                .map_err(|_| (ptr as usize, len))
        }
        Plan::Bytes { ptr, len } => Err((ptr as usize, len)),
        Plan::Typed(l) => Ok(l),
    }
}

/// The buffer of a partitioned send (`MPI_Psend_init`): `(address,
/// bytes, stage)`; a non-contiguous type or device memory is packed into
/// the stage's temporary buffer at each start (the partitioned channel
/// moves host bytes).
pub fn partitioned_send(plan: Plan) -> (usize, usize, Option<Stage>) {
    match staged_placed(plan) {
        Err((ptr, len)) => (ptr, len, None),
        Ok(l) => {
            let tmp = vec![0u8; l.len];
            let (p, len) = (tmp.as_ptr() as usize, tmp.len());
            (p, len, Some(Stage::PersistentSend(l, tmp)))
        }
    }
}

/// The buffer of a partitioned receive (`MPI_Precv_init`): `(address,
/// capacity, stage)`; a non-contiguous type or device memory is unpacked
/// from the stage's temporary at each completion.
pub fn partitioned_recv(plan: Plan) -> (usize, usize, Option<Stage>) {
    match staged_placed(plan) {
        Err((ptr, len)) => (ptr, len, None),
        Ok(l) => {
            let mut tmp = vec![0u8; l.len];
            let (p, len) = (tmp.as_mut_ptr() as usize, tmp.len());
            (p, len, Some(Stage::PersistentRecv(l, tmp)))
        }
    }
}
