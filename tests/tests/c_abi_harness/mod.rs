//! Building and running the self-checking C programs of `tests/c_abi/`
//! three ways (our mpicc under oxrun, mpicc.mpich under hydra, the MPICH
//! binaries on our library), shared by `c_abi.rs` and `c_abi_types.rs`.
//! Each test binary installs its own prefix and builds into its own
//! directory under `target/<profile>/<test binary name>/`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

pub mod double;

pub use oxmpi_tests::{
    oxrun, require_mpicc_mpich, require_mpiexec_hydra, run_command, target_profile_dir, JobOutcome,
    ScratchDir,
};

pub const MAX_RANKS: usize = 4;
pub const JOB_TIMEOUT: Duration = Duration::from_secs(120);
/// MPICH's own runs (the reference) busy-poll: with more ranks than cores
/// a heavy program (small_coll at 3 ranks on 2 cores) took 97 s on a quiet
/// machine, so they get longer before they count as hung.
const HYDRA_TIMEOUT: Duration = Duration::from_secs(300);

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

pub fn source_dir() -> PathBuf {
    repo_root().join("tests/c_abi")
}

/// The OxMPI install prefix the tests use, installed once per test process
/// from the current build (`scripts/install.sh --no-build`).
pub fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let profile = target_profile_dir();
        let lib = profile.join("libmpi.so");
        assert!(
            lib.is_file(),
            "{} is missing: `cargo test -p oxmpi-tests` does not build it; run \
             `cargo build --workspace` (same profile as the tests) first",
            lib.display()
        );
        oxrun(); // checks the launcher is built
        let prefix = profile.join(env!("CARGO_CRATE_NAME")).join("prefix");
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

/// How a program is built and run.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Way {
    /// Our mpicc, under oxrun.
    Ours,
    /// mpicc.mpich, under mpiexec.hydra (the reference).
    Hydra,
    /// mpicc.mpich, under oxrun with our library on LD_LIBRARY_PATH.
    MpichBinary,
}

pub fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Compiles `tests/c_abi/<name>.c` for `way` (once, unless sources changed).
pub fn build(name: &str, way: Way) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let (compiler, tag) = match way {
        Way::Ours => (prefix().join("bin/mpicc"), "oxmpi"),
        Way::Hydra | Way::MpichBinary => (require_mpicc_mpich(), "mpich"),
    };
    let src = source_dir().join(format!("{name}.c"));
    let out_dir = target_profile_dir()
        .join(env!("CARGO_CRATE_NAME"))
        .join(tag);
    let exe = out_dir.join(name);
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut inputs = vec![src.clone()];
    // The shared headers (abicheck.h, cudacheck.h).
    inputs.extend(
        std::fs::read_dir(source_dir())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "h")),
    );
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

/// Runs `name` with `ranks` ranks the `way` way.
pub fn run(name: &str, way: Way, ranks: usize, args: &[&str]) -> JobOutcome {
    let mut out = run_once(name, way, ranks, args);
    // Hydra itself sometimes loses a failing job's exit code: it reports 1
    // and "Hangup (signal 1)" (the SIGHUP it sends while cleaning up wins
    // the race). That is MPICH's launcher, not the program: run it again.
    // MPICH's own run also hangs now and then (rma_pscw at 4 ranks on 2
    // cores, once in CI after passing hundreds of times here): the
    // reference gets one more try before its hang counts. OxMPI's runs
    // get none.
    let mut hung_before = false;
    for _ in 0..3 {
        let launcher_lost_code = out.code == Some(1) && out.stdout.contains("Hangup");
        let reference_hung = out.timed_out && !hung_before;
        if way != Way::Hydra || !(launcher_lost_code || reference_hung) {
            break;
        }
        if reference_hung {
            eprintln!("{name} under hydra with {ranks} ranks hung; running it again");
            hung_before = true;
        }
        out = run_once(name, way, ranks, args);
    }
    assert!(
        !out.timed_out,
        "{name} ({way:?}) with {ranks} ranks hung; killed after {:?}\n{}",
        limit(way),
        out.describe()
    );
    out
}

/// How long a run of `way` may take before it counts as hung.
fn limit(way: Way) -> Duration {
    if way == Way::Hydra {
        HYDRA_TIMEOUT
    } else {
        JOB_TIMEOUT
    }
}

fn run_once(name: &str, way: Way, ranks: usize, args: &[&str]) -> JobOutcome {
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
        .args(args)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path());
    if way == Way::MpichBinary {
        cmd.env("LD_LIBRARY_PATH", prefix().join("lib"));
    }
    run_command(cmd, limit(way))
}
