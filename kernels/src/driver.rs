//! Runs an elementwise function over byte buffers viewed as typed slices.
//!
//! The hot loops are the two `zip` loops at the bottom, monomorphised per
//! element type and per operation closure, which LLVM auto-vectorises.
//! Buffers that are not aligned for the element type run a twin loop over
//! raw pointers with unaligned loads and stores, which LLVM vectorises too
//! (x86 and AArch64 vector loads tolerate any alignment).

use std::mem::{align_of, size_of};

use crate::elem::Pod;

/// The operands of one reduction call; lengths were validated by the caller
/// (equal, and a multiple of the element size).
pub(crate) enum Args<'a> {
    /// `inout[i] = f(input[i], inout[i])`.
    InPlace {
        inout: &'a mut [u8],
        input: &'a [u8],
    },
    /// `out[i] = f(a[i], b[i])`.
    Out {
        out: &'a mut [u8],
        a: &'a [u8],
        b: &'a [u8],
    },
}

/// Applies `f(first, second)` elementwise, viewing the bytes as `T`.
#[inline(always)]
pub(crate) fn run<T: Pod, F: Fn(T, T) -> T + Copy>(args: Args<'_>, f: F) {
    match args {
        Args::InPlace { inout, input } => {
            if aligned::<T>(inout) && aligned::<T>(input) {
                // SAFETY: T is Pod, both buffers are aligned for T and their
                // lengths are multiples of size_of::<T>() (checked by the caller).
                let (x, y) = unsafe { (view_mut::<T>(inout), view::<T>(input)) };
                zip2(x, y, f);
            } else {
                unaligned2(inout, input, f);
            }
        }
        Args::Out { out, a, b } => {
            if aligned::<T>(out) && aligned::<T>(a) && aligned::<T>(b) {
                // SAFETY: as above.
                let (o, x, y) = unsafe { (view_mut::<T>(out), view::<T>(a), view::<T>(b)) };
                zip3(o, x, y, f);
            } else {
                unaligned3(out, a, b, f);
            }
        }
    }
}

#[inline(always)]
fn aligned<T>(bytes: &[u8]) -> bool {
    (bytes.as_ptr() as usize) % align_of::<T>() == 0
}

/// # Safety
/// `bytes` must be aligned for `T` and a multiple of its size.
#[inline(always)]
unsafe fn view<T: Pod>(bytes: &[u8]) -> &[T] {
    std::slice::from_raw_parts(bytes.as_ptr().cast(), bytes.len() / size_of::<T>())
}

/// # Safety
/// `bytes` must be aligned for `T` and a multiple of its size.
#[inline(always)]
unsafe fn view_mut<T: Pod>(bytes: &mut [u8]) -> &mut [T] {
    std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len() / size_of::<T>())
}

#[inline(never)]
fn unaligned2<T: Pod, F: Fn(T, T) -> T + Copy>(inout: &mut [u8], input: &[u8], f: F) {
    let n = inout.len() / size_of::<T>();
    let (x, y) = (inout.as_mut_ptr().cast::<T>(), input.as_ptr().cast::<T>());
    for k in 0..n {
        // SAFETY: k < n and both buffers hold n elements (checked by the
        // caller); T is Pod, so any bytes are a valid value; the accesses are
        // unaligned-tolerant; the slices are distinct borrows, so disjoint.
        unsafe {
            let v = f(y.add(k).read_unaligned(), x.add(k).read_unaligned());
            x.add(k).write_unaligned(v);
        }
    }
}

#[inline(never)]
fn unaligned3<T: Pod, F: Fn(T, T) -> T + Copy>(out: &mut [u8], a: &[u8], b: &[u8], f: F) {
    let n = out.len() / size_of::<T>();
    let (o, x, y) = (
        out.as_mut_ptr().cast::<T>(),
        a.as_ptr().cast::<T>(),
        b.as_ptr().cast::<T>(),
    );
    for k in 0..n {
        // SAFETY: as in `unaligned2`; `out` is a distinct mutable borrow.
        unsafe {
            o.add(k)
                .write_unaligned(f(x.add(k).read_unaligned(), y.add(k).read_unaligned()))
        };
    }
}

/// The in-place hot loop.
#[inline(always)]
fn zip2<T: Copy, F: Fn(T, T) -> T>(inout: &mut [T], input: &[T], f: F) {
    for (x, &y) in inout.iter_mut().zip(input) {
        *x = f(y, *x);
    }
}

/// The three-operand hot loop.
#[inline(always)]
fn zip3<T: Copy, F: Fn(T, T) -> T>(out: &mut [T], a: &[T], b: &[T], f: F) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}
