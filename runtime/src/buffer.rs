//! Typed buffers: primitive element types whose bytes can be sent as they are.

/// An element type that may be sent as raw bytes: plain data with no
/// padding, no pointers and every bit pattern valid.
///
/// # Safety
/// Implement only for types where any byte pattern of `size_of::<Self>()`
/// bytes is a valid value and that have no padding.
pub unsafe trait Scalar: Copy + Send + Sync + 'static {}

macro_rules! scalars {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        unsafe impl Scalar for $t {}
    )* };
}
scalars!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

/// The bytes of a typed slice.
pub fn bytes_of<T: Scalar>(s: &[T]) -> (*const u8, usize) {
    (s.as_ptr().cast(), std::mem::size_of_val(s))
}

/// The bytes of a mutable typed slice.
pub fn bytes_of_mut<T: Scalar>(s: &mut [T]) -> (*mut u8, usize) {
    (s.as_mut_ptr().cast(), std::mem::size_of_val(s))
}
