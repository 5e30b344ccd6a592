//! Starting host agents: the local one over a socketpair, remote ones through
//! the launch command (`ssh HOST ...` by default), connecting back over TCP
//! and proving themselves with the per-job secret.

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

/// A started agent process (or launch command) and, for the local one, its link.
pub struct Spawned {
    /// Pid of the agent or of the launch command.
    pub pid: i32,
    /// The controller's end of the link (local agent only).
    pub link: Option<OwnedFd>,
}

fn child_setup(cmd: &mut Command) {
    // SAFETY: async-signal-safe calls only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // Own process group: a terminal's Ctrl-C reaches oxrun only,
            // which forwards it; die with oxrun so nothing is orphaned.
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() == 1 {
                libc::_exit(127);
            }
            crate::signals::reset_in_child();
            Ok(())
        });
    }
}

/// Starts the agent for this host, connected by a socketpair.
pub fn start_local() -> io::Result<Spawned> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("--proxy-fd")
        .arg(fd.to_string())
        .stdin(Stdio::null());
    child_setup(&mut cmd);
    // SAFETY: fcntl on the descriptor the child inherits; runs after fork.
    unsafe {
        cmd.pre_exec(move || {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    drop(theirs);
    Ok(Spawned {
        pid: child.id() as i32,
        link: Some(ours),
    })
}

/// Starts `launcher_cmd HOST oxrun --proxy-connect ADDR --proxy-host HOST`,
/// writing the secret to its stdin (never on a command line).
pub fn start_remote(
    launcher_cmd: &str,
    host: &str,
    addr: &str,
    secret: &str,
) -> io::Result<Spawned> {
    let mut words = launcher_cmd.split_whitespace();
    let program = words
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty launch command"))?;
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(program);
    cmd.args(words)
        .arg(host)
        .arg(exe)
        .args(["--proxy-connect", addr, "--proxy-host", host])
        .stdin(Stdio::piped());
    child_setup(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot run launch command '{program}': {e}"),
        )
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // The agent reads one line; a launch command that ignores stdin is fine.
        let _ = writeln!(stdin, "{secret}");
    }
    Ok(Spawned {
        pid: child.id() as i32,
        link: None,
    })
}

/// Listens for agents on one address only: `control_addr` (an address or
/// a name of this host) or, without it, this host's address as other hosts
/// see it. Only when this host's name has no non-loopback address (the
/// agents then dial the name) does it listen on every interface. Returns
/// the listener and the address agents should dial.
pub fn listen(control_addr: Option<&str>) -> io::Result<(TcpListener, String)> {
    let (listener, host) = match control_addr {
        Some(addr) => (bind_to(addr, "--control-addr")?, addr.to_string()),
        None => match own_address() {
            Ok(ip) => (
                bind_to(&ip.to_string(), "this host's address")?,
                ip.to_string(),
            ),
            Err(name) => (TcpListener::bind("0.0.0.0:0")?, name),
        },
    };
    let port = listener.local_addr()?.port();
    listener.set_nonblocking(true)?;
    let dial = match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port).to_string(),
        Err(_) => format!("{host}:{port}"),
    };
    Ok((listener, dial))
}

/// A listener on `addr` (port chosen by the kernel); errors name `what`
/// and the address.
fn bind_to(addr: &str, what: &str) -> io::Result<TcpListener> {
    let candidates: Vec<SocketAddr> = (addr, 0)
        .to_socket_addrs()
        .map_err(|e| io::Error::new(e.kind(), format!("{what} '{addr}': {e}")))?
        .collect();
    let mut last = None;
    for candidate in candidates {
        match TcpListener::bind(candidate) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    let why = last.map_or("it has no address".to_string(), |e| e.to_string());
    Err(io::Error::other(format!(
        "{what} '{addr}': cannot listen there for agents: {why}"
    )))
}

/// This host's address as other hosts see it: its name's first
/// non-loopback address; else Err(the name itself).
fn own_address() -> Result<IpAddr, String> {
    let name = crate::hosts::local_hostname();
    (name.as_str(), 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.find(|a| !a.ip().is_loopback()))
        .map(|a| a.ip())
        .ok_or(name)
}

/// A fresh random per-job secret (hex).
pub fn new_secret() -> io::Result<String> {
    let mut bytes = [0u8; 24];
    // SAFETY: getrandom fills our stack buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares secrets without revealing where they differ through timing.
pub fn secrets_match(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Wraps an accepted stream for the event loop.
pub fn adopt_stream(stream: std::net::TcpStream) -> io::Result<OwnedFd> {
    stream.set_nodelay(true)?;
    Ok(OwnedFd::from(stream))
}
