//! Modules. The double cannot run PTX: it reads the `.entry NAME(`
//! declarations of the text it is given, and `cuModuleGetFunction` finds
//! NAME among the kernels it carries (OxMPI's, compiled for the host).
//! Binary images (cubin, fatbin) are `CUDA_ERROR_INVALID_IMAGE`.

use std::ffi::{c_char, c_uint, c_void, CStr};

use crate::abi::{code, CUdeviceptr, CUresult, Handle};
use crate::guard::{driver_api, put};
use crate::kernels;
use crate::state::{self, Function, Module};

/// First bytes of an ELF image (cubin).
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// First bytes of a fatbin (0xba55ed50, little-endian).
const FATBIN_MAGIC: [u8; 4] = [0x50, 0xed, 0x55, 0xba];

/// The names declared by `.entry NAME(` in PTX text, in order.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%');
    let mut names = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        let after = &rest[at + ".entry".len()..];
        rest = after;
        let name_start = after.trim_start();
        if name_start.len() == after.len() {
            continue; // `.entry` must be followed by white space
        }
        let end = name_start
            .find(|c| !is_ident(c))
            .unwrap_or(name_start.len());
        let (name, tail) = name_start.split_at(end);
        if !name.is_empty() && tail.trim_start().starts_with('(') {
            names.push(name.to_string());
        }
    }
    names
}

/// Reads a module image: PTX text up to its NUL.
///
/// # Safety
/// `image` must be null or point to a NUL-terminated image.
unsafe fn read_image(image: *const c_void) -> Result<Vec<String>, CUresult> {
    if image.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let text = CStr::from_ptr(image.cast::<c_char>()).to_bytes();
    if text.starts_with(&ELF_MAGIC) || text.starts_with(&FATBIN_MAGIC) {
        return Err(code::INVALID_IMAGE);
    }
    let text = std::str::from_utf8(text).map_err(|_| code::INVALID_IMAGE)?;
    if !text.contains(".entry") && !text.contains(".version") {
        return Err(code::INVALID_IMAGE);
    }
    Ok(ptx_entries(text))
}

/// Registers a module with `entries` in the current context.
///
/// # Safety
/// `out` must be null or valid for a write.
unsafe fn load(out: *mut Handle, entries: Vec<String>) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    st.current()?;
    if out.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let handle = st.new_handle();
    st.modules.insert(handle, Module { entries });
    put(out, handle as Handle)
}

driver_api! {
    /// `cuModuleLoadData`: PTX text.
    fn cuModuleLoadData(module: *mut Handle, image: *const c_void) {
        let entries = read_image(image)?;
        load(module, entries)
    }

    /// `cuModuleLoadDataEx`: PTX text; JIT options are ignored.
    fn cuModuleLoadDataEx(
        module: *mut Handle,
        image: *const c_void,
        _num_options: c_uint,
        _options: *mut c_uint,
        _option_values: *mut *mut c_void,
    ) {
        let entries = read_image(image)?;
        load(module, entries)
    }

    /// `cuModuleLoad`: a PTX file.
    fn cuModuleLoad(module: *mut Handle, path: *const c_char) {
        if path.is_null() {
            return Err(code::INVALID_VALUE);
        }
        let path = CStr::from_ptr(path).to_str().map_err(|_| code::INVALID_VALUE)?;
        let mut bytes = std::fs::read(path).map_err(|_| code::FILE_NOT_FOUND)?;
        bytes.push(0);
        let entries = read_image(bytes.as_ptr().cast())?;
        load(module, entries)
    }

    /// `cuModuleUnload`: its functions go with it.
    fn cuModuleUnload(module: Handle) {
        let mut st = state::lock()?;
        let handle = module as usize;
        st.modules.remove(&handle).ok_or(code::INVALID_HANDLE)?;
        st.functions.retain(|_, f| f.module != handle);
        Ok(())
    }

    /// `cuModuleGetFunction`: `NOT_FOUND` unless the PTX declares the name
    /// and the double carries a kernel of that name.
    fn cuModuleGetFunction(function: *mut Handle, module: Handle, name: *const c_char) {
        let mut st = state::lock()?;
        let handle = module as usize;
        let declared = &st.modules.get(&handle).ok_or(code::INVALID_HANDLE)?.entries;
        if name.is_null() || function.is_null() {
            return Err(code::INVALID_VALUE);
        }
        let name = CStr::from_ptr(name).to_str().map_err(|_| code::NOT_FOUND)?;
        if !declared.iter().any(|e| e == name) {
            return Err(code::NOT_FOUND);
        }
        let kernel = kernels::find(name).ok_or(code::NOT_FOUND)?;
        let existing = st
            .functions
            .iter()
            .find(|(_, f)| f.module == handle && f.kernel.name == name)
            .map(|(&h, _)| h);
        let f = match existing {
            Some(f) => f,
            None => {
                let f = st.new_handle();
                st.functions.insert(f, Function { module: handle, kernel });
                f
            }
        };
        put(function, f as Handle)
    }

    /// `cuModuleGetGlobal_v2`: the carried kernels have no globals.
    fn cuModuleGetGlobal_v2[cuModuleGetGlobal](
        _dptr: *mut CUdeviceptr,
        _bytes: *mut usize,
        module: Handle,
        _name: *const c_char,
    ) {
        let st = state::lock()?;
        match st.modules.contains_key(&(module as usize)) {
            true => Err(code::NOT_FOUND),
            false => Err(code::INVALID_HANDLE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_from_ptx_text() {
        let ptx = ".version 8.5\n.target sm_90\n.address_size 64\n\n\
                   .visible .entry oxmpi_sum_f32(\n.param .u64 a\n)\n{}\n\
                   .visible .entry  oxmpi_max3_bf16 (\n)\n\
                   // .entryfoo( is not a declaration\n.func helper(\n";
        assert_eq!(ptx_entries(ptx), ["oxmpi_sum_f32", "oxmpi_max3_bf16"]);
        assert!(ptx_entries(".func f(").is_empty());
    }
}
