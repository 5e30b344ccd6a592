//! Reductions as device kernels: the kernels of `kernels/cuda/reduce.cu`
//! compiled once per process by NVRTC, loaded once per context, launched
//! on the communicator's stream.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{result, sys};
use oxmpi_kernels::gpu::{self, Form};
use oxmpi_kernels::{ElemType, Op};

use super::ctx::{check, Entered};
use crate::error::Error;
use crate::mem::cuda_probe;

/// A built-in operation on an element type, both as the kernels name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceReduce {
    /// The operation.
    pub op: Op,
    /// The element type.
    pub ty: ElemType,
}

impl DeviceReduce {
    /// The in-place kernel of `op` on `ty`, if the device has one (SUM,
    /// PROD, MIN, MAX on f32, f64, i32, i64, f16, bf16).
    ///
    /// ```
    /// use oxmpi::mem::cuda::DeviceReduce;
    /// use oxmpi::ops::{BuiltinOp, ElemType};
    /// assert!(DeviceReduce::new(BuiltinOp::Sum, ElemType::F32).is_some());
    /// assert!(DeviceReduce::new(BuiltinOp::Band, ElemType::I32).is_none());
    /// ```
    pub fn new(op: Op, ty: ElemType) -> Option<DeviceReduce> {
        gpu::kernel_name(op, ty, Form::InPlace).map(|_| DeviceReduce { op, ty })
    }

    fn kernel(self) -> String {
        gpu::kernel_name(self.op, self.ty, Form::InPlace).unwrap_or_default()
    }
}

/// Whether the reduction kernels can run: NVRTC loaded and compiled them
/// (once per process). Without it, device reductions go through the host.
pub fn kernels_available() -> bool {
    ptx().is_ok()
}

/// The PTX of the reduction kernels, compiled at first use.
fn ptx() -> Result<&'static CString, Error> {
    static PTX: OnceLock<Result<CString, String>> = OnceLock::new();
    PTX.get_or_init(|| {
        let probe = cuda_probe::probe_nvrtc();
        if let Some(why) = probe.why_absent {
            return Err(format!("NVRTC is needed for device reductions: {why}"));
        }
        let ptx = cudarc::nvrtc::compile_ptx(gpu::SOURCE)
            .map_err(|e| format!("compiling {}: {e:?}", gpu::SOURCE_NAME))?;
        CString::new(ptx.to_src()).map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|why| Error::Device {
        what: "NVRTC",
        reason: why.clone(),
    })
}

/// A context's loaded module and the functions looked up so far.
struct Loaded {
    module: usize,
    functions: HashMap<String, usize>,
}

static LOADED: Mutex<Option<HashMap<usize, Loaded>>> = Mutex::new(None);

/// Loads `image` in the current context.
fn load(image: &CString) -> Result<Loaded, Error> {
    // SAFETY: a NUL-terminated PTX image; the context is current.
    let module = check("cuModuleLoadData", unsafe {
        result::module::load_data(image.as_ptr().cast())
    })?;
    Ok(Loaded {
        module: module as usize,
        functions: HashMap::new(),
    })
}

/// The function `kernel` in context `ctx` (current).
fn function(ctx: usize, kernel: &str) -> Result<sys::CUfunction, Error> {
    let mut all = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    let all = all.get_or_insert_with(HashMap::new);
    let loaded = match all.entry(ctx) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(e) => e.insert(load(ptx()?)?),
    };
    if !loaded.functions.contains_key(kernel) {
        let name = CString::new(kernel).map_err(|e| Error::Device {
            what: "cuModuleGetFunction",
            reason: e.to_string(),
        })?;
        // SAFETY: the module is loaded in this (current) context.
        let f = check("cuModuleGetFunction", unsafe {
            result::module::get_function(loaded.module as sys::CUmodule, name)
        })?;
        loaded.functions.insert(kernel.to_string(), f as usize);
    }
    Ok(loaded.functions[kernel] as sys::CUfunction)
}

/// `inout = input op inout` on `len` bytes of device memory in context
/// `ctx`, launched on `stream` (the communicator's), returning once the
/// kernel finished.
///
/// # Safety
/// `inout` and `input` are device memory of `ctx` holding `len` bytes
/// (a multiple of the element size), not overlapping.
pub unsafe fn reduce_on_device(
    r: DeviceReduce,
    inout: *mut u8,
    input: *const u8,
    len: usize,
    ctx: usize,
    stream: usize,
) -> Result<(), Error> {
    let n = (len / r.ty.size()) as u64;
    if n == 0 {
        return Ok(());
    }
    let _in = Entered::enter(ctx as sys::CUcontext)?;
    let f = function(ctx, &r.kernel())?;
    let stream = stream as sys::CUstream;
    const THREADS: u64 = 256;
    let blocks = n.div_ceil(THREADS).min(65_535) as u32;
    let mut out = inout as sys::CUdeviceptr;
    let mut inp = input as sys::CUdeviceptr;
    let mut count = n;
    let mut params: [*mut c_void; 3] = [
        (&mut out as *mut sys::CUdeviceptr).cast(),
        (&mut inp as *mut sys::CUdeviceptr).cast(),
        (&mut count as *mut u64).cast(),
    ];
    // SAFETY: the kernel's parameters are (T*, const T*, u64), each slot
    // points at a live value of that type; the caller's contract on memory.
    check("cuLaunchKernel", unsafe {
        result::launch_kernel(
            f,
            (blocks, 1, 1),
            (THREADS as u32, 1, 1),
            0,
            stream,
            &mut params,
        )
    })?;
    // SAFETY: the stream belongs to the current context.
    check("cuStreamSynchronize", unsafe {
        result::stream::synchronize(stream)
    })
}
