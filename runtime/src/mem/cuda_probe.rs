//! Probes for a CUDA driver and NVRTC without linking either and without
//! panicking: the libraries are opened with `libloading` and the few entry
//! points needed are looked up by name. This is what guards the later use of
//! cudarc, which panics when the library is missing.
//!
//! Layering inside this file: `sys` (signatures and library names),
//! `checked` (calls -> `Result` with the CUDA error name), then the safe
//! [`probe_gpu`] / [`probe_nvrtc`].

use std::fmt;

use libloading::Library;

/// Library names tried for the CUDA driver, in the order cudarc tries
/// them, so that the library probed is the one cudarc loads later.
pub fn cuda_libraries() -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    names.extend(cudarc::get_lib_name_candidates("nvcuda"));
    names
}

/// Library names tried for NVRTC, in cudarc's order (found via the dynamic
/// loader's search path, so `LD_LIBRARY_PATH` applies).
pub fn nvrtc_libraries() -> Vec<String> {
    cudarc::get_lib_name_candidates("nvrtc")
}

/// A CUDA version as the driver or NVRTC reports it.
///
/// ```
/// let gpu = oxmpi::info::HostReport::gather().gpu;
/// if let Some(v) = gpu.driver_version {
///     println!("CUDA driver {}.{} ({v})", v.major, v.minor);
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaVersion {
    /// Major version (e.g. 12).
    pub major: u32,
    /// Minor version (e.g. 4).
    pub minor: u32,
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What the CUDA driver probe found.
///
/// ```
/// let gpu = oxmpi::info::HostReport::gather().gpu;
/// // Never a panic: either devices or a reason.
/// assert!(!gpu.devices.is_empty() || gpu.why_absent.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GpuProbe {
    /// The library name that loaded, if any.
    pub library: Option<String>,
    /// The CUDA version the driver supports (`cuDriverGetVersion`).
    pub driver_version: Option<CudaVersion>,
    /// One name per device, in device-ordinal order.
    pub devices: Vec<String>,
    /// Why no device can be used; `None` when at least one device was found.
    pub why_absent: Option<String>,
}

/// What the NVRTC probe found.
///
/// ```
/// let nvrtc = oxmpi::info::HostReport::gather().nvrtc;
/// assert!(nvrtc.version.is_some() || nvrtc.why_absent.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NvrtcProbe {
    /// The library name that loaded, if any.
    pub library: Option<String>,
    /// `nvrtcVersion`.
    pub version: Option<CudaVersion>,
    /// Why NVRTC cannot be used; `None` when it loaded and answered.
    pub why_absent: Option<String>,
}

mod sys {
    use std::ffi::{c_char, c_int, c_uint};

    pub type CuInit = unsafe extern "C" fn(flags: c_uint) -> c_int;
    pub type CuDriverGetVersion = unsafe extern "C" fn(version: *mut c_int) -> c_int;
    pub type CuDeviceGetCount = unsafe extern "C" fn(count: *mut c_int) -> c_int;
    pub type CuDeviceGet = unsafe extern "C" fn(device: *mut c_int, ordinal: c_int) -> c_int;
    pub type CuDeviceGetName =
        unsafe extern "C" fn(name: *mut c_char, len: c_int, device: c_int) -> c_int;
    pub type CuGetErrorName = unsafe extern "C" fn(code: c_int, name: *mut *const c_char) -> c_int;
    pub type NvrtcVersion = unsafe extern "C" fn(major: *mut c_int, minor: *mut c_int) -> c_int;

    /// `CUDA_SUCCESS` / `NVRTC_SUCCESS`.
    pub const SUCCESS: c_int = 0;
}

mod checked {
    use std::ffi::{c_char, c_int, CStr};

    use libloading::Library;

    use super::sys;

    /// Opens the first library of `names` that loads; the error lists every
    /// name tried with the loader's reason.
    pub fn open_first<S: AsRef<str>>(names: &[S]) -> Result<(Library, String), String> {
        let mut first_failure = None;
        for name in names {
            let name = name.as_ref();
            // SAFETY: loading runs the library's initialisers; the CUDA and
            // NVRTC libraries have no initialisers with preconditions.
            match unsafe { Library::new(name) } {
                Ok(lib) => return Ok((lib, name.to_string())),
                // The loader's message already names the library.
                Err(e) => {
                    first_failure.get_or_insert(e.to_string());
                }
            }
        }
        Err(format!(
            "not loadable ({}; {} names tried, as cudarc does)",
            first_failure.unwrap_or_default(),
            names.len()
        ))
    }

    /// The function `name` of `lib`, copied out as a plain function pointer.
    ///
    /// # Safety
    /// `T` must be the symbol's true C signature.
    pub unsafe fn symbol<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        // SAFETY: the caller guarantees T is the symbol's signature.
        unsafe { lib.get::<T>(&cname) }
            .map(|s| *s)
            .map_err(|e| format!("{name} missing: {e}"))
    }

    /// Turns a CUresult into `Err("call: NAME (code)")`.
    pub fn cu(
        code: c_int,
        call: &str,
        error_name: Option<sys::CuGetErrorName>,
    ) -> Result<(), String> {
        if code == sys::SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        let named = match error_name {
            // SAFETY: cuGetErrorName writes a pointer to a static string.
            Some(f) => (unsafe { f(code, &mut text) }) == sys::SUCCESS && !text.is_null(),
            None => false,
        };
        let name = if named {
            // SAFETY: non-null and NUL-terminated, per cuGetErrorName.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        } else {
            "CUDA error".to_string()
        };
        Err(format!("{call}: {name} ({code})"))
    }

    /// Splits the driver's `1000 * major + 10 * minor` encoding.
    pub fn driver_version(encoded: c_int) -> Option<super::CudaVersion> {
        let v = u32::try_from(encoded).ok().filter(|v| *v > 0)?;
        Some(super::CudaVersion {
            major: v / 1000,
            minor: (v % 1000) / 10,
        })
    }
}

/// Probes the CUDA driver: loads it, reads its version, initialises it and
/// names every device. Never panics; every failure lands in `why_absent`.
pub fn probe_gpu() -> GpuProbe {
    probe_gpu_from(&cuda_libraries())
}

/// [`probe_gpu`] with an explicit list of library names to try.
pub fn probe_gpu_from<S: AsRef<str>>(names: &[S]) -> GpuProbe {
    let mut probe = GpuProbe::default();
    let (lib, name) = match checked::open_first(names) {
        Ok(found) => found,
        Err(why) => {
            probe.why_absent = Some(format!("CUDA driver {why}"));
            return probe;
        }
    };
    probe.library = Some(name);
    if let Err(why) = query_driver(&lib, &mut probe) {
        probe.why_absent = Some(why);
    } else if probe.devices.is_empty() {
        probe.why_absent = Some("the CUDA driver reports no devices".into());
    }
    // Unloading the driver after cuInit is not safe (it leaves threads
    // behind); keep it loaded for the life of the process. cudarc will open
    // the same library again later.
    std::mem::forget(lib);
    probe
}

fn query_driver(lib: &Library, probe: &mut GpuProbe) -> Result<(), String> {
    // SAFETY (each symbol below): the signature is the driver API's, per cuda.h.
    let error_name = unsafe { checked::symbol::<sys::CuGetErrorName>(lib, "cuGetErrorName") }.ok();
    let init = unsafe { checked::symbol::<sys::CuInit>(lib, "cuInit") }?;
    let get_version =
        unsafe { checked::symbol::<sys::CuDriverGetVersion>(lib, "cuDriverGetVersion") }?;
    let get_count = unsafe { checked::symbol::<sys::CuDeviceGetCount>(lib, "cuDeviceGetCount") }?;
    let get_device = unsafe { checked::symbol::<sys::CuDeviceGet>(lib, "cuDeviceGet") }?;
    let get_name = unsafe { checked::symbol::<sys::CuDeviceGetName>(lib, "cuDeviceGetName") }?;

    let mut version = 0;
    // SAFETY: the out-pointer is valid; allowed before cuInit.
    checked::cu(
        unsafe { get_version(&mut version) },
        "cuDriverGetVersion",
        error_name,
    )?;
    probe.driver_version = checked::driver_version(version);

    // SAFETY: cuInit takes flags, which must be 0.
    checked::cu(unsafe { init(0) }, "cuInit", error_name)?;
    let mut count = 0;
    // SAFETY: the out-pointer is valid; the driver is initialised.
    checked::cu(
        unsafe { get_count(&mut count) },
        "cuDeviceGetCount",
        error_name,
    )?;
    for ordinal in 0..count.max(0) {
        let mut device = 0;
        // SAFETY: valid out-pointer; ordinal < count.
        checked::cu(
            unsafe { get_device(&mut device, ordinal) },
            "cuDeviceGet",
            error_name,
        )?;
        let mut buf = [0u8; 256];
        // SAFETY: `buf` holds 256 bytes; the driver writes a NUL-terminated
        // name of at most `len` bytes.
        let code = unsafe { get_name(buf.as_mut_ptr().cast(), buf.len() as i32, device) };
        checked::cu(code, "cuDeviceGetName", error_name)?;
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        probe
            .devices
            .push(String::from_utf8_lossy(&buf[..end]).into_owned());
    }
    Ok(())
}

/// Probes NVRTC: loads it and asks `nvrtcVersion`. Never panics.
pub fn probe_nvrtc() -> NvrtcProbe {
    probe_nvrtc_from(&nvrtc_libraries())
}

/// [`probe_nvrtc`] with an explicit list of library names to try.
pub fn probe_nvrtc_from<S: AsRef<str>>(names: &[S]) -> NvrtcProbe {
    let mut probe = NvrtcProbe::default();
    let (lib, name) = match checked::open_first(names) {
        Ok(found) => found,
        Err(why) => {
            probe.why_absent = Some(format!("NVRTC {why}"));
            return probe;
        }
    };
    probe.library = Some(name);
    // SAFETY: the signature is nvrtcVersion's, per nvrtc.h.
    match unsafe { checked::symbol::<sys::NvrtcVersion>(&lib, "nvrtcVersion") } {
        Err(why) => probe.why_absent = Some(why),
        Ok(version) => {
            let (mut major, mut minor) = (0, 0);
            // SAFETY: both out-pointers are valid.
            let code = unsafe { version(&mut major, &mut minor) };
            if code == sys::SUCCESS {
                probe.version = Some(CudaVersion {
                    major: u32::try_from(major).unwrap_or(0),
                    minor: u32::try_from(minor).unwrap_or(0),
                });
            } else {
                probe.why_absent = Some(format!("nvrtcVersion failed ({code})"));
            }
        }
    }
    probe
}

impl fmt::Display for GpuProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.why_absent {
            Some(why) => write!(f, "unavailable: {why}")?,
            None => write!(f, "{} device(s)", self.devices.len())?,
        }
        if let Some(v) = &self.driver_version {
            write!(f, "; driver supports CUDA {v}")?;
        }
        if let Some(lib) = &self.library {
            write!(f, " ({lib})")?;
        }
        for (i, name) in self.devices.iter().enumerate() {
            write!(f, "; device {i}: {name}")?;
        }
        Ok(())
    }
}

impl fmt::Display for NvrtcProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.version, &self.why_absent) {
            (Some(v), _) => write!(f, "NVRTC {v}")?,
            (None, Some(why)) => write!(f, "unavailable: {why}")?,
            (None, None) => write!(f, "unavailable")?,
        }
        if let Some(lib) = &self.library {
            write!(f, " ({lib})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_driver_is_reported_cleanly() {
        let probe = probe_gpu_from(&["libcuda-oxmpi-test-missing.so"]);
        assert!(probe.library.is_none());
        assert!(probe.devices.is_empty());
        let why = probe.why_absent.expect("absence explained");
        assert!(why.contains("libcuda-oxmpi-test-missing.so"), "{why}");
    }

    #[test]
    fn missing_nvrtc_is_reported_cleanly() {
        let probe = probe_nvrtc_from(&["libnvrtc-oxmpi-test-missing.so"]);
        assert!(probe.version.is_none());
        assert!(probe
            .why_absent
            .expect("absence explained")
            .contains("missing.so"));
    }

    #[test]
    fn host_probe_is_consistent() {
        let gpu = probe_gpu();
        assert_eq!(gpu.why_absent.is_none(), !gpu.devices.is_empty(), "{gpu:?}");
        let nvrtc = probe_nvrtc();
        assert_eq!(
            nvrtc.why_absent.is_none(),
            nvrtc.version.is_some(),
            "{nvrtc:?}"
        );
    }

    #[test]
    fn driver_version_decodes() {
        assert_eq!(
            checked::driver_version(12040),
            Some(CudaVersion {
                major: 12,
                minor: 4
            })
        );
        assert_eq!(checked::driver_version(0), None);
    }
}
