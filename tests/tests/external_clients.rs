//! Real MPI clients on OxMPI's C ABI (issue 5, bar 2):
//!
//! - the mpi4py wheel from PyPI (MPICH flavour, loading our
//!   `libmpi.so.12` through `MPI4PY_LIBMPI`) running
//!   `tests/external/mpi4py_check.py` under `oxrun -n 4`: NumPy arrays
//!   through send/recv, bcast, allreduce, a split communicator, pickled
//!   objects and a derived datatype;
//! - the Rust `mpi` crate (rsmpi) from crates.io, built against OxMPI
//!   through our `mpicc -show` (`MPICC`), running the two collective
//!   programs of `tests/external/rsmpi/` under `oxrun`;
//! - CMake's `find_package(MPI)` finding OxMPI when our `mpicc` is first
//!   on `PATH`, and the program it builds running under `oxrun`.
//!
//! Needs `cargo build --workspace --bins` first (for `libmpi.so` and
//! `oxrun`), network access to PyPI and crates.io the first time (the
//! downloads are cached under `target/external/`), `libclang` (bindgen,
//! for rsmpi) and `cmake` (`scripts/setup.sh` installs both).
//!
//! A client that fails because OxMPI lacks a function fails its test with
//! the list of those functions (from the `MPI_ERR_UNSUPPORTED_OPERATION`
//! messages), so that what is missing is explicit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use oxmpi_tests::{oxrun, run_command, target_profile_dir, JobOutcome, ScratchDir};

const JOB_TIMEOUT: Duration = Duration::from_secs(180);
/// Building rsmpi the first time (bindgen, libffi) takes minutes.
const BUILD_TIMEOUT: Duration = Duration::from_secs(1500);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Downloads shared by every profile: `target/external/`.
fn cache_dir() -> PathBuf {
    let dir = repo_root().join("target").join("external");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An OxMPI install prefix of the current build (this test's own).
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let profile = target_profile_dir();
        assert!(
            profile.join("libmpi.so").is_file(),
            "libmpi.so is missing: run `cargo build --workspace --bins` (same profile) first"
        );
        oxrun();
        let prefix = profile.join("external").join("prefix");
        let mut cmd = Command::new(repo_root().join("scripts/install.sh"));
        cmd.arg("--prefix").arg(&prefix).arg("--no-build");
        if profile.file_name().is_some_and(|n| n == "debug") {
            cmd.arg("--debug");
        }
        let out = cmd.output().expect("cannot run scripts/install.sh");
        assert!(
            out.status.success(),
            "scripts/install.sh failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        prefix
    })
}

/// `PATH` with our prefix's `bin` first.
fn path_with_prefix() -> std::ffi::OsString {
    let mut dirs = vec![prefix().join("bin")];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap()
}

/// The MPI functions a failed run reported as not implemented.
fn unsupported_functions(out: &JobOutcome) -> BTreeSet<String> {
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let marker = " is not implemented by OxMPI yet";
    text.match_indices(marker)
        .filter_map(|(i, _)| {
            let before = &text[..i];
            let start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |j| j + 1);
            let name = &before[start..];
            name.starts_with("MPI_").then(|| name.to_string())
        })
        .collect()
}

/// Checks that a client run passed (printed `pass` once), explaining a
/// failure by the functions OxMPI lacks when that is the cause.
fn expect_pass(client: &str, out: &JobOutcome, pass: &str) {
    assert!(!out.timed_out, "{client} hung\n{}", out.describe());
    if out.success() && out.stdout.lines().filter(|l| l.trim_end() == pass).count() == 1 {
        return;
    }
    let missing = unsupported_functions(out);
    if missing.is_empty() {
        let fatal: Vec<&str> = (out.stderr.lines())
            .filter(|l| l.contains("OxMPI: fatal error"))
            .collect();
        let passed = out.stdout.lines().any(|l| l.trim_end() == pass);
        panic!(
            "{client} failed{}{}\n{}",
            if passed {
                " after its checks passed (while finishing)"
            } else {
                ""
            },
            if fatal.is_empty() {
                String::new()
            } else {
                format!(": {}", fatal.join("; "))
            },
            out.describe()
        );
    }
    panic!(
        "{client} failed because OxMPI does not implement: {}\n{}",
        missing.into_iter().collect::<Vec<_>>().join(", "),
        out.describe()
    );
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
fn run_ok(mut cmd: Command, what: &str, timeout: Duration) -> JobOutcome {
    cmd.env_remove("CARGO_TARGET_DIR");
    let out = run_command(cmd, timeout);
    assert!(
        out.success() && !out.timed_out,
        "{what} failed\n{}",
        out.describe()
    );
    out
}

// ---------------------------------------------------------------- mpi4py

/// mpi4py and NumPy from PyPI, installed once into `target/external/python`.
fn python_packages() -> PathBuf {
    let dir = cache_dir().join("python");
    if dir.join("mpi4py").is_dir() && dir.join("numpy").is_dir() {
        return dir;
    }
    let install = |extra: &[&str]| {
        let mut cmd = Command::new("python3");
        cmd.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(extra)
        .arg("--target")
        .arg(&dir)
        .args(["mpi4py", "numpy"]);
        run_command(cmd, BUILD_TIMEOUT)
    };
    let out = install(&[]);
    if !out.success() {
        // Debian's system Python refuses `pip install` without this flag.
        let again = install(&["--break-system-packages"]);
        assert!(
            again.success(),
            "pip could not install mpi4py and numpy from PyPI (network needed the first time)\n{}\n{}",
            out.describe(),
            again.describe()
        );
    }
    dir
}

/// The mpi4py wheel on OxMPI: point-to-point, collectives and a split
/// communicator with NumPy buffers, under `oxrun -n 4`.
#[test]
fn mpi4py_wheel() {
    let packages = python_packages();
    let scratch = ScratchDir::new();
    let mut cmd = Command::new(oxrun());
    cmd.args(["-n", "4", "python3"])
        .arg(repo_root().join("tests/external/mpi4py_check.py"))
        .current_dir(scratch.path())
        .env("PYTHONPATH", &packages)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // mpi4py dlopens this file and picks its flavour from the symbols
        // (MPICH: no MPI_Abi_get_version, no ompi_* symbols); the script
        // checks that it chose MPICH.
        .env_remove("MPI4PY_MPIABI")
        .env("MPI4PY_LIBMPI", prefix().join("lib/libmpi.so.12"))
        .env("TMPDIR", scratch.path());
    let out = run_command(cmd, JOB_TIMEOUT);
    expect_pass("mpi4py", &out, "PASS mpi4py");
}

// ----------------------------------------------------------------- rsmpi

/// The programs of `tests/external/rsmpi/`, built with the `mpi` crate
/// against OxMPI in a project under `target/external/rsmpi` (kept between
/// runs: the first build takes minutes). Returns the binaries' folder.
fn rsmpi_programs() -> PathBuf {
    let project = cache_dir().join("rsmpi");
    let bin_src = project.join("src/bin");
    std::fs::create_dir_all(&bin_src).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"oxmpi-rsmpi-check\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nmpi = \"0.8\"\n\n[workspace]\n",
    )
    .unwrap();
    let sources = repo_root().join("tests/external/rsmpi");
    for e in std::fs::read_dir(&sources).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            let dst = bin_src.join(p.file_name().unwrap());
            let text = std::fs::read(&p).unwrap();
            if std::fs::read(&dst).ok().as_ref() != Some(&text) {
                std::fs::write(&dst, text).unwrap();
            }
        }
    }
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--release", "--bins"])
        .current_dir(&project)
        .env("PATH", path_with_prefix())
        .env("MPICC", prefix().join("bin/mpicc"))
        .env_remove("MPI_PKG_CONFIG")
        .env_remove("RUSTFLAGS");
    run_ok(cmd, "building rsmpi programs against OxMPI", BUILD_TIMEOUT);
    // The crate must have linked our library, not a system MPI.
    let link = Command::new(prefix().join("bin/mpicc"))
        .arg("-show")
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&link.stdout).to_string();
    assert!(
        show.contains(&prefix().join("lib").display().to_string()),
        "mpicc -show does not name our prefix: {show}"
    );
    project.join("target/release")
}

/// Two collective programs written with rsmpi's API, at 1..=4 ranks.
#[test]
fn rsmpi_collectives() {
    let bins = rsmpi_programs();
    for program in ["reduce_bcast", "gather_split"] {
        let exe = bins.join(program);
        let needed = Command::new("readelf")
            .arg("-d")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&needed.stdout).contains("[libmpi.so.12]"),
            "{program} does not link libmpi.so.12"
        );
        for ranks in 1..=4 {
            let scratch = ScratchDir::new();
            let mut cmd = Command::new(oxrun());
            cmd.arg("-n")
                .arg(ranks.to_string())
                .arg(&exe)
                .current_dir(scratch.path())
                .env("LD_LIBRARY_PATH", prefix().join("lib"))
                .env("TMPDIR", scratch.path());
            let out = run_command(cmd, JOB_TIMEOUT);
            expect_pass(
                &format!("rsmpi {program} with {ranks} ranks"),
                &out,
                &format!("PASS rsmpi {program}"),
            );
        }
    }
}

// ----------------------------------------------------------------- CMake

/// `find_package(MPI)` finds OxMPI through the `mpicc` first on `PATH`;
/// the program it builds runs under `oxrun`.
#[test]
fn cmake_find_package_mpi() {
    let cmake = Command::new("cmake").arg("--version").output();
    assert!(
        cmake.is_ok_and(|o| o.status.success()),
        "cmake is not installed: run scripts/setup.sh"
    );
    let build = ScratchDir::new();
    let mut cmd = Command::new("cmake");
    cmd.arg(repo_root().join("tests/external/cmake"))
        .current_dir(build.path())
        .env("PATH", path_with_prefix())
        .env_remove("MPI_HOME")
        .env_remove("CC");
    let out = run_ok(cmd, "cmake configure", JOB_TIMEOUT);
    let p = prefix().display().to_string();
    let value = |key: &str| {
        let tag = format!("OXCHECK {key}=");
        out.stdout
            .lines()
            .find_map(|l| l.split_once(&tag).map(|(_, v)| v.trim().to_string()))
            .unwrap_or_else(|| panic!("cmake printed no {key}\n{}", out.describe()))
    };
    assert_eq!(value("MPI_C_COMPILER"), format!("{p}/bin/mpicc"));
    assert_eq!(value("MPI_C_INCLUDE_DIRS"), format!("{p}/include"));
    assert_eq!(value("MPI_C_LIBRARIES"), format!("{p}/lib/libmpi.so"));
    assert_eq!(value("MPIEXEC_EXECUTABLE"), format!("{p}/bin/mpiexec"));
    assert!(
        value("MPI_C_VERSION").starts_with('4'),
        "MPI version: {}",
        value("MPI_C_VERSION")
    );
    let mut make = Command::new("cmake");
    make.args(["--build", "."])
        .current_dir(build.path())
        .env("PATH", path_with_prefix());
    run_ok(make, "cmake --build", JOB_TIMEOUT);
    let mut cmd = Command::new(prefix().join("bin/mpiexec"));
    cmd.args(["-n", "3"])
        .arg(build.path().join("hello"))
        .current_dir(build.path());
    let out = run_command(cmd, JOB_TIMEOUT);
    expect_pass("the CMake-built program", &out, "PASS cmake");
}
