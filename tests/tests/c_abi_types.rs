//! Derived datatypes and info objects through OxMPI's C ABI: the
//! self-checking C programs `tests/c_abi/datatype.c` and `info.c`, three
//! ways as in `c_abi.rs`:
//!
//! - built with OxMPI's `mpicc` and run under `oxrun`;
//! - built with MPICH's `mpicc.mpich` and run under `mpiexec.hydra` (the
//!   reference: the programs are right);
//! - those MPICH binaries run under `oxrun` on our `libmpi.so.12`.
//!
//! Each runs at 1..=4 ranks. Needs `cargo build --workspace --bins` first
//! and MPICH installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use oxmpi_tests::{
    oxrun, require_mpicc_mpich, require_mpiexec_hydra, run_command, target_profile_dir, JobOutcome,
    ScratchDir,
};

const MAX_RANKS: usize = 4;
const JOB_TIMEOUT: Duration = Duration::from_secs(120);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn source_dir() -> PathBuf {
    repo_root().join("tests/c_abi")
}

/// An OxMPI install prefix of the current build, made once per test
/// process (its own, so that it never races `c_abi.rs`'s).
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let profile = target_profile_dir();
        assert!(
            profile.join("libmpi.so").is_file(),
            "libmpi.so is missing: run `cargo build --workspace --bins` (same profile) first"
        );
        oxrun();
        let prefix = profile.join("c-abi-types").join("prefix");
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

#[derive(Clone, Copy, PartialEq, Debug)]
enum Way {
    Ours,
    Hydra,
    MpichBinary,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn build(name: &str, way: Way) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let (compiler, tag) = match way {
        Way::Ours => (prefix().join("bin/mpicc"), "oxmpi"),
        Way::Hydra | Way::MpichBinary => (require_mpicc_mpich(), "mpich"),
    };
    let src = source_dir().join(format!("{name}.c"));
    let out_dir = target_profile_dir().join("c-abi-types").join(tag);
    let exe = out_dir.join(name);
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut inputs = vec![src.clone(), source_dir().join("abicheck.h")];
    if way == Way::Ours {
        inputs.push(prefix().join("include/mpi.h"));
        inputs.push(prefix().join("lib/libmpi.so.12"));
    }
    let newest = inputs.iter().filter_map(|p| modified(p)).max();
    if modified(&exe).is_some_and(|built| Some(built) >= newest) {
        return exe;
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let temp = out_dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let out = Command::new(&compiler)
        .args(["-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(source_dir())
        .arg("-o")
        .arg(&temp)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", compiler.display()));
    assert!(
        out.status.success(),
        "{} failed to compile {}:\n{}{}",
        compiler.display(),
        src.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&temp, &exe).unwrap();
    exe
}

fn run(name: &str, way: Way, ranks: usize) -> JobOutcome {
    let exe = build(name, way);
    let launcher = match way {
        Way::Hydra => require_mpiexec_hydra(),
        Way::Ours | Way::MpichBinary => oxrun(),
    };
    let scratch = ScratchDir::new();
    let mut cmd = Command::new(launcher);
    cmd.arg("-n")
        .arg(ranks.to_string())
        .arg(&exe)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path());
    if way == Way::MpichBinary {
        cmd.env("LD_LIBRARY_PATH", prefix().join("lib"));
    }
    let out = run_command(cmd, JOB_TIMEOUT);
    assert!(
        !out.timed_out,
        "{name} ({way:?}) with {ranks} ranks hung; killed after {JOB_TIMEOUT:?}\n{}",
        out.describe()
    );
    out
}

fn check_passes(name: &str, way: Way) {
    for ranks in 1..=MAX_RANKS {
        let out = run(name, way, ranks);
        let pass = format!("PASS {name}");
        assert!(
            out.success() && out.stdout.lines().filter(|l| l.trim_end() == pass).count() == 1,
            "{name} ({way:?}) with {ranks} ranks failed\n{}",
            out.describe()
        );
        assert!(
            !out.outlived,
            "{name}: processes outlived the launcher\n{}",
            out.describe()
        );
    }
}

macro_rules! three_ways {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn built_with_our_mpicc() {
                    check_passes(stringify!($name), Way::Ours);
                }

                #[test]
                fn mpich_binary_on_oxmpi() {
                    check_passes(stringify!($name), Way::MpichBinary);
                }

                #[test]
                fn reference_under_hydra() {
                    check_passes(stringify!($name), Way::Hydra);
                }
            }
        )*
    };
}

three_ways!(datatype, info);
