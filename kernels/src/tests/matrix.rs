//! Every op x every type: applicable pairs against the reference, at
//! several lengths (across the unaligned path's block size) and alignments,
//! in place and three-operand; non-applicable pairs refused untouched.

use super::reference::{apply, decode, same};
use super::Rng;
use crate::{applicable, reduce, reduce3, ElemType, KernelError, Op};

/// A byte buffer placed at a chosen offset from an 8-aligned address.
struct Placed {
    store: Vec<u64>,
    off: usize,
    len: usize,
}

impl Placed {
    fn new(bytes: &[u8], off: usize) -> Self {
        let mut p = Placed {
            store: vec![0; (bytes.len() + off) / 8 + 1],
            off,
            len: bytes.len(),
        };
        p.bytes_mut().copy_from_slice(bytes);
        p
    }
    fn bytes(&self) -> &[u8] {
        // SAFETY: within the u64 storage, which has at least off + len bytes.
        unsafe {
            std::slice::from_raw_parts(self.store.as_ptr().cast::<u8>().add(self.off), self.len)
        }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.store.as_mut_ptr().cast::<u8>().add(self.off),
                self.len,
            )
        }
    }
}

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// Float bit patterns that exercise the interesting cases, or random bits.
fn f32_bits(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => pick(
            rng,
            &[
                f32::NAN.to_bits(),
                (-f32::NAN).to_bits(),
                0x7f80_0001, // signalling NaN
                0.0f32.to_bits(),
                (-0.0f32).to_bits(),
                f32::INFINITY.to_bits(),
                f32::NEG_INFINITY.to_bits(),
                f32::MAX.to_bits(),
                f32::MIN_POSITIVE.to_bits(),
                1, // smallest subnormal
            ],
        ),
        1 => (rng.below(9) as f32 - 4.0).to_bits(),
        _ => rng.next() as u32,
    }
}

fn f64_bits(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => pick(
            rng,
            &[
                f64::NAN.to_bits(),
                0x7ff0_0000_0000_0001,
                0.0f64.to_bits(),
                (-0.0f64).to_bits(),
                f64::INFINITY.to_bits(),
                f64::NEG_INFINITY.to_bits(),
                f64::MAX.to_bits(),
                1,
            ],
        ),
        1 => (rng.below(9) as f64 - 4.0).to_bits(),
        _ => rng.next(),
    }
}

fn half_bits(rng: &mut Rng, specials: &[u16]) -> u16 {
    match rng.below(3) {
        0 => pick(rng, specials),
        _ => rng.next() as u16,
    }
}

/// One random element of `ty`, biased towards ties, zeros and specials.
fn element(ty: ElemType, rng: &mut Rng) -> Vec<u8> {
    use ElemType::*;
    let long = std::mem::size_of::<std::os::raw::c_long>();
    let idx = rng.below(4) as i32;
    let mut e = vec![0u8; ty.size()];
    match ty {
        F32 => e.copy_from_slice(&f32_bits(rng).to_ne_bytes()),
        F64 => e.copy_from_slice(&f64_bits(rng).to_ne_bytes()),
        F16 => e.copy_from_slice(
            &half_bits(
                rng,
                &[
                    0, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0x0001, 0x7bff,
                ],
            )
            .to_ne_bytes(),
        ),
        Bf16 => e.copy_from_slice(
            &half_bits(
                rng,
                &[
                    0, 0x8000, 0x3f80, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x7f7f,
                ],
            )
            .to_ne_bytes(),
        ),
        ComplexF32 => {
            e[..4].copy_from_slice(&f32_bits(rng).to_ne_bytes());
            e[4..].copy_from_slice(&f32_bits(rng).to_ne_bytes());
        }
        ComplexF64 => {
            e[..8].copy_from_slice(&f64_bits(rng).to_ne_bytes());
            e[8..].copy_from_slice(&f64_bits(rng).to_ne_bytes());
        }
        FloatInt | DoubleInt | LongInt | TwoInt | ShortInt => {
            e.iter_mut().for_each(|b| *b = rng.next() as u8); // padding too
            let small = rng.below(3) as i64 - 1;
            match ty {
                FloatInt => e[..4].copy_from_slice(&f32_bits(rng).to_ne_bytes()),
                DoubleInt => e[..8].copy_from_slice(&f64_bits(rng).to_ne_bytes()),
                LongInt => e[..long].copy_from_slice(&small.to_ne_bytes()[..long]),
                TwoInt => e[..4].copy_from_slice(&(small as i32).to_ne_bytes()),
                _ => e[..2].copy_from_slice(&(small as i16).to_ne_bytes()),
            }
            let at = ty.size()
                - 4
                - if matches!(ty, DoubleInt | LongInt) {
                    long - 4
                } else {
                    0
                };
            e[at..at + 4].copy_from_slice(&idx.to_ne_bytes());
        }
        _ => match rng.below(4) {
            0 => {} // zero
            1 => e.iter_mut().for_each(|b| *b = 0xff),
            _ => e.iter_mut().for_each(|b| *b = rng.next() as u8),
        },
    }
    e
}

fn random_buffer(ty: ElemType, n: usize, rng: &mut Rng) -> Vec<u8> {
    (0..n).flat_map(|_| element(ty, rng)).collect()
}

fn check(op: Op, ty: ElemType, got: &[u8], a: &[u8], b: &[u8], what: &str) {
    let s = ty.size();
    for k in 0..got.len() / s {
        let r = k * s..(k + 1) * s;
        let (ea, eb) = (decode(ty, &a[r.clone()]), decode(ty, &b[r.clone()]));
        let want = apply(op, ty, ea, eb);
        let have = decode(ty, &got[r]);
        assert!(
            same(have, want),
            "{what}: {} on {} element {k}: {ea:?} op {eb:?} gave {have:?}, want {want:?}",
            op.mpi_name(),
            ty.mpi_name()
        );
    }
}

#[test]
fn every_op_on_every_type_matches_the_reference() {
    let mut rng = Rng::new(42);
    let mut pairs = 0;
    for op in Op::ALL {
        for ty in ElemType::ALL {
            if applicable(op, ty).is_err() {
                continue;
            }
            pairs += 1;
            for n in [0, 1, 3, 17, 300] {
                let a = random_buffer(ty, n, &mut rng);
                let b = random_buffer(ty, n, &mut rng);
                for (oa, ob, oo) in [(0, 0, 0), (1, 0, 3), (0, 5, 0), (3, 3, 7)] {
                    let input = Placed::new(&a, oa);
                    let mut inout = Placed::new(&b, ob);
                    reduce(op, ty, inout.bytes_mut(), input.bytes()).unwrap();
                    check(
                        op,
                        ty,
                        inout.bytes(),
                        &a,
                        &b,
                        &format!("reduce n={n} offsets=({oa},{ob})"),
                    );

                    let pb = Placed::new(&b, ob);
                    let mut out = Placed::new(&vec![0xa5; a.len()], oo);
                    reduce3(op, ty, out.bytes_mut(), input.bytes(), pb.bytes()).unwrap();
                    check(
                        op,
                        ty,
                        out.bytes(),
                        &a,
                        &b,
                        &format!("reduce3 n={n} offsets=({oo},{oa},{ob})"),
                    );
                    assert_eq!(input.bytes(), &a[..], "reduce3 modified its input");
                    assert_eq!(pb.bytes(), &b[..], "reduce3 modified its input");
                }
            }
        }
    }
    // The applicability table's size: SUM/PROD 14 types, MIN/MAX 12, logical 9,
    // bitwise 9, MINLOC/MAXLOC 5, REPLACE/NO_OP all 21.
    assert_eq!(pairs, 14 * 2 + 12 * 2 + 9 * 3 + 9 * 3 + 5 * 2 + 21 * 2);
}

#[test]
fn non_applicable_pairs_are_refused_untouched() {
    let mut refused = 0;
    for op in Op::ALL {
        for ty in ElemType::ALL {
            if applicable(op, ty).is_ok() {
                continue;
            }
            refused += 1;
            let mut buf = vec![7u8; ty.size() * 2];
            let err = reduce(op, ty, &mut buf, &vec![1u8; ty.size() * 2]).unwrap_err();
            assert_eq!(err, KernelError::NotApplicable { op, ty });
            assert_eq!(
                err.to_string(),
                format!("{} is not defined for {}", op.mpi_name(), ty.mpi_name())
            );
            let err3 = reduce3(op, ty, &mut buf, &[0; 0], &[0; 0]).unwrap_err();
            assert_eq!(err3, err);
            assert!(buf.iter().all(|&b| b == 7));
        }
    }
    assert_eq!(refused, 14 * 21 - 158);
}
