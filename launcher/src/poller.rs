//! A thin wrapper over poll(2) for the launcher's single-threaded event loops.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// Readiness reported for one registered descriptor (readable, hung up or
/// failed: the owner tries a read and learns which).
#[derive(Debug, Clone, Copy)]
pub struct Ready<T> {
    /// What the caller registered.
    pub token: T,
    /// The descriptor accepts writes.
    pub writable: bool,
}

/// Descriptors to wait on, rebuilt each loop iteration.
pub struct Poller<T> {
    fds: Vec<libc::pollfd>,
    tokens: Vec<T>,
}

impl<T: Copy> Default for Poller<T> {
    fn default() -> Self {
        Poller {
            fds: Vec::new(),
            tokens: Vec::new(),
        }
    }
}

impl<T: Copy> Poller<T> {
    /// Registers `fd` for reading and, if `write`, writing.
    pub fn add(&mut self, fd: RawFd, read: bool, write: bool, token: T) {
        let mut events = 0;
        if read {
            events |= libc::POLLIN;
        }
        if write {
            events |= libc::POLLOUT;
        }
        self.fds.push(libc::pollfd {
            fd,
            events,
            revents: 0,
        });
        self.tokens.push(token);
    }

    /// Waits up to `timeout` (forever if `None`) and returns the ready
    /// descriptors, clearing the registrations.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Vec<Ready<T>>> {
        let ms = timeout.map_or(-1, |d| d.as_millis().min(i32::MAX as u128) as i32);
        // SAFETY: the pointer and length describe our own vector.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, ms) };
        let result = if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                Ok(Vec::new())
            } else {
                Err(err)
            }
        } else {
            Ok(self
                .fds
                .iter()
                .zip(&self.tokens)
                .filter(|(p, _)| p.revents != 0)
                .map(|(p, &token)| Ready {
                    token,
                    writable: p.revents & (libc::POLLOUT | libc::POLLERR) != 0,
                })
                .collect())
        };
        self.fds.clear();
        self.tokens.clear();
        result
    }
}
