//! Inter-host comparison on network-namespace test hosts (needs root):
//! ping-pong latency (8 B, 64 KiB, 1 MiB), streaming bandwidth and a 2+2
//! allreduce, for OxMPI, MPICH and Open MPI on the same link, with raw
//! TCP (a spinning ping-pong over one socket) as the limit.
//!
//! ```text
//! cargo build --release --workspace
//! cargo run --release -p oxmpi-benches --bin interhost [-- --runs N]
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

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use oxmpi_benches::cli::Flags;
use oxmpi_benches::peers::{compile_c, on_path, parse_records, Record};
use oxmpi_tests::hosts::TestHosts;

mod pairs;

/// Message sizes of the latency table.
const SIZES: [usize; 3] = [8, 64 << 10, 1 << 20];
const TCP_PORT: u16 = 47123;
/// Seconds one benchmark job may take.
const JOB_LIMIT_S: u32 = 120;
/// Where the figures go; `pairs` keeps a section of its own at the end.
const RESULTS: &str = "results/interhost.md";

const USAGE: &str = "usage: interhost [--runs N]\n       \
                     interhost pairs [--runs N] [--before DIR]\n\
                     (root: builds network-namespace hosts; see the source's docs)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("--tcp-server") => tcp_server(),
        Some("--tcp-client") => tcp_client(&args[1]),
        Some("pairs") => pairs::run(&args[1..]),
        _ => run(&args),
    };
    if let Err(e) = outcome {
        eprintln!("interhost: {e}");
        std::process::exit(2);
    }
}

/// One implementation's launch on the two hosts.
struct Setup {
    name: &'static str,
    p2p: PathBuf,
    coll: PathBuf,
}

/// `--runs N` (default 3), and `--before DIR` where `before` is allowed.
fn read_flags(args: &[String], before: bool) -> Result<(usize, Option<PathBuf>), String> {
    let mut flags = Flags::new(args, USAGE);
    let (mut runs, mut dir) = (3, None);
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
            "--before" if before => dir = Some(PathBuf::from(flags.value(flag)?)),
            other => return Err(flags.refuse(other)),
        }
    }
    Ok((runs, dir))
}

fn run(args: &[String]) -> Result<(), String> {
    let (runs, _) = read_flags(args, false)?;
    let hosts = TestHosts::new(2)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("oxmpi-interhost-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let build = |mpicc: &str, src: &str, tag: &str| -> Result<PathBuf, String> {
        let exe = work.join(format!("{src}_{tag}"));
        compile_c(mpicc, &root.join(format!("c/{src}.c")), &exe)?;
        Ok(exe)
    };
    let setups = [
        Setup {
            name: "oxmpi",
            p2p: build("mpicc.mpich", "p2p", "mpich")?,
            coll: build("mpicc.mpich", "coll", "mpich")?,
        },
        Setup {
            name: "mpich",
            p2p: build("mpicc.mpich", "p2p", "mpich")?,
            coll: build("mpicc.mpich", "coll", "mpich")?,
        },
        Setup {
            name: "openmpi",
            p2p: build("mpicc.openmpi", "p2p", "openmpi")?,
            coll: build("mpicc.openmpi", "coll", "openmpi")?,
        },
    ];
    let ssh = write_ssh_wrapper(&work, &hosts)?;
    let mut table: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    let mut notes = Vec::new();
    let mut crossed_note = None;
    for s in &setups {
        let mut best: Vec<Option<f64>> = vec![None; SIZES.len() + 2];
        for _ in 0..runs {
            let before = hosts.rx_bytes(0) + hosts.rx_bytes(1);
            let mut failed = |e: String| {
                notes.push(format!("{}: {}", s.name, e.lines().next().unwrap_or("")));
                Vec::new()
            };
            let lat = launch(&hosts, s, &ssh, &[1, 1], &s.p2p, &["latency", "quick"])
                .unwrap_or_else(&mut failed);
            let crossed = hosts.rx_bytes(0) + hosts.rx_bytes(1) - before;
            if s.name == "oxmpi" && crossed_note.is_none() {
                crossed_note = Some(format!(
                    "OxMPI's latency run moved {crossed} bytes over the link"
                ));
            }
            let bw = launch(&hosts, s, &ssh, &[1, 1], &s.p2p, &["bandwidth", "quick"])
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
            let mut figures: Vec<Option<f64>> = SIZES
                .iter()
                .map(|&n| pick(&lat, "latency", n, "lat_us_min"))
                .collect();
            figures.push(pick(&bw, "bandwidth", 1 << 20, "bw_MBps_max"));
            figures.push(pick(&ar, "allreduce", 1 << 20, "time_us"));
            for (i, (b, f)) in best.iter_mut().zip(figures).enumerate() {
                let rate = i == SIZES.len();
                *b = match (*b, f) {
                    (Some(x), Some(y)) if rate => Some(x.max(y)),
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                };
            }
        }
        table.push((s.name.to_string(), best));
    }
    table.push(("raw TCP".into(), tcp_limits(&hosts)?));
    notes.extend(crossed_note);
    write_report(&table, &notes, runs)?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
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
    let mut cmd = match s.name {
        "oxmpi" => {
            let oxrun = beside_me("oxrun")?;
            let lib = beside_me("libmpi.so")?;
            let libdir = work_lib(&lib)?;
            let mut c = Command::new(oxrun);
            c.args(hosts.oxrun_args(ranks))
                .args(["-x", &format!("LD_LIBRARY_PATH={}", libdir.display())]);
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

/// A folder where OxMPI's library (`lib`, as built) is found under both
/// names a program built by MPICH's mpicc may need: `libmpich.so.12`
/// (what Debian's mpicc.mpich links) and `libmpi.so.12`. Without the
/// first, such a program would load MPICH's own library under oxrun.
fn work_lib(lib: &Path) -> Result<PathBuf, String> {
    let dir = lib.parent().ok_or("no folder")?.join("interhost-lib");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for name in ["libmpich.so.12", "libmpi.so.12"] {
        std::fs::copy(lib, dir.join(name)).map_err(|e| e.to_string())?;
    }
    Ok(dir)
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

/// Raw TCP between the hosts: half round trip at each size (us), and
/// one-way streaming of 1 MiB messages (MB/s); no collective.
fn tcp_limits(hosts: &TestHosts) -> Result<Vec<Option<f64>>, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let launch = hosts.launch_command();
    let names = hosts.names();
    let mut server = Command::new(launch)
        .arg(&names[1])
        .arg(&me)
        .arg("--tcp-server")
        .spawn()
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(300));
    let peer = hosts.addr(1).to_string();
    let out = Command::new(launch)
        .arg(&names[0])
        .arg(&me)
        .args(["--tcp-client", &peer])
        .output()
        .map_err(|e| e.to_string())?;
    let _ = server.kill();
    let _ = server.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<Option<f64>> = text.split_whitespace().map(|f| f.parse().ok()).collect();
    v.resize(SIZES.len() + 1, None);
    v.push(None);
    Ok(v)
}

/// Echoes every message back (one connection).
fn tcp_server() -> Result<(), String> {
    let l = TcpListener::bind(("0.0.0.0", TCP_PORT)).map_err(|e| e.to_string())?;
    let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 8 + (1 << 20)];
    loop {
        if spin_read(&mut s, &mut buf[..8]).is_err() {
            return Ok(());
        }
        let n = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) as usize;
        spin_read(&mut s, &mut buf[8..8 + n])?;
        spin_write(&mut s, &buf[8..8 + n])?;
    }
}

/// Reads exactly `buf.len()` bytes from a non-blocking socket, spinning.
fn spin_read(s: &mut TcpStream, buf: &mut [u8]) -> Result<(), String> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err("peer closed".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Writes all of `buf` to a non-blocking socket, spinning.
fn spin_write(s: &mut TcpStream, buf: &[u8]) -> Result<(), String> {
    let mut put = 0;
    while put < buf.len() {
        match s.write(&buf[put..]) {
            Ok(n) => put += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Prints the half round trip (us) at each size, best of 5 rounds: the
/// client sends an 8-byte length and the message, the server echoes the
/// message; both spin on non-blocking sockets (no sleeping in the kernel).
fn tcp_client(peer: &str) -> Result<(), String> {
    let mut s = TcpStream::connect((peer, TCP_PORT)).map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut out = vec![7u8; 8 + (1 << 20)];
    let mut back = vec![0u8; 1 << 20];
    let mut line = Vec::new();
    for &n in &SIZES {
        out[..8].copy_from_slice(&(n as u64).to_le_bytes());
        let iters = if n <= 64 << 10 { 1000 } else { 100 };
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..iters {
                spin_write(&mut s, &out[..8 + n])?;
                spin_read(&mut s, &mut back[..n])?;
            }
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / iters as f64 / 2.0);
        }
        line.push(format!("{best:.2}"));
    }
    println!("{}", line.join(" "));
    Ok(())
}

fn write_report(
    table: &[(String, Vec<Option<f64>>)],
    notes: &[String],
    runs: usize,
) -> Result<(), String> {
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let mut md = String::from(
        "# Inter-host comparison (network-namespace hosts, one link)\n\n\
         `cargo run --release -p oxmpi-benches --bin interhost`: ping-pong half round trip \
         (us, min), 1 MiB streaming bandwidth (MB/s, max), 2+2 allreduce of 1 MiB (us); \
         best of each figure over the runs.\n\n\
         | | 8 B | 64 KiB | 1 MiB | bw 1 MiB | allreduce 1 MiB 2+2 |\n|---|---|---|---|---|---|\n",
    );
    for (name, v) in table {
        md += &format!(
            "| {name} | {} |\n",
            v.iter().map(|x| cell(*x)).collect::<Vec<_>>().join(" | ")
        );
    }
    let ox = &table[0].1;
    // Time ratios OxMPI / peer; for bandwidth peer / OxMPI: below 1 is
    // OxMPI ahead everywhere.
    let ratio = |other: &[Option<f64>], i: usize| {
        let (a, b) = if i == SIZES.len() {
            (other[i], ox[i])
        } else {
            (ox[i], other[i])
        };
        match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "-".into(),
        }
    };
    md += "\nOxMPI / peer (below 1: OxMPI faster; bandwidth as peer / OxMPI):\n\n\
           | vs | 8 B | 64 KiB | 1 MiB | bw 1 MiB | allreduce |\n|---|---|---|---|---|---|\n";
    for (name, v) in &table[1..] {
        let cells: Vec<String> = (0..v.len()).map(|i| ratio(v, i)).collect();
        md += &format!("| {name} | {} |\n", cells.join(" | "));
    }
    md += &format!("\n{runs} runs. {}\n", notes.join("; "));
    print!("{md}");
    // The sections after this table (pairs.rs's) stay as they are.
    let tail = read_results()
        .split_once("\n## ")
        .map(|(_, t)| t.to_string());
    if let Some(t) = tail {
        md += &format!("\n## {t}");
    }
    write_results(&md)
}

/// The results file as it is (empty if none yet).
fn read_results() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(RESULTS)).unwrap_or_default()
}

fn write_results(md: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RESULTS);
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))
}
