//! Independent accesses (MPI 4.0 sections 14.4.2 - 14.4.4): at explicit
//! offsets, through the individual file pointer and through the shared
//! one; `MPI_File_set_view`, seeks and positions. Offsets and pointers are
//! in etypes of the current view; what moves is the view's byte stream
//! (see [`super::view`]), one `pread` / `pwrite` per run of the file. In
//! atomic mode each access holds an `fcntl` lock on the file meanwhile.

use std::os::fd::AsRawFd;

use crate::error::{Error, ErrorClass};
use crate::status::Status;

use super::data::{file_status, Buf};
use super::view::{Datarep, FileView};
use super::{
    check_same, file_err, os_err, pread_full, File, MODE_RDONLY, MODE_SEQUENTIAL, MODE_WRONLY,
};

/// The most bytes one sieving read covers.
const SIEVE_SPAN: u64 = 4 << 20;
/// The largest gap between runs that one sieving read spans.
const SIEVE_GAP: u64 = 64 << 10;

/// `MPI_SEEK_SET`.
pub const SEEK_SET: i32 = 600;
/// `MPI_SEEK_CUR`.
pub const SEEK_CUR: i32 = 602;
/// `MPI_SEEK_END`.
pub const SEEK_END: i32 = 604;

/// A whole-file `fcntl` lock held for an access in atomic mode.
struct RangeLock<'a>(Option<&'a std::fs::File>);

impl<'a> RangeLock<'a> {
    fn take(f: &'a std::fs::File, write: bool, on: bool) -> Result<RangeLock<'a>, Error> {
        if !on {
            return Ok(RangeLock(None));
        }
        let kind = if write {
            nix::libc::F_WRLCK
        } else {
            nix::libc::F_RDLCK
        };
        set_lock(f, kind)?;
        Ok(RangeLock(Some(f)))
    }
}

impl Drop for RangeLock<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.0 {
            let _ = set_lock(f, nix::libc::F_UNLCK);
        }
    }
}

pub(crate) fn set_lock(f: &std::fs::File, kind: i32) -> Result<(), Error> {
    // SAFETY: an all-zero flock is valid (whole file from offset 0).
    let mut fl: nix::libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as i16;
    fl.l_whence = nix::libc::SEEK_SET as i16;
    loop {
        // SAFETY: a valid descriptor and flock.
        if unsafe { nix::libc::fcntl(f.as_raw_fd(), nix::libc::F_SETLKW, &fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(file_err(
                ErrorClass::Io,
                format!("atomic mode: locking the file failed: {e}"),
            ));
        }
    }
}

impl File {
    /// Fails unless the file may be read.
    pub(crate) fn check_readable(&self) -> Result<(), Error> {
        if self.amode() & MODE_WRONLY != 0 {
            return Err(file_err(
                ErrorClass::Access,
                "reading a file opened with MPI_MODE_WRONLY",
            ));
        }
        Ok(())
    }

    /// Fails unless the file may be written.
    pub(crate) fn check_writable_access(&self) -> Result<(), Error> {
        if self.amode() & MODE_RDONLY != 0 {
            return Err(file_err(
                ErrorClass::ReadOnly,
                "writing a file opened with MPI_MODE_RDONLY",
            ));
        }
        Ok(())
    }

    /// Fails for explicit offsets and individual pointers on a file opened
    /// with `MPI_MODE_SEQUENTIAL`.
    pub(crate) fn check_not_sequential(&self, what: &str) -> Result<(), Error> {
        if self.amode() & MODE_SEQUENTIAL != 0 {
            return Err(file_err(
                ErrorClass::UnsupportedOperation,
                format!("{what} on a file opened with MPI_MODE_SEQUENTIAL (shared pointer only)"),
            ));
        }
        Ok(())
    }

    /// Writes `data` at stream byte `pos` of `view`.
    pub(crate) fn write_stream(
        &self,
        view: &FileView,
        pos: u64,
        data: &[u8],
        atomic: bool,
    ) -> Result<(), Error> {
        let _lock = RangeLock::take(self.fd(), true, atomic)?;
        let mut done = 0usize;
        for (at, n) in view.runs(pos, data.len() as u64)? {
            let n = n as usize;
            super::pwrite_all(self.fd(), &data[done..done + n], at)
                .map_err(|e| os_err("writing", self.path(), &e))?;
            done += n;
        }
        Ok(())
    }

    /// Reads stream bytes from `pos` of `view` into `out`; returns how many
    /// (fewer at the end of the file). Nearby runs are read together
    /// (data sieving): one `pread` of the span they cover, at most
    /// [`SIEVE_SPAN`] bytes with gaps of at most [`SIEVE_GAP`].
    pub(crate) fn read_stream(
        &self,
        view: &FileView,
        pos: u64,
        out: &mut [u8],
        atomic: bool,
    ) -> Result<usize, Error> {
        let _lock = RangeLock::take(self.fd(), false, atomic)?;
        let (mut done, mut batch, mut sieve) = (0usize, Vec::new(), Vec::new());
        let mut runs = view.runs(pos, out.len() as u64)?;
        loop {
            let next = runs.next();
            if let (Some((at, n)), Some(&(first, _)), Some(&(last, len))) =
                (next, batch.first(), batch.last())
            {
                let end: u64 = last + len;
                if at >= end && at - end <= SIEVE_GAP && at + n - first <= SIEVE_SPAN {
                    batch.push((at, n));
                    continue;
                }
            }
            if !batch.is_empty() {
                let (got, whole) = self.read_batch(&batch, &mut out[done..], &mut sieve)?;
                done += got;
                if !whole {
                    return Ok(done);
                }
                batch.clear();
            }
            match next {
                Some(r) => batch.push(r),
                None => return Ok(done),
            }
        }
    }

    /// Reads runs (ascending, in stream order) into the start of `out`;
    /// returns the bytes read and whether all were there.
    fn read_batch(
        &self,
        batch: &[(u64, u64)],
        out: &mut [u8],
        sieve: &mut Vec<u8>,
    ) -> Result<(usize, bool), Error> {
        let err = |e| os_err("reading", self.path(), &e);
        if let [(at, n)] = batch {
            let n = *n as usize;
            let got = pread_full(self.fd(), &mut out[..n], *at).map_err(err)?;
            return Ok((got, got == n));
        }
        let lo = batch[0].0;
        let (last, len) = batch[batch.len() - 1];
        sieve.resize((last + len - lo) as usize, 0);
        let got = pread_full(self.fd(), sieve, lo).map_err(err)?;
        let mut done = 0;
        for &(at, n) in batch {
            let (from, n) = ((at - lo) as usize, n as usize);
            let avail = got.saturating_sub(from).min(n);
            out[done..done + avail].copy_from_slice(&sieve[from..from + avail]);
            done += avail;
            if avail < n {
                return Ok((done, false));
            }
        }
        Ok((done, true))
    }

    /// The stream length of `buf` in etypes (it must be whole etypes).
    pub(crate) fn etypes_of(view: &FileView, buf: &Buf) -> Result<(u64, usize), Error> {
        let n = buf.stream_len(view.datarep)?;
        if !(n as u64).is_multiple_of(view.esize()) {
            return Err(Error::InvalidDatatype(format!(
                "{} elements of {:?} are {n} bytes: not a whole number of the view's etypes \
                 ({:?}, {} bytes)",
                buf.count,
                buf.dt,
                view.etype,
                view.esize()
            )));
        }
        Ok((n as u64 / view.esize(), n))
    }

    /// Writes `buf` at etype `offset` of the view; returns the status.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub(crate) unsafe fn write_view_at(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        self.check_writable_access()?;
        let (view, atomic) = {
            let st = self.state();
            (st.view.clone(), st.atomic)
        };
        Self::etypes_of(&view, buf)?;
        // SAFETY: the caller's contract.
        let data = unsafe { buf.outgoing(view.datarep)? };
        self.write_stream(&view, offset * view.esize(), &data, atomic)?;
        Ok(file_status(buf.dt.size() * buf.count))
    }

    /// Reads into `buf` from etype `offset` of the view.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub(crate) unsafe fn read_view_at(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        self.check_readable()?;
        let (view, atomic) = {
            let st = self.state();
            (st.view.clone(), st.atomic)
        };
        Self::etypes_of(&view, buf)?;
        let pos = offset * view.esize();
        // SAFETY: the caller's contract.
        unsafe {
            buf.incoming(view.datarep, |out| {
                self.read_stream(&view, pos, out, atomic)
            })
        }
    }

    /// `MPI_File_write_at`.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write_at(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        self.check_not_sequential("MPI_File_write_at")?;
        // SAFETY: the caller's contract.
        unsafe { self.write_view_at(offset, buf) }
    }

    /// `MPI_File_read_at`.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read_at(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        self.check_not_sequential("MPI_File_read_at")?;
        // SAFETY: the caller's contract.
        unsafe { self.read_view_at(offset, buf) }
    }

    /// Etypes a status's bytes are (for moving a pointer past a read).
    pub(crate) fn etypes_moved(&self, st: &Status, buf: &Buf) -> u64 {
        let view = &self.state().view;
        let native = buf.dt.size() as u64;
        let stream = match view.datarep {
            Datarep::External32 if native > 0 => {
                st.count as u64 / native * buf.dt.external32_size(1).unwrap_or(0) as u64
            }
            _ => st.count as u64,
        };
        stream / view.esize()
    }

    /// `MPI_File_write`: at the individual pointer, which moves past the data.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write(&self, buf: &Buf) -> Result<Status, Error> {
        self.check_not_sequential("MPI_File_write")?;
        let at = self.state().pointer;
        // SAFETY: the caller's contract.
        let st = unsafe { self.write_view_at(at, buf)? };
        let moved = self.etypes_moved(&st, buf);
        self.state().pointer = at + moved;
        Ok(st)
    }

    /// `MPI_File_read`: at the individual pointer, which moves past what was read.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read(&self, buf: &Buf) -> Result<Status, Error> {
        self.check_not_sequential("MPI_File_read")?;
        let at = self.state().pointer;
        // SAFETY: the caller's contract.
        let st = unsafe { self.read_view_at(at, buf)? };
        let moved = self.etypes_moved(&st, buf);
        self.state().pointer = at + moved;
        Ok(st)
    }

    /// `MPI_File_write_shared`: at the shared pointer, moved atomically.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write_shared(&self, buf: &Buf) -> Result<Status, Error> {
        self.check_writable_access()?;
        let (n, _) = Self::etypes_of(&self.state().view, buf)?;
        let at = self.shared().fetch_add(n)?;
        // SAFETY: the caller's contract.
        unsafe { self.write_view_at(at, buf) }
    }

    /// `MPI_File_read_shared`: at the shared pointer, moved atomically by
    /// the amount asked for.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read_shared(&self, buf: &Buf) -> Result<Status, Error> {
        self.check_readable()?;
        let (n, _) = Self::etypes_of(&self.state().view, buf)?;
        let at = self.shared().fetch_add(n)?;
        // SAFETY: the caller's contract.
        unsafe { self.read_view_at(at, buf) }
    }

    /// The pointer a seek gives: `offset` from the start, from `current`,
    /// or from the end of the file in the view's etypes.
    fn seek_target(&self, offset: i64, whence: i32, current: u64) -> Result<u64, Error> {
        let base = match whence {
            SEEK_SET => 0i64,
            SEEK_CUR => current as i64,
            SEEK_END => {
                let size = self.size()?;
                self.state().view.etypes_before(size)? as i64
            }
            _ => {
                return Err(Error::InvalidArgument {
                    arg: "whence",
                    reason: format!(
                        "{whence}: expected MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"
                    ),
                })
            }
        };
        u64::try_from(base + offset).map_err(|_| Error::InvalidArgument {
            arg: "offset",
            reason: format!("{offset}: the pointer would be before the start of the view"),
        })
    }

    /// `MPI_File_seek`.
    pub fn seek(&self, offset: i64, whence: i32) -> Result<(), Error> {
        self.check_not_sequential("MPI_File_seek")?;
        let cur = self.state().pointer;
        let to = self.seek_target(offset, whence, cur)?;
        self.state().pointer = to;
        Ok(())
    }

    /// `MPI_File_get_position`: the individual pointer, in etypes.
    pub fn position(&self) -> Result<u64, Error> {
        self.check_not_sequential("MPI_File_get_position")?;
        Ok(self.state().pointer)
    }

    /// `MPI_File_seek_shared`: collective, with the same arguments everywhere.
    pub fn seek_shared(&self, offset: i64, whence: i32) -> Result<(), Error> {
        check_same(self.comm(), "offset", offset as u64)?;
        check_same(self.comm(), "whence", whence as u64)?;
        let mine = if self.comm().rank() == 0 {
            self.shared()
                .load()
                .and_then(|cur| self.seek_target(offset, whence, cur))
                .and_then(|to| self.shared().store(to))
        } else {
            Ok(())
        };
        let mut ok = [i32::from(mine.is_ok())];
        self.comm().bcast(&mut ok, 0)?;
        mine?;
        if ok[0] == 0 {
            return Err(Error::InvalidArgument {
                arg: "offset",
                reason: format!("{offset}: the shared pointer would be before the view"),
            });
        }
        self.comm().barrier()
    }

    /// `MPI_File_get_position_shared`.
    pub fn position_shared(&self) -> Result<u64, Error> {
        self.shared().load()
    }

    /// `MPI_File_set_view`: collective. `disp` `None` is
    /// `MPI_DISPLACEMENT_CURRENT` (files opened with `MPI_MODE_SEQUENTIAL`
    /// only): the shared pointer's place. Both pointers go to 0.
    pub fn set_view(&self, disp: Option<u64>, view: FileView) -> Result<(), Error> {
        let disp = match disp {
            Some(d) => d,
            None if self.amode() & MODE_SEQUENTIAL != 0 => {
                let cur = self.shared().load()?;
                self.state().view.byte_offset(cur)?
            }
            None => {
                return Err(Error::InvalidArgument {
                    arg: "disp",
                    reason: "MPI_DISPLACEMENT_CURRENT needs a file opened with \
                             MPI_MODE_SEQUENTIAL"
                        .into(),
                })
            }
        };
        super::agree(
            self.comm(),
            view.check_layout(self.amode() & MODE_RDONLY != 0),
        )?;
        check_same(self.comm(), "datarep", view.datarep as u64)?;
        check_same(self.comm(), "etype size", view.esize())?;
        let view = FileView { disp, ..view };
        let mine = if self.comm().rank() == 0 {
            self.shared().reset()
        } else {
            Ok(())
        };
        {
            let mut st = self.state();
            st.view = view;
            st.pointer = 0;
        }
        mine?;
        self.comm().barrier()
    }
}
