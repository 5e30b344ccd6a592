//! Inter-host comparison on network-namespace test hosts (needs root):
//! ping-pong latency (8 B, 64 KiB, 1 MiB, 4 MiB), streaming bandwidth
//! (64 KiB, 1 MiB, 4 MiB) and a 2+2 allreduce, for OxMPI (large messages
//! by tagged send and by RMA read, `OXMPI_OFI_RNDV`; and over the opt-in
//! `net` provider), MPICH and Open MPI on the same
//! link, with raw TCP (a spinning ping-pong over one socket) and
//! libfabric's `fi_pingpong` (tcp msg, RDM over rxm, net's own RDM;
//! skipped when libfabric-bin is not installed) as the limits.
//!
//! ```text
//! cargo build --release --workspace
//! target/release/interhost [--runs N] [--only NAME,...]
//! target/release/interhost pairs [--runs N] [--before DIR]
//! ```
//!
//! One source for every library: `benches/c/p2p.c` and `benches/c/coll.c`
//! built with MPICH's mpicc run under MPICH's hydra and, unchanged, on
//! OxMPI's library (as `libmpich.so.12`, which the program links) under
//! oxrun; built with Open MPI's mpicc under
//! its mpirun. Each host has its own hostname, IPC and /dev/shm (see
//! `oxmpi_tests::hosts`), so no library can cross between them through
//! shared memory; the runner checks that OxMPI's bytes crossed the link.
//! Each figure is the best of `--runs` runs (default 3). Results go to
//! `benches/results/interhost.md`.
//!
//! `pairs` (pairs.rs) measures OxMPI alone: ping-pong between ranks of one
//! host and of two hosts inside one job (2+2 by slot and by node), next to
//! a one-host job and 1+1; its section of the results file is its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use oxmpi_benches::cli::Flags;
use oxmpi_benches::peers::{compile_c, loads_from, on_path, oxmpi_lib_dir, parse_records, Record};
use oxmpi_tests::hosts::TestHosts;

mod limits;
mod pairs;

/// Message sizes of the latency columns.
const LAT_SIZES: [usize; 4] = [8, 64 << 10, 1 << 20, 4 << 20];
/// Message sizes of the bandwidth columns.
const BW_SIZES: [usize; 3] = [64 << 10, 1 << 20, 4 << 20];
/// Columns: latencies, bandwidths, the allreduce.
const COLUMNS: usize = LAT_SIZES.len() + BW_SIZES.len() + 1;
/// Seconds one benchmark job may take.
const JOB_LIMIT_S: u32 = 120;
/// Where the figures go; `pairs` keeps a section of its own at the end.
const RESULTS: &str = "results/interhost.md";

const USAGE: &str = "usage: interhost [--runs N] [--only NAME,...]
       interhost pairs [--runs N] [--before DIR]

Benchmarks OxMPI, MPICH and Open MPI between two network-namespace hosts
(needs root), beside raw TCP and fi_pingpong; writes
benches/results/interhost.md.

  --runs N       runs per figure, the best kept (default 3)
  --only NAMES   run only these rows (comma-separated): oxmpi-tagged,
                 oxmpi-read, oxmpi-rxm, mpich, openmpi, tcp, fi_pingpong
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("--tcp-server") => limits::tcp_server(),
        Some("--tcp-client") => limits::tcp_client(&args[1]),
        Some("pairs") => pairs::run(&args[1..]),
        Some("--help" | "-h") => {
            print!("{USAGE}");
            Ok(())
        }
        _ => run(&args),
    };
    if let Err(e) = outcome {
        eprintln!("interhost: {e}");
        std::process::exit(2);
    }
}

/// One implementation's launch on the two hosts.
struct Setup {
    /// Row name (and `--only` name).
    name: &'static str,
    /// Whose launcher: `oxmpi`, `mpich` or `openmpi`.
    launcher: &'static str,
    /// Environment for every rank.
    env: &'static [(&'static str, &'static str)],
    p2p: PathBuf,
    coll: PathBuf,
}

/// The flags of a mode.
struct Options {
    /// `--runs N` (default 3).
    runs: usize,
    /// `--before DIR` (pairs only).
    before: Option<PathBuf>,
    /// `--only NAMES` (the main table only).
    only: Option<Vec<String>>,
}

/// Reads `--runs N`, and `--before DIR` in `pairs` mode or `--only NAMES`
/// in the main one.
fn read_flags(args: &[String], pairs: bool) -> Result<Options, String> {
    let mut flags = Flags::new(args, USAGE);
    let (mut runs, mut dir, mut only) = (3, None, None);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--runs" => {
                let v = flags.value(flag)?;
                runs = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| flags.bad(flag, v))?;
            }
            "--before" if pairs => dir = Some(PathBuf::from(flags.value(flag)?)),
            "--only" if !pairs => {
                only = Some(flags.value(flag)?.split(',').map(String::from).collect());
            }
            other => return Err(flags.refuse(other)),
        }
    }
    Ok(Options {
        runs,
        before: dir,
        only,
    })
}

fn run(args: &[String]) -> Result<(), String> {
    let Options { runs, only, .. } = read_flags(args, false)?;
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == name));
    let hosts = TestHosts::new(2)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("oxmpi-interhost-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let build = |mpicc: &str, src: &str, tag: &str| -> Result<PathBuf, String> {
        let exe = work.join(format!("{src}_{tag}"));
        compile_c(mpicc, &root.join(format!("c/{src}.c")), &exe)?;
        Ok(exe)
    };
    let (p2p_mpich, coll_mpich) = (
        build("mpicc.mpich", "p2p", "mpich")?,
        build("mpicc.mpich", "coll", "mpich")?,
    );
    // The 'oxmpi' rows must run OxMPI's library, not the MPICH one the
    // programs were linked against.
    let libdir = work_lib(&beside_me("libmpi.so")?)?;
    for exe in [&p2p_mpich, &coll_mpich] {
        loads_from(exe, &libdir)?;
    }
    let mut setups = Vec::new();
    // The default path (OXMPI_OFI_RNDV=auto) first: the ratios use it.
    let oxmpi_rows: [(&str, &'static [(&str, &str)]); 3] = [
        ("oxmpi-tagged", &[("OXMPI_OFI_RNDV", "tagged")]),
        ("oxmpi-read", &[("OXMPI_OFI_RNDV", "read")]),
        // The fallback where libfabric lists no net provider: tcp through
        // the rxm utility provider (net, the default, runs the rows above).
        (
            "oxmpi-rxm",
            &[("OXMPI_OFI_RNDV", "tagged"), ("OXMPI_OFI_PROVIDER", "tcp")],
        ),
    ];
    for (name, env) in oxmpi_rows {
        setups.push(Setup {
            name,
            launcher: "oxmpi",
            env,
            p2p: p2p_mpich.clone(),
            coll: coll_mpich.clone(),
        });
    }
    setups.push(Setup {
        name: "mpich",
        launcher: "mpich",
        env: &[],
        p2p: p2p_mpich.clone(),
        coll: coll_mpich.clone(),
    });
    if wanted("openmpi") {
        setups.push(Setup {
            name: "openmpi",
            launcher: "openmpi",
            env: &[],
            p2p: build("mpicc.openmpi", "p2p", "openmpi")?,
            coll: build("mpicc.openmpi", "coll", "openmpi")?,
        });
    }
    let ssh = write_ssh_wrapper(&work, &hosts)?;
    let sizes = |list: &[usize]| {
        let text: Vec<String> = list.iter().map(usize::to_string).collect();
        format!("sizes={}", text.join(","))
    };
    let (lat_sizes, bw_sizes) = (sizes(&LAT_SIZES), sizes(&BW_SIZES));
    let mut table: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    let mut notes = Vec::new();
    let mut crossed_note = None;
    let chosen: Vec<&Setup> = setups.iter().filter(|s| wanted(s.name)).collect();
    let mut best: Vec<Vec<Option<f64>>> = vec![vec![None; COLUMNS]; chosen.len()];
    // Runs interleave the setups, so that a change in the machine's load
    // during the whole run touches all of them alike.
    for _ in 0..runs {
        for (s, best) in chosen.iter().zip(&mut best) {
            let before = hosts.rx_bytes(0) + hosts.rx_bytes(1);
            let mut failed = |e: String| {
                notes.push(format!("{}: {}", s.name, e.lines().next().unwrap_or("")));
                Vec::new()
            };
            let lat = launch(
                &hosts,
                s,
                &ssh,
                &[1, 1],
                &s.p2p,
                &["latency", "quick", &lat_sizes],
            )
            .unwrap_or_else(&mut failed);
            let crossed = hosts.rx_bytes(0) + hosts.rx_bytes(1) - before;
            if s.launcher == "oxmpi" && crossed_note.is_none() {
                crossed_note = Some(format!(
                    "OxMPI's latency run moved {crossed} bytes over the link"
                ));
            }
            let bw = launch(
                &hosts,
                s,
                &ssh,
                &[1, 1],
                &s.p2p,
                &["bandwidth", "quick", &bw_sizes],
            )
            .unwrap_or_else(&mut failed);
            let ar = launch(
                &hosts,
                s,
                &ssh,
                &[2, 2],
                &s.coll,
                &["quick", "allreduce", "sizes=8,1048576"],
            )
            .unwrap_or_else(&mut failed);
            let mut figures: Vec<Option<f64>> = LAT_SIZES
                .iter()
                .map(|&n| pick(&lat, "latency", n, "lat_us_min"))
                .collect();
            figures.extend(
                BW_SIZES
                    .iter()
                    .map(|&n| pick(&bw, "bandwidth", n, "bw_MBps_max")),
            );
            figures.push(pick(&ar, "allreduce", 1 << 20, "time_us"));
            keep_best(best, &figures);
        }
    }
    for (s, best) in chosen.iter().zip(best) {
        table.push((s.name.to_string(), best));
    }
    let latency_only = |v: Vec<Option<f64>>| {
        let mut row = v;
        row.resize(COLUMNS, None);
        row
    };
    if wanted("tcp") {
        table.push(("raw TCP".into(), latency_only(limits::tcp(&hosts)?)));
    }
    if wanted("fi_pingpong") {
        for fp in &limits::FI_PINGPONGS {
            match fp.limits(&hosts, runs) {
                Ok(v) => table.push((fp.name(), latency_only(v))),
                Err(e) => {
                    eprintln!("interhost: {e}");
                    notes.push(e);
                    break;
                }
            }
        }
    }
    notes.extend(crossed_note);
    write_report(&table, &notes, runs, args)?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Keeps the best of each figure: the largest bandwidth, the smallest time.
fn keep_best(best: &mut [Option<f64>], figures: &[Option<f64>]) {
    for (i, (b, &f)) in best.iter_mut().zip(figures).enumerate() {
        let rate = (LAT_SIZES.len()..LAT_SIZES.len() + BW_SIZES.len()).contains(&i);
        *b = match (*b, f) {
            (Some(x), Some(y)) if rate => Some(x.max(y)),
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
}

fn write_ssh_wrapper(dir: &Path, hosts: &TestHosts) -> Result<PathBuf, String> {
    // hydra and Open MPI call "ssh [options] HOST COMMAND..."; run COMMAND
    // on the test host the way oxrun's launch command does.
    let launch = hosts.launch_command().display();
    let path = dir.join("ssh-to-host");
    let body = format!(
        "#!/bin/sh\nwhile [ \"${{1#-}}\" != \"$1\" ]; do shift; done\nhost=\"$1\"; shift\nexec {launch} \"$host\" sh -c \"$*\"\n"
    );
    std::fs::write(&path, body).map_err(|e| e.to_string())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    Ok(path)
}

/// Runs `exe ARGS` with `ranks[i]` ranks on host `i` under `s`'s launcher.
fn launch(
    hosts: &TestHosts,
    s: &Setup,
    ssh: &Path,
    ranks: &[usize],
    exe: &Path,
    args: &[&str],
) -> Result<Vec<Record>, String> {
    let names = hosts.names();
    let n: usize = ranks.iter().sum();
    let list = |sep: &str| -> String {
        ranks
            .iter()
            .enumerate()
            .map(|(i, k)| format!("{}{sep}{k}", names[i]))
            .collect::<Vec<_>>()
            .join(",")
    };
    let bridge_net = format!("{}/24", hosts.control_addr());
    let mut cmd = match s.launcher {
        "oxmpi" => {
            let oxrun = beside_me("oxrun")?;
            let lib = beside_me("libmpi.so")?;
            let libdir = work_lib(&lib)?;
            let mut c = Command::new(oxrun);
            c.args(hosts.oxrun_args(ranks))
                .args(["-x", &format!("LD_LIBRARY_PATH={}", libdir.display())]);
            for (k, v) in s.env {
                c.args(["-x", &format!("{k}={v}")]);
            }
            c
        }
        "mpich" => {
            let mut c = Command::new(on_path("mpiexec.hydra").ok_or("mpiexec.hydra missing")?);
            c.args(["-launcher", "ssh", "-launcher-exec"])
                .arg(ssh)
                .args([
                    "-iface",
                    &bridge_iface(hosts)?,
                    "-hosts",
                    &list(":"),
                    "-n",
                    &n.to_string(),
                ])
                .args(["-genv", "UCX_TLS", "tcp,self"]);
            c
        }
        _ => {
            let mut c = Command::new(on_path("mpirun.openmpi").ok_or("mpirun.openmpi missing")?);
            c.args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "none",
            ])
            .args(["--mca", "plm_rsh_agent"])
            .arg(ssh)
            .args(["--mca", "btl", "tcp,self", "--mca", "pml", "ob1"])
            .args(["--mca", "btl_tcp_if_include", &bridge_net])
            .args(["--mca", "oob_tcp_if_include", &bridge_net])
            .args(["--host", &list(":"), "-n", &n.to_string()]);
            c
        }
    };
    cmd.arg(exe).args(args);
    run_limited(s.name, &cmd)
}

/// Runs `cmd` (a job of `name`'s) under a time limit; the records it printed.
fn run_limited(name: &str, cmd: &Command) -> Result<Vec<Record>, String> {
    // A hung job (it happens to the peers too) must not stall the runner.
    let mut limited = Command::new("timeout");
    limited
        .args(["-k", "5", &JOB_LIMIT_S.to_string()])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let started = Instant::now();
    let out = limited.output().map_err(|e| format!("{name}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let args: Vec<_> = cmd.get_args().collect();
        return Err(format!(
            "{name} {args:?} failed after {:?}: {}\n{stdout}",
            started.elapsed(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse_records(&stdout))
}

fn beside_me(name: &str) -> Result<PathBuf, String> {
    oxmpi_benches::peers::beside_me(name)
}

/// The bridge's name (hydra's `-iface`): the interface holding the
/// controller's address.
fn bridge_iface(hosts: &TestHosts) -> Result<String, String> {
    let addr = hosts.control_addr();
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains(&format!("inet {addr}/")))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        .ok_or_else(|| format!("no interface holds {addr}"))
}

fn pick(r: &[Record], what: &str, size: usize, metric: &str) -> Option<f64> {
    r.iter()
        .find(|x| x.what == what && x.size == size as u64 && x.metric == metric)
        .map(|x| x.value)
}

/// Where earlier runs start in the results file: kept below a new run,
/// after the pairs section.
pub(crate) const EARLIER: &str = "\n## Earlier runs\n";

fn write_report(
    table: &[(String, Vec<Option<f64>>)],
    notes: &[String],
    runs: usize,
    args: &[String],
) -> Result<(), String> {
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let command = std::iter::once("target/release/interhost".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut md = format!(
        "# Inter-host comparison (network-namespace hosts, one link)\n\n\
         `{command}` (after `cargo build --release --workspace`): ping-pong half round \
         trip (us, min; fi_pingpong: its mean), streaming bandwidth (MB/s, max), 2+2 \
         allreduce of 1 MiB (us); best of each figure over the runs. oxmpi-tagged / \
         oxmpi-read: large messages between hosts by tagged send into the posted receive \
         / by RMA read of the sender's registered buffer (`OXMPI_OFI_RNDV`), over the \
         default provider (net); oxmpi-rxm: over tcp;ofi_rxm, the fallback.\n\n\
         | | 8 B | 64 KiB | 1 MiB | 4 MiB | bw 64 KiB | bw 1 MiB | bw 4 MiB | allreduce 1 MiB 2+2 |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, v) in table {
        md += &format!(
            "| {name} | {} |\n",
            v.iter().map(|x| cell(*x)).collect::<Vec<_>>().join(" | ")
        );
    }
    if let Some((first, ox)) = table.first() {
        // Time ratios OxMPI / other; for bandwidth other / OxMPI: below 1
        // is OxMPI ahead everywhere.
        let ratio = |other: &[Option<f64>], i: usize| {
            let rate = (LAT_SIZES.len()..LAT_SIZES.len() + BW_SIZES.len()).contains(&i);
            let (a, b) = if rate {
                (other[i], ox[i])
            } else {
                (ox[i], other[i])
            };
            match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => "-".into(),
            }
        };
        md += &format!(
            "\n{first} / other (below 1: {first} faster; bandwidth as other / {first}):\n\n\
             | vs | 8 B | 64 KiB | 1 MiB | 4 MiB | bw 64 KiB | bw 1 MiB | bw 4 MiB | allreduce |\n\
             |---|---|---|---|---|---|---|---|---|\n"
        );
        for (name, v) in &table[1..] {
            let cells: Vec<String> = (0..v.len()).map(|i| ratio(v, i)).collect();
            md += &format!("| {name} | {} |\n", cells.join(" | "));
        }
    }
    md += &format!("\n{runs} runs. {}\n", notes.join("; "));
    print!("{md}");
    let old = read_results();
    write_results(&format!("{md}{}", after_table(&old)))
}

/// What follows the main table in the results file (from its first
/// second-level heading: the pairs section, earlier runs), kept as it is.
fn after_table(old: &str) -> &str {
    old.find("\n## ").map_or("", |at| &old[at..])
}

/// The results file as it is (empty if none yet).
fn read_results() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(RESULTS)).unwrap_or_default()
}

fn write_results(md: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RESULTS);
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))
}

/// OxMPI's library as MPICH-built programs look for it (see
/// [`oxmpi_lib_dir`]).
fn work_lib(lib: &Path) -> Result<PathBuf, String> {
    oxmpi_lib_dir(lib, "interhost-lib")
}
