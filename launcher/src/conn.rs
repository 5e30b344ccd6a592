//! A non-blocking byte stream with an input buffer and an output queue, so
//! the single-threaded event loops never block on a slow peer.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Most bytes read from one stream per readiness event (fairness between peers).
const READ_BUDGET: usize = 1 << 20;

/// One end of a pipe or socket.
#[derive(Debug)]
pub struct Conn {
    fd: OwnedFd,
    /// Bytes read and not yet consumed.
    pub input: Vec<u8>,
    output: Vec<u8>,
    /// The peer closed its end (read returned 0 or the write side broke).
    pub eof: bool,
}

/// Puts `fd` into non-blocking mode.
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with no pointers involved.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Conn {
    /// Wraps `fd`, switching it to non-blocking mode.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        set_nonblocking(fd.as_raw_fd())?;
        Ok(Conn {
            fd,
            input: Vec::new(),
            output: Vec::new(),
            eof: false,
        })
    }

    /// The descriptor, for polling.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads what is available (up to a budget). Returns bytes read.
    pub fn fill(&mut self) -> io::Result<usize> {
        let mut total = 0;
        let mut chunk = [0u8; 64 * 1024];
        while total < READ_BUDGET {
            // SAFETY: reading into a stack buffer of the stated length.
            let n = unsafe { libc::read(self.raw(), chunk.as_mut_ptr().cast(), chunk.len()) };
            if n > 0 {
                self.input.extend_from_slice(&chunk[..n as usize]);
                total += n as usize;
                continue;
            }
            if n == 0 {
                self.eof = true;
                return Ok(total);
            }
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock => Ok(total),
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::ConnectionReset => {
                    self.eof = true;
                    Ok(total)
                }
                _ => Err(err),
            };
        }
        Ok(total)
    }

    /// Queues `bytes` and writes as much as the peer takes now.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.output.extend_from_slice(bytes);
        self.flush()
    }

    /// Writes queued bytes until the peer would block.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.output.is_empty() {
            // SAFETY: writing from a live buffer of the stated length. MSG_NOSIGNAL
            // is not available for pipes, so SIGPIPE is ignored process-wide instead.
            let n =
                unsafe { libc::write(self.raw(), self.output.as_ptr().cast(), self.output.len()) };
            if n >= 0 {
                self.output.drain(..n as usize);
                continue;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => return Ok(()),
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
                    self.output.clear();
                    self.eof = true;
                    return Ok(());
                }
                _ => return Err(err),
            }
        }
        Ok(())
    }

    /// Whether queued output is waiting for the peer.
    pub fn wants_write(&self) -> bool {
        !self.output.is_empty()
    }

    /// Writes everything queued, waiting for the peer if necessary (used
    /// before exit so the last messages are not lost).
    pub fn flush_blocking(&mut self, limit: std::time::Duration) -> io::Result<()> {
        let deadline = std::time::Instant::now() + limit;
        while self.wants_write() && !self.eof {
            self.flush()?;
            if !self.wants_write() {
                break;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "peer stopped reading",
                ));
            }
            let mut p = libc::pollfd {
                fd: self.raw(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one pollfd on the stack.
            unsafe { libc::poll(&mut p, 1, left.as_millis().min(1000) as i32) };
        }
        Ok(())
    }
}
