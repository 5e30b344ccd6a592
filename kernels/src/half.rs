//! IEEE binary16 (f16) and bfloat16 (bf16) conversions to and from f32.
//!
//! Narrowing rounds to nearest, ties to even; overflow gives infinity; NaNs
//! stay NaN (made quiet, sign and the top payload bits kept). Widening is
//! exact. The code is branch-free (selects only) so that loops over it
//! vectorise.
//!
//! Reductions on f16 / bf16 widen both operands, compute in f32 and narrow
//! once. For `+`, `-`, `*` this equals the correctly rounded f16 / bf16
//! operation: f32 has p = 24 >= 2p + 2 bits for p = 11 (f16) and p = 8
//! (bf16), so the double rounding is innocuous (Figueroa, 1995).

/// f32 bits of 2^16: every f16-representable magnitude is below it.
const F16_OVERFLOW: u32 = 143 << 23;
/// f32 bits of 2^-14, the smallest normal f16.
const F16_MIN_NORMAL: u32 = 113 << 23;
/// f32 bits of 0.5: adding it to x < 2^-14 rounds x to a multiple of 2^-24.
const HALF_BITS: u32 = 126 << 23;

/// Widens an f16 (given as its bits) to f32, exactly.
///
/// ```
/// use oxmpi_kernels::half::f16_to_f32;
/// assert_eq!(f16_to_f32(0x3c00), 1.0);
/// assert_eq!(f16_to_f32(0xc000), -2.0);
/// assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24)); // smallest subnormal
/// assert!(f16_to_f32(0x7e00).is_nan());
/// ```
#[inline(always)]
pub fn f16_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let mag = h & 0x7fff;
    let exp = mag & 0x7c00;
    // Normal: rebias the exponent from 15 to 127.
    let normal = (mag << 13) + (112 << 23);
    // Infinity / NaN: exponent all ones, payload kept.
    let inf_nan = (mag << 13) | 0x7f80_0000;
    // Zero / subnormal: mag * 2^-24, exact in f32.
    let sub = (mag as f32 * (1.0 / 16_777_216.0)).to_bits();
    let bits = if exp == 0x7c00 {
        inf_nan
    } else if exp == 0 {
        sub
    } else {
        normal
    };
    f32::from_bits(bits | sign)
}

/// Narrows an f32 to f16 bits, rounding to nearest, ties to even.
///
/// ```
/// use oxmpi_kernels::half::f32_to_f16;
/// assert_eq!(f32_to_f16(1.0), 0x3c00);
/// assert_eq!(f32_to_f16(65504.0), 0x7bff); // largest finite f16
/// assert_eq!(f32_to_f16(65520.0), 0x7c00); // halfway to 2^16 rounds to even: infinity
/// assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00); // tie, 1.0 is even
/// ```
#[inline(always)]
pub fn f32_to_f16(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = (x >> 16) & 0x8000;
    let a = x & 0x7fff_ffff;
    let nan = 0x7e00 | ((a >> 13) & 0x3ff);
    // Normal range: rebias, add just under half an ulp plus the lowest kept
    // bit (ties to even), truncate; a carry out of the mantissa bumps the
    // exponent, up to infinity.
    let odd = (a >> 13) & 1;
    let normal = a
        .wrapping_sub(112 << 23)
        .wrapping_add(0xfff)
        .wrapping_add(odd)
        >> 13;
    // Below 2^-14: let the FPU round (to nearest even) to a multiple of 2^-24.
    let sub = (f32::from_bits(a) + 0.5).to_bits().wrapping_sub(HALF_BITS);
    let r = if a > 0x7f80_0000 {
        nan
    } else if a >= F16_OVERFLOW {
        0x7c00
    } else if a < F16_MIN_NORMAL {
        sub
    } else {
        normal
    };
    (r | sign) as u16
}

/// Widens a bf16 (given as its bits) to f32, exactly.
///
/// ```
/// use oxmpi_kernels::half::bf16_to_f32;
/// assert_eq!(bf16_to_f32(0x3f80), 1.0);
/// ```
#[inline(always)]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Narrows an f32 to bf16 bits, rounding to nearest, ties to even.
///
/// ```
/// use oxmpi_kernels::half::f32_to_bf16;
/// assert_eq!(f32_to_bf16(1.0), 0x3f80);
/// assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80); // tie, even stays
/// assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82); // tie, odd rounds up
/// assert_eq!(f32_to_bf16(f32::MAX), 0x7f80); // overflow: infinity
/// ```
#[inline(always)]
pub fn f32_to_bf16(f: f32) -> u16 {
    let x = f.to_bits();
    let nan = ((x >> 16) | 0x40) as u16;
    let rounded = (x.wrapping_add(0x7fff + ((x >> 16) & 1)) >> 16) as u16;
    if f.is_nan() {
        nan
    } else {
        rounded
    }
}

#[cfg(test)]
mod tests;
