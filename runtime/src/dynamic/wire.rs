//! The socket behind a port: the listener `MPI_Open_port` opens, the
//! address and secret its name carries, and the framed exchange of the two
//! roots over a connection to it. Every wait drives the engine's progress
//! (the root may owe its peers a rendezvous meanwhile) and, except the
//! acceptor's wait for a connector, ends at a deadline
//! ([`PORT_TIMEOUT`](crate::config::PORT_TIMEOUT)).

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::comm::Comm;
use crate::error::Error;

/// Largest frame either root accepts (a group's records: 256 bytes a member).
const MAX_FRAME: usize = 1 << 30;
/// How long one look at the socket lasts before the engine is polled again.
const LOOK_MS: u8 = 1;

/// An error of the connection, as `MPI_ERR_PORT` naming `port` (where
/// this process knows it: only the roots do).
pub(crate) fn port_error(port: &str, why: impl std::fmt::Display) -> Error {
    let reason = match port {
        "" => why.to_string(),
        _ => format!("{port:?}: {why}"),
    };
    Error::InvalidArgument {
        arg: "port_name",
        reason,
    }
}

/// The configured bound on each wait of a connection.
pub(crate) fn timeout() -> Result<Duration, Error> {
    let secs = crate::config::get(&crate::config::PORT_TIMEOUT)?;
    Ok(Duration::from_secs(secs.max(1) as u64))
}

/// The address a port's name carries: `OXMPI_PORT_HOST`, else an address
/// of this host name that a local interface holds, else the first
/// non-loopback, non-link-local IPv4 address of an interface that is up,
/// else the loopback address.
pub(crate) fn advertised_host() -> Result<Ipv4Addr, Error> {
    let set = crate::config::get(&crate::config::PORT_HOST)?;
    if !set.is_empty() {
        return ipv4_of(&set)
            .first()
            .copied()
            .ok_or_else(|| Error::State(format!("OXMPI_PORT_HOST={set:?} names no IPv4 address")));
    }
    let local: Vec<Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .map(|addrs| {
            addrs
                .filter(|a| a.flags.contains(nix::net::if_::InterfaceFlags::IFF_UP))
                .filter_map(|a| a.address?.as_sockaddr_in().map(|s| s.ip()))
                .filter(|ip| !ip.is_loopback() && !ip.is_link_local())
                .collect()
        })
        .unwrap_or_default();
    let name = nix::unistd::gethostname()
        .ok()
        .and_then(|n| n.into_string().ok())
        .unwrap_or_default();
    let named = ipv4_of(&name).into_iter().find(|ip| local.contains(ip));
    Ok(named
        .or_else(|| local.first().copied())
        .unwrap_or(Ipv4Addr::LOCALHOST))
}

fn ipv4_of(host: &str) -> Vec<Ipv4Addr> {
    (host, 0)
        .to_socket_addrs()
        .map(|addrs| {
            addrs
                .filter_map(|a| match a.ip() {
                    IpAddr::V4(v4) => Some(v4),
                    IpAddr::V6(_) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A fresh random secret (the kernel's generator).
pub(crate) fn secret() -> Result<u64, Error> {
    let mut b = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| Error::State(format!("MPI_Open_port: /dev/urandom: {e}")))?;
    Ok(u64::from_le_bytes(b))
}

/// A listener on every interface, on a port the kernel picks.
pub(crate) fn listen() -> Result<TcpListener, Error> {
    let l = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| Error::State(format!("MPI_Open_port: cannot listen on a socket: {e}")))?;
    Ok(l)
}

/// Waits until `fd` is ready for `events`, polling the engine between
/// looks; `Ok(false)` once `deadline` passed.
fn ready(comm: &Comm, fd: &impl AsFd, events: PollFlags, deadline: Option<Instant>) -> bool {
    loop {
        let mut fds = [PollFd::new(fd.as_fd(), events)];
        if let Ok(n) = poll(&mut fds, PollTimeout::from(LOOK_MS)) {
            if n > 0 {
                return true;
            }
        }
        comm.rt().poke();
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
    }
}

/// The next connection to `listener` (no deadline: a server waits for
/// its clients).
pub(crate) fn accept_one(comm: &Comm, listener: &TcpListener, port: &str) -> Result<Wire, Error> {
    loop {
        match listener.accept() {
            Ok((stream, peer)) => return Wire::new(stream, port, peer.to_string()),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                ready(comm, listener, PollFlags::POLLIN, None);
            }
            Err(e) => return Err(port_error(port, format!("accepting a connection: {e}"))),
        }
    }
}

/// One root's end of a connection between the two roots: length-prefixed
/// frames, each read and write bounded by the port timeout.
pub(crate) struct Wire {
    stream: TcpStream,
    port: String,
    peer: String,
    timeout: Duration,
}

impl Wire {
    fn new(stream: TcpStream, port: &str, peer: String) -> Result<Wire, Error> {
        stream
            .set_nonblocking(true)
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| port_error(port, format!("socket set-up: {e}")))?;
        Ok(Wire {
            stream,
            port: port.to_string(),
            peer,
            timeout: timeout()?,
        })
    }

    /// Connects to the listener at `host:tcp` (the connecting root).
    pub(crate) fn connect(port: &str, host: Ipv4Addr, tcp: u16) -> Result<Wire, Error> {
        let t = timeout()?;
        let stream = TcpStream::connect_timeout(&(host, tcp).into(), t).map_err(|e| {
            port_error(
                port,
                format!(
                    "nobody listens at {host}:{tcp} ({e}): the port was closed or its process \
                     ended"
                ),
            )
        })?;
        Wire::new(stream, port, format!("{host}:{tcp}"))
    }

    /// The port's name.
    pub(crate) fn port(&self) -> &str {
        &self.port
    }

    fn fail(&self, why: impl std::fmt::Display) -> Error {
        port_error(&self.port, format!("connection with {}: {why}", self.peer))
    }

    /// Sends one frame.
    pub(crate) fn send(&mut self, comm: &Comm, body: &[u8]) -> Result<(), Error> {
        let mut bytes = (body.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(body);
        let deadline = Instant::now() + self.timeout;
        let mut done = 0;
        while done < bytes.len() {
            match self.stream.write(&bytes[done..]) {
                Ok(0) => return Err(self.fail("the other side closed it")),
                Ok(n) => done += n,
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted =>
                {
                    if !ready(comm, &self.stream, PollFlags::POLLOUT, Some(deadline)) {
                        return Err(self.fail(format!("no progress for {:?}", self.timeout)));
                    }
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(())
    }

    fn fill(&mut self, comm: &Comm, buf: &mut [u8], deadline: Instant) -> Result<(), Error> {
        let mut done = 0;
        while done < buf.len() {
            match self.stream.read(&mut buf[done..]) {
                Ok(0) => {
                    return Err(self.fail(
                        "the other side closed it (its process ended or gave up: its own error \
                         says why)",
                    ))
                }
                Ok(n) => done += n,
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted =>
                {
                    if !ready(comm, &self.stream, PollFlags::POLLIN, Some(deadline)) {
                        return Err(self.fail(format!(
                            "no answer within {:?} (OXMPI_PORT_TIMEOUT)",
                            self.timeout
                        )));
                    }
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(())
    }

    /// Receives one frame.
    pub(crate) fn recv(&mut self, comm: &Comm) -> Result<Vec<u8>, Error> {
        let deadline = Instant::now() + self.timeout;
        let mut len = [0u8; 8];
        self.fill(comm, &mut len, deadline)?;
        let len = u64::from_le_bytes(len);
        if len > MAX_FRAME as u64 {
            return Err(self.fail(format!("a {len}-byte frame: not an OxMPI port connection")));
        }
        let mut body = vec![0u8; len as usize];
        self.fill(comm, &mut body, deadline)?;
        Ok(body)
    }

    /// Swaps one frame with the other root: the connector sends first.
    pub(crate) fn swap(
        &mut self,
        comm: &Comm,
        acceptor: bool,
        mine: &[u8],
    ) -> Result<Vec<u8>, Error> {
        if acceptor {
            let theirs = self.recv(comm)?;
            self.send(comm, mine)?;
            Ok(theirs)
        } else {
            self.send(comm, mine)?;
            self.recv(comm)
        }
    }
}
