//! Buffer arguments: checks, and the temporaries of derived datatypes
//! ([`Stager`]).

use std::ffi::{c_int, c_void};

use oxmpi::coll::Blocks;
use oxmpi::datatype::stage::Dir;
use oxmpi::datatype::stage::{CollStage, Placed};
use oxmpi::{Comm, Request};

use crate::api::coll::datatype::{count, Num, Ty};
use crate::api::datatype::lookup;
use crate::errors::{AbiError, Class};
use crate::handles::IN_PLACE;
use crate::objects::launch::Launch;
use crate::objects::stage::Stage;

pub(super) fn is_in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

pub(super) fn no_in_place(arg: &str, why: &str) -> AbiError {
    AbiError::new(
        Class::BUFFER,
        format!("`{arg}` is MPI_IN_PLACE, which is not allowed {why}"),
    )
}

/// The bytes of `ranks` blocks of `block` bytes each (the whole buffer of
/// a gather, scatter, allgather or alltoall), or `MPI_ERR_COUNT` naming
/// `arg` when that overflows the address space.
pub(super) fn all_blocks(block: usize, ranks: usize, arg: &str) -> Result<usize, AbiError> {
    block.checked_mul(ranks).ok_or_else(|| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` ({block} bytes) x {ranks} ranks overflows the address space"),
        )
    })
}

/// A buffer argument that must not be `MPI_IN_PLACE`. Whether its bytes
/// exist depends on its datatype: [`located`] (which [`Stager`] checks).
pub(super) fn buffer(
    p: *const c_void,
    _len: usize,
    arg: &str,
    why: &str,
) -> Result<*mut u8, AbiError> {
    if is_in_place(p) {
        return Err(no_in_place(arg, why));
    }
    Ok(p.cast_mut().cast())
}

/// Lowest address data can have: the zero page is never mapped.
const LOWEST_ADDRESS: isize = 4096;

/// Checks that `len` bytes of type `t` can lie at `p` (plus displacement
/// `disp`): `p` is not null, or it is `MPI_BOTTOM` and `t` is a derived
/// type whose data starts at an absolute address (displacements from
/// `MPI_Get_address`).
pub(super) fn located(
    p: *const c_void,
    len: usize,
    disp: usize,
    t: &Ty,
    arg: &str,
) -> Result<(), AbiError> {
    located_block(p, len, disp, t, arg, "")
}

/// [`located`] for block `which` of a buffer (empty: the whole buffer).
fn located_block(
    p: *const c_void,
    len: usize,
    disp: usize,
    t: &Ty,
    arg: &str,
    which: &str,
) -> Result<(), AbiError> {
    if !p.is_null() || len == 0 {
        return Ok(());
    }
    // A block's displacement counts for predefined types too (an absolute
    // address from MPI_Get_address in the displacement array).
    let true_lb = t.derived.as_ref().map_or(0, |d| d.true_lb);
    let start = true_lb.saturating_add(isize::try_from(disp).unwrap_or(isize::MAX));
    if start >= LOWEST_ADDRESS {
        return Ok(());
    }
    Err(AbiError::new(
        Class::BUFFER,
        format!(
            "`{arg}` is a null pointer (MPI_BOTTOM) but must hold {len} bytes of {}{which}, whose \
             data would start at address {start:#x}: MPI_BOTTOM needs absolute addresses (in a \
             derived datatype or the displacements, from MPI_Get_address)",
            t.name
        ),
    ))
}

/// Send and receive buffers that must not be the same memory (MPI
/// requires `MPI_IN_PLACE` for that). `MPI_BOTTOM` for both is not
/// aliasing: their datatypes say where the data is.
pub(super) fn not_aliased(send: *const u8, recv: *const u8, len: usize) -> Result<(), AbiError> {
    if len > 0 && !send.is_null() && std::ptr::eq(send, recv) {
        return Err(AbiError::new(
            Class::BUFFER,
            format!(
                "`sendbuf` and `recvbuf` are the same buffer ({send:p}); pass MPI_IN_PLACE \
                 as `sendbuf` to work in place"
            ),
        ));
    }
    Ok(())
}

/// The temporaries of one collective call: where the runtime reads and
/// writes for buffers of non-contiguous derived types.
#[derive(Default)]
pub struct Stager(pub(super) CollStage);

impl Stager {
    /// Checks buffer argument `arg` of `len` bytes (in `t.unit`s, as
    /// [`bytes`] counts them) and returns where the runtime moves them: the
    /// program's buffer, or a packed temporary.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn buf(
        &mut self,
        p: *const c_void,
        len: usize,
        t: &Ty,
        dir: Dir,
        arg: &str,
        why: &str,
    ) -> Result<*mut u8, AbiError> {
        let q = buffer(p, len, arg, why)?;
        located(p, len, 0, t, arg)?;
        let Some(d) = &t.derived else {
            return Ok(q);
        };
        let placed = Placed {
            dt: d.dt.clone(),
            buf: q as usize,
            count: len.checked_div(t.unit).unwrap_or(0),
            len,
        };
        Ok(self.0.stage(placed, dir))
    }

    /// [`Stager::buf`] for per-rank blocks: `cs[i]` bytes (in units) at byte
    /// displacement `ds[i]` of the program's buffer, of type `tys(i)`.
    /// Returns the address and displacements the runtime uses: the
    /// program's, or a temporary holding the blocks packed one after
    /// another.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn blocks<'t>(
        &mut self,
        p: *const c_void,
        cs: &[usize],
        ds: &[usize],
        tys: &dyn Fn(usize) -> &'t Ty,
        dir: Dir,
        arg: &str,
        why: &str,
    ) -> Result<(*mut u8, Vec<usize>), AbiError> {
        let q = buffer(p, Blocks::new(cs, ds).extent(), arg, why)?;
        for (i, (&len, &d)) in cs.iter().zip(ds).enumerate() {
            located_block(p, len, d, tys(i), arg, &format!(" in block {i}"))?;
        }
        let in_place = |t: &Ty| match &t.derived {
            None => true,
            Some(d) => d.contiguous && d.true_lb == 0,
        };
        if (0..cs.len()).all(|i| in_place(tys(i))) {
            return Ok((q, ds.to_vec()));
        }
        let (tmp, ptr) = self.0.temp(cs.iter().sum());
        let (mut offsets, mut off) = (Vec::with_capacity(cs.len()), 0);
        for (i, (&len, &d)) in cs.iter().zip(ds).enumerate() {
            offsets.push(off);
            if len > 0 {
                let t = tys(i);
                let dt = match &t.derived {
                    Some(d) => d.dt.clone(),
                    None => lookup(t.handle)?,
                };
                let count = len / t.unit;
                if dt.pack_size(count).ok() != Some(len) {
                    return Err(AbiError::new(
                        Class::TYPE,
                        format!(
                            "`{arg}` block {i}: {} packs to other than its extent; value-index \
                             pair types cannot be mixed with derived datatypes in one call",
                            t.name
                        ),
                    ));
                }
                let placed = Placed {
                    dt,
                    buf: (q as usize).wrapping_add(d),
                    count,
                    len,
                };
                self.0.place(placed, tmp, off, dir);
            }
            off += len;
        }
        Ok((ptr, offsets))
    }

    /// Packs what the operation reads into the temporaries and starts it
    /// (for a persistent collective: at every start).
    ///
    /// # Safety
    /// The program's buffers hold their data (and stay valid until the
    /// operation completes).
    pub(crate) unsafe fn start(&mut self, l: &Launch) -> Result<Request<'static>, AbiError> {
        // SAFETY: the caller's contract.
        unsafe {
            self.0.pack()?;
            l.start()
        }
    }

    /// The temporaries to keep with a non-blocking collective's request.
    pub(super) fn into_stage(self) -> Option<Stage> {
        (!self.0.is_empty()).then_some(Stage::Coll(self.0))
    }

    /// The temporaries to keep with a persistent collective's request:
    /// packed at each start, unpacked at each completion.
    pub(crate) fn into_persistent_stage(self) -> Option<Stage> {
        (!self.0.is_empty()).then_some(Stage::PersistentColl(self.0))
    }
}

/// `MPI_ROOT`.
const ROOT: c_int = -3;
/// `MPI_PROC_NULL`.
const PROC_NULL: c_int = -1;

/// A rank's part in a rooted collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The root (on an intercommunicator, the rank passing `MPI_ROOT`).
    Root,
    /// Any other rank that takes part (on an intercommunicator, a rank of
    /// the remote group).
    Other,
    /// A rank of the root's group other than the root, on an
    /// intercommunicator (`MPI_PROC_NULL`): no argument is significant.
    Idle,
}

/// This rank's [`Role`] with `root` (checked against the communicator's
/// size, or on an intercommunicator `MPI_ROOT`, `MPI_PROC_NULL` or a rank
/// of the remote group).
pub(super) fn role(c: &Comm, root: c_int) -> Result<Role, AbiError> {
    if c.is_inter() {
        return match root {
            ROOT => Ok(Role::Root),
            PROC_NULL => Ok(Role::Idle),
            r if (0..c.peer_count()).contains(&r) => Ok(Role::Other),
            r => Err(AbiError::new(
                Class::ROOT,
                format!(
                    "invalid root {r} on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a \
                     rank of the remote group of {} ranks",
                    c.peer_count()
                ),
            )),
        };
    }
    if root < 0 || root >= c.size() {
        return Err(AbiError::new(
            Class::ROOT,
            format!(
                "invalid root {root}: the communicator has {} ranks",
                c.size()
            ),
        ));
    }
    Ok(if root == c.rank() {
        Role::Root
    } else {
        Role::Other
    })
}

/// Per-rank counts and displacements from C arrays, in bytes (`unit`
/// bytes per element for counts, `dunit` for displacements).
///
/// # Safety
/// Non-null arrays hold `n` entries.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn blocks<C: Num, D: Num>(
    counts: *const C,
    displs: *const D,
    n: usize,
    unit: &dyn Fn(usize) -> Result<usize, AbiError>,
    dunit: &dyn Fn(usize) -> Result<usize, AbiError>,
    counts_arg: &str,
    displs_arg: &str,
) -> Result<(Vec<usize>, Vec<usize>), AbiError> {
    for (null, arg) in [
        (counts.is_null(), counts_arg),
        (displs.is_null(), displs_arg),
    ] {
        if null && n > 0 {
            return Err(AbiError::new(
                Class::ARG,
                format!("`{arg}` is a null pointer"),
            ));
        }
    }
    let (mut c, mut d) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        // SAFETY: the caller's contract.
        let (ci, di): (C, i64) = unsafe { (*counts.add(i), (*displs.add(i)).into()) };
        let ci = count(ci, &format!("{counts_arg}[{i}]"))?;
        let di = usize::try_from(di).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("`{displs_arg}[{i}]` is {di}: negative displacements are not supported"),
            )
        })?;
        let overflow = || {
            AbiError::new(
                Class::COUNT,
                format!("block {i} of `{counts_arg}`/`{displs_arg}` overflows the address space"),
            )
        };
        c.push(ci.checked_mul(unit(i)?).ok_or_else(overflow)?);
        d.push(di.checked_mul(dunit(i)?).ok_or_else(overflow)?);
    }
    Ok((c, d))
}

/// Counts from a C array of `n` entries.
///
/// # Safety
/// A non-null `counts` holds `n` entries.
pub(super) unsafe fn counts<C: Num>(
    counts: *const C,
    n: usize,
    arg: &str,
) -> Result<Vec<usize>, AbiError> {
    if counts.is_null() && n > 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    (0..n)
        // SAFETY: the caller's contract.
        .map(|i| count(unsafe { *counts.add(i) }, &format!("{arg}[{i}]")))
        .collect()
}
