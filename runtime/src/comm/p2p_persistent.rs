//! Persistent point-to-point requests (`MPI_Send_init`, `MPI_Recv_init`,
//! `MPI_Start`).

use std::marker::PhantomData;

use super::Comm;
use crate::error::Error;
use crate::request::Request;
use crate::status::{Status, PROC_NULL};

enum PersistentOp {
    Send {
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    },
    Recv {
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    },
}

/// A persistent request (`MPI_Send_init` / `MPI_Recv_init`): started with
/// [`Persistent::start`] and completed with [`Persistent::wait`] as often as
/// needed; the buffer stays borrowed for the request's whole life.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut inb = [0u8; 32];
/// let mut halo = world.recv_init(&mut inb, world.rank(), 0)?;
/// for step in 0..3u8 {
///     assert!(!halo.is_active());
///     halo.start()?;
///     assert!(halo.is_active());
///     world.send(&[step; 32], world.rank(), 0)?;
///     halo.wait()?;
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Persistent<'a> {
    comm: Comm,
    op: PersistentOp,
    active: Option<Request<'static>>,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Persistent<'a> {
    pub(crate) fn send(
        comm: Comm,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Self {
        Persistent {
            comm,
            op: PersistentOp::Send {
                buf,
                len,
                dest,
                tag,
                sync,
            },
            active: None,
            _buf: PhantomData,
        }
    }

    pub(crate) fn recv(comm: Comm, buf: *mut u8, cap: usize, source: i32, tag: i32) -> Self {
        Persistent {
            comm,
            op: PersistentOp::Recv {
                buf,
                cap,
                source,
                tag,
            },
            active: None,
            _buf: PhantomData,
        }
    }

    /// Starts the operation (`MPI_Start`). Starting an active request is an error.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let out = [1u8; 4];
    /// let mut send = world.send_init(&out, world.rank(), 0)?;
    /// send.start()?;
    /// assert!(send.start().is_err()); // still active
    /// world.recv(&mut [0u8; 4], world.rank(), 0)?;
    /// send.wait()?;
    /// send.start()?; // again, same buffer and peer
    /// world.recv(&mut [0u8; 4], world.rank(), 0)?;
    /// send.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn start(&mut self) -> Result<(), Error> {
        if self.active.is_some() {
            return Err(Error::State(
                "persistent request started while still active".into(),
            ));
        }
        // SAFETY: the buffer is borrowed for 'a, and `self` (which holds the
        // active request) cannot outlive 'a; Drop waits for it.
        let r = unsafe {
            match self.op {
                PersistentOp::Send {
                    buf,
                    len,
                    dest,
                    tag,
                    sync,
                } => self.comm.isend_raw(buf, len, dest, tag, sync),
                PersistentOp::Recv {
                    buf,
                    cap,
                    source,
                    tag,
                } => self.comm.irecv_raw(buf, cap, source, tag),
            }
        }?;
        self.active = Some(r);
        Ok(())
    }

    /// Waits for the started operation; an inactive request returns an empty status.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u16; 2];
    /// let mut recv = world.recv_init(&mut buf, world.rank(), 0)?;
    /// assert_eq!(recv.wait()?.source, oxmpi::PROC_NULL); // not started: empty status
    /// recv.start()?;
    /// world.send(&[1u16, 2], world.rank(), 0)?;
    /// assert_eq!(recv.wait()?.count, 4);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn wait(&mut self) -> Result<Status, Error> {
        match self.active.take() {
            Some(r) => r.wait(),
            None => Ok(Status {
                source: PROC_NULL,
                ..Status::empty()
            }),
        }
    }

    /// Tests the started operation.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u8];
    /// let mut recv = world.recv_init(&mut buf, world.rank(), 0)?;
    /// recv.start()?;
    /// world.send(&[1u8], world.rank(), 0)?;
    /// while recv.test()?.is_none() {}
    /// assert!(!recv.is_active());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<Option<Status>, Error> {
        let Some(r) = self.active.as_mut() else {
            return Ok(Some(Status::empty()));
        };
        let out = r.test()?;
        if out.is_some() {
            self.active = None;
        }
        Ok(out)
    }

    /// Whether a started operation has not been completed yet.
    ///
    /// See the example on [`Persistent`].
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }
}
