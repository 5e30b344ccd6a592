//! The origin's side of the operations on a target of another host: the
//! target's runs (already checked against its window size where the
//! origin knows it) and the packed data go in one request; the call
//! returns once the target's service has applied it and replied.

use super::wire::{self, Kind};
use super::Link;
use crate::error::Error;
use crate::ops::{BuiltinOp, ElemType, Op};

fn total(runs: &[(usize, usize)]) -> usize {
    runs.iter().map(|r| r.1).sum()
}

/// `dst` filled from a reply of exactly its length.
fn fill(dst: &mut [u8], got: Option<&[u8]>, target: usize) -> Result<(), Error> {
    match got {
        Some(b) if b.len() == dst.len() => {
            dst.copy_from_slice(b);
            Ok(())
        }
        other => Err(Error::Service(format!(
            "target rank {target}'s window service replied {} bytes where {} were due",
            other.map_or(0, <[u8]>::len),
            dst.len()
        ))),
    }
}

impl Link {
    /// Writes `data` (packed) into `runs` of `target`. Returns once the
    /// request is sent (the data copied out of `data`); the target's
    /// acknowledgement is awaited by the next flush, unlock, fence or
    /// complete ([`Link::settle`]), except on dynamic windows, where a
    /// range error must come from the put itself.
    pub(in crate::rma) fn put(
        &self,
        target: usize,
        runs: &[(usize, usize)],
        data: &[u8],
    ) -> Result<(), Error> {
        if !self.defer_puts {
            return self.put_now(target, runs, data);
        }
        let tag = self.send_request(target, |tag| {
            wire::request(Kind::Put, None, None, false, tag, runs, &[data])
        })?;
        crate::comm::lock(&self.unacked).push((target, tag));
        Ok(())
    }

    /// [`Link::put`], returning once the target has applied it.
    fn put_now(&self, target: usize, runs: &[(usize, usize)], data: &[u8]) -> Result<(), Error> {
        debug_assert_eq!(total(runs), data.len());
        self.call(
            target,
            |tag| wire::request(Kind::Put, None, None, false, tag, runs, &[data]),
            |_| Ok(()),
        )
    }

    /// Reads `runs` of `target` into `dst` (packed).
    pub(in crate::rma) fn get(
        &self,
        target: usize,
        runs: &[(usize, usize)],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        self.call(
            target,
            |tag| wire::request(Kind::Get, None, None, false, tag, runs, &[]),
            |got| fill(dst, got, target),
        )
    }

    /// Accumulates `input` into `runs` of `target` with `op` on elements
    /// of `elem`, atomically per element with every other accumulate on
    /// that memory; `old`, if given, gets the bytes from before.
    pub(in crate::rma) fn accumulate(
        &self,
        target: usize,
        runs: &[(usize, usize)],
        op: &Op,
        elem: Option<ElemType>,
        input: &[u8],
        old: Option<&mut [u8]>,
    ) -> Result<(), Error> {
        let Op::Builtin(op) = op else {
            return self.accumulate_here(target, runs, op, elem, input, old);
        };
        let fetch = old.is_some();
        let payload: &[u8] = if *op == BuiltinOp::NoOp { &[] } else { input };
        let mut old = old;
        self.call_until_done(
            target,
            |tag| {
                wire::request(
                    Kind::Accumulate,
                    Some(*op),
                    elem,
                    fetch,
                    tag,
                    runs,
                    &[payload],
                )
            },
            |got| match old.as_deref_mut() {
                Some(dst) => fill(dst, Some(got), target),
                None => Ok(()),
            },
        )
    }

    /// An accumulate whose operation is a function of this process (C's
    /// long double arithmetic): read, reduce here and write back, holding
    /// the target's accumulate lock throughout, so it stays atomic with
    /// every other accumulate there.
    fn accumulate_here(
        &self,
        target: usize,
        runs: &[(usize, usize)],
        op: &Op,
        elem: Option<ElemType>,
        input: &[u8],
        old: Option<&mut [u8]>,
    ) -> Result<(), Error> {
        let reduce = op.reducer(elem)?;
        self.call_until_done(
            target,
            |tag| wire::request(Kind::AccLock, None, None, false, tag, &[], &[]),
            |_| Ok(()),
        )?;
        let applied = (|| {
            let mut current = vec![0u8; total(runs)];
            self.get(target, runs, &mut current)?;
            if let Some(dst) = old {
                dst.copy_from_slice(&current);
            }
            reduce(input, &mut current)?;
            self.put_now(target, runs, &current)
        })();
        let released = self.call(
            target,
            |tag| wire::request(Kind::AccUnlock, None, None, false, tag, &[], &[]),
            |_| Ok(()),
        );
        applied.and(released)
    }

    /// Compare-and-swap of the one element at `runs` of `target`: `old`
    /// gets its value, which becomes `new` if it equals `expected`.
    pub(in crate::rma) fn compare_swap(
        &self,
        target: usize,
        runs: &[(usize, usize)],
        new: &[u8],
        expected: &[u8],
        old: &mut [u8],
    ) -> Result<(), Error> {
        self.call_until_done(
            target,
            |tag| {
                wire::request(
                    Kind::CompareSwap,
                    None,
                    None,
                    false,
                    tag,
                    runs,
                    &[new, expected],
                )
            },
            |got| fill(old, Some(got), target),
        )
    }
}
