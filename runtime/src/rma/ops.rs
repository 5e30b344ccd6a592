//! The RMA operations: put, get, accumulate, get_accumulate,
//! fetch_and_op, compare_and_swap. Each completes before it returns
//! (so flushes only order memory). The origin's buffer is used in place
//! when its type is contiguous, else packed; the target's layout is a
//! list of runs at offsets from the target's window base, checked
//! against the window (`MPI_ERR_RMA_RANGE`) before anything moves.
//! Accumulate-family operations hold the target's accumulate lock
//! around their read-modify-write.

use std::borrow::Cow;

use super::access::Target;
use super::fast::{atomic_runs, compare_swap_atomic};
use super::{rma_error, Flavor, Win};
use crate::datatype::{BasicType, Datatype};
use crate::error::{Error, ErrorClass};
use crate::mem::cuda;
use crate::ops::{BuiltinOp, ElemType, Op, Reducer};

/// `count` elements of `dt` at `buf` (origin or result side of an operation).
#[derive(Debug, Clone, Copy)]
pub struct Buf<'a> {
    /// Address of the buffer.
    pub addr: *const u8,
    /// Elements.
    pub count: usize,
    /// Their committed type.
    pub dt: &'a Datatype,
}

/// Where on the target: displacement (in the target's units; an address
/// for dynamic windows), count and type.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Target rank (`PROC_NULL`: nothing happens).
    pub rank: i32,
    /// Target displacement.
    pub disp: isize,
    /// Elements at the target.
    pub count: usize,
    /// Their committed type.
    pub dt: &'a Datatype,
}

impl<'a> Buf<'a> {
    /// The bytes of `s`, as `count` elements of `bytes` (`MPI_BYTE`).
    pub(crate) fn of<T>(s: &[T], bytes: &'a Datatype) -> Buf<'a> {
        Buf {
            addr: s.as_ptr().cast(),
            count: std::mem::size_of_val(s),
            dt: bytes,
        }
    }

    /// [`Buf::of`] for a buffer the operation writes.
    pub(crate) fn of_mut<T>(s: &mut [T], bytes: &'a Datatype) -> Buf<'a> {
        Buf {
            addr: s.as_mut_ptr().cast_const().cast(),
            count: std::mem::size_of_val(s),
            dt: bytes,
        }
    }

    fn packed_len(&self) -> Result<usize, Error> {
        self.dt.pack_size(self.count)
    }

    /// The packed bytes: the buffer itself when contiguous.
    ///
    /// # Safety
    /// The buffer holds the elements.
    unsafe fn bytes(&self) -> Result<Cow<'_, [u8]>, Error> {
        let len = self.packed_len()?;
        if len == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        if self.dt.is_contiguous() {
            let p = self.addr.wrapping_offset(self.dt.true_lb());
            // SAFETY: the caller's promise; a contiguous type's data is
            // `len` bytes from its true lower bound.
            return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, len) }));
        }
        let mut v = vec![0u8; len];
        // SAFETY: the caller's promise.
        unsafe { self.dt.pack_raw(self.addr, self.count, 0, &mut v)? };
        Ok(Cow::Owned(v))
    }

    /// Stores packed bytes into the buffer.
    ///
    /// # Safety
    /// The buffer holds the elements, writable.
    unsafe fn store(&self, packed: &[u8]) -> Result<(), Error> {
        if packed.is_empty() {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        unsafe {
            self.dt
                .unpack_raw(self.addr.cast_mut(), self.count, 0, packed)
        }
    }
}

fn mismatch(what: &str, a: usize, b: usize) -> Error {
    Error::InvalidArgument {
        arg: "target_count",
        reason: format!("the {what} holds {a} bytes of data but the target side {b}"),
    }
}

fn range_error(rank: usize, lo: i128, hi: i128, size: usize) -> Error {
    rma_error(
        ErrorClass::RmaRange,
        format!(
            "the access to bytes {lo}..{hi} of target rank {rank}'s window is outside its \
             {size} bytes"
        ),
    )
}

impl Win {
    /// Where displacement `disp` of `rank` starts, in bytes from its base
    /// (an address for dynamic windows).
    fn start_of(&self, t: &Target, disp: isize) -> i128 {
        if self.inner.flavor == Flavor::Dynamic {
            disp as i128
        } else {
            disp as i128 * t.disp_unit as i128
        }
    }

    /// Fails unless bytes `lo..hi` (from the base) are window memory of `rank`.
    fn check_range(&self, rank: usize, t: &Target, lo: i128, hi: i128) -> Result<(), Error> {
        let inside = if self.inner.flavor == Flavor::Dynamic {
            // A target on another host checks its own regions.
            t.is_remote()
                || self
                    .inner
                    .control
                    .regions(rank)
                    .iter()
                    .any(|&(b, l)| lo >= b as i128 && hi <= b as i128 + l as i128)
        } else {
            lo >= 0 && hi <= t.size as i128
        };
        if inside {
            Ok(())
        } else {
            Err(range_error(rank, lo, hi, t.size))
        }
    }

    /// `t`, or for a dynamic window the device region at `addr` (checked
    /// to be attached) if it is one.
    #[inline]
    fn dynamic_target(&self, rank: usize, t: Target, addr: i128) -> Target {
        if self.inner.flavor == Flavor::Dynamic {
            self.device_target(rank, t, addr as usize)
        } else {
            t
        }
    }

    /// The target's runs `(offset from its base, len)` for `at`, checked
    /// against its window memory.
    fn runs(&self, rank: usize, at: &At<'_>) -> Result<(Target, Vec<(usize, usize)>), Error> {
        let t = self.inner.targets[rank];
        let start = self.start_of(&t, at.disp);
        let Some(span) = at.dt.data_span(at.count)? else {
            return Ok((t, Vec::new()));
        };
        self.check_range(
            rank,
            &t,
            start + span.start as i128,
            start + span.end as i128,
        )?;
        let t = self.dynamic_target(rank, t, start + span.start as i128);
        let start = start as isize;
        let runs = at
            .dt
            .segments(at.count)?
            .map(|s| ((start + s.offset) as usize, s.len))
            .collect();
        Ok((t, runs))
    }

    /// The one run of `len` bytes at displacement `disp` of `rank`, checked.
    fn byte_run(&self, rank: usize, disp: isize, len: usize) -> Result<(Target, usize), Error> {
        let t = self.inner.targets[rank];
        let start = self.start_of(&t, disp);
        self.check_range(rank, &t, start, start + len as i128)?;
        Ok((self.dynamic_target(rank, t, start), start as usize))
    }

    /// `MPI_Put` of `len` bytes at `src` to the same number of contiguous
    /// bytes at displacement `disp` of `rank`: [`Win::put`] for
    /// contiguous types on both sides, without a datatype.
    ///
    /// # Safety
    /// `src` holds `len` bytes.
    #[inline]
    pub unsafe fn put_bytes(
        &self,
        src: *const u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<(), Error> {
        // SAFETY: the caller's promise.
        if unsafe { self.put_direct(src, len, rank, disp) } {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        unsafe { self.put_bytes_general(src, len, rank, disp) }
    }

    /// [`Win::put_bytes`] for what the fast path leaves (and its errors).
    ///
    /// # Safety
    /// As for [`Win::put_bytes`].
    #[inline(never)]
    unsafe fn put_bytes_general(
        &self,
        src: *const u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<(), Error> {
        let Some(r) = self.access(rank)? else {
            return Ok(());
        };
        let (t, off) = self.byte_run(r, disp, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        if let Some(done) = unsafe { self.put_bytes_staged(src, len, rank, disp)? } {
            return Ok(done);
        }
        // SAFETY: the caller's promise; the run was checked.
        let src = unsafe { std::slice::from_raw_parts(src, len) };
        match self.remote(r) {
            Some(link) => link.put(r, &[(off, len)], src),
            // SAFETY: as above.
            None => unsafe { t.write(&[(off, len)], src) },
        }
    }

    /// `MPI_Get` into `len` contiguous bytes at `dst` (see [`Win::put_bytes`]).
    ///
    /// # Safety
    /// `dst` holds `len` writable bytes.
    #[inline]
    pub unsafe fn get_bytes(
        &self,
        dst: *mut u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<(), Error> {
        // SAFETY: the caller's promise.
        if unsafe { self.get_direct(dst, len, rank, disp) } {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        unsafe { self.get_bytes_general(dst, len, rank, disp) }
    }

    /// [`Win::get_bytes`] for what the fast path leaves (and its errors).
    ///
    /// # Safety
    /// As for [`Win::get_bytes`].
    #[inline(never)]
    unsafe fn get_bytes_general(
        &self,
        dst: *mut u8,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> Result<(), Error> {
        let Some(r) = self.access(rank)? else {
            return Ok(());
        };
        let (t, off) = self.byte_run(r, disp, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        if let Some(done) = unsafe { self.get_bytes_staged(dst, len, rank, disp)? } {
            return Ok(done);
        }
        // SAFETY: the caller's promise; the run was checked.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        match self.remote(r) {
            Some(link) => link.get(r, &[(off, len)], dst),
            // SAFETY: as above.
            None => unsafe { t.read(&[(off, len)], dst) },
        }
    }

    /// `MPI_Get_accumulate` (or, without `result`, `MPI_Accumulate`) of
    /// `len` contiguous bytes of elements of `elem`: what
    /// [`Win::get_accumulate`] does for predefined contiguous types on
    /// every side, without datatypes (no temporaries up to 256 bytes).
    ///
    /// # Safety
    /// `src` holds `len` bytes (unless `op` is `MPI_NO_OP`); `result`, if
    /// not null, holds `len` writable bytes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn get_accumulate_bytes(
        &self,
        src: *const u8,
        result: *mut u8,
        len: usize,
        rank: i32,
        disp: isize,
        op: &Op,
        elem: Option<ElemType>,
    ) -> Result<(), Error> {
        if let Some((p, w, a)) = self.atomic_direct(rank, disp, len, op, elem) {
            if !cuda::is_device(src) && !cuda::is_device(result) {
                // SAFETY: the caller's promise; the run was checked.
                return unsafe { atomic_runs(p as usize, w, &[(0, len)], src, result, &a) };
            }
        }
        let Some(r) = self.access(rank)? else {
            return Ok(());
        };
        let (t, off) = self.byte_run(r, disp, len)?;
        if len == 0 {
            // Nothing moves: no operation to check (MPICH accepts any, too).
            return Ok(());
        }
        // SAFETY: the caller's promise.
        if let Some(done) =
            unsafe { self.get_accumulate_bytes_staged(src, result, len, rank, disp, op, elem)? }
        {
            return Ok(done);
        }
        let no_op = matches!(op, Op::Builtin(BuiltinOp::NoOp));
        let replace = matches!(op, Op::Builtin(BuiltinOp::Replace));
        let reduce = accumulate_reducer(op, elem)?;
        let input: &[u8] = if no_op {
            &[]
        } else {
            // SAFETY: the caller's promise.
            unsafe { std::slice::from_raw_parts(src, len) }
        };
        let run = [(off, len)];
        if let Some(link) = self.remote(r) {
            // SAFETY: the caller vouches for `result`.
            let old =
                (!result.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(result, len) });
            return link.accumulate(r, &run, op, elem, input, old);
        }
        if let Some((base, w, a)) = self.atomic_width(&t, &run, op, elem) {
            // SAFETY: the run was checked; the caller vouches for `result`.
            return unsafe { atomic_runs(base, w, &run, input.as_ptr(), result, &a) };
        }
        let mut small = [0u8; 256];
        let mut large = Vec::new();
        let current: &mut [u8] = if len <= small.len() {
            &mut small[..len]
        } else {
            large.resize(len, 0);
            &mut large
        };
        self.with_acc_lock(r, || {
            // SAFETY: the run was checked against the window; the caller
            // vouches for `result`.
            unsafe {
                if !result.is_null() || reduce.is_some() {
                    t.read(&run, current)?;
                }
                if !result.is_null() {
                    std::ptr::copy_nonoverlapping(current.as_ptr(), result, len);
                }
                if let Some(f) = &reduce {
                    f(input, current)?;
                    t.write(&run, current)?;
                } else if replace {
                    t.write(&run, input)?;
                }
            }
            Ok(())
        })
    }

    /// `MPI_Put`.
    ///
    /// # Safety
    /// `origin` holds its elements.
    pub unsafe fn put(&self, origin: Buf<'_>, at: At<'_>) -> Result<(), Error> {
        let Some(rank) = self.access(at.rank)? else {
            return Ok(());
        };
        let (t, runs) = self.runs(rank, &at)?;
        // SAFETY: the caller's promise.
        if let Some(done) = unsafe { self.put_get_staged(origin, at, false)? } {
            return Ok(done);
        }
        // SAFETY: the caller's promise.
        let bytes = unsafe { origin.bytes()? };
        let want = at.dt.pack_size(at.count)?;
        if bytes.len() != want {
            return Err(mismatch("origin buffer", bytes.len(), want));
        }
        if let Some(link) = self.remote(rank) {
            return link.put(rank, &runs, &bytes);
        }
        // SAFETY: the runs were checked against the window.
        unsafe { t.write(&runs, &bytes) }
    }

    /// `MPI_Get`.
    ///
    /// # Safety
    /// `origin` holds its elements, writable.
    pub unsafe fn get(&self, origin: Buf<'_>, at: At<'_>) -> Result<(), Error> {
        let Some(rank) = self.access(at.rank)? else {
            return Ok(());
        };
        let (t, runs) = self.runs(rank, &at)?;
        let (have, want) = (origin.packed_len()?, at.dt.pack_size(at.count)?);
        if have != want {
            return Err(mismatch("origin buffer", have, want));
        }
        if want == 0 {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        if let Some(done) = unsafe { self.put_get_staged(origin, at, true)? } {
            return Ok(done);
        }
        if let Some(link) = self.remote(rank) {
            let mut tmp = vec![0u8; want];
            link.get(rank, &runs, &mut tmp)?;
            // SAFETY: the caller's promise.
            return unsafe { origin.store(&tmp) };
        }
        if origin.dt.is_contiguous() {
            let p = origin.addr.wrapping_offset(origin.dt.true_lb()).cast_mut();
            // SAFETY: the caller's promise; the runs were checked.
            return unsafe { t.read(&runs, std::slice::from_raw_parts_mut(p, want)) };
        }
        let mut tmp = vec![0u8; want];
        // SAFETY: as above.
        unsafe {
            t.read(&runs, &mut tmp)?;
            origin.store(&tmp)
        }
    }

    /// `MPI_Accumulate` (`elem`: the element type the op works on; `None`
    /// takes the target type's basic type).
    ///
    /// # Safety
    /// `origin` holds its elements.
    pub unsafe fn accumulate(
        &self,
        origin: Buf<'_>,
        at: At<'_>,
        op: &Op,
        elem: Option<ElemType>,
    ) -> Result<(), Error> {
        // SAFETY: the caller's promise; no result buffer.
        unsafe { self.get_accumulate(origin, None, at, op, elem) }
    }

    /// `MPI_Get_accumulate` (and, with one element, `MPI_Fetch_and_op`):
    /// `result` gets the target's data before the operation.
    ///
    /// # Safety
    /// `origin` holds its elements; `result`, if any, holds its elements, writable.
    pub unsafe fn get_accumulate(
        &self,
        origin: Buf<'_>,
        result: Option<Buf<'_>>,
        at: At<'_>,
        op: &Op,
        elem: Option<ElemType>,
    ) -> Result<(), Error> {
        let Some(rank) = self.access(at.rank)? else {
            return Ok(());
        };
        let (t, runs) = self.runs(rank, &at)?;
        // SAFETY: the caller's promise.
        if let Some(done) = unsafe { self.get_accumulate_staged(origin, result, at, op, elem)? } {
            return Ok(done);
        }
        let want = at.dt.pack_size(at.count)?;
        let no_op = matches!(op, Op::Builtin(BuiltinOp::NoOp));
        let replace = matches!(op, Op::Builtin(BuiltinOp::Replace));
        let elem = elem.or_else(|| {
            at.dt
                .signature()
                .uniform()
                .and_then(crate::datatype::BasicType::elem_type)
        });
        let reduce = accumulate_reducer(op, elem)?;
        // SAFETY: the caller's promise.
        let input = if no_op {
            Cow::Borrowed(&[][..])
        } else {
            unsafe { origin.bytes()? }
        };
        if !no_op && input.len() != want {
            return Err(mismatch("origin buffer", input.len(), want));
        }
        if let Some(r) = &result {
            let have = r.packed_len()?;
            if have != want {
                return Err(mismatch("result buffer", have, want));
            }
        }
        if want == 0 {
            return Ok(());
        }
        if let Some(link) = self.remote(rank) {
            let mut old = vec![0u8; if result.is_some() { want } else { 0 }];
            let fetch = result.is_some().then_some(&mut old[..]);
            link.accumulate(rank, &runs, op, elem, &input, fetch)?;
            return match &result {
                // SAFETY: the caller vouches for the result buffer.
                Some(r) => unsafe { r.store(&old) },
                None => Ok(()),
            };
        }
        if let Some((base, w, a)) = self.atomic_width(&t, &runs, op, elem) {
            let mut old = vec![0u8; if result.is_some() { want } else { 0 }];
            let out = if result.is_some() {
                old.as_mut_ptr()
            } else {
                std::ptr::null_mut()
            };
            // SAFETY: the runs were checked; `input` and `old` hold their bytes.
            unsafe { atomic_runs(base, w, &runs, input.as_ptr(), out, &a)? };
            return match &result {
                // SAFETY: the caller vouches for the result buffer.
                Some(r) => unsafe { r.store(&old) },
                None => Ok(()),
            };
        }
        self.with_acc_lock(rank, || {
            let mut current = vec![0u8; want];
            // SAFETY: the runs were checked against the window; the
            // caller vouches for the result buffer.
            unsafe {
                if result.is_some() || reduce.is_some() {
                    t.read(&runs, &mut current)?;
                }
                if let Some(r) = &result {
                    r.store(&current)?;
                }
                if let Some(f) = &reduce {
                    f(&input, &mut current)?;
                    t.write(&runs, &current)?;
                } else if replace {
                    t.write(&runs, &input)?;
                }
            }
            Ok(())
        })
    }

    /// `MPI_Compare_and_swap`: one element of `dt` (a predefined type):
    /// `result` gets the target's value, which becomes `origin`'s if it
    /// equals `compare`'s.
    ///
    /// # Safety
    /// `origin`, `compare` and `result` each hold one element of `dt`.
    pub unsafe fn compare_and_swap(
        &self,
        origin: *const u8,
        compare: *const u8,
        result: *mut u8,
        dt: &Datatype,
        rank: i32,
        disp: isize,
    ) -> Result<(), Error> {
        let elem = dt.basic_type().and_then(BasicType::elem_type);
        if let Some(e) = elem {
            // SAFETY: the caller's promise.
            let done = unsafe {
                self.compare_and_swap_direct(origin, compare, result, dt.size(), e, rank, disp)
            };
            if done {
                return Ok(());
            }
        }
        let replace = Op::Builtin(BuiltinOp::Replace);
        let Some(r) = self.access(rank)? else {
            return Ok(());
        };
        let at = At {
            rank,
            disp,
            count: 1,
            dt,
        };
        let (t, runs) = self.runs(r, &at)?;
        // SAFETY: the caller's promise.
        if let Some(done) =
            unsafe { self.compare_and_swap_staged(origin, compare, result, dt, rank, disp)? }
        {
            return Ok(done);
        }
        let one = |p: *const u8| Buf {
            addr: p,
            count: 1,
            dt,
        };
        // SAFETY: the caller's promise.
        let (origin, compare) = (one(origin), one(compare));
        let (new, expected) = unsafe { (origin.bytes()?, compare.bytes()?) };
        let len = new.len();
        if let Some(link) = self.remote(r) {
            let mut old = vec![0u8; len];
            link.compare_swap(r, &runs, &new, &expected, &mut old)?;
            // SAFETY: the caller vouches for `result`.
            return unsafe { one(result).store(&old) };
        }
        if let Some((base, w, _)) = self.atomic_width(&t, &runs, &replace, elem) {
            if let [(off, l)] = runs[..] {
                if l == w && len == w {
                    let p = (base + off) as *mut u8;
                    // SAFETY: the run was checked; the caller vouches for `result`.
                    unsafe { compare_swap_atomic(p, w, new.as_ptr(), expected.as_ptr(), result) };
                    return Ok(());
                }
            }
        }
        self.with_acc_lock(r, || {
            let mut current = vec![0u8; len];
            // SAFETY: the runs were checked; the caller vouches for `result`.
            unsafe {
                t.read(&runs, &mut current)?;
                one(result).store(&current)?;
                if current[..] == expected[..] {
                    t.write(&runs, &new)?;
                }
            }
            Ok(())
        })
    }
}

/// The reduction an accumulate applies: none for `MPI_REPLACE` and
/// `MPI_NO_OP`, which move bytes. MPI allows predefined operations only
/// (the C ABI checks); an operation given as a function (C's long double
/// arithmetic) runs under the accumulate lock like the kernels.
pub(super) fn accumulate_reducer(
    op: &Op,
    elem: Option<ElemType>,
) -> Result<Option<Reducer>, Error> {
    if matches!(op, Op::Builtin(BuiltinOp::NoOp | BuiltinOp::Replace)) {
        Ok(None)
    } else {
        op.reducer(elem).map(Some)
    }
}
