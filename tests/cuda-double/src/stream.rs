//! Streams and events. Work runs at submission, so every stream is idle and
//! every recorded event complete; the handles exist so that programs can be
//! checked for using them correctly (unknown handles are `INVALID_HANDLE`).

use std::ffi::{c_int, c_uint, c_void};
use std::time::Instant;

use crate::abi::{code, CUresult, Handle, EVENT_DISABLE_TIMING};
use crate::guard::{driver_api, put};
use crate::state::{self, Event};

/// A host function queued on a stream (`CUhostFn`).
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;

/// Creates a stream in the current context.
///
/// # Safety
/// `out` must be null or valid for a write.
unsafe fn create_stream(out: *mut Handle) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    let (ctx, _) = st.current()?;
    if out.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let handle = st.new_handle();
    st.streams.insert(handle, ctx);
    put(out, handle as Handle)
}

/// Records `event` (`INVALID_HANDLE` for unknown events or streams).
fn record(event: Handle, stream: Handle) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    st.check_stream(stream as usize)?;
    let ev = st
        .events
        .get_mut(&(event as usize))
        .ok_or(code::INVALID_HANDLE)?;
    ev.recorded = Some(Instant::now());
    Ok(())
}

/// Looks an event up (`INVALID_HANDLE`).
fn event(handle: Handle) -> Result<Event, CUresult> {
    let st = state::lock()?;
    st.events
        .get(&(handle as usize))
        .copied()
        .ok_or(code::INVALID_HANDLE)
}

driver_api! {
    /// `cuStreamCreate`.
    fn cuStreamCreate(stream: *mut Handle, _flags: c_uint) {
        create_stream(stream)
    }

    /// `cuStreamCreateWithPriority`: the priority is ignored.
    fn cuStreamCreateWithPriority(stream: *mut Handle, _flags: c_uint, _priority: c_int) {
        create_stream(stream)
    }

    /// `cuStreamDestroy_v2`: only streams from `cuStreamCreate*`.
    fn cuStreamDestroy_v2[cuStreamDestroy](stream: Handle) {
        let mut st = state::lock()?;
        st.streams.remove(&(stream as usize)).map(drop).ok_or(code::INVALID_HANDLE)
    }

    /// `cuStreamSynchronize`: nothing is ever pending.
    fn cuStreamSynchronize(stream: Handle) {
        state::lock()?.check_stream(stream as usize)
    }

    /// `cuStreamQuery`: always `CUDA_SUCCESS` (idle).
    fn cuStreamQuery(stream: Handle) {
        state::lock()?.check_stream(stream as usize)
    }

    /// `cuStreamWaitEvent`: the event has completed already.
    fn cuStreamWaitEvent(stream: Handle, event: Handle, _flags: c_uint) {
        let st = state::lock()?;
        st.check_stream(stream as usize)?;
        match st.events.contains_key(&(event as usize)) {
            true => Ok(()),
            false => Err(code::INVALID_HANDLE),
        }
    }

    /// `cuStreamGetPriority`: 0.
    fn cuStreamGetPriority(stream: Handle, priority: *mut c_int) {
        state::lock()?.check_stream(stream as usize)?;
        put(priority, 0)
    }

    /// `cuStreamGetFlags`: 0.
    fn cuStreamGetFlags(stream: Handle, flags: *mut c_uint) {
        state::lock()?.check_stream(stream as usize)?;
        put(flags, 0)
    }

    /// `cuStreamGetCtx`: the creating context (the current one for the
    /// default streams).
    fn cuStreamGetCtx(stream: Handle, ctx: *mut Handle) {
        let st = state::lock()?;
        st.check_stream(stream as usize)?;
        let owner = match st.streams.get(&(stream as usize)) {
            Some(&owner) => owner,
            None => st.current()?.0,
        };
        put(ctx, owner as Handle)
    }

    /// `cuLaunchHostFunc`: calls `f(data)` now, outside the driver lock.
    fn cuLaunchHostFunc(stream: Handle, f: HostFn, data: *mut c_void) {
        state::lock()?.check_stream(stream as usize)?;
        let f = f.ok_or(code::INVALID_VALUE)?;
        f(data);
        Ok(())
    }

    /// `cuEventCreate`.
    fn cuEventCreate(event: *mut Handle, flags: c_uint) {
        let mut st = state::lock()?;
        st.current()?;
        if event.is_null() {
            return Err(code::INVALID_VALUE);
        }
        let handle = st.new_handle();
        st.events.insert(handle, Event { flags, recorded: None });
        put(event, handle as Handle)
    }

    /// `cuEventDestroy_v2`.
    fn cuEventDestroy_v2[cuEventDestroy](event: Handle) {
        let mut st = state::lock()?;
        st.events.remove(&(event as usize)).map(drop).ok_or(code::INVALID_HANDLE)
    }

    /// `cuEventRecord`.
    fn cuEventRecord(event: Handle, stream: Handle) {
        record(event, stream)
    }

    /// `cuEventRecordWithFlags`: the flags are ignored.
    fn cuEventRecordWithFlags(event: Handle, stream: Handle, _flags: c_uint) {
        record(event, stream)
    }

    /// `cuEventSynchronize`: complete once recorded (or never recorded).
    fn cuEventSynchronize(handle: Handle) {
        event(handle).map(drop)
    }

    /// `cuEventQuery`: always `CUDA_SUCCESS` for a live event.
    fn cuEventQuery(handle: Handle) {
        event(handle).map(drop)
    }

    /// `cuEventElapsedTime`: milliseconds between the two records;
    /// `INVALID_HANDLE` if either has timing disabled or was never recorded.
    fn cuEventElapsedTime[cuEventElapsedTime_v2](ms: *mut f32, start: Handle, end: Handle) {
        let (start, end) = (event(start)?, event(end)?);
        if (start.flags | end.flags) & EVENT_DISABLE_TIMING != 0 {
            return Err(code::INVALID_HANDLE);
        }
        let (Some(t0), Some(t1)) = (start.recorded, end.recorded) else {
            return Err(code::INVALID_HANDLE);
        };
        let signed = if t1 >= t0 {
            (t1 - t0).as_secs_f64()
        } else {
            -(t0 - t1).as_secs_f64()
        };
        put(ms, (signed * 1e3) as f32)
    }
}
