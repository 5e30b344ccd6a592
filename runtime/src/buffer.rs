//! Typed buffers: primitive element types whose bytes can be sent as they are.

use oxmpi_kernels::ElemType;

/// An element type that may be sent as raw bytes: plain data with no
/// padding, no pointers and every bit pattern valid.
///
/// # Safety
/// Implement only for types where any byte pattern of `size_of::<Self>()`
/// bytes is a valid value and that have no padding.
///
/// ```
/// use oxmpi::ops::ElemType;
/// use oxmpi::Scalar;
/// fn elem_of<T: Scalar>(_: &[T]) -> Option<ElemType> {
///     T::ELEM
/// }
/// assert_eq!(elem_of(&[1.0f64]), Some(ElemType::F64));
/// assert_eq!(elem_of(&[1u128]), None); // sendable, but no built-in reduction
/// ```
pub unsafe trait Scalar: Copy + Send + Sync + 'static {
    /// The element type built-in reductions see (`None`: no built-in op applies).
    ///
    /// See the example on [`Scalar`].
    const ELEM: Option<ElemType>;
}

macro_rules! scalars {
    ($($t:ty => $e:expr),*) => { $(
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        unsafe impl Scalar for $t {
            const ELEM: Option<ElemType> = $e;
        }
    )* };
}
scalars!(
    u8 => Some(ElemType::U8), i8 => Some(ElemType::I8),
    u16 => Some(ElemType::U16), i16 => Some(ElemType::I16),
    u32 => Some(ElemType::U32), i32 => Some(ElemType::I32),
    u64 => Some(ElemType::U64), i64 => Some(ElemType::I64),
    u128 => None, i128 => None,
    usize => Some(ElemType::U64), isize => Some(ElemType::I64),
    f32 => Some(ElemType::F32), f64 => Some(ElemType::F64)
);

/// The bytes of a typed slice.
///
/// ```
/// let v = [1u32, 2, 3];
/// let (ptr, len) = oxmpi::buffer::bytes_of(&v);
/// assert_eq!((ptr, len), (v.as_ptr().cast::<u8>(), 12));
/// ```
pub fn bytes_of<T: Scalar>(s: &[T]) -> (*const u8, usize) {
    (s.as_ptr().cast(), std::mem::size_of_val(s))
}

/// The bytes of a mutable typed slice.
///
/// ```
/// let mut v = [0u16; 4];
/// let (ptr, len) = oxmpi::buffer::bytes_of_mut(&mut v);
/// assert_eq!(len, 8);
/// // SAFETY: `ptr..ptr+len` is `v`'s memory, borrowed mutably here.
/// unsafe { std::slice::from_raw_parts_mut(ptr, len).fill(0xff) };
/// assert_eq!(v, [u16::MAX; 4]);
/// ```
pub fn bytes_of_mut<T: Scalar>(s: &mut [T]) -> (*mut u8, usize) {
    (s.as_mut_ptr().cast(), std::mem::size_of_val(s))
}
