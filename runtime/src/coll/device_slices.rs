//! Collectives on cudarc device slices (the Rust API's device buffers).
//! Each synchronises the slices' streams, then runs the same planned
//! collective as raw memory: on device memory its schedule runs on the
//! device (see `on_device.rs`), reductions of built-in operations as
//! device kernels.

use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::Elems;
use crate::buffer::Scalar;
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::Op;

fn elems<T: Scalar>(count: usize) -> Elems {
    Elems {
        count,
        size: std::mem::size_of::<T>(),
        ty: T::ELEM,
    }
}

/// `send.len() == recv.len()`, or an error naming both.
fn same_len(send: usize, recv: usize) -> Result<(), Error> {
    if send == recv {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        arg: "recvbuf",
        reason: format!("the send slice has {send} elements, the receive slice {recv}"),
    })
}

impl Comm {
    /// `MPI_Bcast` of a device slice from `root`.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let stream = CudaContext::new(0).unwrap().default_stream();
    /// let mut buf = stream.clone_htod(&[world.rank() as i32; 4]).unwrap();
    /// world.bcast_device(&mut buf, 0)?;
    /// assert_eq!(stream.clone_dtoh(&buf).unwrap(), [0; 4]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn bcast_device<T: Scalar, S: DevicePtrMut<T>>(
        &self,
        buf: &mut S,
        root: i32,
    ) -> Result<(), Error> {
        crate::mem::cuda::settle(buf)?;
        let stream = buf.stream().clone();
        let len = buf.num_bytes();
        let (ptr, _write) = buf.device_ptr_mut(&stream);
        // SAFETY: the slice's bytes, borrowed for the whole (blocking) call.
        unsafe { self.plan_bcast(ptr as *mut u8, len, root) }?.run()
    }

    /// `MPI_Allreduce` of device slices (built-in operations run as device
    /// kernels; user operations through the host).
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let stream = CudaContext::new(0).unwrap().default_stream();
    /// let mine = stream.clone_htod(&[1.0f64, 2.0]).unwrap();
    /// let mut sum = stream.alloc_zeros::<f64>(2).unwrap();
    /// world.allreduce_device(&mine, &mut sum, &Op::SUM)?;
    /// let n = world.size() as f64;
    /// assert_eq!(stream.clone_dtoh(&sum).unwrap(), [n, 2.0 * n]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allreduce_device<T: Scalar, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
        op: &Op,
    ) -> Result<(), Error> {
        same_len(send.len(), recv.len())?;
        crate::mem::cuda::settle(send)?;
        crate::mem::cuda::settle(recv)?;
        let stream = recv.stream().clone();
        let e = elems::<T>(recv.len());
        let (sp, _read) = send.device_ptr(&stream);
        let (rp, _write) = recv.device_ptr_mut(&stream);
        // SAFETY: both slices hold `e.count` elements for the whole call.
        unsafe { self.plan_allreduce(Some(sp as *const u8), rp as *mut u8, e, op) }?.run()
    }

    /// `MPI_Reduce` of device slices to `root` (`recv` matters at the root).
    pub fn reduce_device<T: Scalar, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
        op: &Op,
        root: i32,
    ) -> Result<(), Error> {
        same_len(send.len(), recv.len())?;
        crate::mem::cuda::settle(send)?;
        crate::mem::cuda::settle(recv)?;
        let stream = recv.stream().clone();
        let e = elems::<T>(send.len());
        let (sp, _read) = send.device_ptr(&stream);
        let (rp, _write) = recv.device_ptr_mut(&stream);
        // SAFETY: as for `allreduce_device`.
        unsafe { self.plan_reduce(Some(sp as *const u8), rp as *mut u8, e, op, root) }?.run()
    }

    /// `MPI_Allgather` of device slices: `recv` holds `size` blocks of
    /// `send.len()` elements, in rank order.
    pub fn allgather_device<T: Scalar, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<(), Error> {
        same_len(send.len() * self.size() as usize, recv.len())?;
        crate::mem::cuda::settle(send)?;
        crate::mem::cuda::settle(recv)?;
        let stream = recv.stream().clone();
        let block = send.num_bytes();
        let (sp, _read) = send.device_ptr(&stream);
        let (rp, _write) = recv.device_ptr_mut(&stream);
        // SAFETY: `send` holds one block, `recv` `size` blocks, for the call.
        unsafe { self.plan_allgather(Some(sp as *const u8), block, rp as *mut u8) }?.run()
    }
}
