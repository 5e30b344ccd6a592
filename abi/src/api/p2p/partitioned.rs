//! Partitioned point-to-point communication (MPI 4.0, chapter 4):
//! `MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready`, `MPI_Pready_range`,
//! `MPI_Pready_list`, `MPI_Parrived`.
//!
//! Partitioned requests are persistent requests
//! ([`PersistentOp::PartitionedSend`], [`PersistentOp::PartitionedRecv`]):
//! `MPI_Start*` activates them, `MPI_Wait*` / `MPI_Test*` complete them,
//! `MPI_Request_free` frees inactive ones. The whole buffer travels as one
//! message (which MPI allows): a send starts it once every partition is
//! marked ready, packing a non-contiguous type then; a receive is posted at
//! start, and `MPI_Parrived` says a partition arrived once the whole
//! message has. The matching of each operation to its partner, in the
//! order the initialization calls were made, is the runtime's
//! ([`oxmpi::Comm::partitioned_channel`]).

use std::ffi::{c_int, c_void};

use crate::api::datatype::p2p as datatype_p2p;
use crate::api::env::info::check_hints;
use crate::api::p2p;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info, MPI_Request};
use crate::objects::request::{PersistentOp, ReqEntry};
use crate::raise::guard;
use crate::{requests, state};

/// The body of `MPI_Psend_init` (`send`) and `MPI_Precv_init`.
///
/// # Safety
/// `buf` holds `partitions * count` elements of `datatype` whenever the
/// request is active; `request` is writable.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn init(
    name: &'static str,
    send: bool,
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let n = usize::try_from(partitions).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("invalid value {partitions} for argument `partitions`: negative"),
            )
        })?;
        if count < 0 {
            return Err(AbiError::new(
                Class::COUNT,
                format!("invalid count {count}: counts cannot be negative"),
            ));
        }
        let total = count
            .checked_mul(MPI_Count::from(partitions))
            .ok_or_else(|| {
                AbiError::new(
                    Class::COUNT,
                    format!("{partitions} partitions of {count} elements overflow MPI_Count"),
                )
            })?;
        check_hints(info)?;
        out_ptr(request, "request")?;
        let c = state::comm(comm)?;
        let plan = datatype_p2p::plan(buf, total, datatype, "buf")?;
        // Last: a channel takes the next matching sequence number.
        let channel = c.partitioned_channel(send, peer, tag)?;
        let (op, stage) = if send {
            let (buf, len, stage) = datatype_p2p::partitioned_send(plan);
            let ready = vec![false; n];
            let op = PersistentOp::PartitionedSend {
                buf,
                len,
                channel,
                ready,
                left: n,
            };
            (op, stage)
        } else {
            let (buf, cap, stage) = datatype_p2p::partitioned_recv(plan);
            let op = PersistentOp::PartitionedRecv {
                buf,
                cap,
                channel,
                partitions: n,
            };
            (op, stage)
        };
        // SAFETY: the caller's contract.
        unsafe { p2p::persistent::persistent(comm, op, stage, request) }
    })
}

/// `MPI_Psend_init`: a partitioned send of `partitions` partitions of
/// `count` elements each.
///
/// # Safety
/// `buf` holds `partitions * count` elements whenever the request is
/// active; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Psend_init(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        init(
            "MPI_Psend_init",
            true,
            buf,
            partitions,
            count,
            datatype,
            dest,
            tag,
            comm,
            info,
            request,
        )
    }
}

/// `MPI_Precv_init`: a partitioned receive (the source is a rank or
/// `MPI_PROC_NULL`, the tag no wildcard).
///
/// # Safety
/// `buf` has room for `partitions * count` elements whenever the request
/// is active; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Precv_init(
    buf: *mut c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        init(
            "MPI_Precv_init",
            false,
            buf,
            partitions,
            count,
            datatype,
            source,
            tag,
            comm,
            info,
            request,
        )
    }
}

/// A partition index argument outside `0..n`.
fn bad_partition(arg: &str, value: c_int, n: usize) -> AbiError {
    let valid = match n {
        0 => "the request has no partitions".to_owned(),
        n => format!("the request has {n} partitions (0..={})", n - 1),
    };
    AbiError::new(
        Class::ARG,
        format!("invalid partition {value} for argument `{arg}`: {valid}"),
    )
}

/// Checks partition index `value` (argument `arg`) against `n` partitions.
fn partition(arg: &str, value: c_int, n: usize) -> Result<usize, AbiError> {
    usize::try_from(value)
        .ok()
        .filter(|&p| p < n)
        .ok_or_else(|| bad_partition(arg, value, n))
}

/// Marks partitions of the active partitioned send `request` ready; the
/// message is sent once all are. `pick` turns the partition count into
/// the indices (checked, without side effects), which argument `arg` gave;
/// marking one twice per start is erroneous, and reported.
fn mark_ready(
    request: MPI_Request,
    arg: &str,
    pick: impl FnOnce(usize) -> Result<Vec<usize>, AbiError>,
) -> Result<(), AbiError> {
    if handles::request_ticket(request).is_some() {
        return Err(not_partitioned(request, "send"));
    }
    let slot = handles::request_slot(request)?.ok_or_else(|| {
        AbiError::new(
            Class::REQUEST,
            "invalid request MPI_REQUEST_NULL for argument `request`",
        )
    })?;
    let mut guard = state::lock();
    let st = &mut *guard;
    let (p, comm) = match st.requests.get_mut(slot) {
        Some(ReqEntry::Persistent { p, comm }) => (p, *comm),
        Some(_) => return Err(not_partitioned(request, "send")),
        None => return Err(requests::bad_entry(request)),
    };
    let PersistentOp::PartitionedSend { ready, left, .. } = &mut p.op else {
        return Err(not_partitioned(request, "send"));
    };
    if !p.started {
        return Err(AbiError::new(
            Class::REQUEST,
            format!("partitioned send {request:#010x} is not active (call MPI_Start first)"),
        ));
    }
    let picked = pick(ready.len())?;
    let mut seen = vec![false; ready.len()];
    for &i in &picked {
        let why = if ready[i] {
            "it is already marked ready since the last MPI_Start"
        } else if std::mem::replace(&mut seen[i], true) {
            "it is listed twice"
        } else {
            continue;
        };
        return Err(AbiError::new(
            Class::ARG,
            format!("invalid partition {i} for argument `{arg}`: {why}"),
        ));
    }
    for &i in &picked {
        ready[i] = true;
    }
    *left -= picked.len();
    if *left == 0 && !picked.is_empty() {
        requests::launch(p, &mut st.staged, slot, comm)?;
    }
    Ok(())
}

/// The error for a request that is not a partitioned `what` (send or receive).
fn not_partitioned(request: MPI_Request, what: &str) -> AbiError {
    AbiError::new(
        Class::REQUEST,
        format!("request {request:#010x} is not a partitioned {what} request"),
    )
}

/// `MPI_Pready`: partition `partition` of the send buffer is ready.
#[no_mangle]
pub extern "C" fn oxabi_Pready(partition: c_int, request: MPI_Request) -> c_int {
    guard("MPI_Pready", ErrObj::None, || {
        mark_ready(request, "partition", |n| {
            Ok(vec![self::partition("partition", partition, n)?])
        })
    })
}

/// `MPI_Pready_range`: partitions `partition_low..=partition_high` are ready.
#[no_mangle]
pub extern "C" fn oxabi_Pready_range(
    partition_low: c_int,
    partition_high: c_int,
    request: MPI_Request,
) -> c_int {
    guard("MPI_Pready_range", ErrObj::None, || {
        mark_ready(request, "partition_low", |n| {
            let low = partition("partition_low", partition_low, n)?;
            let high = partition("partition_high", partition_high, n)?;
            if high < low {
                return Err(AbiError::new(
                    Class::ARG,
                    format!(
                        "invalid range: `partition_high` {partition_high} is below \
                         `partition_low` {partition_low}"
                    ),
                ));
            }
            Ok((low..=high).collect())
        })
    })
}

/// `MPI_Pready_list`: the `length` partitions listed are ready.
///
/// # Safety
/// `array_of_partitions` has `length` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Pready_list(
    length: c_int,
    array_of_partitions: *const c_int,
    request: MPI_Request,
) -> c_int {
    guard("MPI_Pready_list", ErrObj::None, || {
        let len = usize::try_from(length).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("invalid value {length} for argument `length`: negative"),
            )
        })?;
        let list: &[c_int] = if len == 0 {
            &[]
        } else {
            let p = out_ptr(array_of_partitions.cast_mut(), "array_of_partitions")?;
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(p, len) }
        };
        mark_ready(request, "array_of_partitions", |n| {
            list.iter()
                .map(|&v| partition("array_of_partitions", v, n))
                .collect()
        })
    })
}

/// `MPI_Parrived`: whether partition `partition` of a partitioned receive
/// has arrived (here: once the whole message has), without completing the
/// request. A null or inactive request gives true (as MPI 4.1, 5.2.2,
/// says; MPI 4.0 does not say).
///
/// # Safety
/// `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Parrived(
    request: MPI_Request,
    partition: c_int,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Parrived", ErrObj::None, || {
        let flag = out_ptr(flag, "flag")?;
        if handles::request_ticket(request).is_some() {
            return Err(not_partitioned(request, "receive"));
        }
        let arrived = match handles::request_slot(request)? {
            None => true,
            Some(slot) => {
                let mut st = state::lock();
                st.reap_detached();
                let p = match st.requests.get_mut(slot) {
                    Some(ReqEntry::Persistent { p, .. }) => p,
                    Some(_) => return Err(not_partitioned(request, "receive")),
                    None => return Err(requests::bad_entry(request)),
                };
                let PersistentOp::PartitionedRecv { partitions, .. } = p.op else {
                    return Err(not_partitioned(request, "receive"));
                };
                self::partition("partition", partition, partitions)?;
                // Inactive, or complete (a waiting thread holds no request
                // then: it is still running).
                !p.started || p.active.as_mut().is_some_and(|r| r.peek().is_some())
            }
        };
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(arrived) };
        Ok(())
    })
}
