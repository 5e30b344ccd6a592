//! Device origin, result and compare buffers of one-sided operations,
//! staged through host memory: packed to the host before a put or an
//! accumulate reads them, unpacked to the device once a get or a fetch has
//! filled the host copy (every operation completes inside its call). The
//! operation itself then runs on host bytes, unchanged.

use super::super::ops::{At, Buf};
use super::super::Win;
use crate::datatype::stage::Placed;
use crate::datatype::{BasicType, Datatype};
use crate::error::Error;
use crate::mem::cuda;
use crate::ops::{BuiltinOp, ElemType, Op};

/// A device buffer of an operation, staged in host memory as its packed
/// bytes (`MPI_BYTE`s).
struct Staged {
    host: Vec<u8>,
    placed: Placed,
    byte: Datatype,
}

impl Staged {
    /// `Some` when `b`'s elements are in device memory: a host copy of its
    /// packed bytes (copied from the device when `fill`, else zeros, for a
    /// buffer the operation only writes).
    ///
    /// # Safety
    /// `b` holds its elements.
    #[inline]
    unsafe fn of(b: &Buf<'_>, fill: bool) -> Result<Option<Staged>, Error> {
        if !cuda::active() {
            return Ok(None);
        }
        let placed = Placed::new(b.dt, b.addr, b.count)?;
        if !placed.on_device() {
            return Ok(None);
        }
        let host = if fill {
            // SAFETY: the caller's promise.
            unsafe { placed.pack()? }
        } else {
            vec![0u8; placed.len]
        };
        Ok(Some(Staged {
            host,
            placed,
            byte: Datatype::basic(BasicType::Byte),
        }))
    }

    /// The host copy as an operation's buffer.
    fn buf(&self) -> Buf<'_> {
        Buf {
            addr: self.host.as_ptr(),
            count: self.host.len(),
            dt: &self.byte,
        }
    }

    /// Unpacks the host copy (as the operation left it) into the device buffer.
    ///
    /// # Safety
    /// The device buffer holds its elements, writable.
    unsafe fn store_back(self) -> Result<(), Error> {
        // SAFETY: the caller's promise.
        unsafe { self.placed.unpack(&self.host, self.host.len()) }
    }
}

/// `len` contiguous bytes at `p`: `Some(host copy)` when they are device
/// memory (copied from it when `fill`), `None` for host memory.
///
/// # Safety
/// `p` holds `len` bytes.
#[inline]
unsafe fn stage_bytes(p: *const u8, len: usize, fill: bool) -> Result<Option<Vec<u8>>, Error> {
    if len == 0 || !cuda::is_device(p) {
        return Ok(None);
    }
    let mut host = vec![0u8; len];
    if fill {
        // SAFETY: the caller's promise.
        unsafe { cuda::copy_from_device(&mut host, p)? };
    }
    Ok(Some(host))
}

/// Copies a host copy made by [`stage_bytes`] back to the device at `p`.
///
/// # Safety
/// `p` holds `host.len()` writable bytes.
unsafe fn unstage_bytes(p: *mut u8, host: &[u8]) -> Result<(), Error> {
    // SAFETY: the caller's promise.
    unsafe { cuda::copy_to_device(p, host) }
}

/// The operations with device buffers staged through the host: each
/// returns `None` when every buffer is host memory (the caller goes on),
/// else runs the operation on host copies and moves what it produced to
/// the device. Called once the target rank is known not to be
/// `PROC_NULL`, so a device buffer is written only when the operation ran.
impl Win {
    /// `MPI_Put` / the origin of `MPI_Accumulate` in bytes.
    ///
    /// # Safety
    /// `src` holds `len` bytes.
    pub(in crate::rma) unsafe fn put_bytes_staged(
        &self,
        src: *const u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<Option<()>, Error> {
        // SAFETY: the caller's promise.
        let Some(host) = (unsafe { stage_bytes(src, len, true)? }) else {
            return Ok(None);
        };
        // SAFETY: `host` holds `len` bytes.
        unsafe { self.put_bytes(host.as_ptr(), len, rank, disp) }.map(Some)
    }

    /// `MPI_Get` in bytes.
    ///
    /// # Safety
    /// `dst` holds `len` writable bytes.
    pub(in crate::rma) unsafe fn get_bytes_staged(
        &self,
        dst: *mut u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<Option<()>, Error> {
        // SAFETY: the caller's promise.
        let Some(mut host) = (unsafe { stage_bytes(dst, len, false)? }) else {
            return Ok(None);
        };
        // SAFETY: `host` holds `len` bytes; the caller's promise for `dst`.
        unsafe {
            self.get_bytes(host.as_mut_ptr(), len, rank, disp)?;
            unstage_bytes(dst, &host)?;
        }
        Ok(Some(()))
    }

    /// `MPI_Get_accumulate` in bytes (`src` unused for `MPI_NO_OP`,
    /// `result` null for `MPI_Accumulate`).
    ///
    /// # Safety
    /// As for [`Win::get_accumulate_bytes`].
    #[allow(clippy::too_many_arguments)]
    pub(in crate::rma) unsafe fn get_accumulate_bytes_staged(
        &self,
        src: *const u8,
        result: *mut u8,
        len: usize,
        rank: i32,
        disp: isize,
        op: &Op,
        elem: Option<ElemType>,
    ) -> Result<Option<()>, Error> {
        let no_op = matches!(op, Op::Builtin(BuiltinOp::NoOp));
        // SAFETY: the caller's promise.
        let (input, output) = unsafe {
            let input = if no_op {
                None
            } else {
                stage_bytes(src, len, true)?
            };
            (input, stage_bytes(result, len, false)?)
        };
        if input.is_none() && output.is_none() {
            return Ok(None);
        }
        let src = input.as_ref().map_or(src, |h| h.as_ptr());
        let mut output = output;
        let res = output.as_mut().map_or(result, |h| h.as_mut_ptr());
        // SAFETY: the host copies hold `len` bytes; the caller's promise
        // for the others.
        unsafe {
            self.get_accumulate_bytes(src, res, len, rank, disp, op, elem)?;
            if let Some(h) = &output {
                unstage_bytes(result, h)?;
            }
        }
        Ok(Some(()))
    }

    /// `MPI_Put` and `MPI_Get` (`get`: the origin is written).
    ///
    /// # Safety
    /// As for [`Win::put`] / [`Win::get`].
    pub(in crate::rma) unsafe fn put_get_staged(
        &self,
        origin: Buf<'_>,
        at: At<'_>,
        get: bool,
    ) -> Result<Option<()>, Error> {
        // SAFETY: the caller's promise.
        let Some(s) = (unsafe { Staged::of(&origin, !get)? }) else {
            return Ok(None);
        };
        // SAFETY: `s` holds its bytes; the caller's promise for the device buffer.
        unsafe {
            if get {
                self.get(s.buf(), at)?;
                s.store_back()?;
            } else {
                self.put(s.buf(), at)?;
            }
        }
        Ok(Some(()))
    }

    /// `MPI_Get_accumulate` / `MPI_Accumulate` (no `result`).
    ///
    /// # Safety
    /// As for [`Win::get_accumulate`].
    pub(in crate::rma) unsafe fn get_accumulate_staged(
        &self,
        origin: Buf<'_>,
        result: Option<Buf<'_>>,
        at: At<'_>,
        op: &Op,
        elem: Option<ElemType>,
    ) -> Result<Option<()>, Error> {
        let no_op = matches!(op, Op::Builtin(BuiltinOp::NoOp));
        // SAFETY: the caller's promise.
        let (input, output) = unsafe {
            let input = if no_op {
                None
            } else {
                Staged::of(&origin, true)?
            };
            let output = match &result {
                Some(r) => Staged::of(r, false)?,
                None => None,
            };
            (input, output)
        };
        if input.is_none() && output.is_none() {
            return Ok(None);
        }
        let origin = input.as_ref().map_or(origin, Staged::buf);
        let result = output.as_ref().map(Staged::buf).or(result);
        // SAFETY: the host copies hold their bytes; the caller's promise
        // for the others.
        unsafe {
            self.get_accumulate(origin, result, at, op, elem)?;
            if let Some(s) = output {
                s.store_back()?;
            }
        }
        Ok(Some(()))
    }

    /// `MPI_Compare_and_swap` on one element of `len` bytes.
    ///
    /// # Safety
    /// As for [`Win::compare_and_swap`].
    #[allow(clippy::too_many_arguments)]
    pub(in crate::rma) unsafe fn compare_and_swap_staged(
        &self,
        origin: *const u8,
        compare: *const u8,
        result: *mut u8,
        dt: &Datatype,
        rank: i32,
        disp: isize,
    ) -> Result<Option<()>, Error> {
        let len = dt.size();
        // SAFETY: the caller's promise.
        let (o, c, r) = unsafe {
            (
                stage_bytes(origin, len, true)?,
                stage_bytes(compare, len, true)?,
                stage_bytes(result, len, false)?,
            )
        };
        if o.is_none() && c.is_none() && r.is_none() {
            return Ok(None);
        }
        let origin = o.as_ref().map_or(origin, |h| h.as_ptr());
        let compare = c.as_ref().map_or(compare, |h| h.as_ptr());
        let mut r = r;
        let res = r.as_mut().map_or(result, |h| h.as_mut_ptr());
        // SAFETY: the host copies hold one element; the caller's promise
        // for the others.
        unsafe {
            self.compare_and_swap(origin, compare, res, dt, rank, disp)?;
            if let Some(h) = &r {
                unstage_bytes(result, h)?;
            }
        }
        Ok(Some(()))
    }
}
