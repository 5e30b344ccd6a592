//! Contexts: one primary context per device (retained / released), contexts
//! from `cuCtxCreate`, and each thread's current-context stack.

use std::ffi::{c_int, c_uint};

use crate::abi::{code, CUdevice, Handle};
use crate::guard::{driver_api, put};
use crate::state::{self, with_stack, Context};

driver_api! {
    /// `cuDevicePrimaryCtxRetain`.
    fn cuDevicePrimaryCtxRetain(ctx: *mut Handle, device: CUdevice) {
        let mut st = state::lock()?;
        st.check_device(device)?;
        let primary = &mut st.primary[device as usize];
        primary.refs += 1;
        put(ctx, primary.handle as Handle)
    }

    /// `cuDevicePrimaryCtxRelease_v2`: `INVALID_CONTEXT` when not retained.
    fn cuDevicePrimaryCtxRelease_v2[cuDevicePrimaryCtxRelease](device: CUdevice) {
        let mut st = state::lock()?;
        st.check_device(device)?;
        let primary = &mut st.primary[device as usize];
        primary.refs = primary.refs.checked_sub(1).ok_or(code::INVALID_CONTEXT)?;
        Ok(())
    }

    /// `cuDevicePrimaryCtxGetState`: active while retained.
    fn cuDevicePrimaryCtxGetState(device: CUdevice, flags: *mut c_uint, active: *mut c_int) {
        let st = state::lock()?;
        st.check_device(device)?;
        let primary = st.primary[device as usize];
        put(flags, primary.flags)?;
        put(active, c_int::from(primary.refs > 0))
    }

    /// `cuDevicePrimaryCtxSetFlags_v2`: recorded, otherwise ignored.
    fn cuDevicePrimaryCtxSetFlags_v2[cuDevicePrimaryCtxSetFlags](device: CUdevice, flags: c_uint) {
        let mut st = state::lock()?;
        st.check_device(device)?;
        st.primary[device as usize].flags = flags;
        Ok(())
    }

    /// `cuDevicePrimaryCtxReset_v2`: nothing to reset.
    fn cuDevicePrimaryCtxReset_v2[cuDevicePrimaryCtxReset](device: CUdevice) {
        state::lock()?.check_device(device)
    }

    /// `cuCtxCreate_v2`: a new context, pushed on this thread's stack.
    fn cuCtxCreate_v2[cuCtxCreate](ctx: *mut Handle, _flags: c_uint, device: CUdevice) {
        let mut st = state::lock()?;
        st.check_device(device)?;
        if ctx.is_null() {
            return Err(code::INVALID_VALUE);
        }
        let handle = st.new_handle();
        st.contexts.insert(handle, Context { device });
        with_stack(|stack| stack.push(handle));
        put(ctx, handle as Handle)
    }

    /// `cuCtxDestroy_v2`: only for contexts from `cuCtxCreate`.
    fn cuCtxDestroy_v2[cuCtxDestroy](ctx: Handle) {
        let mut st = state::lock()?;
        let handle = ctx as usize;
        if !st.contexts.contains_key(&handle) || st.primary.iter().any(|p| p.handle == handle) {
            return Err(code::INVALID_CONTEXT);
        }
        st.contexts.remove(&handle);
        with_stack(|stack| stack.retain(|&c| c != handle));
        Ok(())
    }

    /// `cuCtxSetCurrent`: replaces the top of the stack (null pops it).
    fn cuCtxSetCurrent(ctx: Handle) {
        let st = state::lock()?;
        let handle = ctx as usize;
        if handle != 0 && !st.contexts.contains_key(&handle) {
            return Err(code::INVALID_CONTEXT);
        }
        with_stack(|stack| {
            stack.pop();
            if handle != 0 {
                stack.push(handle);
            }
        });
        Ok(())
    }

    /// `cuCtxGetCurrent`: null when none.
    fn cuCtxGetCurrent(ctx: *mut Handle) {
        let _st = state::lock()?;
        let top = with_stack(|stack| stack.last().copied()).unwrap_or(0);
        put(ctx, top as Handle)
    }

    /// `cuCtxGetDevice`: the current context's device.
    fn cuCtxGetDevice(device: *mut CUdevice) {
        let (_, ctx) = state::lock()?.current()?;
        put(device, ctx.device)
    }

    /// `cuCtxPushCurrent_v2`.
    fn cuCtxPushCurrent_v2[cuCtxPushCurrent](ctx: Handle) {
        let st = state::lock()?;
        let handle = ctx as usize;
        if !st.contexts.contains_key(&handle) {
            return Err(code::INVALID_CONTEXT);
        }
        with_stack(|stack| stack.push(handle));
        Ok(())
    }

    /// `cuCtxPopCurrent_v2`: `INVALID_CONTEXT` on an empty stack.
    fn cuCtxPopCurrent_v2[cuCtxPopCurrent](ctx: *mut Handle) {
        let _st = state::lock()?;
        let top = with_stack(|stack| stack.pop()).ok_or(code::INVALID_CONTEXT)?;
        if !ctx.is_null() {
            put(ctx, top as Handle)?;
        }
        Ok(())
    }

    /// `cuCtxSynchronize`: all work already ran.
    fn cuCtxSynchronize() {
        state::lock()?.current().map(drop)
    }

    /// `cuCtxGetFlags`: 0.
    fn cuCtxGetFlags(flags: *mut c_uint) {
        state::lock()?.current()?;
        put(flags, 0)
    }

    /// `cuCtxSetFlags`: accepted and ignored.
    fn cuCtxSetFlags(_flags: c_uint) {
        state::lock()?.current().map(drop)
    }

    /// `cuCtxGetApiVersion`: 3020, what current drivers report.
    fn cuCtxGetApiVersion(ctx: Handle, version: *mut c_uint) {
        let st = state::lock()?;
        let handle = if ctx.is_null() { st.current()?.0 } else { ctx as usize };
        if !st.contexts.contains_key(&handle) {
            return Err(code::INVALID_CONTEXT);
        }
        put(version, 3020)
    }

    /// `cuCtxGetStreamPriorityRange`: least 0, greatest -5 (either out-pointer may be null).
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        state::lock()?.current()?;
        if !least.is_null() {
            put(least, 0)?;
        }
        if !greatest.is_null() {
            put(greatest, -5)?;
        }
        Ok(())
    }

    /// `cuCtxEnablePeerAccess`: all devices share one address space.
    fn cuCtxEnablePeerAccess(peer: Handle, _flags: c_uint) {
        let st = state::lock()?;
        st.current()?;
        match st.contexts.contains_key(&(peer as usize)) {
            true => Ok(()),
            false => Err(code::INVALID_CONTEXT),
        }
    }

    /// `cuCtxDisablePeerAccess`.
    fn cuCtxDisablePeerAccess(peer: Handle) {
        let st = state::lock()?;
        st.current()?;
        match st.contexts.contains_key(&(peer as usize)) {
            true => Ok(()),
            false => Err(code::INVALID_CONTEXT),
        }
    }
}
