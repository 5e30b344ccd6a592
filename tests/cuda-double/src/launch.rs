//! Kernel launches: each pointer parameter is translated from its device
//! address to the double's shadow (all `n` elements must lie inside one
//! allocation, else `CUDA_ERROR_ILLEGAL_ADDRESS`, as a real kernel would
//! fault), and the host-compiled kernel runs once: its grid-stride loop
//! covers `n`. With `CUDA_DOUBLE_LOG=<file>` each launch appends
//! `launch <name> n=<n> pid=<pid>` to the file.

use std::ffi::{c_int, c_uint, c_void};
use std::io::Write;

use crate::abi::{code, CUresult, Handle};
use crate::guard::{driver_api, put};
use crate::kernels::{self, Kernel};
use crate::state::{self, Function};

/// Most threads in a block.
const MAX_BLOCK_THREADS: u64 = 1024;
/// Most static + dynamic shared memory a launch may ask for.
const MAX_SHARED_BYTES: c_uint = 227 << 10;

/// Appends the launch line to `$CUDA_DOUBLE_LOG`.
fn log_launch(kernel: &Kernel, n: u64) {
    log_line(&format!(
        "launch {} n={n} pid={}\n",
        kernel.name,
        std::process::id()
    ));
}

/// Appends `line` to `$CUDA_DOUBLE_LOG` (if set), in one `write`.
pub(crate) fn log_line(line: &str) {
    let Some(path) = std::env::var_os("CUDA_DOUBLE_LOG") else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Ok(mut file) = file {
        let _ = file.write(line.as_bytes());
    }
}

/// Checks the launch geometry.
fn check_geometry(grid: [c_uint; 3], block: [c_uint; 3], shared: c_uint) -> Result<(), CUresult> {
    let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
    if grid.contains(&0) || threads == 0 || threads > MAX_BLOCK_THREADS || block[2] > 64 {
        return Err(code::INVALID_VALUE);
    }
    if shared > MAX_SHARED_BYTES || grid[1] > 65535 || grid[2] > 65535 {
        return Err(code::INVALID_VALUE);
    }
    Ok(())
}

/// Runs `function` with the `kernelParams` array `params`.
///
/// # Safety
/// `params` must be null or hold one valid pointer per kernel parameter.
unsafe fn launch(
    function: Handle,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    stream: Handle,
    params: *mut *mut c_void,
) -> Result<(), CUresult> {
    let st = state::lock()?;
    st.current()?;
    let Function { kernel, .. } = *st
        .functions
        .get(&(function as usize))
        .ok_or(code::INVALID_HANDLE)?;
    st.check_stream(stream as usize)?;
    check_geometry(grid, block, shared)?;
    if params.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let pointers = kernel.entry.pointers();
    let read = |i: usize| (*params.add(i)).cast::<u64>().read_unaligned();
    let n = read(pointers);
    if n > 0 {
        let bytes = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(kernel.elem_size))
            .ok_or(code::ILLEGAL_ADDRESS)?;
        let mut shadows = [std::ptr::null_mut(); 3];
        for (i, shadow) in shadows.iter_mut().enumerate().take(pointers) {
            *shadow = st
                .mem
                .device_span(read(i) as usize, bytes, code::ILLEGAL_ADDRESS)?;
        }
        kernels::run(kernel, &shadows[..pointers], n);
    }
    log_launch(kernel, n);
    Ok(())
}

driver_api! {
    /// `cuLaunchKernel`: runs now, synchronously; `extra` is not supported.
    fn cuLaunchKernel(
        function: Handle,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared: c_uint,
        stream: Handle,
        params: *mut *mut c_void,
        _extra: *mut *mut c_void,
    ) {
        launch(function, [grid_x, grid_y, grid_z], [block_x, block_y, block_z], shared, stream, params)
    }

    /// `cuLaunchCooperativeKernel`: as `cuLaunchKernel`.
    fn cuLaunchCooperativeKernel(
        function: Handle,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared: c_uint,
        stream: Handle,
        params: *mut *mut c_void,
    ) {
        launch(function, [grid_x, grid_y, grid_z], [block_x, block_y, block_z], shared, stream, params)
    }

    /// `cuFuncGetAttribute`: plausible fixed values.
    fn cuFuncGetAttribute(value: *mut c_int, attrib: c_int, function: Handle) {
        let st = state::lock()?;
        if !st.functions.contains_key(&(function as usize)) {
            return Err(code::INVALID_HANDLE);
        }
        if !(0..=20).contains(&attrib) {
            return Err(code::INVALID_VALUE);
        }
        let v = match attrib {
            0 => 1024,    // MAX_THREADS_PER_BLOCK
            4 => 16,      // NUM_REGS
            5 | 6 => 90,  // PTX_VERSION, BINARY_VERSION
            8 => 48 << 10, // MAX_DYNAMIC_SHARED_SIZE_BYTES
            9 => -1,      // PREFERRED_SHARED_MEMORY_CARVEOUT
            _ => 0,
        };
        put(value, v)
    }

    /// `cuFuncSetAttribute`: accepted and ignored.
    fn cuFuncSetAttribute(function: Handle, _attrib: c_int, _value: c_int) {
        match state::lock()?.functions.contains_key(&(function as usize)) {
            true => Ok(()),
            false => Err(code::INVALID_HANDLE),
        }
    }

    /// `cuFuncSetCacheConfig`: accepted and ignored.
    fn cuFuncSetCacheConfig(function: Handle, _config: c_uint) {
        match state::lock()?.functions.contains_key(&(function as usize)) {
            true => Ok(()),
            false => Err(code::INVALID_HANDLE),
        }
    }
}
