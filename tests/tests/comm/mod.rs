//! Shared pieces of the communicator suites: launching a role under oxrun
//! and small p2p helpers the rank programs use.

use std::time::Duration;

use oxmpi::{Comm, Error};
use oxmpi_tests::{oxrun, role_job, JobOutcome};

/// Runs this test binary as `n` ranks under oxrun playing `role`.
pub fn job(n: usize, role: &str) -> JobOutcome {
    role_job(
        &oxrun(),
        n,
        role,
        &[] as &[(&str, &str)],
        Duration::from_secs(180),
    )
}

/// Runs `role` at each rank count of `ns`; fails with the job's output.
pub fn check(ns: &[usize], role: &str) {
    for &n in ns {
        let out = job(n, role);
        assert!(out.success(), "{role} at {n} ranks:\n{}", out.describe());
    }
}

/// Sum of every rank's `value` over `comm`, with point-to-point only:
/// everyone sends to rank 0, which adds and sends the total back.
pub fn sum(comm: &Comm, value: i64, tag: i32) -> Result<i64, Error> {
    if comm.rank() == 0 {
        let mut total = value;
        for r in 1..comm.size() {
            let mut v = [0i64];
            comm.recv(&mut v, r, tag)?;
            total += v[0];
        }
        for r in 1..comm.size() {
            comm.send(&[total], r, tag)?;
        }
        Ok(total)
    } else {
        comm.send(&[value], 0, tag)?;
        let mut v = [0i64];
        comm.recv(&mut v, 0, tag)?;
        Ok(v[0])
    }
}

/// A ring exchange on `comm`: sends `[rank, marker]` to the next rank with
/// `tag` and returns what the previous rank sent.
pub fn ring(comm: &Comm, marker: i32, tag: i32) -> Result<[i32; 2], Error> {
    let (rank, size) = (comm.rank(), comm.size());
    let mut got = [0i32; 2];
    comm.sendrecv(
        &[rank, marker],
        (rank + 1) % size,
        tag,
        &mut got,
        (rank + size - 1) % size,
        tag,
    )?;
    Ok(got)
}
