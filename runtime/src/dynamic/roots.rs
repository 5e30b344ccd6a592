//! The two roots' hand-shake over a port's socket (see the parent
//! module): the connector's hello, the acceptor's answer, and what each
//! root learns ([`Met`]).

use std::sync::atomic::{AtomicU64, Ordering};

use super::wire::{self, port_error, Wire};
use super::{own_port, unwords, words, Port};
use crate::comm::Comm;
use crate::error::Error;

/// First word of a hello ("OXMPORT" and a protocol version).
const MAGIC: u64 = 0x4f58_4d50_4f52_5401;
/// The acceptor's answer: accepted, or the hello named a wrong port.
const ACCEPTED: u64 = 0;
const REFUSED: u64 = 1;
static NEXT_NONCE: AtomicU64 = AtomicU64::new(0);

/// What a root learnt from the other root.
pub(super) enum Met {
    /// Both groups belong to this job: the other's world ranks, and the
    /// tag both pass to `intercomm_from_groups`.
    Same { remote: Vec<usize>, tag: String },
    /// The other group belongs to another job (of `remote` processes):
    /// the connection stays open for the bridge's set-up.
    Across { wire: Wire, remote: usize },
}

/// The connecting root's hello: `[magic, number, secret, nonce, root's
/// world rank, n]`, the group's `n` world ranks, the job id.
struct Hello {
    number: u32,
    secret: u64,
    nonce: u64,
    root: usize,
    ranks: Vec<usize>,
    job: String,
}

impl Hello {
    fn encode(&self) -> Vec<u8> {
        let mut b = words(&[
            MAGIC as usize,
            self.number as usize,
            self.secret as usize,
            self.nonce as usize,
            self.root,
            self.ranks.len(),
        ]);
        b.extend(words(&self.ranks));
        b.extend(self.job.as_bytes());
        b
    }

    /// `None` for bytes that are not a hello.
    fn decode(b: &[u8]) -> Option<Hello> {
        let head = unwords(b.get(..48)?);
        let n = head[5];
        let end = n.checked_mul(8)?.checked_add(48)?;
        if head[0] as u64 != MAGIC || end > b.len() {
            return None;
        }
        Some(Hello {
            number: u32::try_from(head[1]).ok()?,
            secret: head[2] as u64,
            nonce: head[3] as u64,
            root: head[4],
            ranks: unwords(&b[48..end]),
            job: String::from_utf8(b[end..].to_vec()).ok()?,
        })
    }
}

/// The acceptor's answer: `[status, m]`, its group's `m` world ranks, its
/// job id.
fn answer(status: u64, ranks: &[usize], job: &str) -> Vec<u8> {
    let mut b = words(&[status as usize, ranks.len()]);
    b.extend(words(ranks));
    b.extend(job.as_bytes());
    b
}

pub(super) fn accept_at_root(job: &str, comm: &Comm, name: &str) -> Result<Met, Error> {
    let (port, listener) = own_port(job, comm, name)?;
    let mine = comm.world_ranks().to_vec();
    loop {
        let mut w = wire::accept_one(comm, &listener, name)?;
        // A connector that gave up, or something that is not one: the
        // next connection.
        let Some(hello) = w.recv(comm).ok().and_then(|b| Hello::decode(&b)) else {
            continue;
        };
        if hello.number != port.number || hello.secret != port.secret {
            let _ = w.send(comm, &answer(REFUSED, &[], job));
            continue;
        }
        if w.send(comm, &answer(ACCEPTED, &mine, job)).is_err() {
            continue;
        }
        if hello.job != job {
            return Ok(Met::Across {
                wire: w,
                remote: hello.ranks.len(),
            });
        }
        if let Some(&both) = hello.ranks.iter().find(|r| mine.contains(r)) {
            return Err(overlapping(name, both));
        }
        let tag = creation_tag(&port, hello.root, hello.nonce);
        return Ok(Met::Same {
            remote: hello.ranks,
            tag,
        });
    }
}

pub(super) fn connect_at_root(job: &str, comm: &Comm, name: &str) -> Result<Met, Error> {
    let port = Port::parse(name)?;
    let mut w = Wire::connect(name, port.host, port.tcp)?;
    let mine = comm.world_ranks().to_vec();
    let hello = Hello {
        number: port.number,
        secret: port.secret,
        nonce: NEXT_NONCE.fetch_add(1, Ordering::Relaxed),
        root: comm.rt().world_rank,
        ranks: mine.clone(),
        job: job.to_string(),
    };
    w.send(comm, &hello.encode())?;
    let reply = w.recv(comm)?;
    let head = reply.get(..16).map(unwords).unwrap_or_default();
    let m = head.get(1).copied().unwrap_or(usize::MAX);
    let end = m.checked_mul(8).and_then(|x| x.checked_add(16));
    let Some(end) = end.filter(|&e| e <= reply.len()) else {
        return Err(port_error(name, "the answer is not an OxMPI port's"));
    };
    if head[0] as u64 != ACCEPTED {
        return Err(port_error(
            name,
            "the port's process refused the connection: its secret or number is not this \
             name's (a stale or mistyped port name)",
        ));
    }
    let theirs = String::from_utf8_lossy(&reply[end..]).into_owned();
    if theirs != job {
        return Ok(Met::Across { wire: w, remote: m });
    }
    let remote = unwords(&reply[16..end]);
    if let Some(&both) = remote.iter().find(|r| mine.contains(r)) {
        return Err(overlapping(name, both));
    }
    Ok(Met::Same {
        remote,
        tag: creation_tag(&port, hello.root, hello.nonce),
    })
}

fn overlapping(name: &str, world_rank: usize) -> Error {
    port_error(
        name,
        format!(
            "world rank {world_rank} is in both the accepting and the connecting group: \
             they must be disjoint"
        ),
    )
}

/// The tag both sides pass to `intercomm_from_groups`: the same on both,
/// different for every connection.
fn creation_tag(port: &Port, connector: usize, nonce: u64) -> String {
    format!("port:{}:{}:{connector}:{nonce}", port.rank, port.number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hellos_round_trip_and_garbage_is_not_one() {
        let h = Hello {
            number: 3,
            secret: 99,
            nonce: 5,
            root: 2,
            ranks: vec![2, 4, 6],
            job: "kvs_1_0".into(),
        };
        let back = Hello::decode(&h.encode()).unwrap();
        assert_eq!(
            (
                back.number,
                back.secret,
                back.nonce,
                back.root,
                back.ranks,
                back.job
            ),
            (3, 99, 5, 2, vec![2, 4, 6], "kvs_1_0".to_string())
        );
        assert!(Hello::decode(b"GET / HTTP/1.0\r\n\r\n").is_none());
        let mut long = h.encode();
        long[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Hello::decode(&long).is_none());
    }
}
