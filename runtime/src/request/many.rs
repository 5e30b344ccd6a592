//! Completion of several requests at once (`MPI_Waitall`, `Waitany`,
//! `Waitsome`, `Testall`, `Testany`, `Testsome`).

use super::{Request, RtRef};
use crate::error::Error;
use crate::progress::Runtime;
use crate::status::Status;

/// Waits for every request (`MPI_Waitall`); statuses in order. The first
/// error is returned after all requests have completed.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (me, p) = (world.rank(), world.size());
/// let mut bufs = vec![[0i32; 1]; p as usize];
/// let mut reqs = Vec::new();
/// for (src, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, src as i32, 0)?);
/// }
/// for dst in 0..p {
///     reqs.push(world.isend(std::slice::from_ref(&me), dst, 0)?);
/// }
/// let statuses = oxmpi::wait_all(reqs)?; // in the order of `reqs`
/// assert_eq!(statuses.len(), 2 * p as usize);
/// assert!(bufs.iter().enumerate().all(|(src, b)| b[0] == src as i32));
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_all(mut requests: Vec<Request<'_>>) -> Result<Vec<Status>, Error> {
    // Outcomes are kept in the requests as they are taken, so a wait that
    // unwinds leaves every request consistent.
    super::settle_all(&mut requests);
    let mut out = Vec::with_capacity(requests.len());
    let mut first_err = None;
    for r in requests.iter_mut() {
        match r.wait_mut() {
            Ok(s) => out.push(s),
            Err(e) => {
                if let Error::Truncated { status, .. } = &e {
                    out.push(*status);
                } else {
                    out.push(Status::empty());
                }
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

pub(super) fn any_rt(requests: &[Request<'_>]) -> Option<RtRef> {
    requests.iter().find(|r| !r.is_null()).map(|r| r.rt.clone())
}

/// Runs progress until one of `requests` has an outcome to take (the wait
/// of [`wait_any`] and [`wait_some`]).
fn wait_for_one_done(rt: &Runtime, requests: &[Request<'_>]) {
    rt.wait_until(|e| {
        requests
            .iter()
            .any(|r| {
                r.ready.is_some() || r.failed.is_some() || r.id.is_some_and(|id| e.reqs.is_done(id))
            })
            .then_some(())
    });
}

/// Waits until one request completes (`MPI_Waitany`): its index and status,
/// or `None` if every request is null. The completed request becomes null.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (mut a, mut b) = ([0u8], [0u8]);
/// let me = world.rank();
/// let mut reqs = vec![world.irecv(&mut a, me, 1)?, world.irecv(&mut b, me, 2)?];
/// world.send(&[2u8], world.rank(), 2)?;
/// let (i, st) = oxmpi::wait_any(&mut reqs)?.expect("a request is pending");
/// assert_eq!((i, st.tag), (1, 2));
/// world.send(&[1u8], world.rank(), 1)?;
/// assert_eq!(oxmpi::wait_any(&mut reqs)?.map(|(i, _)| i), Some(0));
/// assert!(oxmpi::wait_any(&mut reqs)?.is_none()); // all null now
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>, Error> {
    let Some(rt) = any_rt(requests) else {
        return Ok(None);
    };
    loop {
        if let Some((i, s)) = test_any(requests)? {
            return Ok(Some((i, s)));
        }
        wait_for_one_done(&rt, requests);
    }
}

/// Completes one request if any has finished (`MPI_Testany`).
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut buf = [0u8];
/// let mut reqs = vec![world.irecv(&mut buf, world.rank(), 0)?];
/// assert!(oxmpi::test_any(&mut reqs)?.is_none()); // nothing sent yet
/// world.send(&[1u8], world.rank(), 0)?;
/// while oxmpi::test_any(&mut reqs)?.is_none() {}
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done() {
            return r.test().map(|s| s.map(|s| (i, s)));
        }
    }
    Ok(None)
}

/// Waits until at least one request completes and completes all that have
/// (`MPI_Waitsome`): (index, status) pairs; empty if all are null.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut bufs = [[0u8]; 3];
/// let mut reqs = Vec::new();
/// for (tag, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, world.rank(), tag as i32)?);
/// }
/// for tag in 0..3 {
///     world.send(&[tag as u8], world.rank(), tag)?;
/// }
/// let mut done = 0;
/// while done < 3 {
///     done += oxmpi::wait_some(&mut reqs)?.len(); // (index, status) pairs
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>, Error> {
    let Some(rt) = any_rt(requests) else {
        return Ok(Vec::new());
    };
    loop {
        let done = test_some(requests)?;
        if !done.is_empty() {
            return Ok(done);
        }
        wait_for_one_done(&rt, requests);
    }
}

/// Completes every request that has finished (`MPI_Testsome`).
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut bufs = [[0u8]; 2];
/// let mut reqs = Vec::new();
/// for (tag, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, world.rank(), tag as i32)?);
/// }
/// world.send(&[0u8], world.rank(), 0)?;
/// let mut finished = Vec::new();
/// while finished.is_empty() {
///     finished = oxmpi::test_some(&mut reqs)?;
/// }
/// assert_eq!(finished[0].0, 0); // only the tag-0 receive could finish
/// world.send(&[1u8], world.rank(), 1)?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    let mut out = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done() {
            if let Some(s) = r.test()? {
                out.push((i, s));
            }
        }
    }
    Ok(out)
}

/// Completes all requests if all have finished (`MPI_Testall`); otherwise
/// `None` and none is completed.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (mut a, mut b) = ([0u8], [0u8]);
/// let me = world.rank();
/// let mut reqs = vec![world.irecv(&mut a, me, 1)?, world.irecv(&mut b, me, 2)?];
/// world.send(&[1u8], world.rank(), 1)?;
/// assert!(oxmpi::test_all(&mut reqs)?.is_none()); // tag 2 is still pending
/// world.send(&[2u8], world.rank(), 2)?;
/// let statuses = loop {
///     if let Some(s) = oxmpi::test_all(&mut reqs)? {
///         break s;
///     }
/// };
/// assert_eq!(statuses.len(), 2);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    if !requests.iter().all(|r| r.is_null() || r.done()) {
        return Ok(None);
    }
    requests
        .iter_mut()
        .map(|r| r.wait_mut())
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
