//! The temporaries of a collective whose buffers are not contiguous.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::Placed;
use crate::error::Error;
use crate::status::Status;

/// How a collective uses a buffer: read (packed before it starts), written
/// (unpacked after it completes), or both (in-place calls).
///
/// See the example on [`CollStage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Data the operation reads.
    In,
    /// Data the operation writes.
    Out,
    /// Both.
    InOut,
}

/// The temporaries of one collective call: packed copies the runtime
/// moves, where the data to send comes from before the operation starts
/// ([`pack`](Self::pack)), and where received data goes once it completes
/// ([`finish`](Self::finish)).
///
/// ```
/// use oxmpi::datatype::stage::{CollStage, Dir, Placed};
/// use oxmpi::datatype::{BasicType, Datatype};
/// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Byte))?;
/// v.commit();
/// let src = *b"a-b";
/// let mut dst = *b"...";
/// let mut stage = CollStage::default();
/// let from = stage.stage(Placed::new(&v, src.as_ptr(), 1)?, Dir::In);
/// let to = stage.stage(Placed::new(&v, dst.as_mut_ptr(), 1)?, Dir::Out);
/// // SAFETY: both buffers hold their element and outlive the stage.
/// unsafe {
///     stage.pack()?; // `from` now holds "ab"
///     std::ptr::copy_nonoverlapping(from, to, 2); // what the collective would do
///     stage.finish()?; // `to` unpacked into `dst`
/// }
/// assert_eq!(&dst, b"a.b");
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Default)]
pub struct CollStage {
    /// Packed temporaries (their heap blocks never move).
    bufs: Vec<Vec<u8>>,
    /// Before the start: `placed` is packed into `bufs[i]` from `offset`,
    /// as `(placed, i, offset)`.
    packs: Vec<(Placed, usize, usize)>,
    /// After completion: `placed.len` bytes of `bufs[i]` from `offset` go
    /// to `placed`, as `(placed, i, offset)`.
    unpacks: Vec<(Placed, usize, usize)>,
    /// A receive's stage: only the bytes the message brought are unpacked
    /// (the status's count), the rest of the buffer keeps its contents.
    received_only: bool,
    /// Set by the engine when the message went straight to the device
    /// buffer (CUDA IPC): nothing to unpack then.
    delivered: Option<Arc<AtomicBool>>,
}

// SAFETY: the addresses are the operation's buffers, which it owns until
// it completes; MPI lets any thread complete it.
unsafe impl Send for CollStage {}

impl CollStage {
    /// Whether the collective needed no temporaries.
    ///
    /// ```
    /// use oxmpi::datatype::stage::{CollStage, Dir, Placed};
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let buf = [1.0f64; 4];
    /// let mut stage = CollStage::default();
    /// let d = Datatype::basic(BasicType::Double);
    /// let p = stage.stage(Placed::new(&d, buf.as_ptr().cast(), 4)?, Dir::In);
    /// assert_eq!(p.cast_const(), buf.as_ptr().cast()); // contiguous: in place
    /// assert!(stage.is_empty());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// Where the collective reads or writes `p`: the buffer itself (from
    /// its true lower bound) when the type is contiguous, else a new
    /// temporary, packed before the start if `dir` reads and unpacked
    /// after completion if `dir` writes.
    ///
    /// See the example on [`CollStage`].
    pub fn stage(&mut self, p: Placed, dir: Dir) -> *mut u8 {
        let at = p.buf as *mut u8;
        if p.len == 0 {
            return at;
        }
        if p.dt.is_contiguous() {
            return at.wrapping_offset(p.dt.true_lb());
        }
        let (i, ptr) = self.temp(p.len);
        self.place(p, i, 0, dir);
        ptr
    }

    /// Like [`stage`](Self::stage), but device memory is always staged
    /// through a host temporary, contiguous or not: for paths that hand
    /// the buffer to the CPU or a transport (point-to-point). A receive's
    /// stage (`Dir::Out`) unpacks only the bytes that arrived.
    pub fn stage_on_host(&mut self, p: Placed, dir: Dir) -> *mut u8 {
        if p.len == 0 || !super::device::on_device(&p) {
            return self.stage(p, dir);
        }
        self.received_only |= dir == Dir::Out;
        let (i, ptr) = self.temp(p.len);
        self.place(p, i, 0, dir);
        ptr
    }

    /// A new zeroed temporary of `len` bytes: its index (for
    /// [`place`](Self::place)) and address.
    ///
    /// ```
    /// use oxmpi::datatype::stage::{CollStage, Dir, Placed};
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let b = Datatype::basic(BasicType::Byte);
    /// let (x, y) = (*b"xy", *b"z");
    /// let mut stage = CollStage::default();
    /// // Two buffers packed one after the other into one temporary.
    /// let (i, tmp) = stage.temp(3);
    /// stage.place(Placed::new(&b, x.as_ptr(), 2)?, i, 0, Dir::In);
    /// stage.place(Placed::new(&b, y.as_ptr(), 1)?, i, 2, Dir::In);
    /// // SAFETY: `x` and `y` hold their bytes.
    /// unsafe { stage.pack() }?;
    /// // SAFETY: the temporary has 3 bytes and lives in `stage`.
    /// assert_eq!(unsafe { std::slice::from_raw_parts(tmp, 3) }, b"xyz");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn temp(&mut self, len: usize) -> (usize, *mut u8) {
        let mut tmp = vec![0u8; len];
        let ptr = tmp.as_mut_ptr();
        self.bufs.push(tmp);
        (self.bufs.len() - 1, ptr)
    }

    /// Records that `p` is packed into (`dir` reads) and unpacked from
    /// (`dir` writes) temporary `i` at byte `offset`. Out-of-range places
    /// are reported by [`pack`](Self::pack) / [`finish`](Self::finish).
    ///
    /// See the example on [`CollStage::temp`].
    pub fn place(&mut self, p: Placed, i: usize, offset: usize, dir: Dir) {
        if dir != Dir::Out {
            self.packs.push((p.clone(), i, offset));
        }
        if dir != Dir::In {
            self.unpacks.push((p, i, offset));
        }
    }

    /// The bytes of temporary `i` that `p` occupies from `offset`.
    fn range(
        bufs: &[Vec<u8>],
        p: &Placed,
        i: usize,
        offset: usize,
    ) -> Result<(usize, usize), Error> {
        let len = bufs.get(i).map_or(0, Vec::len);
        match offset.checked_add(p.len) {
            Some(end) if end <= len => Ok((offset, end)),
            _ => Err(Error::InvalidArgument {
                arg: "offset",
                reason: format!(
                    "{} packed bytes at offset {offset} do not fit temporary {i} ({len} bytes)",
                    p.len
                ),
            }),
        }
    }

    /// Packs what the operation will read into the temporaries (before
    /// each start).
    ///
    /// # Safety
    /// The program's buffers hold their elements.
    ///
    /// See the example on [`CollStage`].
    pub unsafe fn pack(&mut self) -> Result<(), Error> {
        for (p, i, offset) in &self.packs {
            let (a, b) = Self::range(&self.bufs, p, *i, *offset)?;
            // SAFETY: the caller's contract; the temporary is ours.
            unsafe { p.pack_into(&mut self.bufs[*i][a..b]) }?;
        }
        Ok(())
    }

    /// Unpacks what the completed operation received.
    ///
    /// # Safety
    /// The program's buffers have room for their elements.
    ///
    /// See the example on [`CollStage`].
    pub unsafe fn finish(&self) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.finish_bytes(usize::MAX) }
    }

    /// [`finish`](Self::finish), unpacking at most `bytes` of each place.
    unsafe fn finish_bytes(&self, bytes: usize) -> Result<(), Error> {
        for (p, i, offset) in &self.unpacks {
            let (a, b) = Self::range(&self.bufs, p, *i, *offset)?;
            // SAFETY: the caller's contract.
            unsafe { p.unpack(&self.bufs[*i][a..b], p.len.min(bytes)) }?;
        }
        Ok(())
    }

    /// The operation completed with `r`: unpacks if it succeeded, and
    /// returns its outcome (or the unpacking error).
    ///
    /// # Safety
    /// As [`finish`](Self::finish).
    ///
    /// ```
    /// use oxmpi::datatype::stage::CollStage;
    /// use oxmpi::{Error, Status};
    /// let stage = CollStage::default();
    /// // SAFETY: no buffers staged.
    /// assert_eq!(unsafe { stage.complete(Ok(Status::empty())) }?, Status::empty());
    /// let failed = Err(Error::State("peer died".into()));
    /// // SAFETY: as above; a failed operation is not unpacked.
    /// assert!(unsafe { stage.complete(failed) }.is_err());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn complete(&self, r: Result<Status, Error>) -> Result<Status, Error> {
        if self
            .delivered
            .as_ref()
            .is_some_and(|d| d.load(Ordering::Acquire))
        {
            return r;
        }
        match r {
            // SAFETY: the caller's contract.
            Ok(s) if self.received_only => unsafe { self.finish_bytes(s.count) }.map(|()| s),
            // SAFETY: the caller's contract.
            Ok(s) => unsafe { self.finish() }.map(|()| s),
            Err(e) => Err(e),
        }
    }

    /// A flag the engine sets when it delivered the message to the device
    /// buffer itself; the stage then unpacks nothing.
    pub fn delivered_flag(&mut self) -> Arc<AtomicBool> {
        self.delivered
            .get_or_insert_with(|| Arc::new(AtomicBool::new(false)))
            .clone()
    }

    /// The temporaries, for a caller that must keep them alive past the
    /// stage (an operation freed while it may still run).
    ///
    /// ```
    /// use oxmpi::datatype::stage::CollStage;
    /// let mut stage = CollStage::default();
    /// stage.temp(8);
    /// assert_eq!(stage.into_buffers()[0].len(), 8);
    /// ```
    pub fn into_buffers(self) -> Vec<Vec<u8>> {
        self.bufs
    }
}
