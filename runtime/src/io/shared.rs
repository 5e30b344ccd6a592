//! The shared file pointer: an 8-byte counter (etypes of the current view)
//! in a small file beside the data file, read and updated under an
//! `fcntl` write lock, so ranks in different processes (or on different
//! hosts over a shared file system) see one pointer. The file is made on
//! first use and removed when the data file is closed. Its name is agreed
//! at open (rank 0's process id and a counter of its opens), so two opens
//! of one file never share a pointer. It lives in the file's directory
//! when rank 0 may write there, else in the temporary directory.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::comm::Comm;
use crate::error::Error;

use super::os_err;

/// Opens made by this process (part of each pointer file's name).
static OPENS: AtomicU64 = AtomicU64::new(0);

/// Serializes this process's own updates (fcntl locks are per process).
static LOCAL: Mutex<()> = Mutex::new(());

/// A file's shared pointer.
#[derive(Debug, Clone)]
pub struct SharedPointer {
    path: Arc<PathBuf>,
}

impl SharedPointer {
    /// Agrees on the pointer's file for `file` (collective over `comm`):
    /// rank 0's choice of directory.
    pub fn agree(comm: &Comm, file: &Path) -> Result<SharedPointer, Error> {
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let writable = nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK).is_ok();
        let mut id = [
            u64::from(std::process::id()),
            OPENS.fetch_add(1, Ordering::Relaxed),
            u64::from(writable),
        ];
        comm.bcast(&mut id, 0)?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = if id[2] == 1 {
            dir
        } else {
            std::env::temp_dir()
        };
        let path = dir.join(format!(".{name}.oxmpi-shfp.{}.{}", id[0], id[1]));
        Ok(SharedPointer {
            path: Arc::new(path),
        })
    }

    /// Runs `f` on the pointer's value under the lock; `f` returns the
    /// new value and a result.
    fn update<R>(&self, f: impl FnOnce(u64) -> (u64, R)) -> Result<R, Error> {
        let _local = LOCAL.lock().unwrap_or_else(|e| e.into_inner());
        let path = self.path.as_path();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| os_err("opening the shared file pointer", path, &e))?;
        let lock = |kind| {
            // SAFETY: an all-zero flock is a valid value to fill in.
            let mut fl: nix::libc::flock = unsafe { std::mem::zeroed() };
            fl.l_type = kind as i16;
            fl.l_whence = nix::libc::SEEK_SET as i16;
            loop {
                // SAFETY: a valid descriptor and flock.
                let r = unsafe { nix::libc::fcntl(file.as_raw_fd(), nix::libc::F_SETLKW, &fl) };
                if r == 0 {
                    return Ok(());
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(os_err("locking the shared file pointer", path, &e));
                }
            }
        };
        lock(nix::libc::F_WRLCK)?;
        let mut raw = [0u8; 8];
        let got = file
            .read_at(&mut raw, 0)
            .map_err(|e| os_err("reading the shared file pointer", path, &e))?;
        let old = if got == 8 { u64::from_le_bytes(raw) } else { 0 };
        let (new, r) = f(old);
        let wrote = if new != old || got != 8 {
            file.write_all_at(&new.to_le_bytes(), 0)
                .map_err(|e| os_err("writing the shared file pointer", path, &e))
        } else {
            Ok(())
        };
        lock(nix::libc::F_UNLCK)?;
        wrote.map(|()| r)
    }

    /// Moves the pointer `by` etypes forward; returns where it was.
    pub fn fetch_add(&self, by: u64) -> Result<u64, Error> {
        self.update(|old| (old + by, old))
    }

    /// The pointer's value.
    pub fn load(&self) -> Result<u64, Error> {
        self.update(|old| (old, old))
    }

    /// Sets the pointer.
    pub fn store(&self, v: u64) -> Result<(), Error> {
        self.update(|_| (v, ()))
    }

    /// Sets the pointer to 0 (nothing to do while its file was never made).
    pub fn reset(&self) -> Result<(), Error> {
        if self.path.exists() {
            self.store(0)?;
        }
        Ok(())
    }

    /// Removes the pointer's file, if it was made.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(self.path.as_path());
    }
}
