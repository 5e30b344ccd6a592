//! The "external32" data representation (MPI-4.0 §13.5.2, Table 13.2):
//! `MPI_Pack_external`, `MPI_Unpack_external`, `MPI_Pack_external_size`.
//!
//! external32 is the native packed stream with every basic element
//! converted on its own: big-endian, at the standard's fixed size. Most
//! types keep their size and are only byte-swapped (complex types part by
//! part); `MPI_LONG` / `MPI_UNSIGNED_LONG` are 4 bytes (truncated when
//! packed, widened by their signedness when unpacked) and `MPI_WCHAR` 2;
//! `long double` is IEEE binary128 (converted from / to the x87 80-bit
//! format on x86_64, where out-of-precision bits are truncated); pair
//! types are their two members back to back, without padding.
//!
//! The conversion walks the type signature beside the native packed
//! stream, which [`pack_raw`](Datatype::pack_raw) /
//! [`unpack_raw`](Datatype::unpack_raw) produce from the segment iterator,
//! a bounded chunk at a time.

use super::pack::check_room;
use super::signature::Cursor;
use super::{BasicType, Datatype, ElementKind};
use crate::error::Error;
use std::ops::Range;

/// Native packed bytes converted at a time (whole basic elements).
const CHUNK: usize = 64 * 1024;

impl BasicType {
    /// Bytes one element takes in the external32 representation: the
    /// native size, except `MPI_LONG` / `MPI_UNSIGNED_LONG` (4), `MPI_WCHAR`
    /// (2) and pairs (their members' external32 sizes, no padding).
    ///
    /// ```
    /// use oxmpi::datatype::BasicType;
    /// assert_eq!(BasicType::Long.external32_size(), 4);
    /// assert_eq!(BasicType::LongDouble.external32_size(), 16);
    /// assert_eq!(BasicType::LongInt.external32_size(), 8);
    /// ```
    pub const fn external32_size(self) -> usize {
        match self {
            BasicType::WChar => 2,
            BasicType::Long | BasicType::UnsignedLong => 4,
            _ => match self.pair() {
                Some((a, _, b)) => a.external32_size() + b.external32_size(),
                None => self.size(),
            },
        }
    }
}

/// How one basic element is converted.
enum Codec {
    /// Same size on both sides: each `unit`-byte number is byte-swapped
    /// to / from big-endian (complex types are two numbers).
    Swap(usize),
    /// An integer of `native` bytes stored in `ext` bytes.
    Resize {
        native: usize,
        ext: usize,
        signed: bool,
    },
    /// `long double` (each 16-byte part) to / from IEEE binary128.
    LongDouble,
    /// A pair type: the two members (native packed without padding).
    Pair(BasicType, BasicType),
}

fn codec(t: BasicType) -> Codec {
    use ElementKind as K;
    let kind = t.kind();
    match kind {
        K::LongDouble | K::ComplexLongDouble => Codec::LongDouble,
        K::ComplexF32 => Codec::Swap(4),
        K::ComplexF64 => Codec::Swap(8),
        K::Pair(_) => match t.pair() {
            Some((a, _, b)) => Codec::Pair(a, b),
            None => Codec::Swap(1),
        },
        _ if t.size() != t.external32_size() => Codec::Resize {
            native: t.size(),
            ext: t.external32_size(),
            signed: matches!(kind, K::I8 | K::I16 | K::I32 | K::I64),
        },
        _ => Codec::Swap(t.size()),
    }
}

/// Which way a conversion goes.
#[derive(Clone, Copy)]
enum Dir {
    /// Native packed to external32.
    Encode,
    /// External32 to native packed.
    Decode,
}

impl Dir {
    /// Bytes of one element of `t` in the source and the destination.
    fn sizes(self, t: BasicType) -> (usize, usize) {
        let (n, e) = (t.size(), t.external32_size());
        match self {
            Dir::Encode => (n, e),
            Dir::Decode => (e, n),
        }
    }

    /// Converts the elements of `t` in `src` into `dst` (sized for them).
    fn apply(self, t: BasicType, src: &[u8], dst: &mut [u8]) {
        match codec(t) {
            Codec::Swap(unit) => swap(unit, src, dst),
            Codec::Resize {
                native,
                ext,
                signed,
            } => {
                let (from, to) = match self {
                    Dir::Encode => (native, ext),
                    Dir::Decode => (ext, native),
                };
                for (s, d) in src.chunks_exact(from).zip(dst.chunks_exact_mut(to)) {
                    match self {
                        Dir::Encode => {
                            let v = read_native(s);
                            d.copy_from_slice(&v.to_be_bytes()[8 - to..]);
                        }
                        Dir::Decode => {
                            let mut b = [0u8; 8];
                            b[8 - from..].copy_from_slice(s);
                            let mut v = u64::from_be_bytes(b);
                            if signed && s[0] & 0x80 != 0 {
                                v |= u64::MAX << (8 * from);
                            }
                            write_native(v, d);
                        }
                    }
                }
            }
            Codec::LongDouble => {
                for (s, d) in src.chunks_exact(16).zip(dst.chunks_exact_mut(16)) {
                    let s: &[u8; 16] = s.try_into().unwrap_or(&[0; 16]);
                    d.copy_from_slice(&match self {
                        Dir::Encode => long_double::encode(s),
                        Dir::Decode => long_double::decode(s),
                    });
                }
            }
            Codec::Pair(a, b) => {
                let ((sa, da), (sb, db)) = (self.sizes(a), self.sizes(b));
                let src = src.chunks_exact(sa + sb);
                for (s, d) in src.zip(dst.chunks_exact_mut(da + db)) {
                    self.apply(a, &s[..sa], &mut d[..da]);
                    self.apply(b, &s[sa..], &mut d[da..]);
                }
            }
        }
    }
}

/// Reverses the bytes of each `W`-byte number on little-endian hosts
/// (a copy on big-endian ones): native <-> big-endian, either way.
fn swap_n<const W: usize>(src: &[u8], dst: &mut [u8]) {
    for (s, d) in src.chunks_exact(W).zip(dst.chunks_exact_mut(W)) {
        d.copy_from_slice(s);
        if cfg!(target_endian = "little") {
            d.reverse();
        }
    }
}

fn swap(unit: usize, src: &[u8], dst: &mut [u8]) {
    match unit {
        2 => swap_n::<2>(src, dst),
        4 => swap_n::<4>(src, dst),
        8 => swap_n::<8>(src, dst),
        16 => swap_n::<16>(src, dst),
        _ => dst.copy_from_slice(src),
    }
}

/// A native-endian unsigned integer of 1..=8 bytes.
fn read_native(s: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if cfg!(target_endian = "little") {
        b[..s.len()].copy_from_slice(s);
    } else {
        b[8 - s.len()..].copy_from_slice(s);
    }
    u64::from_ne_bytes(b)
}

/// The low `d.len()` bytes of `v`, native-endian.
fn write_native(v: u64, d: &mut [u8]) {
    let b = v.to_ne_bytes();
    let n = d.len();
    if cfg!(target_endian = "little") {
        d.copy_from_slice(&b[..n]);
    } else {
        d.copy_from_slice(&b[8 - n..]);
    }
}

/// `long double` <-> big-endian IEEE binary128.
mod long_double {
    /// x86_64: the x87 80-bit format (64-bit significand with an explicit
    /// integer bit, then sign and 15-bit exponent, little-endian, 6 bytes
    /// of padding). binary128 has the same sign and exponent fields and an
    /// implicit integer bit: the 63 fraction bits move up to the top of its
    /// 112.
    #[cfg(target_arch = "x86_64")]
    pub(super) fn encode(s: &[u8; 16]) -> [u8; 16] {
        let mut m = [0u8; 8];
        m.copy_from_slice(&s[..8]);
        let m = u64::from_le_bytes(m) & !(1 << 63);
        let se = u16::from_le_bytes([s[8], s[9]]);
        ((u128::from(se) << 112) | (u128::from(m) << 49)).to_be_bytes()
    }

    /// The inverse of [`encode`]: fraction bits beyond the x87's 63 are
    /// truncated (a NaN whose payload is all in them stays a quiet NaN).
    #[cfg(target_arch = "x86_64")]
    pub(super) fn decode(s: &[u8; 16]) -> [u8; 16] {
        let q = u128::from_be_bytes(*s);
        let se = (q >> 112) as u16;
        let exp = se & 0x7fff;
        let mut frac = (q >> 49) as u64 & !(1 << 63);
        if exp == 0x7fff && frac == 0 && q & ((1 << 112) - 1) != 0 {
            frac = 1 << 62;
        }
        let m = frac | (u64::from(exp != 0) << 63);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&m.to_le_bytes());
        out[8..10].copy_from_slice(&se.to_le_bytes());
        out
    }

    /// Other targets (aarch64): `long double` is binary128 already.
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn encode(s: &[u8; 16]) -> [u8; 16] {
        u128::from_ne_bytes(*s).to_be_bytes()
    }

    /// Other targets: a byte swap, as [`encode`].
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn decode(s: &[u8; 16]) -> [u8; 16] {
        u128::from_be_bytes(*s).to_ne_bytes()
    }
}

/// A stretch of whole basic elements: where it starts in the signature,
/// and its bytes in the native packed and the external32 streams.
struct Chunk<'a> {
    runs: Cursor<'a>,
    native: Range<usize>,
    ext: Range<usize>,
}

/// Converts the elements `runs` starts at, from `src` to `dst`, until
/// `src` is used up.
fn convert(mut runs: Cursor<'_>, dir: Dir, mut src: &[u8], mut dst: &mut [u8]) {
    while let Some((t, left)) = runs.peek() {
        let (s, d) = dir.sizes(t);
        let k = left.min(src.len() / s);
        if k == 0 {
            break;
        }
        let (a, rest) = src.split_at(k * s);
        let (b, rest_dst) = std::mem::take(&mut dst).split_at_mut(k * d);
        dir.apply(t, a, b);
        (src, dst) = (rest, rest_dst);
        runs.consume(k);
    }
}

impl Datatype {
    /// `MPI_Pack_external_size`: bytes that `count` elements occupy in the
    /// external32 representation.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let long = Datatype::basic(BasicType::Long);
    /// assert_eq!(long.external32_size(3)?, 12);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn external32_size(&self, count: usize) -> Result<usize, Error> {
        self.pack_size(count)?; // external32 is never larger than native
        let per = self.signature().sum_by(|t| t.external32_size());
        Ok(per * count)
    }

    /// Splits the data of `count` elements into [`Chunk`]s for `f`.
    fn external32_chunks(
        &self,
        count: usize,
        mut f: impl FnMut(Chunk<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.committed_flat("datatype")?;
        self.pack_size(count)?;
        let mut cur = Cursor::new(self.signature(), count);
        let (mut native, mut ext) = (0, 0);
        loop {
            let runs = cur.clone();
            let (mut nb, mut eb) = (0, 0);
            while let Some((t, left)) = cur.peek() {
                let k = left.min((CHUNK - nb) / t.size());
                if k == 0 {
                    break;
                }
                cur.consume(k);
                nb += k * t.size();
                eb += k * t.external32_size();
            }
            if nb == 0 {
                return Ok(());
            }
            f(Chunk {
                runs,
                native: native..native + nb,
                ext: ext..ext + eb,
            })?;
            native += nb;
            ext += eb;
        }
    }

    /// Checks that a packed buffer of `len` bytes holds exactly `count`
    /// elements in external32.
    fn check_external32_len(
        &self,
        arg: &'static str,
        len: usize,
        count: usize,
    ) -> Result<(), Error> {
        let n = self.external32_size(count)?;
        if len == n {
            return Ok(());
        }
        Err(Error::InvalidArgument {
            arg,
            reason: format!(
                "has {len} bytes, but {count} elements of {self:?} take {n} bytes in external32"
            ),
        })
    }

    /// `MPI_Pack_external` with `"external32"`: appends `count` elements
    /// read from `inbuf` (the buffer address is its start) to `outbuf` at
    /// `*position`, and advances `*position`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let (mut out, mut pos) = ([0u8; 4], 0);
    /// int.pack_external32(&258i32.to_ne_bytes(), 1, &mut out, &mut pos)?;
    /// assert_eq!((out, pos), ([0, 0, 1, 2], 4));
    /// let mut back = [0u8; 4];
    /// int.unpack_external32(&out, &mut 0, &mut back, 1)?;
    /// assert_eq!(i32::from_ne_bytes(back), 258);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn pack_external32(
        &self,
        inbuf: &[u8],
        count: usize,
        outbuf: &mut [u8],
        position: &mut usize,
    ) -> Result<(), Error> {
        self.check_buffer("inbuf", inbuf.len(), count)?;
        let n = self.external32_size(count)?;
        check_room(outbuf.len(), *position, n, "outsize", || {
            format!("packing {count} elements of {self:?} in external32")
        })?;
        // SAFETY: check_buffer proved every byte of the elements is in `inbuf`.
        unsafe {
            self.pack_external32_raw(inbuf.as_ptr(), count, &mut outbuf[*position..*position + n])?
        };
        *position += n;
        Ok(())
    }

    /// `MPI_Unpack_external` with `"external32"`: reads `count` elements
    /// from `inbuf` at `*position` into `outbuf` (the buffer address is its
    /// start), and advances `*position`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let packed = [0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe]; // 258 and -2, big-endian
    /// let (mut out, mut pos) = ([0u8; 8], 0);
    /// int.unpack_external32(&packed, &mut pos, &mut out, 2)?;
    /// assert_eq!(pos, 8);
    /// let first = i32::from_ne_bytes(out[..4].try_into().unwrap());
    /// let second = i32::from_ne_bytes(out[4..].try_into().unwrap());
    /// assert_eq!((first, second), (258, -2));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn unpack_external32(
        &self,
        inbuf: &[u8],
        position: &mut usize,
        outbuf: &mut [u8],
        count: usize,
    ) -> Result<(), Error> {
        self.check_buffer("outbuf", outbuf.len(), count)?;
        let n = self.external32_size(count)?;
        check_room(inbuf.len(), *position, n, "insize", || {
            format!("unpacking {count} elements of {self:?} from external32")
        })?;
        // SAFETY: check_buffer proved every byte of the elements is in
        // `outbuf`, which cannot overlap `inbuf`.
        unsafe {
            self.unpack_external32_raw(outbuf.as_mut_ptr(), count, &inbuf[*position..*position + n])
        }?;
        *position += n;
        Ok(())
    }

    /// Converts `count` elements at `inbuf` to external32 in `out`, which
    /// must be exactly [`external32_size`](Self::external32_size) long.
    ///
    /// # Safety
    /// As [`pack_raw`](Self::pack_raw): every segment of the elements is
    /// readable at `inbuf + offset` and does not overlap `out`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let double = Datatype::basic(BasicType::Double);
    /// let x = [1.5f64, -2.0];
    /// let mut out = vec![0u8; double.external32_size(2)?];
    /// // SAFETY: `x` holds the two doubles and does not overlap `out`.
    /// unsafe { double.pack_external32_raw(x.as_ptr().cast(), 2, &mut out) }?;
    /// assert_eq!(&out[..8], &1.5f64.to_be_bytes());
    /// assert_eq!(&out[8..], &(-2.0f64).to_be_bytes());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn pack_external32_raw(
        &self,
        inbuf: *const u8,
        count: usize,
        out: &mut [u8],
    ) -> Result<(), Error> {
        self.check_external32_len("outbuf", out.len(), count)?;
        let mut tmp = vec![0u8; CHUNK.min(self.pack_size(count)?)];
        self.external32_chunks(count, |c| {
            let native = &mut tmp[..c.native.len()];
            // SAFETY: the caller's contract.
            unsafe { self.pack_raw(inbuf, count, c.native.start, native)? };
            convert(c.runs, Dir::Encode, native, &mut out[c.ext]);
            Ok(())
        })
    }

    /// Converts `input`, `count` elements in external32 (exactly
    /// [`external32_size`](Self::external32_size) bytes), into the buffer at
    /// `outbuf`.
    ///
    /// # Safety
    /// As [`unpack_raw`](Self::unpack_raw): every segment of the elements
    /// is writable at `outbuf + offset` and does not overlap `input`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let packed = 7i32.to_be_bytes();
    /// let mut x = 0i32;
    /// // SAFETY: `x` has room for one int and does not overlap `packed`.
    /// unsafe { int.unpack_external32_raw((&mut x as *mut i32).cast(), 1, &packed) }?;
    /// assert_eq!(x, 7);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn unpack_external32_raw(
        &self,
        outbuf: *mut u8,
        count: usize,
        input: &[u8],
    ) -> Result<(), Error> {
        self.check_external32_len("inbuf", input.len(), count)?;
        let mut tmp = vec![0u8; CHUNK.min(self.pack_size(count)?)];
        self.external32_chunks(count, |c| {
            let native = &mut tmp[..c.native.len()];
            convert(c.runs, Dir::Decode, &input[c.ext], native);
            // SAFETY: the caller's contract.
            unsafe { self.unpack_raw(outbuf, count, c.native.start, native) }
        })
    }
}

#[cfg(test)]
mod tests;
