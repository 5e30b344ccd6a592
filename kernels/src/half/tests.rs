//! Conversion tests against independent f64 reference implementations.

use super::*;

/// Reference f16 decoding through f64 arithmetic (finite values only).
fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 => sign * f64::INFINITY,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Reference f32 -> f16 (finite x): scale into an integer significand, round
/// half to even with f64's `round_ties_even`.
fn f16_reference(x: f32) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = (x as f64).abs();
    if a < 2f64.powi(-14) {
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    let mut e = a.log2().floor() as i32;
    // log2 may be off by one near powers of two; fix up exactly.
    while 2f64.powi(e) > a {
        e -= 1;
    }
    while 2f64.powi(e + 1) <= a {
        e += 1;
    }
    let mut n = (a / 2f64.powi(e) * 1024.0).round_ties_even() as u32;
    if n == 2048 {
        n = 1024;
        e += 1;
    }
    if e + 15 >= 31 {
        return sign | 0x7c00;
    }
    sign | (((e + 15) as u16) << 10) | (n - 1024) as u16
}

#[test]
fn f16_widening_is_exact_for_every_value() {
    for h in 0..=u16::MAX {
        let f = f16_to_f32(h);
        if (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0 {
            assert!(f.is_nan(), "{h:#06x}");
            assert_eq!(f.is_sign_negative(), h & 0x8000 != 0);
        } else {
            assert_eq!(f as f64, f16_value(h), "{h:#06x}");
            assert_eq!(f.is_sign_negative(), h & 0x8000 != 0, "{h:#06x}");
        }
    }
}

#[test]
fn f16_round_trip_is_identity() {
    for h in 0..=u16::MAX {
        let back = f32_to_f16(f16_to_f32(h));
        let is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        if is_nan {
            // Quieted, sign and payload otherwise kept.
            assert_eq!(back, h | 0x0200, "{h:#06x}");
        } else {
            assert_eq!(back, h, "{h:#06x}");
        }
    }
}

#[test]
fn f16_narrowing_ties_and_neighbours() {
    // Every midpoint between adjacent finite f16 values (and past the largest),
    // and the f32 values one ulp either side of it.
    for h in 0..0x7c00u16 {
        let lo = f16_value(h);
        let hi = if h == 0x7bff {
            65536.0
        } else {
            f16_value(h + 1)
        };
        let mid = ((lo + hi) / 2.0) as f32; // exact: needs at most 12 bits
        for x in [
            mid,
            f32::from_bits(mid.to_bits() - 1),
            f32::from_bits(mid.to_bits() + 1),
            lo as f32,
        ] {
            for x in [x, -x] {
                assert_eq!(
                    f32_to_f16(x),
                    f16_reference(x),
                    "{x:e} ({:#010x})",
                    x.to_bits()
                );
            }
        }
        // A tie goes to the even neighbour.
        let expected = if h & 1 == 0 { h } else { h + 1 };
        assert_eq!(f32_to_f16(mid), expected, "tie above {h:#06x}");
    }
}

#[test]
fn f16_narrowing_sampled_over_all_f32() {
    let mut bits = 0u32;
    while let Some(next) = bits.checked_add(2039) {
        let x = f32::from_bits(bits);
        if x.is_nan() {
            let h = f32_to_f16(x);
            assert_eq!(h & 0x7e00, 0x7e00, "{bits:#010x}");
            assert_eq!(h & 0x8000 != 0, x.is_sign_negative());
        } else {
            assert_eq!(f32_to_f16(x), f16_reference(x), "{x:e} ({bits:#010x})");
        }
        bits = next;
    }
    assert_eq!(f32_to_f16(f32::INFINITY), 0x7c00);
    assert_eq!(f32_to_f16(f32::NEG_INFINITY), 0xfc00);
    assert_eq!(f32_to_f16(-0.0), 0x8000);
    assert_eq!(f32_to_f16(2f32.powi(-25)), 0); // tie between 0 and the smallest subnormal
    assert_eq!(f32_to_f16(1.5 * 2f32.powi(-24)), 2); // tie, rounds to even (2)
    assert_eq!(f32_to_f16(2f32.powi(-14) - 2f32.powi(-25)), 0x0400); // rounds up into normal
}

/// Reference f32 -> bf16 by comparing distances to the two neighbours.
fn bf16_reference(x: f32) -> u16 {
    let bits = x.to_bits();
    let lo = (bits >> 16) as u16;
    let value = |h: u16| -> f64 {
        if h & 0x7fff == 0x7f80 {
            // The infinity neighbour stands for 2^128 with unbounded exponent.
            let m = 2f64.powi(128);
            if h & 0x8000 != 0 {
                -m
            } else {
                m
            }
        } else {
            f32::from_bits((h as u32) << 16) as f64
        }
    };
    let hi = lo + 1; // one ulp further from zero
    let (dl, dh) = ((x as f64 - value(lo)).abs(), (value(hi) - x as f64).abs());
    if dl < dh || (dl == dh && lo & 1 == 0) {
        lo
    } else {
        hi
    }
}

#[test]
fn bf16_round_trip_and_rounding() {
    for h in 0..=u16::MAX {
        let f = bf16_to_f32(h);
        let back = f32_to_bf16(f);
        if f.is_nan() {
            assert_eq!(back, h | 0x40, "{h:#06x}");
        } else {
            assert_eq!(back, h, "{h:#06x}");
        }
    }
    let mut bits = 0u32;
    while let Some(next) = bits.checked_add(1021) {
        let x = f32::from_bits(bits);
        if x.is_nan() {
            assert!(bf16_to_f32(f32_to_bf16(x)).is_nan());
        } else if x.is_infinite() {
            assert_eq!(f32_to_bf16(x), (bits >> 16) as u16);
        } else {
            assert_eq!(f32_to_bf16(x), bf16_reference(x), "{x:e} ({bits:#010x})");
        }
        bits = next;
    }
    // Ties: exactly half an ulp, both parities, both signs.
    for base in [
        0x3f80_0000u32,
        0x3f81_0000,
        0x0000_0000,
        0x0001_0000,
        0x7f7f_0000,
    ] {
        for sign in [0, 0x8000_0000] {
            let x = f32::from_bits((base | sign) + 0x8000);
            assert_eq!(f32_to_bf16(x), bf16_reference(x), "{:#010x}", x.to_bits());
        }
    }
}
