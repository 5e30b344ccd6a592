//! The per-operation fast path for targets whose window memory this
//! process maps (allocated and shared windows, `MPI_Alloc_mem` memory):
//! a put or get is a range check against a per-target entry and a copy
//! (small ones by loads and stores, no `memcpy` call); and, on windows
//! whose every rank maps every other's memory ([`Direct`] with
//! `atomics`), accumulate-family operations on naturally aligned 4- and
//! 8-byte elements are hardware atomics instead of the accumulate lock.
//!
//! The atomicity rule: on such a window, every accumulate-family access
//! (accumulate, get_accumulate, fetch_and_op, compare_and_swap, any
//! operation, `MPI_NO_OP` and `MPI_REPLACE` included) to an aligned
//! element of 4 or 8 bytes is one atomic read-modify-write (or load) of
//! that element, whatever the call's count or layout; every other
//! element (1, 2 or 16 bytes, or unaligned) is updated under the
//! target's accumulate lock. Which way an element goes depends only on
//! the window, its element type's size and its address, which are the
//! same for every origin (each maps the segment at page-aligned
//! addresses), so the two ways never meet on one element.

use std::sync::atomic::{fence, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

use super::access::{Access, Target};
use super::{Flavor, Win};
use crate::error::Error;
use crate::mem::cuda;
use crate::ops::{BuiltinOp, ElemType, Op};
use crate::p2p::small_copy::copy_bytes_overlapping;

/// One target as the fast path reaches it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Direct {
    /// Where this process maps the target's window memory (0: not mapped;
    /// the general path handles it).
    base: usize,
    /// Bytes of window memory.
    size: usize,
    /// Displacement unit.
    unit: usize,
}

impl Direct {
    /// The fast-path entries of a window's targets (none for dynamic windows,
    /// whose displacements are addresses checked against attached regions).
    pub(super) fn table(flavor: Flavor, targets: &[Target]) -> Vec<Direct> {
        targets
            .iter()
            .map(|t| match t.access {
                Access::Mapped(base) if flavor != Flavor::Dynamic => Direct {
                    base,
                    size: t.size,
                    unit: t.disp_unit,
                },
                _ => Direct::default(),
            })
            .collect()
    }
}

impl Win {
    /// The address here of bytes `disp * unit ..+ len` of `rank`'s window
    /// memory, when it is mapped, inside the window, an access epoch is
    /// open to `rank` and the window lives. `None`: take the general path
    /// (which also reports whatever is wrong).
    #[inline(always)]
    pub(super) fn direct(&self, rank: i32, disp: isize, len: usize) -> Option<*mut u8> {
        let r = usize::try_from(rank).ok()?;
        let d = self.inner.direct.get(r)?;
        if d.base == 0 {
            return None;
        }
        let off = usize::try_from(disp).ok()?.checked_mul(d.unit)?;
        if off.checked_add(len)? > d.size
            || !self.inner.epoch.open_to(r)
            || self.inner.freed.load(Ordering::Acquire)
        {
            return None;
        }
        Some((d.base + off) as *mut u8)
    }

    /// Where `t` is mapped and the element width when hardware atomics
    /// apply to `op` on `elem` elements in `runs` of it, every run aligned
    /// to the width (`None`: take the accumulate lock). See the module's
    /// atomicity rule.
    pub(super) fn atomic_width<'a>(
        &self,
        t: &Target,
        runs: &[(usize, usize)],
        op: &'a Op,
        elem: Option<ElemType>,
    ) -> Option<(usize, usize, AtomicOp<'a>)> {
        let (true, Op::Builtin(b), Access::Mapped(base), Some(elem)) =
            (self.inner.atomics, op, t.access, elem)
        else {
            return None;
        };
        let w = elem.size();
        let aligned =
            |&(off, len): &(usize, usize)| (base + off).is_multiple_of(w) && len.is_multiple_of(w);
        let a = AtomicOp {
            op: *b,
            elem,
            full: op,
        };
        ((w == 4 || w == 8) && runs.iter().all(aligned)).then_some((base, w, a))
    }

    /// The fast path of the accumulates in bytes: `Some(address, width,
    /// op)` when `len` bytes at `disp` of `rank` are directly reachable
    /// (see [`Win::direct`]) aligned elements that hardware atomics update.
    #[inline(always)]
    pub(super) fn atomic_direct<'a>(
        &self,
        rank: i32,
        disp: isize,
        len: usize,
        op: &'a Op,
        elem: Option<ElemType>,
    ) -> Option<(*mut u8, usize, AtomicOp<'a>)> {
        let (true, Op::Builtin(b), Some(elem)) = (self.inner.atomics, op, elem) else {
            return None;
        };
        let w = elem.size();
        if (w != 4 && w != 8) || len == 0 || !len.is_multiple_of(w) {
            return None;
        }
        let p = self.direct(rank, disp, len)?;
        let a = AtomicOp {
            op: *b,
            elem,
            full: op,
        };
        (p as usize).is_multiple_of(w).then_some((p, w, a))
    }
}

impl Win {
    /// `MPI_Put` of `len` contiguous bytes at `src` when the fast path
    /// takes it ([`Win::direct`], a host buffer): whether it did (if not,
    /// [`Win::put_bytes`] does the rest, errors included).
    ///
    /// # Safety
    /// `src` holds `len` bytes.
    #[inline(always)]
    pub unsafe fn put_direct(&self, src: *const u8, len: usize, rank: i32, disp: isize) -> bool {
        match self.direct(rank, disp, len) {
            Some(dst) if !cuda::is_device(src) => {
                // SAFETY: the caller's promise; `dst` was checked.
                unsafe { copy_bytes_overlapping(src, dst, len) };
                true
            }
            _ => false,
        }
    }

    /// `MPI_Get` into `len` contiguous bytes at `dst` (see [`Win::put_direct`]).
    ///
    /// # Safety
    /// `dst` holds `len` writable bytes.
    #[inline(always)]
    pub unsafe fn get_direct(&self, dst: *mut u8, len: usize, rank: i32, disp: isize) -> bool {
        match self.direct(rank, disp, len) {
            Some(src) if !cuda::is_device(dst) => {
                // SAFETY: the caller's promise; `src` was checked.
                unsafe { copy_bytes_overlapping(src, dst, len) };
                true
            }
            _ => false,
        }
    }

    /// `MPI_Win_flush(rank)` of a target whose memory this process maps,
    /// inside a passive-target epoch to it: every operation to it has
    /// completed in its call, so this only orders them before what follows
    /// (no instruction on x86). Whether it did (if not, [`Win::flush`]).
    #[inline(always)]
    pub fn flush_direct(&self, rank: i32) -> bool {
        let Some((r, d)) = usize::try_from(rank)
            .ok()
            .and_then(|r| Some((r, self.inner.direct.get(r)?)))
        else {
            return false;
        };
        if d.base == 0
            || !self.inner.epoch.passive_to(r)
            || self.inner.freed.load(Ordering::Acquire)
        {
            return false;
        }
        fence(Ordering::AcqRel);
        true
    }

    /// `MPI_Compare_and_swap` of one element of `elem` (`len` bytes each
    /// buffer) by one hardware compare-and-swap when the fast path takes
    /// it ([`Win::atomic_direct`], host buffers): whether it did.
    ///
    /// # Safety
    /// `origin` and `compare` hold `len` bytes, `result` `len` writable ones.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub unsafe fn compare_and_swap_direct(
        &self,
        origin: *const u8,
        compare: *const u8,
        result: *mut u8,
        len: usize,
        elem: ElemType,
        rank: i32,
        disp: isize,
    ) -> bool {
        const REPLACE: Op = Op::Builtin(BuiltinOp::Replace);
        let Some((p, w, _)) = self.atomic_direct(rank, disp, len, &REPLACE, Some(elem)) else {
            return false;
        };
        let host = |p: *const u8| !cuda::is_device(p);
        if len != w || !host(origin) || !host(compare) || !host(result) {
            return false;
        }
        // SAFETY: the caller's promise; the element was checked.
        unsafe { compare_swap_atomic(p, w, origin, compare, result) };
        true
    }
}

/// `MPI_Compare_and_swap` of one aligned element of `w` (4 or 8) bytes
/// at `p`: one hardware compare-and-swap (bitwise comparison, as the
/// accumulate lock's path compares bytes).
///
/// # Safety
/// `p` is an aligned element of window memory shared only through
/// atomics; `origin` and `compare` hold `w` bytes, `result` `w` writable.
pub(super) unsafe fn compare_swap_atomic(
    p: *mut u8,
    w: usize,
    origin: *const u8,
    compare: *const u8,
    result: *mut u8,
) {
    // SAFETY: the caller's promise.
    unsafe {
        if w == 8 {
            let cell = &*(p as *const AtomicU64);
            let (new, expected) = (
                origin.cast::<u64>().read_unaligned(),
                compare.cast::<u64>().read_unaligned(),
            );
            let (Ok(old) | Err(old)) =
                cell.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire);
            result.cast::<u64>().write_unaligned(old);
        } else {
            let cell = &*(p as *const AtomicU32);
            let (new, expected) = (
                origin.cast::<u32>().read_unaligned(),
                compare.cast::<u32>().read_unaligned(),
            );
            let (Ok(old) | Err(old)) =
                cell.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire);
            result.cast::<u32>().write_unaligned(old);
        }
    }
}

/// How an atomic update computes: the operation and the element type
/// (`full`: the same operation, whose reduction runs in a
/// compare-and-swap loop where no single instruction does it).
pub(super) struct AtomicOp<'a> {
    pub op: BuiltinOp,
    pub elem: ElemType,
    pub full: &'a Op,
}

macro_rules! atomic_elements {
    ($name:ident, $uns:ty, $au:ty, $sig:ty, $as:ty, $float:ty, $fty:expr) => {
        /// Applies `a` to each element at `p` (naturally aligned, mapped
        /// window memory), with `input`'s elements as operands; the old
        /// values go to `old` when given. Every element is one atomic
        /// read-modify-write (or load, for `MPI_NO_OP`).
        ///
        /// # Safety
        /// `p` holds `n` aligned elements shared only through atomics;
        /// `input` holds `n` elements (unless the op is `MPI_NO_OP`),
        /// `old`, if not null, `n` writable ones.
        unsafe fn $name(
            p: *mut u8,
            n: usize,
            input: *const u8,
            old: *mut u8,
            a: &AtomicOp<'_>,
        ) -> Result<(), Error> {
            const W: usize = std::mem::size_of::<$uns>();
            for i in 0..n {
                // SAFETY: the caller's promise: aligned, inside the window.
                let cell = unsafe { &*(p.add(i * W) as *const $au) };
                let arg = || {
                    // SAFETY: the caller's promise for `input`.
                    unsafe { input.add(i * W).cast::<$uns>().read_unaligned() }
                };
                let signed = || {
                    // SAFETY: the same cell, as a signed integer.
                    unsafe { &*(p.add(i * W) as *const $as) }
                };
                let int = a.elem == $fty.2;
                let uint = a.elem == $fty.1;
                let was: $uns = match a.op {
                    BuiltinOp::NoOp => cell.load(Ordering::Acquire),
                    BuiltinOp::Replace => cell.swap(arg(), Ordering::AcqRel),
                    BuiltinOp::Sum if int || uint => cell.fetch_add(arg(), Ordering::AcqRel),
                    BuiltinOp::Band if int || uint => cell.fetch_and(arg(), Ordering::AcqRel),
                    BuiltinOp::Bor if int || uint => cell.fetch_or(arg(), Ordering::AcqRel),
                    BuiltinOp::Bxor if int || uint => cell.fetch_xor(arg(), Ordering::AcqRel),
                    BuiltinOp::Max if uint => cell.fetch_max(arg(), Ordering::AcqRel),
                    BuiltinOp::Min if uint => cell.fetch_min(arg(), Ordering::AcqRel),
                    BuiltinOp::Max if int => {
                        signed().fetch_max(arg() as $sig, Ordering::AcqRel) as $uns
                    }
                    BuiltinOp::Min if int => {
                        signed().fetch_min(arg() as $sig, Ordering::AcqRel) as $uns
                    }
                    BuiltinOp::Sum if a.elem == $fty.0 => {
                        let add = <$float>::from_bits(arg());
                        let mut cur = cell.load(Ordering::Relaxed);
                        loop {
                            let new = (<$float>::from_bits(cur) + add).to_bits();
                            match cell.compare_exchange_weak(
                                cur,
                                new,
                                Ordering::AcqRel,
                                Ordering::Relaxed,
                            ) {
                                Ok(v) => break v,
                                Err(v) => cur = v,
                            }
                        }
                    }
                    _ => {
                        // Fails for an op the type does not have.
                        let f = a.full.reducer(Some(a.elem))?;
                        let operand = arg().to_ne_bytes();
                        let mut cur = cell.load(Ordering::Relaxed);
                        loop {
                            let mut new = cur.to_ne_bytes();
                            f(&operand, &mut new)?;
                            match cell.compare_exchange_weak(
                                cur,
                                <$uns>::from_ne_bytes(new),
                                Ordering::AcqRel,
                                Ordering::Relaxed,
                            ) {
                                Ok(v) => break v,
                                Err(v) => cur = v,
                            }
                        }
                    }
                };
                if !old.is_null() {
                    // SAFETY: the caller's promise for `old`.
                    unsafe { old.add(i * W).cast::<$uns>().write_unaligned(was) };
                }
            }
            Ok(())
        }
    };
}

atomic_elements!(
    atomic_u32,
    u32,
    AtomicU32,
    i32,
    AtomicI32,
    f32,
    (ElemType::F32, ElemType::U32, ElemType::I32)
);
atomic_elements!(
    atomic_u64,
    u64,
    AtomicU64,
    i64,
    AtomicI64,
    f64,
    (ElemType::F64, ElemType::U64, ElemType::I64)
);

/// Applies `a` element by element with hardware atomics to the runs of
/// the target mapped at `base` (elements of `w` bytes, every run aligned:
/// [`Win::atomic_width`]), `input` and `old` packed in run order.
///
/// # Safety
/// The runs lie inside the window; `input` holds their bytes (unless the
/// op is `MPI_NO_OP`), `old`, if not null, as many writable bytes.
pub(super) unsafe fn atomic_runs(
    base: usize,
    w: usize,
    runs: &[(usize, usize)],
    input: *const u8,
    old: *mut u8,
    a: &AtomicOp<'_>,
) -> Result<(), Error> {
    let mut at = 0;
    for &(off, len) in runs {
        let p = (base + off) as *mut u8;
        let (i, o) = (input.wrapping_add(at), old.wrapping_add(at));
        let o = if old.is_null() { old } else { o };
        // SAFETY: the caller's promise.
        unsafe {
            if w == 8 {
                atomic_u64(p, len / 8, i, o, a)?;
            } else {
                atomic_u32(p, len / 4, i, o, a)?;
            }
        }
        at += len;
    }
    Ok(())
}
