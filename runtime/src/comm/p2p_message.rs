//! Messages removed from matching by a matched probe (`MPI_Message`),
//! received later with `MPI_Mrecv` / `MPI_Imrecv`.

use super::Comm;
use crate::datatype::stage::Plan;
use crate::error::Error;
use crate::p2p::engine::MessageHandle;
use crate::request::Request;
use crate::status::Status;

/// A message removed from matching by a matched probe (`MPI_Message`).
///
/// ```no_run
/// use oxmpi::{Message, Status};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Hand a probed message to whoever knows its type.
/// fn receive_floats(msg: Message, st: Status) -> Result<Vec<f64>, oxmpi::Error> {
///     let mut v = vec![0.0; st.count_of(8).unwrap_or(0)];
///     msg.recv(&mut v)?;
///     Ok(v)
/// }
/// world.send(&[1.0f64, 2.0], world.rank(), 0)?;
/// let (msg, st) = world.mprobe(world.rank(), 0)?;
/// assert_eq!(receive_floats(msg, st)?, [1.0, 2.0]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Message {
    comm: Comm,
    handle: Option<MessageHandle>,
}

impl Message {
    pub(crate) fn new(comm: Comm, handle: MessageHandle) -> Message {
        Message {
            comm,
            handle: Some(handle),
        }
    }
    pub(crate) fn no_proc(comm: Comm) -> Message {
        Message { comm, handle: None }
    }

    /// Receives this message (`MPI_Mrecv`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(b"abc", world.rank(), 0)?;
    /// let (msg, st) = world.mprobe(oxmpi::ANY_SOURCE, 0)?;
    /// let mut buf = vec![0u8; st.count];
    /// let got = msg.recv(&mut buf)?;
    /// assert_eq!((buf.as_slice(), got.count), (&b"abc"[..], 3));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn recv<T: crate::buffer::Scalar>(self, buf: &mut [T]) -> Result<Status, Error> {
        let (ptr, len) = crate::buffer::bytes_of_mut(buf);
        // SAFETY: the request is waited on before `buf`'s borrow ends.
        unsafe { self.irecv_raw(ptr, len) }?.wait()
    }

    /// Starts receiving this message into raw bytes (`MPI_Imrecv`).
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[1u32, 2], world.rank(), 0)?;
    /// let (msg, st) = world.mprobe(world.rank(), 0)?;
    /// let mut buf = vec![0u8; st.count];
    /// // SAFETY: `buf` outlives the request, which is waited on below.
    /// let req = unsafe { msg.irecv_raw(buf.as_mut_ptr(), buf.len()) }?;
    /// assert_eq!(req.wait()?.count, 8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_raw(self, buf: *mut u8, cap: usize) -> Result<Request<'static>, Error> {
        match self.handle {
            Some(h) if cap > 0 && crate::mem::cuda::is_device(buf) => {
                let dst = super::p2p_device::bytes_at(buf, cap)?;
                // SAFETY: forwarded from the caller's contract.
                unsafe { self.comm.mrecv_staged(h, dst) }
            }
            // SAFETY: forwarded from the caller's contract.
            Some(h) => Ok(unsafe { self.comm.start_mrecv(h, buf, cap) }),
            None => Ok(Request::finished(self.comm.rt().clone(), Status::empty())),
        }
    }

    /// Starts receiving this message into the elements `plan` describes
    /// (`MPI_Imrecv` with a datatype; a non-contiguous type is unpacked in
    /// flight).
    ///
    /// # Safety
    /// The buffer has room for the elements and stays writable until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// world.send(&[1i32, 2], world.rank(), 0)?;
    /// let (msg, _) = world.mprobe(world.rank(), 0)?;
    /// let mut buf = [0i32; 3];
    /// // SAFETY: `buf` has room for the element and outlives the request.
    /// let req = unsafe { msg.irecv_plan(&Plan::new(&every_other, buf.as_mut_ptr().cast(), 1)?) }?;
    /// req.wait()?;
    /// assert_eq!(buf, [1, 0, 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_plan(self, plan: &Plan) -> Result<Request<'static>, Error> {
        let dst = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => return unsafe { self.irecv_raw(ptr, len) },
            Plan::Typed(dst) => dst,
        };
        match self.handle {
            // SAFETY: forwarded from the caller's contract.
            Some(h) => unsafe { self.comm.start_mrecv_typed(h, dst) },
            None => Ok(Request::finished(self.comm.rt().clone(), Status::empty())),
        }
    }
}
