//! Builds the C shim over the system libfabric (transport/ofi), and records
//! which hwloc release the `hwloc` feature builds against (for `--info`).
//!
//! libfabric's headers are found with pkg-config. When they are missing (or
//! OXMPI_NO_SYSTEM_LIBS is set) the shim is still compiled, without them,
//! and its functions report "not compiled in" at run time, which
//! `oxrun --info` says. The crate therefore builds on a host without
//! libfabric-dev.
//!
//! libfabric is not linked: only its header is used (for struct layouts),
//! and `transport/ofi` opens `libfabric.so.1` with dlopen the first time it
//! is asked something. Linking it would load libfabric, and the provider
//! libraries it depends on (libpsm_infinipath, libpsm2, ...), into every
//! process using this crate, and their constructors cost each process a
//! quarter of a second at start-up.
//!
//! hwloc comes from the `hwloc2` crate (feature `hwloc`, on by default),
//! which links it; a build that must run where libhwloc is absent turns the
//! feature off (`--no-default-features`, see scripts/gpu-tier.sh).

fn main() {
    println!("cargo:rerun-if-changed=src/transport/ofi/shim.c");
    println!("cargo:rerun-if-changed=src/transport/ofi/endpoint.c");
    println!("cargo:rerun-if-env-changed=OXMPI_NO_SYSTEM_LIBS");
    rerun_when_packages_change();

    // Escape hatch for building a binary that must run where these shared
    // libraries are absent (e.g. a GPU test machine): set OXMPI_NO_SYSTEM_LIBS=1.
    let skip = std::env::var_os("OXMPI_NO_SYSTEM_LIBS").is_some();
    if std::env::var_os("CARGO_FEATURE_HWLOC").is_some() {
        hwloc_release(skip);
    }
    fabric_shim(skip);
}

/// Compiles the libfabric shim, against libfabric's headers when pkg-config
/// finds them (and `skip` is off); never links libfabric.
fn fabric_shim(skip: bool) {
    let mut build = cc::Build::new();
    build
        .files(["src/transport/ofi/shim.c", "src/transport/ofi/endpoint.c"])
        .warnings(true)
        .extra_warnings(true);
    let found = if skip {
        None
    } else {
        probe("libfabric", "1.10")
            .map_err(|e| {
                println!(
                    "cargo:warning=oxmpi: libfabric not found by pkg-config ({e}); \
                     building without it"
                )
            })
            .ok()
    };
    if let Some(lib) = &found {
        build.define("OXMPI_HAVE_FABRIC", None);
        for dir in &lib.include_paths {
            build.include(dir);
        }
        println!(
            "cargo:rustc-env=OXMPI_BUILT_LIBFABRIC_VERSION={}",
            lib.version
        );
    }
    build.compile("oxmpi_ofi_shim");
}

/// The hwloc release hwloc2 links against, as OXMPI_BUILT_HWLOC_VERSION
/// (hwloc reports only its API version at run time).
fn hwloc_release(skip: bool) {
    if skip {
        println!(
            "cargo:warning=oxmpi: OXMPI_NO_SYSTEM_LIBS is set but the `hwloc` feature is on, \
             so libhwloc is still linked; build with --no-default-features to leave it out"
        );
    }
    match probe("hwloc", "2.0") {
        Ok(lib) => println!("cargo:rustc-env=OXMPI_BUILT_HWLOC_VERSION={}", lib.version),
        Err(e) => println!(
            "cargo:warning=oxmpi: hwloc not found by pkg-config ({e}); the `hwloc` feature \
             needs libhwloc-dev, or build with --no-default-features (hardware facts from sysfs)"
        ),
    }
}

/// Asks cargo to run this script again when a package is installed in or
/// removed from one of pkg-config's folders (cargo watches a folder's
/// files; the pkg_config crate already names its environment variables).
/// Without it, a tree first built before libfabric-dev was installed would
/// keep a library built without libfabric through every later incremental
/// build.
fn rerun_when_packages_change() {
    let default_path = std::process::Command::new("pkg-config")
        .args(["--variable", "pc_path", "pkg-config"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default();
    let extra = std::env::var("PKG_CONFIG_PATH").unwrap_or_default();
    for dir in extra.split(':').chain(default_path.split(':')) {
        if !dir.is_empty() && std::path::Path::new(dir).is_dir() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
}

/// `pkg` of at least version `min`, by pkg-config, printing nothing for
/// cargo to link.
fn probe(pkg: &str, min: &str) -> Result<pkg_config::Library, pkg_config::Error> {
    pkg_config::Config::new()
        .atleast_version(min)
        .cargo_metadata(false)
        .probe(pkg)
}
