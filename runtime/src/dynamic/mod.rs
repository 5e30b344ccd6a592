//! Ports and the connections made through them (MPI 4.0 section 11.8.2):
//! [`open_port`], [`close_port`], [`accept`], [`connect`] and [`join`].
//!
//! A port name says where its accepting root is:
//!
//! ```text
//! oxmpi-port:<job id>:<world rank>:<port number>
//! ```
//!
//! The two roots talk over the engine on a reserved context
//! ([`PORT_CONTEXT`]), with world ranks as envelope sources: the connecting
//! root sends `[reply tag, n]` and its group's `n` world ranks with the
//! port number as tag; the accepting root answers on the reply tag with
//! `[status, m]` and its own group. Each root then hands both groups to
//! its group on the communicator's collective context (or a failure word,
//! so nobody waits on a root that gave up), and both groups build the
//! intercommunicator with [`Comm::intercomm_from_groups`], whose context id
//! is agreed over both groups.
//!
//! Both sides must be processes of one job: processes of different jobs
//! (spawned children, or independent jobs) share no transport yet, so a
//! port of another job is refused naming that.

use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crate::comm::Comm;
use crate::error::Error;
use crate::group::Group;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};

pub mod spawn;

/// The context the two roots talk on: below `MPI_Comm_create_group`'s
/// agreements and apart from `intercomm_from_groups`' (base - 2).
pub(crate) const PORT_CONTEXT: u32 = 0x4000_0000 - 4;
/// Port numbers (the connect request's tag) stay below this.
const REPLY_TAG_BIT: i32 = 1 << 28;
/// A root's hand-off to its group, on the communicator's collective context.
const HANDOFF_TAG: i32 = 0x4000_0006;
/// The header word of a failed exchange.
pub(crate) const FAILED: u64 = u64::MAX;
/// Prefix of every port name.
const PREFIX: &str = "oxmpi-port:";

static NEXT_PORT: AtomicU32 = AtomicU32::new(1);
static NEXT_REPLY: AtomicU32 = AtomicU32::new(0);
static OPEN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A parsed port name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Port {
    job: String,
    rank: usize,
    number: u32,
}

impl Port {
    fn parse(name: &str) -> Result<Port, Error> {
        let bad = |why: &str| Error::InvalidArgument {
            arg: "port_name",
            reason: format!("{name:?} {why}"),
        };
        let rest = name
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("is not a port name of MPI_Open_port"))?;
        let mut fields = rest.rsplitn(3, ':');
        let number = fields.next().and_then(|s| s.parse::<u32>().ok());
        let rank = fields.next().and_then(|s| s.parse::<usize>().ok());
        match (fields.next(), rank, number) {
            (Some(job), Some(rank), Some(number))
                if !job.is_empty() && number > 0 && (number as i32) < REPLY_TAG_BIT =>
            {
                Ok(Port {
                    job: job.to_string(),
                    rank,
                    number,
                })
            }
            _ => Err(bad("is malformed (expected oxmpi-port:JOB:RANK:NUMBER)")),
        }
    }

    fn name(&self) -> String {
        format!("{PREFIX}{}:{}:{}", self.job, self.rank, self.number)
    }
}

/// Opens a port on this process (`MPI_Open_port`) of job `job`
/// ([`Universe::job_id`](crate::Universe::job_id)); `any` is any
/// communicator of this process. The name is what [`connect`] takes.
pub fn open_port(job: &str, any: &Comm) -> Result<String, Error> {
    let number = NEXT_PORT.fetch_add(1, Ordering::Relaxed);
    if number as i32 >= REPLY_TAG_BIT || number == 0 {
        return Err(Error::State(
            "MPI_Open_port: no port numbers are left".into(),
        ));
    }
    OPEN.lock().unwrap_or_else(|e| e.into_inner()).push(number);
    Ok(Port {
        job: job.to_string(),
        rank: any.rt().world_rank,
        number,
    }
    .name())
}

/// Closes a port this process opened (`MPI_Close_port`).
///
/// Errors: `MPI_ERR_PORT` naming the port when it is not one of this
/// process's open ports.
pub fn close_port(job: &str, any: &Comm, name: &str) -> Result<(), Error> {
    let port = own_port(job, any, name)?;
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|&n| n != port.number);
    Ok(())
}

/// The open port of this process that `name` names.
fn own_port(job: &str, any: &Comm, name: &str) -> Result<Port, Error> {
    let port = Port::parse(name)?;
    let mine = port.job == job
        && port.rank == any.rt().world_rank
        && OPEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&port.number);
    if !mine {
        return Err(Error::InvalidArgument {
            arg: "port_name",
            reason: format!("{name:?} is not a port this process opened (or it was closed)"),
        });
    }
    Ok(port)
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
/// group and the connecting one. Collective over `comm`; blocks until a
/// group connects.
pub fn accept(job: &str, comm: &Comm, port: &str, root: i32) -> Result<Comm, Error> {
    let root = check_root(comm, root)?;
    let mine = comm.group();
    let got = if comm.rank() as usize == root {
        Some(accept_at_root(job, comm, port, mine.world_ranks()))
    } else {
        None
    };
    finish(comm, root, &mine, got)
}

/// Connects to port `port` (significant at `root` only)
/// (`MPI_Comm_connect`): an intercommunicator between this communicator's
/// group and the accepting one. Collective over `comm`.
///
/// Errors: `MPI_ERR_PORT` for a name that is not a port, or a port of
/// another job (not supported yet).
pub fn connect(job: &str, comm: &Comm, port: &str, root: i32) -> Result<Comm, Error> {
    let root = check_root(comm, root)?;
    let mine = comm.group();
    let got = if comm.rank() as usize == root {
        Some(connect_at_root(job, comm, port, mine.world_ranks()))
    } else {
        None
    };
    finish(comm, root, &mine, got)
}

/// Hands the root's result (the remote group and the creation's tag) to
/// the group and builds the intercommunicator.
fn finish(
    comm: &Comm,
    root: usize,
    mine: &Group,
    got: Option<Result<(Vec<usize>, String), Error>>,
) -> Result<Comm, Error> {
    let got = got.map(|result| {
        result.map(|(remote, tag)| {
            let mut b = words(&[remote.len(), tag.len()]);
            b.extend(words(&remote));
            b.extend(tag.as_bytes());
            b
        })
    });
    let body = handoff(comm, root, got, || Error::InvalidArgument {
        arg: "port_name",
        reason: format!(
            "the root (rank {root}) could not make the connection (its own error says why)"
        ),
    })?;
    let head = unwords(&body[..16]);
    let remote = unwords(&body[16..16 + 8 * head[0]]);
    let tag = String::from_utf8_lossy(&body[16 + 8 * head[0]..]).into_owned();
    let remote = Group::from_world(remote, None);
    comm.intercomm_from_groups(mine, &remote, &tag)
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

fn accept_at_root(
    job: &str,
    comm: &Comm,
    name: &str,
    mine: &[usize],
) -> Result<(Vec<usize>, String), Error> {
    let port = own_port(job, comm, name)?;
    let me = comm.rt().world_rank as i32;
    let tag = port.number as i32;
    let mut head = [0u8; 16];
    let st = exchange(
        comm,
        PORT_CONTEXT,
        me,
        tag,
        &[],
        &mut [(SourceSel::Any, &mut head[..])],
    )?;
    let from = st[0].source;
    let head = unwords(&head);
    let (reply_tag, n) = (head[0] as i32, head[1]);
    let mut theirs = vec![0u8; 8 * n];
    exchange(
        comm,
        PORT_CONTEXT,
        me,
        tag,
        &[],
        &mut [(SourceSel::Rank(from), &mut theirs[..])],
    )?;
    let remote = unwords(&theirs);
    let overlap = remote.iter().find(|w| mine.contains(w));
    let status = if overlap.is_some() { FAILED } else { 0 };
    let reply_head = words(&[status as usize, mine.len()]);
    let body = words(mine);
    let to = from as usize;
    exchange(
        comm,
        PORT_CONTEXT,
        me,
        reply_tag,
        &[(to, &reply_head[..]), (to, &body[..])],
        &mut [],
    )?;
    if let Some(w) = overlap {
        return Err(overlapping(*w));
    }
    Ok((remote, creation_tag(&port, from as usize, reply_tag)))
}

fn connect_at_root(
    job: &str,
    comm: &Comm,
    name: &str,
    mine: &[usize],
) -> Result<(Vec<usize>, String), Error> {
    let port = Port::parse(name)?;
    if port.job != job || port.rank >= comm.rt().world_size {
        return Err(Error::InvalidArgument {
            arg: "port_name",
            reason: format!(
                "{name:?} is a port of job {} and this process belongs to job {}: connecting \
                 processes of different jobs is not supported yet",
                port.job, job
            ),
        });
    }
    let me = comm.rt().world_rank as i32;
    let reply_tag =
        REPLY_TAG_BIT | (NEXT_REPLY.fetch_add(1, Ordering::Relaxed) as i32 & 0x0fff_ffff);
    let head = words(&[reply_tag as usize, mine.len()]);
    let body = words(mine);
    let to = port.rank;
    let tag = port.number as i32;
    exchange(
        comm,
        PORT_CONTEXT,
        me,
        tag,
        &[(to, &head[..]), (to, &body[..])],
        &mut [],
    )?;
    let from = SourceSel::Rank(to as i32);
    let mut reply = [0u8; 16];
    exchange(
        comm,
        PORT_CONTEXT,
        me,
        reply_tag,
        &[],
        &mut [(from, &mut reply[..])],
    )?;
    let reply = unwords(&reply);
    let mut theirs = vec![0u8; 8 * reply[1]];
    exchange(
        comm,
        PORT_CONTEXT,
        me,
        reply_tag,
        &[],
        &mut [(from, &mut theirs[..])],
    )?;
    let remote = unwords(&theirs);
    if reply[0] as u64 == FAILED {
        let w = remote
            .iter()
            .find(|w| mine.contains(w))
            .copied()
            .unwrap_or(0);
        return Err(overlapping(w));
    }
    Ok((remote, creation_tag(&port, me as usize, reply_tag)))
}

fn overlapping(world_rank: usize) -> Error {
    Error::InvalidArgument {
        arg: "port_name",
        reason: format!(
            "world rank {world_rank} is in both the accepting and the connecting group: \
             they must be disjoint"
        ),
    }
}

/// The tag both sides pass to `intercomm_from_groups`: the same on both,
/// different for every connection.
fn creation_tag(port: &Port, connector: usize, reply_tag: i32) -> String {
    format!("port:{}:{}:{connector}:{reply_tag}", port.rank, port.number)
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
/// Errors: `MPI_ERR_ARG` naming `fd` when the socket fails; `MPI_ERR_PORT`
/// when the other process belongs to another job.
/// `own` is `MPI_COMM_SELF`.
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
        };
        assert_eq!(Port::parse(&p.name()).unwrap(), p);
        for bad in [
            "",
            "oxmpi-port:",
            "oxmpi-port:j:1",
            "oxmpi-port:j:x:1",
            "tcp://h:1",
        ] {
            let e = Port::parse(bad).unwrap_err();
            assert_eq!(e.class(), crate::ErrorClass::Port, "{bad}");
        }
        assert!(Port::parse("oxmpi-port:j:0:0").is_err());
    }
}
