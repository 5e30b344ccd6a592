//! OxMPI's C ABI (`libmpi.so.12`, issue 5) with the self-checking C
//! programs of `tests/c_abi/`, three ways:
//!
//! - built with OxMPI's own `mpicc` (from `scripts/install.sh` into a prefix
//!   under `target/<profile>/c_abi/`) and run under `oxrun`;
//! - built with MPICH's `mpicc.mpich` and run under MPICH's `mpiexec.hydra`:
//!   the reference, proving the programs right;
//! - those same MPICH binaries run under `oxrun` with `LD_LIBRARY_PATH`
//!   pointing at our `libmpich.so.12` / `libmpi.so.12`: binary compatibility.
//!
//! Every program runs with 1..=4 ranks. Needs `cargo build --workspace
//! --bins` first (it builds `oxrun` and, through the `oxabi-table` binary,
//! `libmpi.so`) and MPICH installed.

#[path = "c_abi_harness/mod.rs"]
mod harness;

use harness::*;
use std::path::Path;
use std::process::Command;

/// Runs `name` at 1..=MAX_RANKS ranks and checks each run printed its PASS line.
fn check_passes(name: &str, way: Way) {
    for ranks in 1..=MAX_RANKS {
        check_passes_at(name, way, ranks);
    }
}

/// Runs `name` with `ranks` ranks and checks it printed its PASS line.
fn check_passes_at(name: &str, way: Way, ranks: usize) {
    let out = run(name, way, ranks, &[]);
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
    if name == "env" {
        let library = match way {
            Way::Hydra => "LIBRARY MPICH",
            Way::Ours | Way::MpichBinary => "LIBRARY OxMPI",
        };
        assert!(
            out.stdout.lines().any(|l| l.trim_end() == library),
            "env ({way:?}): expected `{library}`: the run used the wrong library\n{}",
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

three_ways!(
    env,
    p2p,
    nonblocking,
    probe,
    errors,
    errhandlers,
    profile,
    coll,
    coll_types,
    comm,
    group,
    topo,
    graph,
    neighbor,
    persistent_coll,
    attr,
    misc,
    types_ext,
    p2p_ext,
    grequest,
    partitioned,
    create_group,
    idup,
    long_double,
    bottom,
    zero_requests,
    large_types,
    zero_size,
    huge_count_types,
    keyvals,
    ireduce_user,
    info_env,
    split_hw,
    mpix,
    completion,
    recv_handles,
    rma_windows,
    rma_fence,
    rma_passive,
    rma_pscw,
    rma_errors,
    rma_hosts,
    rma_atomics,
    intercomm,
    sessions,
    sessions_only,
    io_basic,
    io_coll,
    io_shared,
    io_rep,
    coll_kinds,
    small_coll,
    ibcast_many,
    inter_reduce_idle,
);

/// The collective, group, topology, neighborhood, persistent and
/// many-ibcast programs at 5..=8 ranks too (non-power-of-two sizes, larger grids), all three
/// ways.
mod larger_jobs {
    use super::*;

    fn check(name: &str) {
        for way in [Way::Ours, Way::MpichBinary, Way::Hydra] {
            for ranks in 5..=8 {
                check_passes_at(name, way, ranks);
            }
        }
    }

    #[test]
    fn coll() {
        check("coll");
    }

    #[test]
    fn group() {
        check("group");
    }

    #[test]
    fn topo() {
        check("topo");
    }

    #[test]
    fn graph() {
        check("graph");
    }

    #[test]
    fn neighbor() {
        check("neighbor");
    }

    #[test]
    fn persistent_coll() {
        check("persistent_coll");
    }

    #[test]
    fn ibcast_many() {
        check("ibcast_many");
    }
}

/// Ports, MPI_Comm_accept / MPI_Comm_connect and MPI_Comm_join: both
/// OxMPI ways (Debian's MPICH runs on its ucx netmod, whose MPI_Open_port
/// is "not supported with ucx netmod").
#[test]
fn ports_accept_connect_join() {
    check_passes("ports", Way::Ours);
    check_passes("ports", Way::MpichBinary);
}

/// One `ports_jobs` job (`role` and its arguments) the `way` way in `dir`,
/// whose name service is the directory `dir/names`; `ranks` 0: a
/// singleton (the program started without oxrun).
fn ports_job(way: Way, dir: &Path, ranks: usize, args: &[&str]) -> JobOutcome {
    let exe = build("ports_jobs", way);
    let mut cmd = if ranks == 0 {
        Command::new(&exe)
    } else {
        let mut cmd = Command::new(oxrun());
        cmd.arg("-n").arg(ranks.to_string()).arg(&exe);
        cmd
    };
    cmd.args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env("OXMPI_NAME_DIR", dir.join("names"))
        // A closed port's TCP port may have been taken by a socket that
        // never answers since: its connect then fails after this long.
        .env("OXMPI_PORT_TIMEOUT", "30");
    if way == Way::MpichBinary {
        cmd.env("LD_LIBRARY_PATH", prefix().join("lib"));
    }
    run_command(cmd, JOB_TIMEOUT)
}

fn assert_passed(out: &JobOutcome, pass: &str, what: &str) {
    assert!(
        !out.timed_out
            && out.success()
            && !out.outlived
            && out.stdout.lines().filter(|l| l.trim_end() == pass).count() == 1,
        "{what}: expected one `{pass}`\n{}",
        out.describe()
    );
}

/// Ports between two separately started jobs (`ports_jobs.c`): a server
/// job and a client job of 1 and 2 ranks each, started together, connect
/// twice (the port from a file, then through the shared name directory),
/// exchange point-to-point and collectives, merge and reduce, join over a
/// socket; wrong, malformed and closed port names fail with MPI_ERR_PORT;
/// a client started after the server job ended gets MPI_ERR_PORT. Also a
/// singleton server (started without oxrun, publishing in the directory)
/// with a client job. Both OxMPI ways (Debian's MPICH on ucx has no
/// MPI_Open_port).
#[test]
fn ports_between_jobs() {
    for way in [Way::Ours, Way::MpichBinary] {
        for (servers, clients) in [(1, 1), (2, 2), (1, 2), (2, 1), (0, 2)] {
            let scratch = ScratchDir::new();
            let dir = scratch.path().to_path_buf();
            let what = format!("{way:?}, {servers} server and {clients} client ranks");
            let (s, c) = (servers.max(1).to_string(), clients.to_string());
            let server = std::thread::spawn({
                let dir = dir.clone();
                move || ports_job(way, &dir, servers, &["server", &c])
            });
            let client = ports_job(way, &dir, clients, &["client", &s]);
            let server = server.join().expect("the server's thread");
            let both = format!("{what}; the other job:\n{}", client.describe());
            assert_passed(&server, "PASS ports_jobs server", &both);
            let both = format!("{what}; the other job:\n{}", server.describe());
            assert_passed(&client, "PASS ports_jobs client", &both);
            let late = ports_job(way, &dir, clients, &["late"]);
            assert_passed(&late, "PASS ports_jobs late", &what);
            let names = std::fs::read_dir(dir.join("names")).map_or(0, |d| d.count());
            assert_eq!(names, 0, "{what}: published names outlived their jobs");
        }
    }
}

/// MPI_Comm_spawn (the job spawns 3 children; point-to-point, collectives
/// and merge across) at 1..=4 parents, both OxMPI ways (Debian's MPICH
/// on its ucx netmod cannot spawn either).
#[test]
fn spawn_children_and_talk_across() {
    check_passes("spawn", Way::Ours);
    check_passes("spawn", Way::MpichBinary);
}

/// Windows left open at MPI_Finalize end every process cleanly: both
/// OxMPI ways (Debian's MPICH on its ucx netmod aborts in its finalize).
#[test]
fn windows_not_freed_before_finalize() {
    check_passes("rma_unfreed", Way::Ours);
    check_passes("rma_unfreed", Way::MpichBinary);
}

/// OxMPI's unimplemented functions: both OxMPI ways (MPICH implements them).
#[test]
fn unsupported_functions_report_themselves() {
    check_passes("unsupported", Way::Ours);
    check_passes("unsupported", Way::MpichBinary);
}

/// The tool information interface (MPI_T): both OxMPI ways (MPICH has
/// variables of its own).
#[test]
fn tool_information_interface() {
    check_passes("tool", Way::Ours);
    check_passes("tool", Way::MpichBinary);
}

/// MPI_Abort(MPI_COMM_WORLD, 256) in a process run without a launcher
/// (before MPI_Init, and as a singleton after it): exit status 256 would
/// read as 0, so the status must be non-zero.
#[test]
fn abort_with_256_without_launcher_exits_non_zero() {
    let exe = build("abort_code_wraps", Way::MpichBinary);
    for when in ["preinit", "after"] {
        let scratch = ScratchDir::new();
        let out = Command::new(&exe)
            .arg(when)
            .current_dir(scratch.path())
            .env("TMPDIR", scratch.path())
            .env("LD_LIBRARY_PATH", prefix().join("lib"))
            .env_remove("PMI_FD")
            .env_remove("PMI_PORT")
            .output()
            .expect("run abort_code_wraps");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.code() == Some(1) && !stdout.contains("NOT ABORTED"),
            "abort_code_wraps {when}: status {:?}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A fatal error's message appears once on stderr: each rank's library
/// line once, and oxrun's line about the abort does not repeat it.
fn assert_printed_once(stderr: &str) {
    let text = "OxMPI: fatal error in";
    for line in stderr.lines().filter(|l| l.contains(text)) {
        let count = stderr.matches(line.trim_start_matches("oxrun: ")).count();
        assert!(
            line.starts_with(text) && count == 1,
            "`{line}` printed {count} times or inside another line:\n{stderr}"
        );
    }
}

/// MPI_ERRORS_ARE_FATAL ends the job with the error class as exit code
/// (as MPICH does), and OxMPI's message names the function and the error.
#[test]
fn errors_are_fatal_by_default() {
    for way in [Way::Hydra, Way::Ours, Way::MpichBinary] {
        for (arg, class, name, text) in [
            ("rank", 6, "MPI_ERR_RANK", "invalid rank 2"),
            ("comm", 5, "MPI_ERR_COMM", "MPI_COMM_NULL"),
        ] {
            let out = run("fatal", way, 2, &[arg]);
            assert_eq!(
                out.code,
                Some(class),
                "fatal {arg} ({way:?})\n{}",
                out.describe()
            );
            assert!(!out.stdout.contains("NOT FATAL"), "{}", out.describe());
            if way != Way::Hydra {
                let line = "OxMPI: fatal error in MPI_Send on rank ";
                assert!(
                    out.stderr
                        .lines()
                        .any(|l| l.contains(line) && l.contains(name) && l.contains(text)),
                    "fatal {arg} ({way:?}): no message naming MPI_Send, {name} and `{text}`\n{}",
                    out.describe()
                );
                assert_printed_once(&out.stderr);
            }
        }
    }
}

/// Each predefined handler ends the job its way (`errhandlers <mode>`): the
/// exit status is the error class (low byte for an added class, as MPICH's
/// launcher reports it) and OxMPI's message names the function. MPICH
/// 4.0.2 asserts on `MPI_ERRORS_ABORT`, so that mode runs the OxMPI ways only.
#[test]
fn handlers_end_the_job() {
    for way in [Way::Hydra, Way::Ours, Way::MpichBinary] {
        for (mode, exit, func, text) in [
            ("fatal", 7, "MPI_Bcast", "MPI_ERR_ROOT"),
            ("added", 1, "MPI_Comm_call_errhandler", "errhandlers added"),
            ("abort", 6, "MPI_Send", "MPI_ERR_RANK"),
        ] {
            if way == Way::Hydra && mode == "abort" {
                continue;
            }
            let out = run("errhandlers", way, 2, &[mode]);
            assert_eq!(
                out.code,
                Some(exit),
                "errhandlers {mode} ({way:?})\n{}",
                out.describe()
            );
            assert!(!out.stdout.contains("NOT FATAL"), "{}", out.describe());
            assert!(
                !out.outlived,
                "errhandlers {mode}: processes outlived the launcher\n{}",
                out.describe()
            );
            if way != Way::Hydra {
                let line = format!("OxMPI: fatal error in {func} on rank ");
                assert!(
                    out.stderr
                        .lines()
                        .any(|l| l.contains(&line) && l.contains(text)),
                    "errhandlers {mode} ({way:?}): no message naming {func} and `{text}`\n{}",
                    out.describe()
                );
                assert_printed_once(&out.stderr);
            }
        }
    }
}

fn wrapper(tool: &str, args: &[&str]) -> String {
    let out = Command::new(prefix().join("bin").join(tool))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {args:?} failed: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

/// mpicc / mpicxx speak MPICH's and Open MPI's query options, and
/// pkg-config finds `mpi` and `mpich`.
#[test]
fn compiler_wrappers_and_pkg_config() {
    let p = prefix().display().to_string();
    let show = wrapper("mpicc", &["-show"]);
    for word in [
        format!("-I{p}/include"),
        format!("-L{p}/lib"),
        "-lmpi".to_string(),
    ] {
        assert!(
            show.split(' ').any(|w| w == word),
            "mpicc -show: `{show}` lacks {word}"
        );
    }
    assert_eq!(
        wrapper("mpicc", &["--showme:compile"]),
        format!("-I{p}/include")
    );
    assert!(wrapper("mpicc", &["--showme:link"]).ends_with("-lmpi"));
    assert!(wrapper("mpicc", &["-link-info"]).contains("-lmpi"));
    assert!(wrapper("mpicc", &["-compile-info"]).contains(&format!("-I{p}/include")));
    assert_eq!(wrapper("mpicc", &["--showme:command"]), "cc");
    assert_eq!(wrapper("mpicxx", &["--showme:command"]), "c++");
    let compile_only = wrapper("mpicc", &["-show", "-c", "x.c"]);
    assert!(!compile_only.contains("-lmpi"), "{compile_only}");

    for pc in ["mpi", "mpich"] {
        let out = Command::new("pkg-config")
            .args(["--cflags", "--libs", pc])
            .env("PKG_CONFIG_PATH", prefix().join("lib/pkgconfig"))
            .output()
            .expect("cannot run pkg-config");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && text.contains(&format!("-I{p}/include"))
                && text.contains("-lmpi"),
            "pkg-config {pc}: {out:?}"
        );
    }

    // A C++ program through mpicxx, run as a singleton.
    let dir = ScratchDir::new();
    let src = dir.path().join("hello.cpp");
    std::fs::write(
        &src,
        "#include <mpi.h>\n#include <cstdio>\nint main(int argc, char **argv) {\n\
         MPI_Init(&argc, &argv); int n = 0; MPI_Comm_size(MPI_COMM_WORLD, &n);\n\
         std::printf(\"size %d\\n\", n); return MPI_Finalize(); }\n",
    )
    .unwrap();
    let exe = dir.path().join("hello");
    let out = Command::new(prefix().join("bin/mpicxx"))
        .args(["-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "mpicxx failed: {out:?}");
    let ran = Command::new(&exe).output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "size 1\n");
}

/// The installed library exports MPICH's MPI_ and MPIX_ functions (weak)
/// with strong PMPI_ / PMPIX_ twins, the data objects, and no symbol that would
/// make mpi4py pick another ABI flavour.
#[test]
fn exports_match_mpich() {
    let nm = |lib: &Path| -> Vec<(String, String)> {
        let out = Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(lib)
            .output()
            .expect("cannot run nm");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace().skip(1);
                Some((w.next()?.to_string(), w.next()?.to_string()))
            })
            .collect()
    };
    let ours = nm(&prefix().join("lib/libmpi.so.12"));
    let mpich = nm(Path::new("/usr/lib/x86_64-linux-gnu/libmpich.so.12"));
    let is_mpi = |n: &str| n.starts_with("MPI_") || n.starts_with("MPIX_");
    let mpi_names = |syms: &[(String, String)]| -> std::collections::BTreeSet<String> {
        syms.iter()
            .filter(|(_, n)| is_mpi(n))
            .map(|(_, n)| n.clone())
            .collect()
    };
    let (a, b) = (mpi_names(&ours), mpi_names(&mpich));
    let missing: Vec<_> = b.difference(&a).collect();
    assert!(
        missing.is_empty(),
        "MPICH exports these, we do not: {missing:?}"
    );
    let data = [
        "MPI_UNWEIGHTED",
        "MPI_WEIGHTS_EMPTY",
        "MPI_F_STATUS_IGNORE",
        "MPI_F_STATUSES_IGNORE",
        "MPI_F08_STATUS_IGNORE",
        "MPI_F08_STATUSES_IGNORE",
        "MPI_T_PVAR_ALL_HANDLES",
    ];
    for (kind, name) in ours.iter().filter(|(_, n)| is_mpi(n)) {
        if data.contains(&name.as_str()) {
            assert!(
                kind == "D" || kind == "B",
                "{name} is {kind}, expected a data object"
            );
        } else {
            assert_eq!(kind, "W", "{name} must be a weak alias");
            assert!(
                ours.iter()
                    .any(|(k, n)| k == "T" && *n == format!("P{name}")),
                "{name} has no strong PMPI_ twin"
            );
        }
    }
    assert!(ours.iter().any(|(_, n)| n == "MPIR_Dup_fn"));
    assert!(
        !ours
            .iter()
            .any(|(_, n)| n == "MPI_Abi_get_version" || n.starts_with("ompi_")),
        "exports an MPI-5 ABI or Open MPI symbol"
    );
    let soname = Command::new("readelf")
        .arg("-d")
        .arg(prefix().join("lib/libmpi.so.12"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&soname.stdout).contains("Library soname: [libmpi.so.12]"));
}
