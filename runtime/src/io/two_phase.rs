//! Collective accesses with two-phase aggregation (ROMIO's scheme): the
//! ranks agree on the byte range the whole access covers, split it into
//! one file domain per aggregator (`cb_nodes` of them, spread over the
//! ranks), and move it in rounds of at most `cb_buffer_size` bytes per
//! aggregator. In a round every rank sends each aggregator the pieces of
//! its access inside that aggregator's window (an `alltoallv`), and the
//! aggregator makes one `pread` / `pwrite` of the window's span: ranks'
//! interleaved views become one large contiguous access. A write that
//! does not cover its span reads it first (read-modify-write).

use crate::coll::Blocks;
use crate::error::Error;
use crate::status::Status;

use super::data::{file_status, Buf};
use super::view::FileView;
use super::{agree, os_err, pread_full, File, Hints};

/// Rounds are at most this many: sparse accesses over huge ranges get
/// larger windows instead of many empty rounds.
const MAX_ROUNDS: u64 = 1024;

/// A piece of one rank's access: file offset, length, stream offset.
#[derive(Debug, Clone, Copy)]
struct Piece {
    off: u64,
    len: u64,
    at: u64,
}

/// How the global range is cut: domains, windows, aggregators.
struct Plan {
    lo: u64,
    dom: u64,
    window: u64,
    rounds: u64,
    aggs: u64,
    size: u64,
}

impl Plan {
    /// Agrees on the cut (collective): `None` when nobody accesses anything.
    fn agree(file: &File, pieces: &[Piece], hints: &Hints) -> Result<Option<Plan>, Error> {
        let comm = file.comm();
        let size = comm.size() as u64;
        let lo = pieces.iter().map(|p| p.off).min().unwrap_or(u64::MAX);
        let hi = pieces.iter().map(|p| p.off + p.len).max().unwrap_or(0);
        let mut all = vec![0u64; 2 * size as usize];
        comm.allgather(&[lo, hi], &mut all)?;
        let glo = all.iter().step_by(2).copied().min().unwrap_or(u64::MAX);
        let ghi = all.iter().skip(1).step_by(2).copied().max().unwrap_or(0);
        Ok(Plan::cut(glo, ghi, size, hints))
    }

    /// The cut of `lo .. hi` over `size` ranks (`None` when empty).
    fn cut(glo: u64, ghi: u64, size: u64, hints: &Hints) -> Option<Plan> {
        if glo >= ghi {
            return None;
        }
        let aggs = (hints.cb_nodes as u64).clamp(1, size);
        let dom = (ghi - glo).div_ceil(aggs);
        let mut window = (hints.cb_buffer_size as u64).max(1);
        if dom.div_ceil(window) > MAX_ROUNDS {
            window = dom.div_ceil(MAX_ROUNDS);
        }
        Some(Plan {
            lo: glo,
            dom,
            window,
            rounds: dom.div_ceil(window),
            aggs,
            size,
        })
    }

    /// The rank aggregating domain `a`.
    fn aggregator(&self, a: u64) -> u64 {
        a * self.size / self.aggs
    }

    /// Splits `pieces` at window boundaries: per round, (aggregator rank,
    /// piece) in the pieces' order.
    fn split(&self, pieces: &[Piece]) -> Vec<Vec<(u64, Piece)>> {
        let mut by_round = vec![Vec::new(); self.rounds as usize];
        for p in pieces {
            let (mut off, mut at, end) = (p.off, p.at, p.off + p.len);
            while off < end {
                let rel = off - self.lo;
                let a = (rel / self.dom).min(self.aggs - 1);
                let in_dom = rel - a * self.dom;
                let r = (in_dom / self.window).min(self.rounds - 1);
                let stop = (self.lo + a * self.dom + (r + 1) * self.window)
                    .min(self.lo + (a + 1) * self.dom);
                let stop = if a == self.aggs - 1 && r == self.rounds - 1 {
                    end
                } else {
                    stop.min(end)
                };
                let len = stop - off;
                by_round[r as usize].push((self.aggregator(a), Piece { off, len, at }));
                off += len;
                at += len;
            }
        }
        by_round
    }
}

/// One `alltoallv` of bytes: `parts[d]` goes to rank `d`; returns what
/// each rank sent here.
fn exchange(file: &File, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, Error> {
    let comm = file.comm();
    let p = parts.len();
    let scounts: Vec<u64> = parts.iter().map(|v| v.len() as u64).collect();
    let mut rcounts = vec![0u64; p];
    comm.alltoall(&scounts, &mut rcounts)?;
    let sc: Vec<usize> = scounts.iter().map(|&n| n as usize).collect();
    let rc: Vec<usize> = rcounts.iter().map(|&n| n as usize).collect();
    let (sd, rd) = (Blocks::packed_displs(&sc), Blocks::packed_displs(&rc));
    let send: Vec<u8> = parts.concat();
    let mut recv = vec![0u8; rc.iter().sum()];
    comm.alltoallv(
        &send,
        Blocks::new(&sc, &sd),
        &mut recv,
        Blocks::new(&rc, &rd),
    )?;
    Ok((0..p)
        .map(|s| recv[rd[s]..rd[s] + rc[s]].to_vec())
        .collect())
}

fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn get_u64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"))
}

/// Whether `pieces` (offset, length) cover `lo .. hi` without holes.
fn covers(mut pieces: Vec<(u64, u64)>, lo: u64, hi: u64) -> bool {
    pieces.sort_unstable();
    let mut reach = lo;
    for (o, n) in pieces {
        if o > reach {
            return false;
        }
        reach = reach.max(o + n);
    }
    reach >= hi
}

impl File {
    fn pieces(view: &FileView, pos: u64, len: u64) -> Result<Vec<Piece>, Error> {
        let mut at = 0;
        let mut out = Vec::new();
        for (off, n) in view.runs(pos, len)? {
            out.push(Piece { off, len: n, at });
            at += n;
        }
        Ok(out)
    }

    /// Writes `data` at stream byte `pos` of `view`, collectively.
    fn write_collective(
        &self,
        view: &FileView,
        pos: u64,
        data: &[u8],
        hints: &Hints,
    ) -> Result<(), Error> {
        let pieces = Self::pieces(view, pos, data.len() as u64)?;
        let Some(plan) = Plan::agree(self, &pieces, hints)? else {
            return Ok(());
        };
        let p = plan.size as usize;
        for round in plan.split(&pieces) {
            let mut heads: Vec<Vec<(u64, u64)>> = vec![Vec::new(); p];
            let mut bodies: Vec<Vec<u8>> = vec![Vec::new(); p];
            for (dest, pc) in &round {
                heads[*dest as usize].push((pc.off, pc.len));
                bodies[*dest as usize]
                    .extend_from_slice(&data[pc.at as usize..(pc.at + pc.len) as usize]);
            }
            let parts = heads
                .into_iter()
                .zip(bodies)
                .map(|(h, b)| {
                    let mut m = Vec::with_capacity(8 + 16 * h.len() + b.len());
                    put_u64(&mut m, h.len() as u64);
                    for (o, n) in h {
                        put_u64(&mut m, o);
                        put_u64(&mut m, n);
                    }
                    m.extend_from_slice(&b);
                    m
                })
                .collect();
            let got = exchange(self, parts)?;
            let mine = self.aggregate_write(&got);
            agree(self.comm(), mine)?;
        }
        Ok(())
    }

    /// An aggregator's part of a write round: one span, one `pwrite`.
    fn aggregate_write(&self, got: &[Vec<u8>]) -> Result<(), Error> {
        let mut all: Vec<(u64, u64, &[u8])> = Vec::new();
        for m in got.iter().filter(|m| !m.is_empty()) {
            let n = get_u64(m, 0) as usize;
            let mut data = 8 + 16 * n;
            for i in 0..n {
                let (o, len) = (get_u64(m, 1 + 2 * i), get_u64(m, 2 + 2 * i));
                all.push((o, len, &m[data..data + len as usize]));
                data += len as usize;
            }
        }
        if all.is_empty() {
            return Ok(());
        }
        let lo = all.iter().map(|x| x.0).min().unwrap_or(0);
        let hi = all.iter().map(|x| x.0 + x.1).max().unwrap_or(0);
        let mut span = vec![0u8; (hi - lo) as usize];
        let atomic = self.state().atomic;
        let _lock = atomic.then(|| self.lock_whole(true)).transpose()?;
        if !covers(all.iter().map(|x| (x.0, x.1)).collect(), lo, hi) {
            pread_full(self.fd(), &mut span, lo).map_err(|e| os_err("reading", self.path(), &e))?;
        }
        for (o, len, bytes) in all {
            let s = (o - lo) as usize;
            span[s..s + len as usize].copy_from_slice(bytes);
        }
        super::pwrite_all(self.fd(), &span, lo).map_err(|e| os_err("writing", self.path(), &e))
    }

    /// Reads stream bytes from `pos` of `view` into `out`, collectively;
    /// returns how many (up to the end of the file).
    fn read_collective(
        &self,
        view: &FileView,
        pos: u64,
        out: &mut [u8],
        hints: &Hints,
    ) -> Result<usize, Error> {
        let eof = self.size()?;
        let mut pieces = Vec::new();
        let mut valid = 0u64;
        for pc in Self::pieces(view, pos, out.len() as u64)? {
            if pc.off >= eof {
                break;
            }
            let len = pc.len.min(eof - pc.off);
            pieces.push(Piece { len, ..pc });
            valid = pc.at + len;
            if len < pc.len {
                break;
            }
        }
        let Some(plan) = Plan::agree(self, &pieces, hints)? else {
            return Ok(0);
        };
        let p = plan.size as usize;
        for round in plan.split(&pieces) {
            let mut asks: Vec<Vec<u8>> = vec![Vec::new(); p];
            for (dest, pc) in &round {
                put_u64(&mut asks[*dest as usize], pc.off);
                put_u64(&mut asks[*dest as usize], pc.len);
            }
            let wanted = exchange(self, asks)?;
            let replies = self.aggregate_read(&wanted);
            let replies = match agree(self.comm(), replies.as_ref().map(|_| ()).map_err(clone_err))
            {
                Ok(()) => replies?,
                Err(e) => return Err(e),
            };
            let back = exchange(self, replies)?;
            let mut used = vec![0usize; p];
            for (src, pc) in &round {
                let s = *src as usize;
                let n = pc.len as usize;
                out[pc.at as usize..pc.at as usize + n]
                    .copy_from_slice(&back[s][used[s]..used[s] + n]);
                used[s] += n;
            }
        }
        Ok(valid as usize)
    }

    /// An aggregator's part of a read round: one `pread` of the span the
    /// requests cover, then each rank's pieces in its order.
    fn aggregate_read(&self, wanted: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, Error> {
        let reqs: Vec<Vec<(u64, u64)>> = wanted
            .iter()
            .map(|m| {
                (0..m.len() / 16)
                    .map(|i| (get_u64(m, 2 * i), get_u64(m, 2 * i + 1)))
                    .collect()
            })
            .collect();
        let lo = reqs.iter().flatten().map(|x| x.0).min();
        let hi = reqs.iter().flatten().map(|x| x.0 + x.1).max();
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Ok(vec![Vec::new(); wanted.len()]);
        };
        let mut span = vec![0u8; (hi - lo) as usize];
        let atomic = self.state().atomic;
        let _lock = atomic.then(|| self.lock_whole(false)).transpose()?;
        pread_full(self.fd(), &mut span, lo).map_err(|e| os_err("reading", self.path(), &e))?;
        Ok(reqs
            .iter()
            .map(|r| {
                let mut v = Vec::new();
                for &(o, n) in r {
                    let s = (o - lo) as usize;
                    v.extend_from_slice(&span[s..s + n as usize]);
                }
                v
            })
            .collect())
    }

    /// A collective write of `buf` at etype `offset` of the view.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub(crate) unsafe fn write_view_at_all(
        &self,
        offset: u64,
        buf: &Buf,
        needs_pointers: Option<&str>,
    ) -> Result<Status, Error> {
        let (view, hints, atomic) = {
            let st = self.state();
            (st.view.clone(), st.hints.clone(), st.atomic)
        };
        let checked = needs_pointers
            .map_or(Ok(()), |what| self.check_not_sequential(what))
            .and_then(|()| self.check_writable_access())
            .and_then(|()| Self::etypes_of(&view, buf).map(|_| ()));
        agree(self.comm(), checked)?;
        // SAFETY: the caller's contract.
        let data = unsafe { buf.outgoing(view.datarep)? };
        let pos = offset * view.esize();
        if hints.cb_write {
            self.write_collective(&view, pos, &data, &hints)?;
        } else {
            let mine = self.write_stream(&view, pos, &data, atomic);
            agree(self.comm(), mine)?;
        }
        Ok(file_status(buf.dt.size() * buf.count))
    }

    /// A collective read into `buf` from etype `offset` of the view.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub(crate) unsafe fn read_view_at_all(
        &self,
        offset: u64,
        buf: &Buf,
        needs_pointers: Option<&str>,
    ) -> Result<Status, Error> {
        let (view, hints, atomic) = {
            let st = self.state();
            (st.view.clone(), st.hints.clone(), st.atomic)
        };
        let checked = needs_pointers
            .map_or(Ok(()), |what| self.check_not_sequential(what))
            .and_then(|()| self.check_readable())
            .and_then(|()| Self::etypes_of(&view, buf).map(|_| ()));
        agree(self.comm(), checked)?;
        let pos = offset * view.esize();
        // SAFETY: the caller's contract.
        unsafe {
            buf.incoming(view.datarep, |out| {
                if hints.cb_read {
                    self.read_collective(&view, pos, out, &hints)
                } else {
                    let mine = self.read_stream(&view, pos, out, atomic);
                    let n = *mine.as_ref().unwrap_or(&0);
                    agree(self.comm(), mine.map(|_| ()))?;
                    Ok(n)
                }
            })
        }
    }

    /// `MPI_File_write_at_all`.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write_at_all(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.write_view_at_all(offset, buf, Some("MPI_File_write_at_all")) }
    }

    /// `MPI_File_read_at_all`.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read_at_all(&self, offset: u64, buf: &Buf) -> Result<Status, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.read_view_at_all(offset, buf, Some("MPI_File_read_at_all")) }
    }

    /// `MPI_File_write_all`: at each rank's individual pointer.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write_all(&self, buf: &Buf) -> Result<Status, Error> {
        let at = self.state().pointer;
        // SAFETY: the caller's contract.
        let st = unsafe { self.write_view_at_all(at, buf, Some("MPI_File_write_all"))? };
        let (n, _) = Self::etypes_of(&self.state().view, buf)?;
        self.state().pointer = at + n;
        Ok(st)
    }

    /// `MPI_File_read_all`: at each rank's individual pointer.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read_all(&self, buf: &Buf) -> Result<Status, Error> {
        let at = self.state().pointer;
        // SAFETY: the caller's contract.
        let st = unsafe { self.read_view_at_all(at, buf, Some("MPI_File_read_all"))? };
        let moved = self.etypes_moved(&st, buf);
        self.state().pointer = at + moved;
        Ok(st)
    }

    /// Where each rank's part of an ordered access starts: the shared
    /// pointer, then the parts of lower ranks; the pointer moves past all.
    fn ordered_offset(&self, buf: &Buf) -> Result<u64, Error> {
        let mine = Self::etypes_of(&self.state().view, buf).map(|(n, _)| n);
        let n = *mine.as_ref().unwrap_or(&0);
        agree(self.comm(), mine.map(|_| ()))?;
        let comm = self.comm();
        let mut counts = vec![0u64; comm.size() as usize];
        comm.allgather(&[n], &mut counts)?;
        let total: u64 = counts.iter().sum();
        let before: u64 = counts[..comm.rank() as usize].iter().sum();
        let base = if comm.rank() == 0 {
            self.shared().fetch_add(total)
        } else {
            Ok(0)
        };
        let ok = base.as_ref().map(|_| ()).map_err(clone_err);
        agree(comm, ok)?;
        let mut b = [base?];
        comm.bcast(&mut b, 0)?;
        Ok(b[0] + before)
    }

    /// `MPI_File_write_ordered`: collective, in rank order at the shared pointer.
    ///
    /// # Safety
    /// `buf` holds its elements, readable.
    pub unsafe fn write_ordered(&self, buf: &Buf) -> Result<Status, Error> {
        let at = self.ordered_offset(buf)?;
        // SAFETY: the caller's contract.
        unsafe { self.write_view_at_all(at, buf, None) }
    }

    /// `MPI_File_read_ordered`.
    ///
    /// # Safety
    /// `buf` holds its elements, writable.
    pub unsafe fn read_ordered(&self, buf: &Buf) -> Result<Status, Error> {
        let at = self.ordered_offset(buf)?;
        // SAFETY: the caller's contract.
        unsafe { self.read_view_at_all(at, buf, None) }
    }

    /// A whole-file `fcntl` lock for an aggregator's access in atomic mode.
    fn lock_whole(&self, write: bool) -> Result<WholeLock<'_>, Error> {
        let kind = if write {
            nix::libc::F_WRLCK
        } else {
            nix::libc::F_RDLCK
        };
        super::access::set_lock(self.fd(), kind)?;
        Ok(WholeLock(self.fd()))
    }
}

/// Holds a whole-file lock until dropped.
struct WholeLock<'a>(&'a std::fs::File);

impl Drop for WholeLock<'_> {
    fn drop(&mut self) {
        let _ = super::access::set_lock(self.0, nix::libc::F_UNLCK);
    }
}

/// A copy of an error to agree on (the original stays with its rank).
fn clone_err(e: &Error) -> Error {
    Error::File {
        class: e.class(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(cb: usize, nodes: usize) -> Hints {
        Hints {
            cb_buffer_size: cb,
            cb_nodes: nodes,
            cb_read: true,
            cb_write: true,
        }
    }

    #[test]
    fn split_pieces_fall_in_one_window_each_and_keep_every_byte() {
        // Interleaved pieces of one rank over 0..1000, 3 aggregators of 4
        // ranks, windows of 64 bytes.
        let pieces: Vec<Piece> = (0..50)
            .map(|i| Piece {
                off: i * 20 + 3,
                len: 11,
                at: i * 11,
            })
            .collect();
        let plan = Plan::cut(3, 1000, 4, &hints(64, 3)).unwrap();
        assert_eq!((plan.aggs, plan.dom), (3, 333));
        assert_eq!(plan.rounds, 333u64.div_ceil(64));
        let rounds = plan.split(&pieces);
        let mut bytes = Vec::new();
        for (r, round) in rounds.iter().enumerate() {
            for (agg, p) in round {
                let a = (p.off - plan.lo) / plan.dom;
                assert_eq!(*agg, plan.aggregator(a), "piece {p:?}");
                let w = plan.lo + a * plan.dom + r as u64 * plan.window;
                assert!(
                    p.off >= w && p.off + p.len <= w + plan.window,
                    "{p:?} round {r}"
                );
                bytes.extend((0..p.len).map(|k| (p.off + k, p.at + k)));
            }
        }
        bytes.sort_unstable();
        let want: Vec<(u64, u64)> = pieces
            .iter()
            .flat_map(|p| (0..p.len).map(move |k| (p.off + k, p.at + k)))
            .collect();
        assert_eq!(bytes, want);
    }

    #[test]
    fn aggregators_spread_over_the_ranks_and_rounds_are_bounded() {
        let plan = Plan::cut(0, 100, 8, &hints(1 << 20, 2)).unwrap();
        assert_eq!((plan.aggregator(0), plan.aggregator(1)), (0, 4));
        assert_eq!(plan.rounds, 1);
        let sparse = Plan::cut(0, 1 << 40, 2, &hints(16, 2)).unwrap();
        assert!(sparse.rounds <= MAX_ROUNDS);
        assert!(Plan::cut(5, 5, 2, &hints(16, 2)).is_none());
    }

    #[test]
    fn coverage_of_a_span() {
        assert!(covers(vec![(10, 5), (0, 10)], 0, 15));
        assert!(!covers(vec![(0, 4), (5, 10)], 0, 15));
        assert!(covers(vec![(0, 10), (2, 3), (10, 5)], 0, 15));
    }
}
