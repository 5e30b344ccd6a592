//! MPI-IO over POSIX files (MPI 4.0 chapter 14): a [`File`] opened
//! collectively over a communicator, its view ([`view`]: displacement,
//! etype, filetype, data representation), independent accesses at explicit
//! offsets and through the individual and shared file pointers
//! ([`access`], [`shared`]), and collective accesses with two-phase
//! aggregation ([`two_phase`]). Every access is performed when it is
//! called: the front end's non-blocking and split-collective forms
//! complete at their start, which the standard allows.

pub mod access;
pub mod data;
pub mod shared;
#[cfg(test)]
mod tests;
pub mod two_phase;
pub mod view;

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::comm::Comm;
use crate::error::{Error, ErrorClass};
use crate::ops::Op;

pub use view::{Datarep, FileView};

/// `MPI_MODE_CREATE` (MPICH's value; the other modes follow).
pub const MODE_CREATE: i32 = 1;
/// `MPI_MODE_RDONLY`.
pub const MODE_RDONLY: i32 = 2;
/// `MPI_MODE_WRONLY`.
pub const MODE_WRONLY: i32 = 4;
/// `MPI_MODE_RDWR`.
pub const MODE_RDWR: i32 = 8;
/// `MPI_MODE_DELETE_ON_CLOSE`.
pub const MODE_DELETE_ON_CLOSE: i32 = 16;
/// `MPI_MODE_UNIQUE_OPEN`.
pub const MODE_UNIQUE_OPEN: i32 = 32;
/// `MPI_MODE_EXCL`.
pub const MODE_EXCL: i32 = 64;
/// `MPI_MODE_APPEND`.
pub const MODE_APPEND: i32 = 128;
/// `MPI_MODE_SEQUENTIAL`.
pub const MODE_SEQUENTIAL: i32 = 256;
const ALL_MODES: i32 = 511;

/// `pread` / `pwrite` requests this process made on data files (one per
/// contiguous run; a request the kernel splits still counts once).
static READS: AtomicU64 = AtomicU64::new(0);
static WRITES: AtomicU64 = AtomicU64::new(0);

/// How many contiguous reads and writes of data files this process has
/// made: what shows that two-phase aggregation turns interleaved views
/// into a few large accesses (tests, diagnosis).
pub fn access_counts() -> (u64, u64) {
    (
        READS.load(Ordering::Relaxed),
        WRITES.load(Ordering::Relaxed),
    )
}

/// Writes all of `data` at `offset` (one counted write).
pub(crate) fn pwrite_all(f: &std::fs::File, data: &[u8], offset: u64) -> std::io::Result<()> {
    WRITES.fetch_add(1, Ordering::Relaxed);
    f.write_all_at(data, offset)
}

/// Default collective buffer per aggregator and round (ROMIO's default).
pub const DEFAULT_CB_BUFFER_SIZE: usize = 16 << 20;

/// The hints a file honours (`MPI_File_set_info`, `MPI_File_get_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hints {
    /// `cb_buffer_size`: bytes an aggregator moves per round.
    pub cb_buffer_size: usize,
    /// `cb_nodes`: how many ranks aggregate.
    pub cb_nodes: usize,
    /// `romio_cb_read`: two-phase for collective reads (false: each rank reads its own).
    pub cb_read: bool,
    /// `romio_cb_write`: two-phase for collective writes.
    pub cb_write: bool,
}

impl Hints {
    /// The defaults for a file opened over `size` ranks.
    pub fn defaults(size: usize) -> Hints {
        Hints {
            cb_buffer_size: DEFAULT_CB_BUFFER_SIZE,
            cb_nodes: size,
            cb_read: true,
            cb_write: true,
        }
    }

    /// Applies the hints this library understands among `pairs`; others are
    /// ignored, as the standard allows. A malformed value is ignored too.
    pub fn apply(&mut self, pairs: &[(String, String)], size: usize) {
        for (k, v) in pairs {
            let v = v.trim();
            let flag = |v: &str| match v {
                "enable" | "automatic" | "true" => Some(true),
                "disable" | "false" => Some(false),
                _ => None,
            };
            match k.as_str() {
                "cb_buffer_size" => {
                    if let Some(n) = v.parse::<usize>().ok().filter(|&n| n > 0) {
                        self.cb_buffer_size = n;
                    }
                }
                "cb_nodes" => {
                    if let Some(n) = v.parse::<usize>().ok().filter(|&n| n > 0) {
                        self.cb_nodes = n.min(size);
                    }
                }
                "romio_cb_read" => self.cb_read = flag(v).unwrap_or(self.cb_read),
                "romio_cb_write" => self.cb_write = flag(v).unwrap_or(self.cb_write),
                _ => {}
            }
        }
    }

    /// Takes rank 0's values on every rank (collective): collective
    /// accesses must cut the file alike everywhere.
    pub fn agree(&mut self, comm: &Comm) -> Result<(), Error> {
        let mut v = [
            self.cb_buffer_size as u64,
            self.cb_nodes as u64,
            u64::from(self.cb_read),
            u64::from(self.cb_write),
        ];
        comm.bcast(&mut v, 0)?;
        self.cb_buffer_size = v[0] as usize;
        self.cb_nodes = v[1] as usize;
        self.cb_read = v[2] != 0;
        self.cb_write = v[3] != 0;
        Ok(())
    }

    /// The hints as (key, value) pairs, for `MPI_File_get_info`.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let flag = |b: bool| if b { "enable" } else { "disable" }.to_owned();
        vec![
            ("cb_buffer_size".into(), self.cb_buffer_size.to_string()),
            ("cb_nodes".into(), self.cb_nodes.to_string()),
            ("romio_cb_read".into(), flag(self.cb_read)),
            ("romio_cb_write".into(), flag(self.cb_write)),
        ]
    }
}

/// What changes on an open file: its view, its individual pointer,
/// atomic mode, hints.
#[derive(Debug, Clone)]
pub struct FileState {
    /// The view (`MPI_File_set_view`).
    pub view: FileView,
    /// The individual file pointer, in etypes of the view.
    pub pointer: u64,
    /// Atomic mode (`MPI_File_set_atomicity`).
    pub atomic: bool,
    /// The hints.
    pub hints: Hints,
}

struct Inner {
    comm: Comm,
    path: PathBuf,
    fd: std::fs::File,
    amode: i32,
    shared: shared::SharedPointer,
    state: Mutex<FileState>,
}

/// An open file (`MPI_File`): shared by clones; closed by [`File::close`].
#[derive(Clone)]
pub struct File {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "File({:?})", self.inner.path)
    }
}

/// An error of class `class`.
pub(crate) fn file_err(class: ErrorClass, reason: impl Into<String>) -> Error {
    Error::File {
        class,
        reason: reason.into(),
    }
}

/// The MPI class of an operating-system error.
pub(crate) fn os_class(e: &std::io::Error) -> ErrorClass {
    use nix::errno::Errno;
    match e.raw_os_error().map(Errno::from_raw) {
        Some(Errno::ENOENT) | Some(Errno::ENOTDIR) => ErrorClass::NoSuchFile,
        Some(Errno::EACCES) | Some(Errno::EPERM) => ErrorClass::Access,
        Some(Errno::EEXIST) => ErrorClass::FileExists,
        Some(Errno::ENOSPC) => ErrorClass::NoSpace,
        Some(Errno::EDQUOT) => ErrorClass::Quota,
        Some(Errno::EROFS) => ErrorClass::ReadOnly,
        Some(Errno::EISDIR) | Some(Errno::ENAMETOOLONG) | Some(Errno::ELOOP) => ErrorClass::BadFile,
        Some(Errno::ETXTBSY) | Some(Errno::EBUSY) => ErrorClass::FileInUse,
        _ => ErrorClass::Io,
    }
}

/// An operating-system error on `path` during `what`.
pub(crate) fn os_err(what: &str, path: &Path, e: &std::io::Error) -> Error {
    file_err(os_class(e), format!("{what} {}: {e}", path.display()))
}

/// Checks an access mode alone (MPI 4.0 section 14.2.1).
pub fn check_amode(amode: i32) -> Result<(), Error> {
    let bad = |why: &str| {
        Err(file_err(
            ErrorClass::Amode,
            format!("invalid `amode` {amode:#x}: {why}"),
        ))
    };
    if amode & !ALL_MODES != 0 {
        return bad("unknown mode bits");
    }
    let access = [MODE_RDONLY, MODE_WRONLY, MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    if access != 1 {
        return bad("exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR is needed");
    }
    if amode & MODE_RDONLY != 0 && amode & (MODE_CREATE | MODE_EXCL) != 0 {
        return bad("MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL");
    }
    if amode & MODE_RDWR != 0 && amode & MODE_SEQUENTIAL != 0 {
        return bad("MPI_MODE_SEQUENTIAL cannot be combined with MPI_MODE_RDWR");
    }
    Ok(())
}

/// A fixed-size digest of a string, for checking that every rank names
/// the same thing (FNV-1a).
fn digest(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Fails with `MPI_ERR_NOT_SAME` unless every rank passed the same `value`.
pub(crate) fn check_same(comm: &Comm, what: &str, value: u64) -> Result<(), Error> {
    let mut all = vec![0u64; comm.size() as usize];
    comm.allgather(&[value], &mut all)?;
    if all.iter().any(|&v| v != value) {
        return Err(file_err(
            ErrorClass::NotSame,
            format!("`{what}` differs between the ranks of the communicator"),
        ));
    }
    Ok(())
}

/// Agrees on an error: every rank passes its own (or none), and all get
/// the first failing rank's class, so a collective call fails everywhere.
pub(crate) fn agree(comm: &Comm, mine: Result<(), Error>) -> Result<(), Error> {
    let code = match &mine {
        Ok(()) => 0i32,
        Err(e) => e.class() as i32,
    };
    let mut worst = [0i32];
    comm.allreduce(&[code], &mut worst, &Op::MAX)?;
    match (mine, worst[0]) {
        (Err(e), _) => Err(e),
        (Ok(()), 0) => Ok(()),
        (Ok(()), c) => Err(Error::File {
            class: class_from(c),
            reason: format!("the collective call failed on another rank (error class {c})"),
        }),
    }
}

fn class_from(c: i32) -> ErrorClass {
    use ErrorClass::*;
    [
        Access, Amode, BadFile, FileExists, FileInUse, Io, NotSame, NoSpace, NoSuchFile, Quota,
        ReadOnly,
    ]
    .into_iter()
    .find(|k| *k as i32 == c)
    .unwrap_or(ErrorClass::File)
}

impl File {
    /// `MPI_File_open`: collective over `comm` (an intracommunicator);
    /// every rank passes the same `amode` and file name. Rank 0 creates the
    /// file when `MODE_CREATE` asks, then every rank opens it.
    pub fn open(
        comm: &Comm,
        path: &str,
        amode: i32,
        info: &[(String, String)],
    ) -> Result<File, Error> {
        if comm.is_inter() {
            return Err(Error::InvalidComm(
                "MPI_File_open needs an intracommunicator".into(),
            ));
        }
        let local = check_amode(amode);
        agree(comm, local)?;
        check_same(comm, "amode", amode as u64)?;
        check_same(comm, "filename", digest(path))?;
        let comm = comm.dup()?;
        let path = PathBuf::from(path);
        let create = comm.rank() == 0 && amode & MODE_CREATE != 0;
        let first = if comm.rank() == 0 {
            Some(open_fd(&path, amode, create))
        } else {
            None
        };
        let mut code = [match &first {
            Some(Err(e)) => e.class() as i32,
            _ => 0i32,
        }];
        comm.bcast(&mut code, 0)?;
        if code[0] != 0 {
            return Err(match first {
                Some(Err(e)) => e,
                _ => file_err(
                    class_from(code[0]),
                    format!("opening {} failed on rank 0", path.display()),
                ),
            });
        }
        let fd = match first {
            Some(r) => r,
            None => open_fd(&path, amode, false),
        };
        let (fd, mine) = match fd {
            Ok(fd) => (Some(fd), Ok(())),
            Err(e) => (None, Err(e)),
        };
        agree(&comm, mine)?;
        let fd = fd.expect("agreed: opened on every rank");
        let size = comm.size() as usize;
        let mut hints = Hints::defaults(size);
        hints.apply(info, size);
        hints.agree(&comm)?;
        let shared = shared::SharedPointer::agree(&comm, &path)?;
        let mut st = FileState {
            view: FileView::default(),
            pointer: 0,
            atomic: false,
            hints,
        };
        if amode & MODE_APPEND != 0 {
            let len = fd.metadata().map_err(|e| os_err("stat", &path, &e))?.len();
            st.pointer = len;
            if comm.rank() == 0 {
                shared.store(len)?;
            }
            comm.barrier()?;
        }
        Ok(File {
            inner: Arc::new(Inner {
                comm,
                path,
                fd,
                amode,
                shared,
                state: Mutex::new(st),
            }),
        })
    }

    /// `MPI_File_close`: collective. Syncs nothing more than the OS does;
    /// removes the shared-pointer file and, with `MODE_DELETE_ON_CLOSE`,
    /// the file itself, once every rank has closed.
    pub fn close(self) -> Result<(), Error> {
        let comm = self.inner.comm.clone();
        let (path, amode) = (self.inner.path.clone(), self.inner.amode);
        let shared = self.inner.shared.clone();
        drop(self);
        comm.barrier()?;
        if comm.rank() == 0 {
            shared.remove();
            if amode & MODE_DELETE_ON_CLOSE != 0 {
                std::fs::remove_file(&path).map_err(|e| os_err("deleting", &path, &e))?;
            }
        }
        Ok(())
    }

    /// `MPI_File_delete`: removes a file (not collective).
    pub fn delete(path: &str) -> Result<(), Error> {
        let p = Path::new(path);
        std::fs::remove_file(p).map_err(|e| os_err("deleting", p, &e))
    }

    /// The communicator the file was opened over (a duplicate of it).
    pub fn comm(&self) -> &Comm {
        &self.inner.comm
    }

    /// `MPI_File_get_amode`.
    pub fn amode(&self) -> i32 {
        self.inner.amode
    }

    /// The file's path as given to `open`.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The mutable state (view, pointer, atomicity, hints).
    pub fn state(&self) -> MutexGuard<'_, FileState> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn fd(&self) -> &std::fs::File {
        &self.inner.fd
    }

    pub(crate) fn shared(&self) -> &shared::SharedPointer {
        &self.inner.shared
    }

    /// `MPI_File_get_size`: the file's size in bytes.
    pub fn size(&self) -> Result<u64, Error> {
        let m = self
            .inner
            .fd
            .metadata()
            .map_err(|e| os_err("stat", &self.inner.path, &e))?;
        Ok(m.len())
    }

    fn check_writable(&self, what: &str) -> Result<(), Error> {
        if self.inner.amode & MODE_RDONLY != 0 {
            return Err(file_err(
                ErrorClass::ReadOnly,
                format!("{what}: the file was opened with MPI_MODE_RDONLY"),
            ));
        }
        Ok(())
    }

    /// `MPI_File_set_size`: collective; truncates or extends the file.
    pub fn set_size(&self, size: u64) -> Result<(), Error> {
        check_same(&self.inner.comm, "size", size)?;
        self.check_writable("MPI_File_set_size")?;
        let mine = if self.inner.comm.rank() == 0 {
            self.inner
                .fd
                .set_len(size)
                .map_err(|e| os_err("resizing", &self.inner.path, &e))
        } else {
            Ok(())
        };
        agree(&self.inner.comm, mine)
    }

    /// `MPI_File_preallocate`: collective; makes sure `size` bytes are
    /// allocated (the file grows to at least `size`, never shrinks).
    pub fn preallocate(&self, size: u64) -> Result<(), Error> {
        check_same(&self.inner.comm, "size", size)?;
        self.check_writable("MPI_File_preallocate")?;
        let mine = if self.inner.comm.rank() == 0 && size > 0 {
            let len = i64::try_from(size).map_err(|_| {
                file_err(ErrorClass::Arg, format!("invalid `size` {size}: too large"))
            })?;
            match nix::fcntl::posix_fallocate(self.inner.fd.as_raw_fd(), 0, len) {
                Ok(()) => Ok(()),
                // File systems without fallocate: extend (sparse) instead.
                Err(nix::errno::Errno::EOPNOTSUPP) | Err(nix::errno::Errno::EINVAL) => {
                    if self.size()? < size {
                        self.inner
                            .fd
                            .set_len(size)
                            .map_err(|e| os_err("resizing", &self.inner.path, &e))
                    } else {
                        Ok(())
                    }
                }
                Err(e) => Err(os_err("preallocating", &self.inner.path, &e.into())),
            }
        } else {
            Ok(())
        };
        agree(&self.inner.comm, mine)
    }

    /// `MPI_File_sync`: collective; every rank's writes reach storage.
    pub fn sync(&self) -> Result<(), Error> {
        let mine = if self.inner.amode & MODE_RDONLY != 0 {
            Ok(())
        } else {
            self.inner
                .fd
                .sync_all()
                .map_err(|e| os_err("syncing", &self.inner.path, &e))
        };
        agree(&self.inner.comm, mine)?;
        self.inner.comm.barrier()
    }

    /// `MPI_File_set_atomicity`: collective.
    pub fn set_atomicity(&self, atomic: bool) -> Result<(), Error> {
        check_same(&self.inner.comm, "flag", u64::from(atomic))?;
        self.state().atomic = atomic;
        Ok(())
    }

    /// `MPI_File_set_info`: collective; applies the hints understood
    /// (rank 0's values, so every rank plans collective accesses alike).
    pub fn set_info(&self, info: &[(String, String)]) -> Result<(), Error> {
        let size = self.inner.comm.size() as usize;
        let mut hints = self.state().hints.clone();
        hints.apply(info, size);
        hints.agree(&self.inner.comm)?;
        self.state().hints = hints;
        Ok(())
    }
}

/// Opens `path` with the POSIX flags of `amode`. A write-only file is
/// opened read-write when allowed, so collective writes can fill holes
/// between the pieces they write (read-modify-write).
fn open_fd(path: &Path, amode: i32, create: bool) -> Result<std::fs::File, Error> {
    let mut o = OpenOptions::new();
    o.read(amode & MODE_WRONLY == 0)
        .write(amode & MODE_RDONLY == 0);
    if create {
        if amode & MODE_EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
        o.mode(0o644);
    }
    if amode & MODE_WRONLY != 0 {
        let mut rw = o.clone();
        rw.read(true);
        if let Ok(f) = rw.open(path) {
            return Ok(f);
        }
    }
    let f = o.open(path).map_err(|e| os_err("opening", path, &e))?;
    if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(file_err(
            ErrorClass::BadFile,
            format!("{} is a directory", path.display()),
        ));
    }
    Ok(f)
}

/// Reads up to `buf.len()` bytes at `offset`; fewer only at the end of the file.
pub(crate) fn pread_full(f: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    READS.fetch_add(1, Ordering::Relaxed);
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
