//! Packing: `MPI_Pack`, `MPI_Unpack`, `MPI_Pack_size` (native and, for
//! [`crate::api::datatype::external`], external32).

use std::ffi::{c_int, c_void};

use oxmpi::datatype::stage::Placed;
use oxmpi::datatype::Datatype;
use oxmpi::mem::cuda;

use crate::api::datatype::query::{committed, put};
use crate::api::datatype::{self as dtm, lookup};
use crate::api::{large_count, wide, CountOut};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{MPI_Comm, MPI_Count, MPI_Datatype};
use crate::raise::guard;
use crate::state;

pub(super) fn check_comm(comm: MPI_Comm) -> Result<(), AbiError> {
    state::lock().comm_entry(comm).map(|_| ())
}

/// A packed data representation: `MPI_Pack`'s (native) or external32
/// (`MPI_Pack_external`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rep {
    /// The native packed stream (`MPI_Pack`).
    Native,
    /// "external32" (`MPI_Pack_external`).
    External32,
}

impl Rep {
    /// Bytes that `count` elements of `t` take packed.
    pub fn size(self, t: &Datatype, count: usize) -> Result<usize, AbiError> {
        match self {
            Rep::Native => t.pack_size(count),
            Rep::External32 => t.external32_size(count),
        }
        .map_err(|e| AbiError::new(Class::COUNT, e.to_string()))
    }

    /// Packs `count` elements at `inbuf` (host or device memory) into all
    /// of `dst`.
    ///
    /// # Safety
    /// As [`Datatype::pack_raw`].
    unsafe fn pack(
        self,
        t: &Datatype,
        inbuf: *const u8,
        count: usize,
        dst: &mut [u8],
    ) -> Result<(), oxmpi::Error> {
        // SAFETY: the caller's contract; device elements are read through a
        // host copy of their span.
        unsafe {
            Placed::new(t, inbuf, count)?.on_host(false, |at| match self {
                Rep::Native => t.pack_raw(at, count, 0, dst),
                Rep::External32 => t.pack_external32_raw(at, count, dst),
            })
        }
    }

    /// Unpacks all of `src`, `count` elements, to `outbuf` (host or device
    /// memory).
    ///
    /// # Safety
    /// As [`Datatype::unpack_raw`].
    unsafe fn unpack(
        self,
        t: &Datatype,
        outbuf: *mut u8,
        count: usize,
        src: &[u8],
    ) -> Result<(), oxmpi::Error> {
        // SAFETY: the caller's contract; device elements are written through
        // a host copy of their span, copied back.
        unsafe {
            Placed::new(t, outbuf, count)?.on_host(true, |at| match self {
                Rep::Native => t.unpack_raw(at, count, 0, src),
                Rep::External32 => t.unpack_external32_raw(at, count, src),
            })
        }
    }
}

/// Packs `count` elements at `inbuf` into `outbuf[*position..outsize]` in
/// representation `rep`; returns the new position.
///
/// # Safety
/// MPI's contract for `MPI_Pack`.
pub unsafe fn pack(
    rep: Rep,
    inbuf: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: i64,
) -> Result<i64, AbiError> {
    let n = dtm::count_arg(count, "incount")?;
    let t = committed(datatype)?;
    let len = rep.size(&t, n)?;
    let pos = usize::try_from(position)
        .map_err(|_| AbiError::new(Class::ARG, format!("invalid `position` {position}")))?;
    let size = usize::try_from(outsize)
        .map_err(|_| AbiError::new(Class::ARG, format!("invalid `outsize` {outsize}")))?;
    if pos.checked_add(len).is_none_or(|end| end > size) {
        return Err(AbiError::new(
            Class::TRUNCATE,
            format!(
                "packing {n} elements needs {len} bytes at position {pos}, but `outsize` is {size}"
            ),
        ));
    }
    if len > 0 {
        let out = out_ptr(outbuf, "outbuf")?.cast::<u8>().wrapping_add(pos);
        if cuda::is_device(out) {
            // A device `outbuf` gets the packed bytes through host memory.
            let mut tmp = vec![0u8; len];
            // SAFETY: MPI's contract: inbuf holds the elements; `out` has
            // room for `len` bytes.
            unsafe {
                rep.pack(&t, inbuf.cast(), n, &mut tmp)?;
                cuda::copy_to_device(out, &tmp)?;
            }
        } else {
            // SAFETY: MPI's contract: outbuf has `outsize` bytes, inbuf
            // holds the elements; they do not overlap.
            unsafe {
                let dst = std::slice::from_raw_parts_mut(out, len);
                rep.pack(&t, inbuf.cast(), n, dst)?;
            }
        }
    }
    Ok((pos + len) as i64)
}

/// Unpacks `count` elements from `inbuf[*position..insize]` to `outbuf`
/// from representation `rep`; returns the new position.
///
/// # Safety
/// MPI's contract for `MPI_Unpack`.
pub unsafe fn unpack(
    rep: Rep,
    inbuf: *const c_void,
    insize: i64,
    position: i64,
    outbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
) -> Result<i64, AbiError> {
    let n = dtm::count_arg(count, "outcount")?;
    let t = committed(datatype)?;
    let len = rep.size(&t, n)?;
    let pos = usize::try_from(position)
        .map_err(|_| AbiError::new(Class::ARG, format!("invalid `position` {position}")))?;
    let size = usize::try_from(insize)
        .map_err(|_| AbiError::new(Class::ARG, format!("invalid `insize` {insize}")))?;
    if pos.checked_add(len).is_none_or(|end| end > size) {
        return Err(AbiError::new(
            Class::TRUNCATE,
            format!(
                "unpacking {n} elements needs {len} bytes at position {pos}, but `insize` is {size}"
            ),
        ));
    }
    if len > 0 {
        if inbuf.is_null() {
            return Err(AbiError::new(Class::ARG, "`inbuf` is a null pointer"));
        }
        let at = inbuf.cast::<u8>().wrapping_add(pos);
        let mut host = Vec::new();
        if cuda::is_device(at) {
            // A device `inbuf`'s packed bytes are read into host memory.
            host.resize(len, 0);
            // SAFETY: MPI's contract: inbuf has `len` bytes from `pos`.
            unsafe { cuda::copy_from_device(&mut host, at) }?;
        }
        // SAFETY: MPI's contract: inbuf has `insize` bytes, outbuf room
        // for the elements; they do not overlap.
        unsafe {
            let src = if host.is_empty() {
                std::slice::from_raw_parts(at, len)
            } else {
                &host[..]
            };
            rep.unpack(&t, outbuf.cast(), n, src)?;
        }
    }
    Ok((pos + len) as i64)
}

large_count! {
    /// # Safety
    /// MPI's contract: `inbuf` holds the elements, `outbuf` has `outsize`
    /// bytes, `position` is readable and writable.
    Pack(
        inbuf: *const c_void,
        incount: Count,
        datatype: MPI_Datatype,
        outbuf: *mut c_void,
        outsize: Count,
        position: *mut Count,
        comm: MPI_Comm,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            check_comm(comm)?;
            let p = out_ptr(position, "position")?;
            // SAFETY: the caller's contract.
            unsafe {
                let (inc, outs) = (wide(incount), wide(outsize));
                let end = pack(Rep::Native, inbuf, inc, datatype, outbuf, outs, wide(*p))?;
                *p = Count::try_from_count(end)
                    .ok_or_else(|| AbiError::new(Class::COUNT, "position exceeds an int"))?;
            }
            Ok(())
        })
    }
}

large_count! {
    /// # Safety
    /// MPI's contract: `inbuf` has `insize` bytes, `outbuf` room for the
    /// elements, `position` is readable and writable.
    Unpack(
        inbuf: *const c_void,
        insize: Count,
        position: *mut Count,
        outbuf: *mut c_void,
        outcount: Count,
        datatype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            check_comm(comm)?;
            let p = out_ptr(position, "position")?;
            // SAFETY: the caller's contract.
            unsafe {
                let (ins, outc) = (wide(insize), wide(outcount));
                let end = unpack(Rep::Native, inbuf, ins, wide(*p), outbuf, outc, datatype)?;
                *p = Count::try_from_count(end)
                    .ok_or_else(|| AbiError::new(Class::COUNT, "position exceeds an int"))?;
            }
            Ok(())
        })
    }
}

large_count! {
    /// An upper bound (here exact) of the packed bytes.
    ///
    /// # Safety
    /// `size` is writable.
    Pack_size(incount: Count, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut Count) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            check_comm(comm)?;
            let n = dtm::count_arg(wide(incount), "incount")?;
            let len = Rep::Native.size(&lookup(datatype)?, n)?;
            let v = Count::try_from_count(len as MPI_Count).ok_or_else(|| {
                AbiError::new(
                    Class::COUNT,
                    format!("{len} packed bytes do not fit an int; use MPI_Pack_size_c"),
                )
            })?;
            // SAFETY: the caller's contract.
            unsafe { put(size, "size", v) }
        })
    }
}
