//! The messages between an origin and a target's window service, on the
//! window's private communicator. A request is little-endian u64 words:
//!
//! ```text
//! word 0: kind (bits 0..8) | op index + 1 (8..16) | element index + 1 (16..24) | flag (24)
//! word 1: the tag the reply goes to
//! word 2: n, the number of runs
//! words 3 .. 3 + 2n: runs (offset from the target's window base, bytes)
//! then the payload (put / accumulate data; compare-and-swap: new value, then compare value)
//! ```
//!
//! An index is the position in `BuiltinOp::ALL` / `ElemType::ALL` (0: none).
//! The flag is "fetch" for an accumulate (send back the old bytes) and
//! "exclusive" for a lock. A reply is one word of [`Status`], then the
//! payload (fetched bytes, or an error's reason in UTF-8).

use crate::error::{Error, ErrorClass};
use crate::ops::{BuiltinOp, ElemType};

/// Requests to a target's service.
pub(super) const REQUEST_TAG: i32 = 1;
/// A target's `MPI_Win_post` to a remote origin.
pub(super) const POST_TAG: i32 = 2;
/// An origin's `MPI_Win_complete` to a remote target.
pub(super) const DONE_TAG: i32 = 3;
/// Replies go to `REPLY_BASE + k` (`k` below `REPLY_SPAN`), one per
/// operation in flight on an origin thread.
pub(super) const REPLY_BASE: i32 = 16;
pub(super) const REPLY_SPAN: u32 = 1 << 24;

/// What a request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Write the payload into the runs.
    Put = 1,
    /// Send back the runs' bytes.
    Get = 2,
    /// Accumulate the payload into the runs (and, with the flag, send back
    /// the old bytes) under the target's accumulate lock.
    Accumulate = 3,
    /// Compare-and-swap one element (one run).
    CompareSwap = 4,
    /// Try to take the target's passive-target lock (flag: exclusive).
    Lock = 5,
    /// Release it (flag: exclusive).
    Unlock = 6,
    /// End the service (sent by the target process to itself).
    Stop = 7,
    /// Try to take the target's accumulate lock (an accumulate whose
    /// operation only the origin can compute: C's long double arithmetic).
    AccLock = 8,
    /// Release it.
    AccUnlock = 9,
}

impl Kind {
    fn from_code(c: u64) -> Option<Kind> {
        Some(match c {
            1 => Kind::Put,
            2 => Kind::Get,
            3 => Kind::Accumulate,
            4 => Kind::CompareSwap,
            5 => Kind::Lock,
            6 => Kind::Unlock,
            7 => Kind::Stop,
            8 => Kind::AccLock,
            9 => Kind::AccUnlock,
            _ => return None,
        })
    }
}

/// A reply's first word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// Done (a lock: taken).
    Done = 0,
    /// A lock (the passive-target lock, or the accumulate lock an
    /// accumulate needs) is held by someone else: try again.
    Busy = 1,
    /// The runs are not window memory of the target (`MPI_ERR_RMA_RANGE`).
    Range = 2,
    /// Another failure; the payload says which.
    Failed = 3,
}

/// A decoded request, borrowing the message.
#[derive(Debug)]
pub(super) struct Request<'a> {
    pub kind: Kind,
    pub op: Option<BuiltinOp>,
    pub elem: Option<ElemType>,
    pub flag: bool,
    pub reply_tag: i32,
    pub runs: Vec<(usize, usize)>,
    pub payload: &'a [u8],
}

fn index_of<T: PartialEq>(all: &[T], x: Option<&T>) -> u64 {
    x.and_then(|x| all.iter().position(|y| y == x))
        .map_or(0, |i| i as u64 + 1)
}

/// A request's bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn request(
    kind: Kind,
    op: Option<BuiltinOp>,
    elem: Option<ElemType>,
    flag: bool,
    reply_tag: i32,
    runs: &[(usize, usize)],
    payloads: &[&[u8]],
) -> Vec<u8> {
    let head = kind as u64
        | index_of(&BuiltinOp::ALL, op.as_ref()) << 8
        | index_of(&ElemType::ALL, elem.as_ref()) << 16
        | u64::from(flag) << 24;
    let data: usize = payloads.iter().map(|p| p.len()).sum();
    let mut v = Vec::with_capacity(24 + runs.len() * 16 + data);
    for w in [head, reply_tag as u64, runs.len() as u64] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    for &(off, len) in runs {
        v.extend_from_slice(&(off as u64).to_le_bytes());
        v.extend_from_slice(&(len as u64).to_le_bytes());
    }
    for p in payloads {
        v.extend_from_slice(p);
    }
    v
}

fn word(b: &[u8], i: usize) -> Option<u64> {
    let w = b.get(i * 8..i * 8 + 8)?;
    Some(u64::from_le_bytes(w.try_into().ok()?))
}

fn malformed(what: &str) -> Error {
    Error::Service(format!("a malformed window request: {what}"))
}

/// Decodes a request.
pub(super) fn parse(b: &[u8]) -> Result<Request<'_>, Error> {
    let head = word(b, 0).ok_or_else(|| malformed("no header"))?;
    let kind = Kind::from_code(head & 0xff).ok_or_else(|| malformed("unknown kind"))?;
    let pick = |all_len: usize, code: u64| -> Result<Option<usize>, Error> {
        match code {
            0 => Ok(None),
            c if (c as usize) <= all_len => Ok(Some(c as usize - 1)),
            _ => Err(malformed("unknown operation or type")),
        }
    };
    let op = pick(BuiltinOp::ALL.len(), (head >> 8) & 0xff)?.map(|i| BuiltinOp::ALL[i]);
    let elem = pick(ElemType::ALL.len(), (head >> 16) & 0xff)?.map(|i| ElemType::ALL[i]);
    let reply_tag = word(b, 1).ok_or_else(|| malformed("no reply tag"))? as i32;
    let n = word(b, 2).ok_or_else(|| malformed("no run count"))? as usize;
    let runs_end = n
        .checked_mul(16)
        .and_then(|x| x.checked_add(24))
        .filter(|&e| e <= b.len())
        .ok_or_else(|| malformed("runs past the message"))?;
    let runs = (0..n)
        .map(|i| {
            let off = word(b, 3 + 2 * i).unwrap_or(0) as usize;
            let len = word(b, 4 + 2 * i).unwrap_or(0) as usize;
            (off, len)
        })
        .collect();
    Ok(Request {
        kind,
        op,
        elem,
        flag: head >> 24 & 1 == 1,
        reply_tag,
        runs,
        payload: &b[runs_end..],
    })
}

/// A reply's bytes.
pub(super) fn reply(status: Status, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + payload.len());
    v.extend_from_slice(&(status as u64).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

/// A reply as the origin sees it: the payload on success (or a busy
/// lock: `Ok(None)`), else the target's error.
pub(super) fn outcome(b: &[u8], target: usize) -> Result<Option<&[u8]>, Error> {
    let status = word(b, 0).ok_or_else(|| malformed("an empty reply"))?;
    let payload = &b[8..];
    let reason = || String::from_utf8_lossy(payload).into_owned();
    match status {
        0 => Ok(Some(payload)),
        1 => Ok(None),
        2 => Err(super::super::rma_error(ErrorClass::RmaRange, reason())),
        _ => Err(Error::Service(format!(
            "target rank {target}'s window service: {}",
            reason()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips() {
        let runs = [(8, 4), (100, 12)];
        let b = request(
            Kind::Accumulate,
            Some(BuiltinOp::Maxloc),
            Some(ElemType::ShortInt),
            true,
            REPLY_BASE + 5,
            &runs,
            &[&[1, 2], &[3]],
        );
        let r = parse(&b).unwrap();
        assert_eq!(r.kind, Kind::Accumulate);
        assert_eq!(r.op, Some(BuiltinOp::Maxloc));
        assert_eq!(r.elem, Some(ElemType::ShortInt));
        assert!(r.flag);
        assert_eq!(r.reply_tag, REPLY_BASE + 5);
        assert_eq!(r.runs, runs);
        assert_eq!(r.payload, [1, 2, 3]);
        let lock = request(Kind::Lock, None, None, false, 20, &[], &[]);
        let r = parse(&lock).unwrap();
        assert_eq!(
            (r.kind, r.op, r.elem, r.flag),
            (Kind::Lock, None, None, false)
        );
    }

    #[test]
    fn bad_requests_and_replies_are_errors() {
        assert!(parse(&[]).is_err());
        assert!(parse(&9u64.to_le_bytes()).is_err());
        let mut b = request(Kind::Put, None, None, false, 20, &[(0, 1)], &[]);
        b[16] = 200; // 200 runs announced, one present
        assert!(parse(&b).is_err());
        let range = reply(Status::Range, b"outside");
        let e = outcome(&range, 3).unwrap_err();
        assert_eq!(e.class(), ErrorClass::RmaRange);
        assert_eq!(outcome(&reply(Status::Busy, &[]), 3).unwrap(), None);
        assert_eq!(
            outcome(&reply(Status::Done, &[7]), 3).unwrap(),
            Some(&[7u8][..])
        );
        assert!(outcome(&reply(Status::Failed, b"x"), 3).is_err());
    }
}
