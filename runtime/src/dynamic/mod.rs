//! Ports and the connections made through them (MPI 4.0 section 11.8.2):
//! [`open_port`], [`close_port`], [`accept`], [`connect`] and [`join`].
//!
//! A port is a listening TCP socket of the process that opened it, and its
//! name says how to reach it and proves the holder was given it:
//!
//! ```text
//! oxmpi-port:<job>:<world rank>:<port number>:<IPv4 address>:<TCP port>:<secret, 16 hex digits>
//! ```
//!
//! where the job is its id and, under oxrun, `+` the job's nonce
//! ([`JOB_NONCE_ENV`]).
//!
//! The connecting root connects to the socket (`wire`) and sends a hello
//! frame (`roots`): `[magic, port number, secret, nonce, its world rank,
//! n]`, its group's `n` world ranks, then its job. The accepting root
//! drops a connection that sends no hello, answers a wrong number or
//! secret with status 1 and keeps waiting; otherwise it answers
//! `[status 0, m]`, its group and its job. Same job: both groups are
//! processes of one job, and both build the intercommunicator with
//! [`Comm::intercomm_from_groups`] (context agreed over both groups).
//! Different jobs: the groups open a bridge to each other (`across`, the
//! transport spawned jobs use). Each root hands its group what it learnt
//! (or a failure word, so nobody waits on a root that gave up) on the
//! communicator's collective context.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::comm::Comm;
use crate::error::Error;
use crate::group::Group;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use roots::{accept_at_root, connect_at_root, Met};
use wire::port_error;

mod across;
mod roots;
pub mod spawn;
mod wire;

/// The context spawn's roots talk on: below `MPI_Comm_create_group`'s
/// agreements and apart from `intercomm_from_groups`' (base - 2).
pub(crate) const PORT_CONTEXT: u32 = 0x4000_0000 - 4;
/// A root's hand-off to its group, on the communicator's collective context.
const HANDOFF_TAG: i32 = 0x4000_0006;
/// The header word of a failed exchange.
pub(crate) const FAILED: u64 = u64::MAX;
/// Prefix of every port name.
const PREFIX: &str = "oxmpi-port:";
/// Hand-off kinds: both groups in one job, or a bridge between jobs.
const SAME_JOB: u64 = 0;
const ACROSS_JOBS: u64 = 1;

/// The variable in which oxrun gives every rank of a job the same random
/// nonce: two jobs are one when their job ids and nonces are equal (job
/// ids, `kvs_<oxrun pid>_0`, can repeat across hosts).
pub const JOB_NONCE_ENV: &str = "OXMPI_JOB_NONCE";

/// This job's identity in port names and hellos: its id and, under oxrun,
/// its nonce.
fn identity(job: &str) -> String {
    match std::env::var(JOB_NONCE_ENV) {
        Ok(nonce) if !nonce.is_empty() => format!("{job}+{nonce}"),
        _ => job.to_string(),
    }
}

static NEXT_PORT: AtomicU32 = AtomicU32::new(1);

/// A port this process opened and has not closed.
struct OpenPort {
    number: u32,
    secret: u64,
    listener: Arc<TcpListener>,
}

static OPEN: Mutex<Vec<OpenPort>> = Mutex::new(Vec::new());

/// A parsed port name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Port {
    job: String,
    rank: usize,
    number: u32,
    host: Ipv4Addr,
    tcp: u16,
    secret: u64,
}

impl Port {
    fn parse(name: &str) -> Result<Port, Error> {
        let bad = |why: &str| port_error(name, why);
        let rest = name
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("is not a port name of MPI_Open_port"))?;
        let f: Vec<&str> = rest.rsplitn(6, ':').collect();
        let parsed = (f.len() == 6 && !f[5].is_empty() && f[0].len() == 16)
            .then(|| {
                Some(Port {
                    job: f[5].to_string(),
                    rank: f[4].parse().ok()?,
                    number: f[3].parse().ok().filter(|&n| n > 0)?,
                    host: f[2].parse().ok()?,
                    tcp: f[1].parse().ok().filter(|&p| p > 0)?,
                    secret: u64::from_str_radix(f[0], 16).ok()?,
                })
            })
            .flatten();
        parsed.ok_or_else(|| {
            bad("is malformed (expected oxmpi-port:JOB:RANK:NUMBER:ADDRESS:TCP-PORT:SECRET)")
        })
    }

    fn name(&self) -> String {
        format!(
            "{PREFIX}{}:{}:{}:{}:{}:{:016x}",
            self.job, self.rank, self.number, self.host, self.tcp, self.secret
        )
    }
}

/// Opens a port on this process (`MPI_Open_port`) of job `job`
/// ([`Universe::job_id`](crate::Universe::job_id)); `any` is any
/// communicator of this process. The name is what [`connect`] takes, in
/// this job or another.
pub fn open_port(job: &str, any: &Comm) -> Result<String, Error> {
    let job = &identity(job);
    let number = NEXT_PORT.fetch_add(1, Ordering::Relaxed);
    if number == 0 || number == u32::MAX {
        return Err(Error::State(
            "MPI_Open_port: no port numbers are left".into(),
        ));
    }
    let listener = wire::listen()?;
    let tcp = listener
        .local_addr()
        .map_err(|e| Error::State(format!("MPI_Open_port: {e}")))?
        .port();
    let port = Port {
        job: job.to_string(),
        rank: any.rt().world_rank,
        number,
        host: wire::advertised_host()?,
        tcp,
        secret: wire::secret()?,
    };
    OPEN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(OpenPort {
            number,
            secret: port.secret,
            listener: Arc::new(listener),
        });
    Ok(port.name())
}

/// Closes a port this process opened (`MPI_Close_port`): connections to
/// it are refused from now on.
///
/// Errors: `MPI_ERR_PORT` naming the port when it is not one of this
/// process's open ports.
pub fn close_port(job: &str, any: &Comm, name: &str) -> Result<(), Error> {
    let job = &identity(job);
    let (port, _) = own_port(job, any, name)?;
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|p| p.number != port.number);
    Ok(())
}

/// The open port of this process (of job identity `job`) that `name`
/// names, and its listener.
fn own_port(job: &str, any: &Comm, name: &str) -> Result<(Port, Arc<TcpListener>), Error> {
    let port = Port::parse(name)?;
    let listener = (port.job == job && port.rank == any.rt().world_rank)
        .then(|| {
            OPEN.lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .find(|p| p.number == port.number && p.secret == port.secret)
                .map(|p| Arc::clone(&p.listener))
        })
        .flatten();
    match listener {
        Some(l) => Ok((port, l)),
        None => Err(port_error(
            name,
            "is not a port this process opened (or it was closed)",
        )),
    }
}

fn words(list: &[usize]) -> Vec<u8> {
    list.iter()
        .flat_map(|&w| (w as u64).to_le_bytes())
        .collect()
}

fn unwords(bytes: &[u8]) -> Vec<usize> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
        .collect()
}

pub(crate) fn check_root(comm: &Comm, root: i32) -> Result<usize, Error> {
    comm.check_intra("MPI_Comm_accept / MPI_Comm_connect")?;
    if !(0..comm.size()).contains(&root) {
        return Err(Error::InvalidRank {
            arg: "root",
            value: root,
            size: comm.size(),
        });
    }
    Ok(root as usize)
}

/// Accepts a connection on port `port` (significant at `root` only)
/// (`MPI_Comm_accept`): an intercommunicator between this communicator's
/// group and the connecting one, of this job or another. Collective over
/// `comm`; blocks until a group connects.
pub fn accept(job: &str, comm: &Comm, port: &str, root: i32) -> Result<Comm, Error> {
    let root = check_root(comm, root)?;
    let job = &identity(job);
    let met = (comm.rank() as usize == root).then(|| accept_at_root(job, comm, port));
    finish(comm, root, true, met)
}

/// Connects to port `port` (significant at `root` only)
/// (`MPI_Comm_connect`): an intercommunicator between this communicator's
/// group and the accepting one, of this job or another. Collective over
/// `comm`.
///
/// Errors: `MPI_ERR_PORT` naming the port for a name that is not a port,
/// a port closed or whose process ended, a wrong secret, or no answer
/// within `OXMPI_PORT_TIMEOUT`.
pub fn connect(job: &str, comm: &Comm, port: &str, root: i32) -> Result<Comm, Error> {
    let root = check_root(comm, root)?;
    let job = &identity(job);
    let met = (comm.rank() as usize == root).then(|| connect_at_root(job, comm, port));
    finish(comm, root, false, met)
}

/// Hands the root's result to the group and builds the intercommunicator.
fn finish(
    comm: &Comm,
    root: usize,
    acceptor: bool,
    met: Option<Result<Met, Error>>,
) -> Result<Comm, Error> {
    let mut wire = None;
    let got = met.map(|result| {
        result.map(|m| match m {
            Met::Same { remote, tag } => {
                let mut b = words(&[SAME_JOB as usize, remote.len(), tag.len()]);
                b.extend(words(&remote));
                b.extend(tag.as_bytes());
                b
            }
            Met::Across { wire: w, remote } => {
                wire = Some(w);
                words(&[ACROSS_JOBS as usize, remote, 0])
            }
        })
    });
    let body = handoff(comm, root, got, || Error::InvalidArgument {
        arg: "port_name",
        reason: format!(
            "the root (rank {root}) could not make the connection (its own error says why)"
        ),
    })?;
    let head = unwords(&body[..24]);
    if head[0] as u64 == ACROSS_JOBS {
        return across::build(comm, root, acceptor, head[1], wire);
    }
    let n = head[1];
    let remote = unwords(&body[24..24 + 8 * n]);
    let tag = String::from_utf8_lossy(&body[24 + 8 * n..]).into_owned();
    let mine = comm.group();
    let remote = Group::from_world(remote, None);
    comm.intercomm_from_groups(&mine, &remote, &tag)
}

/// The root's `got` (its result) on every member of `comm`: the root
/// sends the bytes, or a failure word so that nobody waits on a root that
/// gave up (the others then get `failed()`); on the collective context.
pub(crate) fn handoff(
    comm: &Comm,
    root: usize,
    got: Option<Result<Vec<u8>, Error>>,
    failed: impl Fn() -> Error,
) -> Result<Vec<u8>, Error> {
    let ctx = comm.collective_context();
    match got {
        Some(result) => {
            let header = match &result {
                Ok(b) => b.len() as u64,
                Err(_) => FAILED,
            }
            .to_le_bytes();
            for (r, &w) in comm.world_ranks().iter().enumerate() {
                if r != root {
                    let mut sends = vec![(w, &header[..])];
                    if let Ok(b) = &result {
                        sends.push((w, &b[..]));
                    }
                    exchange(comm, ctx, comm.rank(), HANDOFF_TAG, &sends, &mut [])?;
                }
            }
            result
        }
        None => {
            let from = SourceSel::Rank(root as i32);
            let mut header = [0u8; 8];
            exchange(
                comm,
                ctx,
                comm.rank(),
                HANDOFF_TAG,
                &[],
                &mut [(from, &mut header[..])],
            )?;
            let n = u64::from_le_bytes(header);
            if n == FAILED {
                return Err(failed());
            }
            let mut body = vec![0u8; n as usize];
            exchange(
                comm,
                ctx,
                comm.rank(),
                HANDOFF_TAG,
                &[],
                &mut [(from, &mut body[..])],
            )?;
            Ok(body)
        }
    }
}

/// Starts `sends` (world rank, bytes) and `recvs` (source, buffer of the
/// exact length) on `context` with envelope source `source` and tag `tag`,
/// and waits for all; the receives' statuses in order.
pub(crate) fn exchange(
    comm: &Comm,
    context: u32,
    source: i32,
    tag: i32,
    sends: &[(usize, &[u8])],
    recvs: &mut [(SourceSel, &mut [u8])],
) -> Result<Vec<crate::status::Status>, Error> {
    let rt = comm.rt();
    let (send_ids, recv_ids) = {
        let mut e = rt.engine();
        let mut recv_ids = Vec::with_capacity(recvs.len());
        for (from, buf) in recvs.iter_mut() {
            let pattern = Pattern {
                context,
                source: *from,
                tag: TagSel::Tag(tag),
            };
            // SAFETY: `recvs` stays borrowed (and writable) until we waited below.
            recv_ids.push(unsafe { e.start_recv(pattern, buf.as_mut_ptr(), buf.len()) });
        }
        let mut send_ids = Vec::with_capacity(sends.len());
        for &(to, buf) in sends {
            // SAFETY: `sends` stays borrowed until we waited below.
            send_ids.push(unsafe {
                e.start_send(to, context, source, tag, buf.as_ptr(), buf.len(), false)
            });
        }
        (send_ids, recv_ids)
    };
    let mut first_error = None;
    let mut statuses = Vec::with_capacity(recv_ids.len());
    for (id, (_, buf)) in recv_ids.into_iter().zip(recvs.iter()) {
        match rt.wait_until(|e| e.reqs.take_finished(id)) {
            Ok(st) if st.count == buf.len() && st.truncated_from.is_none() => statuses.push(st),
            Ok(st) => {
                first_error.get_or_insert(Error::State(format!(
                    "port connection: rank {} sent {} bytes where {} were expected",
                    st.source,
                    st.truncated_from.unwrap_or(st.count),
                    buf.len()
                )));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    for id in send_ids.into_iter().flatten() {
        if let Err(e) = rt.wait_until(|e| e.reqs.take_finished(id)) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(statuses), Err)
}

/// Connects this process with the one at the other end of the connected
/// stream socket `fd` (`MPI_Comm_join`): an intercommunicator of one
/// process on each side. Both open a port, swap names over the socket,
/// and the one with the smaller name accepts while the other connects.
///
/// The other process may belong to another job. `own` is `MPI_COMM_SELF`.
///
/// Errors: `MPI_ERR_ARG` naming `fd` when the socket fails.
pub fn join(job: &str, own: &Comm, fd: RawFd) -> Result<Comm, Error> {
    if fd < 0 {
        return Err(Error::InvalidArgument {
            arg: "fd",
            reason: format!("{fd} is not a descriptor"),
        });
    }
    let mine = open_port(job, own)?;
    let theirs = swap_names(fd, &mine);
    let result = theirs.and_then(|theirs| {
        if mine < theirs {
            accept(job, own, &mine, 0)
        } else if mine > theirs {
            connect(job, own, &theirs, 0)
        } else {
            Err(Error::InvalidArgument {
                arg: "fd",
                reason: "both ends of the socket are this process".into(),
            })
        }
    });
    let _ = close_port(job, own, &mine);
    result
}

/// Writes `mine` (length-prefixed) to the socket and reads the other's.
fn swap_names(fd: RawFd, mine: &str) -> Result<String, Error> {
    // SAFETY: the caller owns `fd` for the call; ManuallyDrop leaves it open.
    let file = std::mem::ManuallyDrop::new(unsafe {
        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
    });
    let mut sock: &std::fs::File = &file;
    let failed = |e: std::io::Error| Error::InvalidArgument {
        arg: "fd",
        reason: format!("socket {fd}: {e}"),
    };
    let mut msg = (mine.len() as u32).to_le_bytes().to_vec();
    msg.extend(mine.as_bytes());
    sock.write_all(&msg).map_err(failed)?;
    let mut len = [0u8; 4];
    sock.read_exact(&mut len).map_err(failed)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > 4096 {
        return Err(Error::InvalidArgument {
            arg: "fd",
            reason: format!("the other end sent a {len}-byte port name: not MPI_Comm_join"),
        });
    }
    let mut name = vec![0u8; len];
    sock.read_exact(&mut name).map_err(failed)?;
    String::from_utf8(name).map_err(|_| Error::InvalidArgument {
        arg: "fd",
        reason: "the other end sent a port name that is not UTF-8".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_round_trip_and_bad_ones_are_refused() {
        let p = Port {
            job: "kvs_12:3_0".into(),
            rank: 7,
            number: 42,
            host: Ipv4Addr::new(10, 0, 0, 2),
            tcp: 40_001,
            secret: 0x0123_4567_89ab_cdef,
        };
        assert_eq!(Port::parse(&p.name()).unwrap(), p);
        for bad in [
            "",
            "oxmpi-port:",
            "oxmpi-port:j:1",
            "oxmpi-port:j:0:1",
            "oxmpi-port:j:x:1:127.0.0.1:5:0123456789abcdef",
            "oxmpi-port:j:0:0:127.0.0.1:5:0123456789abcdef",
            "oxmpi-port:j:0:1:127.0.0.1:0:0123456789abcdef",
            "oxmpi-port:j:0:1:host:5:0123456789abcdef",
            "oxmpi-port:j:0:1:127.0.0.1:5:0123",
            "oxmpi-port::0:1:127.0.0.1:5:0123456789abcdef",
            "tcp://h:1",
        ] {
            let e = Port::parse(bad).unwrap_err();
            assert_eq!(e.class(), crate::ErrorClass::Port, "{bad}");
        }
    }
}
