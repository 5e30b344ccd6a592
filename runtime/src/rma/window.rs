//! The safe, typed face of one-sided communication: a [`Window<T>`] of
//! `T` elements on every rank, whose epochs are guards. An epoch is open
//! while its guard lives ([`Fence`], [`Lock`], [`LockAll`], [`Access`]
//! for start/complete, [`Exposure`] for post/wait); its operations are
//! methods of the guard ([`OneSided`]), so none can be issued outside one,
//! and dropping the guard closes the epoch (call `end` to see its error).
//!
//! Borrowing keeps the program free of data races on the window's own
//! memory: this rank reads and writes its part only through
//! [`Window::local`], which needs `&mut Window` (so no epoch of this rank
//! is open) and holds an exclusive lock on itself meanwhile (so no other
//! rank's passive-target operation runs). Every operation completes
//! before its call returns, so the buffers it borrows are free again
//! when it does.

use std::marker::PhantomData;

use super::{LockType, Win, MODE_NOPRECEDE, MODE_NOSUCCEED};
use crate::buffer::Scalar;
use crate::comm::Comm;
use crate::datatype::{BasicType, Datatype};
use crate::error::Error;
use crate::group::Group;
use crate::ops::Op;

/// A window of `len` elements of `T` on each rank, allocated by the
/// library (`MPI_Win_allocate`), zeroed. Displacements count elements.
///
/// ```no_run
/// use oxmpi::ops::Op;
/// use oxmpi::rma::{OneSided, Window};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut win = Window::<u64>::allocate(&world, 1)?;
/// {
///     let epoch = win.fence()?;
///     epoch.accumulate(0, 0, &[1], &Op::SUM)?; // everyone adds 1 on rank 0
///     epoch.end()?;
/// }
/// if world.rank() == 0 {
///     assert_eq!(win.local()?[0], world.size() as u64);
/// }
/// win.free()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Window<T: Scalar> {
    win: Win,
    len: usize,
    /// Bytes of `T`, as the raw operations see them.
    bytes: Datatype,
    /// One `T` as bytes (compare-and-swap's one-element type).
    one: Datatype,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for Window<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Window<{}> {{ len: {}, {:?} }}",
            std::any::type_name::<T>(),
            self.len,
            self.win
        )
    }
}

impl<T: Scalar> Window<T> {
    /// Collective over `comm`: `len` zeroed elements on this rank (ranks
    /// may differ).
    ///
    /// See the example on [`Window`].
    pub fn allocate(comm: &Comm, len: usize) -> Result<Self, Error> {
        let elem = std::mem::size_of::<T>().max(1);
        let bytes = len
            .checked_mul(elem)
            .ok_or_else(|| Error::InvalidArgument {
                arg: "len",
                reason: format!("{len} elements of {elem} bytes overflow"),
            })?;
        let win = Win::allocate(comm, bytes, elem)?;
        let bytes = Datatype::basic(BasicType::Byte);
        let one = Datatype::contiguous(std::mem::size_of::<T>() as isize, &bytes)?;
        one.commit();
        Ok(Window {
            win,
            len,
            bytes,
            one,
            _t: PhantomData,
        })
    }

    /// Elements on this rank.
    ///
    /// See the example on [`Window`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether this rank's part is empty.
    ///
    /// See the example on [`Window`].
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw window, for what this face lacks (info, names, shared
    /// queries).
    ///
    /// See the example on [`Window`].
    pub fn raw(&self) -> &Win {
        &self.win
    }

    /// This rank's elements, for local reads and writes: holds an
    /// exclusive lock on this rank until the guard drops.
    ///
    /// See the example on [`Window`].
    pub fn local(&mut self) -> Result<Local<'_, T>, Error> {
        let me = self.win.rank();
        self.win.lock(LockType::Exclusive, me, 0)?;
        Ok(Local { window: self })
    }

    /// Opens a fence epoch (`MPI_Win_fence`, collective): every rank may
    /// access every other's memory until [`Fence::end`].
    ///
    /// See the example on [`Window`].
    pub fn fence(&mut self) -> Result<Fence<'_, T>, Error> {
        self.win.fence(MODE_NOPRECEDE)?;
        Ok(Fence {
            window: self,
            open: true,
        })
    }

    /// Passive target: locks `rank`'s memory (`MPI_Win_lock`), shared or
    /// exclusive, until the guard ends or drops (`MPI_Win_unlock`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// use oxmpi::rma::{OneSided, LockType, Window};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// let lock = win.lock(LockType::Shared, 0)?;
    /// let ticket = lock.fetch_and_op(0, 0, 1, &Op::SUM)?; // a distributed counter
    /// lock.end()?;
    /// # let _ = ticket;
    /// world.barrier()?;
    /// win.free()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn lock(&self, kind: LockType, rank: i32) -> Result<Lock<'_, T>, Error> {
        self.win.lock(kind, rank, 0)?;
        Ok(Lock {
            window: self,
            rank,
            open: true,
        })
    }

    /// Passive target on every rank at once (`MPI_Win_lock_all`, shared).
    ///
    /// See the example on [`Window::lock`].
    pub fn lock_all(&self) -> Result<LockAll<'_, T>, Error> {
        self.win.lock_all(0)?;
        Ok(LockAll {
            window: self,
            open: true,
        })
    }

    /// General active target, origin side (`MPI_Win_start`): access to
    /// `group`'s memory (ranks of the window's communicator) until
    /// [`Access::end`] (`MPI_Win_complete`).
    ///
    /// See the example on [`Window::lock`].
    pub fn start(&self, group: &Group) -> Result<Access<'_, T>, Error> {
        self.win.start(group, 0)?;
        Ok(Access {
            window: self,
            open: true,
        })
    }

    /// General active target, target side (`MPI_Win_post`): exposes this
    /// rank's memory to `group` until [`Exposure::end`] (`MPI_Win_wait`).
    ///
    /// See the example on [`Window::lock`].
    pub fn post(&self, group: &Group) -> Result<Exposure<'_, T>, Error> {
        self.win.post(group, 0)?;
        Ok(Exposure {
            window: self,
            open: true,
        })
    }

    /// Frees the window (collective; `MPI_Win_free`).
    ///
    /// See the example on [`Window`].
    pub fn free(self) -> Result<(), Error> {
        self.win.free()
    }
}

/// This rank's elements of a [`Window`] (see [`Window::local`]).
pub struct Local<'w, T: Scalar> {
    window: &'w mut Window<T>,
}

impl<T: Scalar> std::ops::Deref for Local<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        let (base, _, _) = self.window.win.local();
        // SAFETY: the window's memory on this rank holds `len` elements of
        // `T` (allocated so, aligned to a page); the exclusive self-lock
        // and `&mut Window` keep every other access out meanwhile.
        unsafe { std::slice::from_raw_parts(base as *const T, self.window.len) }
    }
}

impl<T: Scalar> std::ops::DerefMut for Local<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        let (base, _, _) = self.window.win.local();
        // SAFETY: as in `deref`, and this guard is the only handle.
        unsafe { std::slice::from_raw_parts_mut(base as *mut T, self.window.len) }
    }
}

impl<T: Scalar> Drop for Local<'_, T> {
    fn drop(&mut self) {
        let _ = self.window.win.unlock(self.window.win.rank());
    }
}

/// The one-sided operations of an open epoch, on `T` elements at element
/// displacements of the target. Each completes before it returns.
pub trait OneSided<T: Scalar> {
    /// The window the epoch is on.
    fn window(&self) -> &Window<T>;

    /// `MPI_Put`: `data` into `target`'s elements from `disp`.
    ///
    /// See the example on [`Window`].
    fn put(&self, target: i32, disp: usize, data: &[T]) -> Result<(), Error> {
        let (w, origin) = (self.window(), super::Buf::of(data, &self.window().bytes));
        // SAFETY: `data` lives across the call, which completes the put.
        unsafe { w.win.put(origin, at(w, target, disp, data.len())?) }
    }

    /// `MPI_Get`: `target`'s elements from `disp` into `into`.
    ///
    /// See the example on [`Window`].
    fn get(&self, target: i32, disp: usize, into: &mut [T]) -> Result<(), Error> {
        let w = self.window();
        let origin = super::Buf::of_mut(into, &w.bytes);
        // SAFETY: `into` is borrowed mutably across the call, which
        // completes the get.
        unsafe { w.win.get(origin, at(w, target, disp, into.len())?) }
    }

    /// `MPI_Accumulate`: `target`'s elements from `disp` become
    /// `target op data`, element by element atomically.
    ///
    /// See the example on [`Window`].
    fn accumulate(&self, target: i32, disp: usize, data: &[T], op: &Op) -> Result<(), Error> {
        let w = self.window();
        let origin = super::Buf::of(data, &w.bytes);
        // SAFETY: as in `put`.
        unsafe {
            w.win
                .accumulate(origin, at(w, target, disp, data.len())?, op, T::ELEM)
        }
    }

    /// `MPI_Get_accumulate`: `result` receives `target`'s elements from
    /// `disp`, which become `target op data`, atomically per element.
    ///
    /// See the example on [`Window`].
    fn get_accumulate(
        &self,
        target: i32,
        disp: usize,
        data: &[T],
        result: &mut [T],
        op: &Op,
    ) -> Result<(), Error> {
        let w = self.window();
        if data.len() != result.len() {
            return Err(Error::InvalidArgument {
                arg: "result",
                reason: format!("{} elements for {} of data", result.len(), data.len()),
            });
        }
        let origin = super::Buf::of(data, &w.bytes);
        let res = super::Buf::of_mut(result, &w.bytes);
        // SAFETY: `data` and `result` are borrowed across the call, which
        // completes the operation.
        unsafe {
            w.win.get_accumulate(
                origin,
                Some(res),
                at(w, target, disp, data.len())?,
                op,
                T::ELEM,
            )
        }
    }

    /// `MPI_Fetch_and_op`: `target`'s element at `disp` becomes
    /// `element op value`; returns the element as it was.
    ///
    /// See the example on [`Window::lock`].
    fn fetch_and_op(&self, target: i32, disp: usize, value: T, op: &Op) -> Result<T, Error> {
        let mut old = [value];
        self.get_accumulate(target, disp, &[value], &mut old, op)?;
        Ok(old[0])
    }

    /// `MPI_Compare_and_swap`: `target`'s element at `disp` becomes `new`
    /// if it equals `expected` (bitwise); returns the element as it was.
    ///
    /// See the example on [`Window::lock`].
    fn compare_and_swap(&self, target: i32, disp: usize, expected: T, new: T) -> Result<T, Error> {
        let w = self.window();
        let mut old = expected;
        let disp = isize::try_from(disp).map_err(|_| bad_disp(disp))?;
        // SAFETY: three one-element locals, alive across the call.
        unsafe {
            w.win.compare_and_swap(
                (&new as *const T).cast(),
                (&expected as *const T).cast(),
                (&mut old as *mut T).cast(),
                &w.one,
                target,
                disp,
            )?;
        }
        Ok(old)
    }
}

fn bad_disp(disp: usize) -> Error {
    Error::InvalidArgument {
        arg: "disp",
        reason: format!("{disp} is beyond isize"),
    }
}

/// The target side of an operation on `n` elements from element `disp`.
fn at<T: Scalar>(
    w: &Window<T>,
    target: i32,
    disp: usize,
    n: usize,
) -> Result<super::At<'_>, Error> {
    Ok(super::At {
        rank: target,
        disp: isize::try_from(disp).map_err(|_| bad_disp(disp))?,
        count: n * std::mem::size_of::<T>(),
        dt: &w.bytes,
    })
}

/// Gives an epoch guard its `end` (closing with `$close`, its error
/// reported) and a `Drop` that closes it quietly when `end` was not called.
macro_rules! ends_on_drop {
    ($name:ident, $call:literal, |$g:ident| $close:expr) => {
        impl<T: Scalar> $name<'_, T> {
            #[doc = concat!("Ends the epoch (`", $call, "`).")]
            ///
            /// See the example on [`Window`].
            pub fn end(mut self) -> Result<(), Error> {
                if !std::mem::replace(&mut self.open, false) {
                    return Ok(()); // ended already (a successful test)
                }
                let $g = &self;
                $close
            }
        }

        impl<T: Scalar> Drop for $name<'_, T> {
            fn drop(&mut self) {
                if self.open {
                    let $g = &*self;
                    let _ = $close;
                }
            }
        }
    };
}

/// Makes a guard an access epoch: the one-sided operations on its window.
macro_rules! access_epoch {
    ($name:ident) => {
        impl<T: Scalar> OneSided<T> for $name<'_, T> {
            fn window(&self) -> &Window<T> {
                self.window
            }
        }
    };
}

/// A fence epoch (see [`Window::fence`]).
pub struct Fence<'w, T: Scalar> {
    window: &'w mut Window<T>,
    open: bool,
}

impl<T: Scalar> Fence<'_, T> {
    /// Ends this epoch and opens the next in one fence (`MPI_Win_fence`).
    ///
    /// See the example on [`Window`].
    pub fn advance(&mut self) -> Result<(), Error> {
        self.window.win.fence(0)
    }
}

ends_on_drop!(Fence, "MPI_Win_fence with MPI_MODE_NOSUCCEED", |g| g
    .window
    .win
    .fence(MODE_NOSUCCEED));
access_epoch!(Fence);

/// A passive-target epoch on one rank (see [`Window::lock`]).
pub struct Lock<'w, T: Scalar> {
    window: &'w Window<T>,
    rank: i32,
    open: bool,
}

impl<T: Scalar> Lock<'_, T> {
    /// Completes every operation to the locked rank (`MPI_Win_flush`).
    ///
    /// See the example on [`Window::lock`].
    pub fn flush(&self) -> Result<(), Error> {
        self.window.win.flush(Some(self.rank))
    }
}

ends_on_drop!(Lock, "MPI_Win_unlock", |g| g.window.win.unlock(g.rank));
access_epoch!(Lock);

/// A passive-target epoch on every rank (see [`Window::lock_all`]).
pub struct LockAll<'w, T: Scalar> {
    window: &'w Window<T>,
    open: bool,
}

impl<T: Scalar> LockAll<'_, T> {
    /// Completes every operation to `rank`, or to all ranks with `None`
    /// (`MPI_Win_flush` / `MPI_Win_flush_all`).
    ///
    /// See the example on [`Window::lock`].
    pub fn flush(&self, rank: Option<i32>) -> Result<(), Error> {
        self.window.win.flush(rank)
    }
}

ends_on_drop!(LockAll, "MPI_Win_unlock_all", |g| g.window.win.unlock_all());
access_epoch!(LockAll);

/// An access epoch of general active target (see [`Window::start`]).
pub struct Access<'w, T: Scalar> {
    window: &'w Window<T>,
    open: bool,
}

ends_on_drop!(Access, "MPI_Win_complete", |g| g.window.win.complete());
access_epoch!(Access);

/// An exposure epoch of general active target (see [`Window::post`]):
/// no operations of its own; it ends once every origin of the group has
/// completed its access.
pub struct Exposure<'w, T: Scalar> {
    window: &'w Window<T>,
    open: bool,
}

impl<T: Scalar> Exposure<'_, T> {
    /// Whether every origin has completed (`MPI_Win_test`), which then
    /// ends the epoch as [`Exposure::end`] would.
    ///
    /// See the example on [`Window::lock`].
    pub fn test(&mut self) -> Result<bool, Error> {
        let done = self.open && self.window.win.test()?;
        if done {
            self.open = false;
        }
        Ok(done || !self.open)
    }
}

ends_on_drop!(Exposure, "MPI_Win_wait", |g| g.window.win.wait());
