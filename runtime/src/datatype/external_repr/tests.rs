//! external32 against hand-written big-endian encodings, for every basic
//! type and for derived types.

use super::*;
use crate::datatype::Order;

/// Native bytes: each `(width, value)` as a native-endian integer.
fn ne(parts: &[(usize, u64)]) -> Vec<u8> {
    let mut v = vec![];
    for &(w, x) in parts {
        let mut b = vec![0u8; w];
        write_native(x, &mut b);
        v.extend(b);
    }
    v
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A native `long double` with the binary128 sign/exponent `se` and the
/// top 16 fraction bits `frac`.
fn long_double(se: u16, frac: u16) -> Vec<u8> {
    if cfg!(target_arch = "x86_64") {
        // x87: explicit integer bit, 63 fraction bits, then sign/exponent.
        let m = (1u64 << 63) | (u64::from(frac) << 47);
        let mut v = m.to_le_bytes().to_vec();
        v.extend(se.to_le_bytes());
        v.extend([0; 6]);
        v
    } else {
        ((u128::from(se) << 112) | (u128::from(frac) << 96))
            .to_ne_bytes()
            .to_vec()
    }
}

const LD_1_5: &str = "3fff8000 00000000 00000000 00000000";
const LD_M2: &str = "c0000000 00000000 00000000 00000000";

/// One element of `t` in native layout (extent bytes, padding zero) and
/// its external32 encoding, written out by hand.
fn case(t: BasicType) -> (Vec<u8>, Vec<u8>) {
    use BasicType as B;
    let f32b = |x: f32| u64::from(x.to_bits());
    let f64b = |x: f64| x.to_bits();
    let (native, want) = match t {
        B::Char
        | B::SignedChar
        | B::UnsignedChar
        | B::Byte
        | B::Packed
        | B::CBool
        | B::CxxBool
        | B::Int8
        | B::Uint8
        | B::Character
        | B::Integer1 => (vec![0xa5], "a5"),
        B::Short | B::UnsignedShort | B::Int16 | B::Uint16 | B::Integer2 => {
            (ne(&[(2, 0x1234)]), "1234")
        }
        B::Float16 | B::BFloat16 => (ne(&[(2, 0x3c00)]), "3c00"),
        B::WChar => (ne(&[(4, 0x12345)]), "2345"),
        B::Int | B::Unsigned | B::Int32 | B::Uint32 | B::Logical | B::Integer | B::Integer4 => {
            (ne(&[(4, 0x0102_0304)]), "01020304")
        }
        B::Long | B::UnsignedLong => (ne(&[(8, 0x1122_3344_5566_7788)]), "55667788"),
        B::LongLong
        | B::UnsignedLongLong
        | B::Int64
        | B::Uint64
        | B::Aint
        | B::Offset
        | B::Count
        | B::Integer8 => (ne(&[(8, 0x0102_0304_0506_0708)]), "0102030405060708"),
        B::Float | B::Real | B::Real4 => (ne(&[(4, f32b(1.5))]), "3fc00000"),
        B::Double | B::DoublePrecision | B::Real8 => (ne(&[(8, f64b(-2.0))]), "c000000000000000"),
        B::LongDouble => (long_double(0x3fff, 0x8000), LD_1_5),
        B::CFloatComplex | B::CxxFloatComplex | B::Complex | B::Complex8 => {
            (ne(&[(4, f32b(1.0)), (4, f32b(-1.0))]), "3f800000 bf800000")
        }
        B::CDoubleComplex | B::CxxDoubleComplex | B::DoubleComplex | B::Complex16 => (
            ne(&[(8, f64b(1.0)), (8, f64b(-0.5))]),
            "3ff0000000000000 bfe0000000000000",
        ),
        B::CLongDoubleComplex | B::CxxLongDoubleComplex => {
            let mut v = long_double(0x3fff, 0x8000);
            v.extend(long_double(0xc000, 0));
            return (v, hex(&format!("{LD_1_5} {LD_M2}")));
        }
        B::FloatInt => (ne(&[(4, f32b(1.5)), (4, 7)]), "3fc00000 00000007"),
        B::DoubleInt => (
            ne(&[(8, f64b(-2.0)), (4, 7), (4, 0)]),
            "c000000000000000 00000007",
        ),
        B::LongInt => (
            ne(&[(8, (-2i64) as u64), (4, 7), (4, 0)]),
            "fffffffe 00000007",
        ),
        B::TwoInt | B::TwoInteger => (ne(&[(4, 1), (4, 0xffff_ffff)]), "00000001 ffffffff"),
        B::ShortInt => (ne(&[(2, 0x0102), (2, 0), (4, 7)]), "0102 00000007"),
        B::LongDoubleInt => {
            let mut v = long_double(0xc000, 0);
            v.extend(ne(&[(4, 7), (4, 0), (8, 0)]));
            return (v, hex(&format!("{LD_M2} 00000007")));
        }
        B::TwoReal => (ne(&[(4, f32b(1.5)), (4, f32b(-2.0))]), "3fc00000 c0000000"),
        B::TwoDoublePrecision => (
            ne(&[(8, f64b(1.5)), (8, f64b(-2.0))]),
            "3ff8000000000000 c000000000000000",
        ),
    };
    (native, hex(want))
}

#[test]
fn every_basic_type_encodes_to_its_big_endian_bytes() {
    for &t in BasicType::ALL {
        let (native, want) = case(t);
        let dt = Datatype::basic(t);
        assert_eq!(native.len(), t.extent(), "{}", t.name());
        assert_eq!(dt.external32_size(1).unwrap(), want.len(), "{}", t.name());
        let mut out = vec![0u8; want.len()];
        let mut pos = 0;
        dt.pack_external32(&native, 1, &mut out, &mut pos).unwrap();
        assert_eq!((&out, pos), (&want, want.len()), "{}", t.name());
        // Back: the same native bytes, except what external32 cannot hold.
        let mut back = vec![0u8; t.extent()];
        let mut pos = 0;
        dt.unpack_external32(&out, &mut pos, &mut back, 1).unwrap();
        let expect = match t {
            BasicType::Long | BasicType::UnsignedLong => ne(&[(8, 0x5566_7788)]),
            BasicType::WChar => ne(&[(4, 0x2345)]),
            _ => native,
        };
        assert_eq!((back, pos), (expect, want.len()), "{}", t.name());
    }
}

#[test]
fn narrowed_integers_widen_by_their_signedness() {
    let long = Datatype::basic(BasicType::Long);
    let ulong = Datatype::basic(BasicType::UnsignedLong);
    let vals = ne(&[(8, (-2i64) as u64), (8, 0x7fff_ffff)]);
    let mut out = [0u8; 8];
    long.pack_external32(&vals, 2, &mut out, &mut 0).unwrap();
    assert_eq!(out.to_vec(), hex("fffffffe 7fffffff"));
    let mut back = vec![0u8; 16];
    long.unpack_external32(&out, &mut 0, &mut back, 2).unwrap();
    assert_eq!(back, vals);
    ulong.unpack_external32(&out, &mut 0, &mut back, 2).unwrap();
    assert_eq!(back, ne(&[(8, 0xffff_fffe), (8, 0x7fff_ffff)]));
}

#[test]
fn derived_types_convert_each_element_in_type_map_order() {
    let short = Datatype::basic(BasicType::Short);
    let double = Datatype::basic(BasicType::Double);
    // struct { short s[2]; double d; } with the double first in the map.
    let t = Datatype::create_struct(&[1, 2], &[8, 0], &[double, short]).unwrap();
    t.commit();
    let elem = |s0: u64, s1: u64, d: f64| ne(&[(2, s0), (2, s1), (4, 0), (8, d.to_bits())]);
    let mut buf = elem(1, 2, 1.5);
    buf.extend(elem(0xfffe, 3, -2.0));
    assert_eq!(t.external32_size(2).unwrap(), 24);
    let mut out = vec![0u8; 24 + 3];
    let mut pos = 3; // after 3 bytes already packed
    t.pack_external32(&buf, 2, &mut out, &mut pos).unwrap();
    assert_eq!(pos, 27);
    let want = hex("3ff8000000000000 0001 0002 c000000000000000 fffe 0003");
    assert_eq!(out[3..].to_vec(), want);
    let mut back = vec![0u8; 32];
    let mut pos = 3;
    t.unpack_external32(&out, &mut pos, &mut back, 2).unwrap();
    assert_eq!((back, pos), (buf, 27));
}

#[test]
fn strided_and_large_buffers_cross_chunks() {
    // A column of a 3x2 int matrix, 30000 matrices: 90000 ints, over a
    // chunk of native bytes.
    let int = Datatype::basic(BasicType::Int);
    let col = Datatype::subarray(&[3, 2], &[3, 1], &[0, 1], Order::C, &int).unwrap();
    col.commit();
    let n = 30_000;
    let vals: Vec<u64> = (0..6 * n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let buf = ne(&vals
        .iter()
        .map(|&v| (4, v & 0xffff_ffff))
        .collect::<Vec<_>>());
    let size = col.external32_size(n).unwrap();
    assert!(size > CHUNK && size == 12 * n);
    let mut out = vec![0u8; size];
    col.pack_external32(&buf, n, &mut out, &mut 0).unwrap();
    let want: Vec<u8> = (0..6 * n)
        .filter(|i| i % 2 == 1)
        .flat_map(|i| (vals[i] as u32).to_be_bytes())
        .collect();
    assert!(out == want, "column data differs");
    let mut back = vec![0u8; buf.len()];
    col.unpack_external32(&out, &mut 0, &mut back, n).unwrap();
    for i in 0..6 * n {
        let got = &back[4 * i..4 * i + 4];
        let expect = if i % 2 == 1 {
            &buf[4 * i..4 * i + 4]
        } else {
            &[0; 4][..]
        };
        assert_eq!(got, expect, "int {i}");
    }
}

#[test]
fn x87_specials_round_trip() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let ld = Datatype::basic(BasicType::LongDouble);
    for (native, want) in [
        (
            long_double(0x7fff, 0),
            "7fff0000 00000000 00000000 00000000",
        ), // inf
        (
            long_double(0xffff, 0x4000),
            "ffff4000 00000000 00000000 00000000",
        ), // NaN
        (vec![0; 16], "00000000 00000000 00000000 00000000"),
    ] {
        let mut out = [0u8; 16];
        ld.pack_external32(&native, 1, &mut out, &mut 0).unwrap();
        assert_eq!(out.to_vec(), hex(want));
        let mut back = [0u8; 16];
        ld.unpack_external32(&out, &mut 0, &mut back, 1).unwrap();
        assert_eq!(back.to_vec(), native);
    }
    // A NaN whose payload is all below the x87's precision stays a NaN.
    let mut back = [0u8; 16];
    let nan = hex("7fff0000 00000000 00000000 00000001");
    ld.unpack_external32(&nan, &mut 0, &mut back, 1).unwrap();
    assert_eq!(back.to_vec(), long_double(0x7fff, 0x8000));
}

#[test]
fn errors_name_the_argument() {
    let int = Datatype::basic(BasicType::Int);
    let v = Datatype::vector(2, 1, 2, &int).unwrap();
    let mut out = [0u8; 8];
    let e = v
        .pack_external32(&[0; 12], 1, &mut out, &mut 0)
        .unwrap_err();
    assert!(e.to_string().contains("not committed"), "{e}");
    v.commit();
    let e = v
        .pack_external32(&[0; 12], 1, &mut out, &mut 4)
        .unwrap_err();
    assert!(e.to_string().contains("`outsize`"), "{e}");
    let e = v.pack_external32(&[0; 8], 1, &mut out, &mut 0).unwrap_err();
    assert!(e.to_string().contains("`inbuf`"), "{e}");
    let e = v
        .unpack_external32(&out[..4], &mut 0, &mut [0; 12], 1)
        .unwrap_err();
    assert!(e.to_string().contains("`insize`"), "{e}");
    // SAFETY: the buffer is large enough; the output length is wrong.
    let e = unsafe { v.pack_external32_raw([0u8; 12].as_ptr(), 1, &mut out[..7]) }.unwrap_err();
    assert!(e.to_string().contains("7 bytes"), "{e}");
    assert!(int.external32_size(usize::MAX / 2).is_err());
}
