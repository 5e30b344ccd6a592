//! Compiles OxMPI's device kernels (`kernels/cuda/reduce.cu`) for the host
//! behind `kernels/cuda/host_shim.h`, and generates the table that
//! `cuModuleGetFunction` searches: one entry per name in
//! `oxmpi_kernels::gpu::kernel_names()`, with its element size and form.

use std::fmt::Write as _;
use std::path::PathBuf;

use oxmpi_kernels::gpu::{self, Form};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let cuda_dir = manifest.join("../../kernels/cuda");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    for file in ["reduce.cu", "host_shim.h"] {
        println!("cargo:rerun-if-changed={}", cuda_dir.join(file).display());
    }

    // One translation unit: the shim, then the CUDA source as is.
    let unit = out.join("reduce_host.cpp");
    std::fs::write(&unit, "#include \"host_shim.h\"\n#include \"reduce.cu\"\n").unwrap();
    cc::Build::new()
        .cpp(true)
        // Only <cstring>'s memcpy is used: no C++ runtime to link.
        .cpp_link_stdlib(None)
        .include(&cuda_dir)
        .file(&unit)
        .flag("-std=c++11")
        .flag("-ffp-contract=off")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .opt_level(2)
        .compile("oxmpi_double_kernels");

    std::fs::write(out.join("kernel_table.rs"), kernel_table()).unwrap();
}

/// Rust source declaring every kernel and listing it in `KERNELS`.
fn kernel_table() -> String {
    let mut decls = String::from("extern \"C\" {\n");
    let mut table = String::from(
        "/// Every kernel the double carries.\npub(crate) static KERNELS: &[Kernel] = &[\n",
    );
    for op in gpu::OPS {
        for ty in gpu::TYPES {
            for form in [Form::InPlace, Form::Out] {
                let Some(name) = gpu::kernel_name(op, ty, form) else {
                    continue;
                };
                let (params, entry) = match form {
                    Form::InPlace => ("inout: *mut u8, input: *const u8", "InPlace"),
                    Form::Out => ("out: *mut u8, a: *const u8, b: *const u8", "Out"),
                };
                writeln!(decls, "    fn {name}({params}, n: u64);").unwrap();
                writeln!(
                    table,
                    "    Kernel {{ name: \"{name}\", elem_size: {}, entry: Entry::{entry}({name}) }},",
                    ty.size()
                )
                .unwrap();
            }
        }
    }
    decls.push_str("}\n\n");
    table.push_str("];\n");
    decls + &table
}
