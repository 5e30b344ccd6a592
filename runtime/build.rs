//! Builds the two C shims the runtime uses: one over the system hwloc
//! (machine) and one over the system libfabric (transport/ofi).
//!
//! Each library's headers are found with pkg-config. When one is missing the
//! shim is still compiled, without the library, and its functions report
//! "not compiled in" at run time; the Rust side then falls back (machine
//! reads sysfs) or reports the absence (ofi). The crate therefore builds on
//! a host without the -dev packages, and says so in `oxrun --info`.
//!
//! hwloc is linked. libfabric is not: only its header is used (for struct
//! layouts), and `transport/ofi` opens `libfabric.so.1` with dlopen the first
//! time it is asked something. Linking it would load libfabric, and the
//! provider libraries it depends on (libpsm_infinipath, libpsm2, ...), into
//! every process using this crate, and their constructors cost each process
//! a quarter of a second at start-up.

/// How the shim uses its library.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Compiled against the headers and linked.
    Link,
    /// Compiled against the headers only; the library is opened at run time.
    HeadersOnly,
}

fn main() {
    println!("cargo:rerun-if-changed=src/machine/shim.c");
    println!("cargo:rerun-if-changed=src/transport/ofi/shim.c");
    println!("cargo:rerun-if-changed=src/transport/ofi/endpoint.c");
    println!("cargo:rerun-if-env-changed=OXMPI_NO_SYSTEM_LIBS");

    // Escape hatch for building a binary that must run where these shared
    // libraries are absent (e.g. a GPU test machine): set OXMPI_NO_SYSTEM_LIBS=1.
    let skip = std::env::var_os("OXMPI_NO_SYSTEM_LIBS").is_some();
    shim(
        "hwloc",
        "2.0",
        &["src/machine/shim.c"],
        "oxmpi_hwloc_shim",
        "OXMPI_HAVE_HWLOC",
        Use::Link,
        skip,
    );
    shim(
        "libfabric",
        "1.10",
        &["src/transport/ofi/shim.c", "src/transport/ofi/endpoint.c"],
        "oxmpi_ofi_shim",
        "OXMPI_HAVE_FABRIC",
        Use::HeadersOnly,
        skip,
    );
}

/// Compiles `sources` into `lib_name`, against `pkg` when pkg-config finds it,
/// and links `pkg` when `usage` is [`Use::Link`].
fn shim(
    pkg: &str,
    min: &str,
    sources: &[&str],
    lib_name: &str,
    define: &str,
    usage: Use,
    skip: bool,
) {
    let mut build = cc::Build::new();
    build.files(sources).warnings(true).extra_warnings(true);
    let found = if skip {
        None
    } else {
        // Metadata is printed by hand after the shim, so that the static shim
        // comes before the shared library on the link line (and so that a
        // headers-only library is not linked at all).
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
    let Some(lib) = found else {
        return;
    };
    // The release built against, for `--info` (hwloc reports only its API
    // version at run time).
    let var = format!("OXMPI_BUILT_{}_VERSION", pkg.to_ascii_uppercase());
    println!("cargo:rustc-env={var}={}", lib.version);
    if usage == Use::Link {
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for name in &lib.libs {
            println!("cargo:rustc-link-lib={name}");
        }
    }
}
