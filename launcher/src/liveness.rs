//! Whether a silent peer across hosts is gone or only slow. The controller
//! and each remote agent beat every [`HEARTBEAT_INTERVAL`]; on a loaded
//! machine a live process can miss several beats (it is not scheduled),
//! while a cut link or a dead host must end the job within 3 s. The two
//! differ in the peer's kernel, which acknowledges TCP data whether or not
//! its process runs: while what we sent is acknowledged, the peer is
//! reachable and is given [`HEARTBEAT_STALL_LIMIT`]; once TCP retransmits
//! (nothing acknowledged for a retransmission timeout, a few hundred
//! milliseconds), [`HEARTBEAT_LIMIT`] of silence ends it. Our own beats
//! keep data in flight, so a cut link shows as retransmissions well
//! before the limit; a process that was itself starved sends its beats
//! first, and its peer acknowledges them before a timeout passes.
//!
//! [`HEARTBEAT_INTERVAL`]: crate::proto::HEARTBEAT_INTERVAL

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use crate::proto::{HEARTBEAT_LIMIT, HEARTBEAT_STALL_LIMIT};

/// `TCP_ESTABLISHED` of linux/tcp_states.h (libc does not export it).
const TCP_ESTABLISHED: u8 = 1;

/// How often a peer silent past [`HEARTBEAT_LIMIT`], whose kernel still
/// acknowledges, is looked at again.
const RECHECK: Duration = Duration::from_millis(100);

/// What the kernel says about a TCP connection's peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Established, nothing waits for a retransmission.
    Acknowledging,
    /// Data waits for an acknowledgement past a retransmission timeout (a
    /// cut link, a host gone), or the connection is not established.
    Silent,
    /// Not a TCP socket, or the kernel would not say.
    Unknown,
}

impl Reach {
    /// Reads `TCP_INFO` of socket `fd`.
    pub fn of(fd: RawFd) -> Reach {
        // SAFETY: tcp_info is plain data (all zeroes is a valid value).
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `info`.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut info as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        // The first bytes (state, retransmits, probes, backoff) are in
        // every kernel's answer.
        if rc != 0 || (len as usize) < 8 {
            return Reach::Unknown;
        }
        let established = info.tcpi_state == TCP_ESTABLISHED;
        if !established || info.tcpi_retransmits > 0 || info.tcpi_backoff > 0 {
            Reach::Silent
        } else {
            Reach::Acknowledging
        }
    }
}

/// Whether a peer that has said nothing for `silent` is lost.
pub fn lost(silent: Duration, reach: Reach) -> bool {
    match reach {
        Reach::Acknowledging => silent >= HEARTBEAT_STALL_LIMIT,
        Reach::Silent | Reach::Unknown => silent >= HEARTBEAT_LIMIT,
    }
}

/// When to look at a peer last heard at `last_heard` again.
pub fn next_check(last_heard: Instant, now: Instant) -> Instant {
    let limit = last_heard + HEARTBEAT_LIMIT;
    if limit > now {
        limit
    } else {
        (now + RECHECK).min(last_heard + HEARTBEAT_STALL_LIMIT)
    }
}

/// Why a lost peer is lost, for the one line that ends the job.
pub fn cause(reach: Reach) -> &'static str {
    match reach {
        Reach::Acknowledging => "its host acknowledges but its agent is stuck",
        Reach::Silent => "the link does not acknowledge",
        Reach::Unknown => "no heartbeat",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_reachable_peer_gets_longer_than_a_silent_one() {
        let s = Duration::from_secs_f64;
        assert!(!lost(s(1.9), Reach::Silent));
        assert!(lost(s(2.0), Reach::Silent));
        assert!(lost(s(2.0), Reach::Unknown));
        assert!(!lost(s(5.0), Reach::Acknowledging));
        assert!(lost(HEARTBEAT_STALL_LIMIT, Reach::Acknowledging));
        let now = Instant::now();
        assert_eq!(next_check(now, now), now + HEARTBEAT_LIMIT);
        let long_ago = now - s(3.0);
        assert_eq!(next_check(long_ago, now), now + RECHECK);
    }

    #[test]
    fn a_connected_peer_that_does_not_read_still_acknowledges() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut ours = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_theirs, _) = listener.accept().unwrap();
        ours.write_all(b"beat").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(Reach::of(ours.as_raw_fd()), Reach::Acknowledging);
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(Reach::of(a.as_raw_fd()), Reach::Unknown);
    }
}
