//! Builds the two C shims the runtime links: one over the system hwloc
//! (topology) and one over the system libfabric (transport/ofi).
//!
//! Each library is found with pkg-config. When one is missing the shim is
//! still compiled, without the library, and its functions report
//! "not compiled in" at run time; the Rust side then falls back (topology
//! reads sysfs) or reports the absence (ofi). The crate therefore builds on
//! a host without the -dev packages, and says so in `oxrun --info`.

fn main() {
    println!("cargo:rerun-if-changed=src/topology/shim.c");
    println!("cargo:rerun-if-changed=src/transport/ofi/shim.c");
    println!("cargo:rerun-if-env-changed=OXMPI_NO_SYSTEM_LIBS");

    // Escape hatch for building a binary that must run where these shared
    // libraries are absent (e.g. a GPU test machine): set OXMPI_NO_SYSTEM_LIBS=1.
    let skip = std::env::var_os("OXMPI_NO_SYSTEM_LIBS").is_some();
    shim(
        "hwloc",
        "2.0",
        "src/topology/shim.c",
        "oxmpi_hwloc_shim",
        "OXMPI_HAVE_HWLOC",
        skip,
    );
    shim(
        "libfabric",
        "1.10",
        "src/transport/ofi/shim.c",
        "oxmpi_ofi_shim",
        "OXMPI_HAVE_FABRIC",
        skip,
    );
}

/// Compiles `source` into `lib_name`, against `pkg` when pkg-config finds it.
fn shim(pkg: &str, min: &str, source: &str, lib_name: &str, define: &str, skip: bool) {
    let mut build = cc::Build::new();
    build.file(source).warnings(true).extra_warnings(true);
    let found = if skip {
        None
    } else {
        // Metadata is printed by hand after the shim, so that the static shim
        // comes before the shared library on the link line.
        let probe = pkg_config::Config::new()
            .atleast_version(min)
            .cargo_metadata(false)
            .probe(pkg);
        match probe {
            Ok(lib) => Some(lib),
            Err(e) => {
                println!(
                    "cargo:warning=oxmpi: {pkg} not found by pkg-config ({e}); building without it"
                );
                None
            }
        }
    };
    if let Some(lib) = &found {
        build.define(define, None);
        for dir in &lib.include_paths {
            build.include(dir);
        }
    }
    build.compile(lib_name);
    if let Some(lib) = found {
        // The release built against, for `--info` (hwloc reports only its
        // API version at run time).
        let var = format!("OXMPI_BUILT_{}_VERSION", pkg.to_ascii_uppercase());
        println!("cargo:rustc-env={var}={}", lib.version);
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for name in &lib.libs {
            println!("cargo:rustc-link-lib={name}");
        }
    }
}
