//! Point-to-point semantics under Slurm: `srun --mpi=pmi2 -n 4`.
//!
//! The test starts a private single-node Slurm: its own `munged` (as user
//! munge), `slurmctld -D` and `slurmd -D`, configured from
//! `tests/slurm/slurm.conf.in` in a fresh temporary directory, on free ports.
//! Once `sinfo` shows the node idle it runs this test binary as the ranks of
//! `srun` jobs (the role in `OXMPI_TEST_ROLE`, as in `p2p_semantics.rs`),
//! with `OXMPI_PMI=2` so that the runtime bootstraps through PMI-2 over the
//! socket Slurm's `mpi/pmi2` plugin passes in `PMI_FD`. (Slurm sets no
//! `PMI_VERSION`, so without it the runtime would speak PMI-1, which the
//! same plugin also serves.) The daemons are stopped by pid when the test
//! ends, failing or not.
//!
//! Needs root and the Debian packages slurmctld, slurmd, slurm-client and
//! munge (`scripts/setup.sh` installs them). Where they are missing or the
//! daemons cannot start here, the test says why on stderr and passes: it is
//! the one test of the suite that may be skipped.

#[path = "p2p/roles.rs"]
mod roles;

use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{chown, Pid, Uid, User};
use oxmpi_tests::{run_command, JobOutcome, ScratchDir};

/// The p2p roles run under Slurm, each at [`RANKS`] ranks.
const ROLES: [&str; 4] = ["basic", "order", "probe", "large"];
const RANKS: usize = 4;

/// Role (not one of `roles.rs`) that drives the PMI-2 client directly.
const PMI2_ROLE: &str = "slurm-pmi2";
/// Set for ranks that must check they were started for PMI-2 by Slurm.
const EXPECT_PMI2: &str = "OXMPI_SLURM_EXPECT_PMI2";

const SETUP: &str = "run scripts/setup.sh, which installs slurmctld slurmd slurm-client munge";
const CONF_TEMPLATE: &str = include_str!("../slurm/slurm.conf.in");

/// How long each bounded wait of the cluster's start and stop may take.
const START_LIMIT: Duration = Duration::from_secs(30);
const STOP_LIMIT: Duration = Duration::from_secs(10);
const JOB_LIMIT: Duration = Duration::from_secs(120);

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    let Ok(role) = std::env::var("OXMPI_TEST_ROLE") else {
        return;
    };
    if role == PMI2_ROLE {
        pmi2_client_against_slurm();
        return;
    }
    if std::env::var_os(EXPECT_PMI2).is_some() {
        check_started_for_pmi2();
    }
    roles::run(&role);
}

fn env_number(name: &str) -> usize {
    let v = std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
}

/// The rank was started by Slurm's pmi2 plugin and the runtime will pick
/// PMI-2 (the same choice `oxmpi::init` makes from the same environment).
fn check_started_for_pmi2() {
    use oxmpi::bootstrap::{Method, PmiEnv};
    let var = |n: &str| std::env::var(n).ok();
    assert_eq!(var("SLURM_MPI_TYPE").as_deref(), Some("pmi2"));
    let env = PmiEnv::from_env();
    assert!(env.fd.is_some(), "Slurm set no PMI_FD");
    assert!(env.jobid.is_some(), "Slurm set no PMI_JOBID");
    assert_eq!(env.method().expect("PMI method"), Method::Pmi2);
}

/// Runs the runtime's PMI-2 client on its own against Slurm: identity,
/// process mapping, puts/fences/gets across all ranks, missing keys.
fn pmi2_client_against_slurm() {
    use oxmpi::bootstrap::framed_client::Pmi2;
    use oxmpi::bootstrap::{Bootstrap, PmiEnv};
    check_started_for_pmi2();
    let env = PmiEnv::from_env();
    let mut pmi = Pmi2::connect(&env).unwrap_or_else(|e| panic!("PMI-2 start-up: {e}"));
    let (rank, size) = (pmi.rank(), pmi.size());
    assert_eq!(rank, env_number("SLURM_PROCID"), "rank");
    assert_eq!(rank, env_number("PMI_RANK"), "rank");
    assert_eq!(size, env_number("SLURM_NTASKS"), "size");
    assert_eq!(
        pmi.local_ranks(),
        (0..size).collect::<Vec<_>>(),
        "one node: every rank is local (mapping {:?})",
        pmi.node_of_rank()
    );
    let jobid = pmi.jobid().to_string();
    assert!(!jobid.is_empty());
    for round in 0..3 {
        let value = |r: usize| format!("r{r}-{round}-{}", "v".repeat(100 * r + round));
        pmi.put(&format!("ox-{round}-{rank}"), &value(rank))
            .unwrap_or_else(|e| panic!("put: {e}"));
        pmi.fence().unwrap_or_else(|e| panic!("fence {round}: {e}"));
        for r in 0..size {
            let got = pmi
                .get(&format!("ox-{round}-{r}"))
                .unwrap_or_else(|e| panic!("get: {e}"));
            assert_eq!(got, Some(value(r)), "round {round}, key of rank {r}");
        }
        let missing = pmi
            .get(&format!("ox-missing-{round}"))
            .unwrap_or_else(|e| panic!("get of a missing key: {e}"));
        assert_eq!(missing, None);
    }
    let universe = pmi.info().universe_size;
    pmi.finalize()
        .unwrap_or_else(|e| panic!("PMI-2 finalize: {e}"));
    println!("pmi2-ok rank={rank} size={size} jobid={jobid} universe={universe:?}");
}

/// Finds an executable in `$PATH` or the sbin folders (daemons live there).
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The last `max` bytes of a file, as text.
fn file_tail(path: &Path, max: u64) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len > max {
            use std::io::{Seek, SeekFrom};
            let _ = f.seek(SeekFrom::Start(len - max));
        }
        let _ = f.read_to_end(&mut text);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// A daemon this test started, the leader of its own process group.
struct Daemon {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn spawn(name: &'static str, mut cmd: Command, log: PathBuf) -> Result<Daemon, String> {
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name} ({:?}): {e}", cmd.get_program()))?;
        Ok(Daemon { name, child, log })
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32)
    }

    /// `Err` with the daemon's output if it has exited.
    fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "{} exited at start-up ({status}); its output:\n{}",
                self.name,
                file_tail(&self.log, 3000)
            )),
            Err(e) => Err(format!("cannot wait for {}: {e}", self.name)),
        }
    }

    fn wait_until(&mut self, deadline: Instant) -> bool {
        loop {
            if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, a bounded wait, then SIGKILL to the whole group. Reaps the
    /// daemon, then kills what is left of its group (slurmctld's
    /// slurmscriptd, say): the group id cannot be reused while any member
    /// lives, so the signal reaches only processes this daemon started.
    fn stop(&mut self) {
        let pid = self.pid();
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = kill(pid, Signal::SIGTERM);
            if !self.wait_until(Instant::now() + STOP_LIMIT) {
                eprintln!("slurm test: {} ignored SIGTERM; killing it", self.name);
                let _ = killpg(pid, Signal::SIGKILL);
                let _ = self.child.wait();
            }
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while killpg(pid, None).is_ok() {
            if Instant::now() >= deadline {
                let _ = killpg(pid, Signal::SIGKILL);
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Paths of the Slurm and munge programs.
struct Programs {
    munged: PathBuf,
    slurmctld: PathBuf,
    slurmd: PathBuf,
    srun: PathBuf,
    sinfo: PathBuf,
    squeue: PathBuf,
    scancel: PathBuf,
}

impl Programs {
    fn find() -> Result<Programs, String> {
        let get = |name: &str| {
            find_program(name)
                .ok_or_else(|| format!("Slurm not installed ({name} not found): {SETUP}"))
        };
        Ok(Programs {
            munged: get("munged")?,
            slurmctld: get("slurmctld")?,
            slurmd: get("slurmd")?,
            srun: get("srun")?,
            sinfo: get("sinfo")?,
            squeue: get("squeue")?,
            scancel: get("scancel")?,
        })
    }
}

/// Two distinct TCP ports that were free a moment ago.
fn free_ports() -> Result<(u16, u16), String> {
    let a = TcpListener::bind("0.0.0.0:0").map_err(|e| format!("no free port: {e}"))?;
    let b = TcpListener::bind("0.0.0.0:0").map_err(|e| format!("no free port: {e}"))?;
    let port = |l: &TcpListener| l.local_addr().map(|a| a.port()).map_err(|e| e.to_string());
    Ok((port(&a)?, port(&b)?))
}

fn make_dir(path: &Path, mode: u32) -> Result<(), String> {
    fs::create_dir_all(path)
        .and_then(|_| fs::set_permissions(path, fs::Permissions::from_mode(mode)))
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// A private single-node Slurm. Dropping it cancels leftover jobs, stops
/// the daemons it started (by pid) and removes its directory.
struct Cluster {
    programs: Programs,
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<Daemon>,
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd and waits for the node to be
    /// idle. `Err` says why Slurm cannot run here.
    fn start() -> Result<Cluster, String> {
        let programs = Programs::find()?;
        if !Uid::effective().is_root() {
            return Err("the private Slurm needs root (slurmd, munged as user munge)".into());
        }
        let munge = User::from_name("munge")
            .ok()
            .flatten()
            .ok_or_else(|| format!("there is no user munge: {SETUP}"))?;
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "oxmpi-slurm-{}-{}",
            std::process::id(),
            stamp % 1_000_000_000
        ));
        // munged wants every folder above its socket searchable by all.
        make_dir(&dir, 0o755)?;
        let mut cluster = Cluster {
            programs,
            conf: dir.join("slurm.conf"),
            dir,
            daemons: Vec::new(),
        };
        cluster.boot(&munge)?;
        Ok(cluster)
    }

    fn boot(&mut self, munge: &User) -> Result<(), String> {
        let dir = self.dir.clone();
        let munge_dir = dir.join("munge");
        make_dir(&munge_dir, 0o755)?;
        chown(&munge_dir, Some(munge.uid), Some(munge.gid))
            .map_err(|e| format!("cannot chown {}: {e}", munge_dir.display()))?;
        let socket = munge_dir.join("munge.socket");
        let mut cmd = Command::new(&self.programs.munged);
        cmd.arg("--foreground")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--pid-file={}",
                munge_dir.join("munged.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                munge_dir.join("munged.log").display()
            ))
            .arg(format!(
                "--seed-file={}",
                munge_dir.join("munged.seed").display()
            ))
            .uid(munge.uid.as_raw())
            .gid(munge.gid.as_raw());
        if !Path::new("/etc/munge/munge.key").exists() {
            let key = munge_dir.join("munge.key");
            write_fresh_key(&key, munge)?;
            cmd.arg(format!("--key-file={}", key.display()));
        }
        self.daemons
            .push(Daemon::spawn("munged", cmd, dir.join("munged.out"))?);
        wait_for(&mut self.daemons, "munged's socket", || Ok(socket.exists()))?;

        let (ctld_port, slurmd_port) = free_ports()?;
        let host = nix::unistd::gethostname()
            .map_err(|e| format!("gethostname: {e}"))?
            .to_string_lossy()
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string();
        let cpus = thread::available_parallelism().map_or(1, |n| n.get());
        let conf = CONF_TEMPLATE
            .replace("@HOST@", &host)
            .replace("@CPUS@", &cpus.to_string())
            .replace("@CTLD_PORT@", &ctld_port.to_string())
            .replace("@SLURMD_PORT@", &slurmd_port.to_string())
            .replace("@MUNGE_SOCKET@", &socket.display().to_string())
            .replace("@DIR@", &dir.display().to_string());
        fs::write(&self.conf, conf)
            .map_err(|e| format!("cannot write {}: {e}", self.conf.display()))?;
        make_dir(&dir.join("state"), 0o755)?;
        make_dir(&dir.join("spool"), 0o755)?;

        let mut ctld = Command::new(&self.programs.slurmctld);
        ctld.args(["-D", "-i", "-f"])
            .arg(&self.conf)
            .env("SLURM_CONF", &self.conf);
        self.daemons
            .push(Daemon::spawn("slurmctld", ctld, dir.join("slurmctld.out"))?);
        let mut slurmd = Command::new(&self.programs.slurmd);
        slurmd
            .args(["-D", "-f"])
            .arg(&self.conf)
            .env("SLURM_CONF", &self.conf);
        self.daemons
            .push(Daemon::spawn("slurmd", slurmd, dir.join("slurmd.out"))?);

        let mut last = String::new();
        let (conf, sinfo) = (&self.conf, &self.programs.sinfo);
        let result = wait_for(&mut self.daemons, "the node to be idle in sinfo", || {
            let out = run_command(client(conf, sinfo, &["-h", "-N", "-o", "%t"]), STOP_LIMIT);
            last = format!("{}{}", out.stdout.trim(), out.stderr.trim());
            Ok(out.success() && out.stdout.trim() == "idle")
        });
        result.map_err(|e| format!("{e}; sinfo said {last:?}\n{}", self.logs()))
    }

    /// A Slurm client command for this cluster only.
    fn client(&self, program: &Path, args: &[&str]) -> Command {
        client(&self.conf, program, args)
    }

    /// Runs `RANKS` ranks of this binary in `role` under
    /// `srun --mpi=pmi2`, with `env` added.
    fn srun(&self, role: &str, env: &[(&str, &str)]) -> JobOutcome {
        let exe = std::env::current_exe().unwrap();
        let n = RANKS.to_string();
        // --overcommit: more ranks than this machine may have CPUs.
        let mut cmd = self.client(
            &self.programs.srun,
            &[
                "--mpi=pmi2",
                "-n",
                &n,
                "--overcommit",
                "--kill-on-bad-exit=1",
            ],
        );
        let scratch = ScratchDir::new();
        cmd.arg(exe)
            .args([
                "--exact",
                "role_entry",
                "--nocapture",
                "--test-threads=1",
                "-q",
            ])
            .current_dir(scratch.path())
            .env("TMPDIR", scratch.path())
            .env("OXMPI_TEST_ROLE", role)
            .env_remove("OXMPI_PMI")
            .env_remove("PMI_VERSION")
            .env_remove(EXPECT_PMI2);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run_command(cmd, JOB_LIMIT)
    }

    /// The tail of every daemon's output, for failure messages.
    fn logs(&self) -> String {
        self.daemons
            .iter()
            .map(|d| format!("--- {} ---\n{}", d.name, file_tail(&d.log, 2000)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Cancels jobs a failed run may have left (so that no slurmstepd or
    /// rank outlives the cluster) and waits, bounded, for the queue to
    /// drain.
    fn cancel_jobs(&self) {
        let queue = || {
            let out = run_command(
                self.client(&self.programs.squeue, &["-h", "-o", "%i"]),
                STOP_LIMIT,
            );
            out.stdout
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let jobs = queue();
        if jobs.is_empty() {
            return;
        }
        eprintln!("slurm test: cancelling leftover jobs {jobs:?}");
        let mut args = vec!["--signal=KILL", "--full"];
        args.extend(jobs.iter().map(String::as_str));
        let _ = run_command(self.client(&self.programs.scancel, &args), STOP_LIMIT);
        let deadline = Instant::now() + STOP_LIMIT;
        while !queue().is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let slurm_up = self.daemons.len() == 3
            && self
                .daemons
                .iter_mut()
                .all(|d| matches!(d.child.try_wait(), Ok(None)));
        if slurm_up {
            self.cancel_jobs();
        }
        // slurmd, slurmctld, then munged.
        for d in self.daemons.iter_mut().rev() {
            d.stop();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Polls `ready` until true, failing when a daemon exits or after
/// [`START_LIMIT`].
fn wait_for(
    daemons: &mut [Daemon],
    what: &str,
    mut ready: impl FnMut() -> Result<bool, String>,
) -> Result<(), String> {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        for d in daemons.iter_mut() {
            d.check_alive()?;
        }
        if ready()? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("gave up waiting {START_LIMIT:?} for {what}"));
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// A Slurm client command (srun, sinfo...) for the cluster of `conf` only.
fn client(conf: &Path, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SLURM_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("SLURM_CONF", conf);
    cmd
}

/// A new munge key (1 KiB from the kernel's random source), owned by munge.
fn write_fresh_key(path: &Path, munge: &User) -> Result<(), String> {
    let mut key = vec![0u8; 1024];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    fs::write(path, &key)
        .and_then(|_| fs::set_permissions(path, fs::Permissions::from_mode(0o400)))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    chown(path, Some(munge.uid), Some(munge.gid))
        .map_err(|e| format!("cannot chown {}: {e}", path.display()))
}

/// Says, past the test harness's output capture, why the test did nothing.
fn skip(why: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED p2p_semantics_under_srun_mpi_pmi2: Slurm cannot run here: {why}"
    );
}

#[test]
fn p2p_semantics_under_srun_mpi_pmi2() {
    let t0 = Instant::now();
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => return skip(&why),
    };
    let mut timings = vec![("start".to_string(), t0.elapsed())];
    let fail = |what: &str, out: &JobOutcome| -> String {
        format!("{what}:\n{}\n{}", out.describe(), cluster.logs())
    };

    // The runtime's PMI-2 client on its own against Slurm's plugin.
    let out = cluster.srun(PMI2_ROLE, &[("OXMPI_PMI", "2")]);
    assert!(out.success(), "{}", fail("PMI-2 client under srun", &out));
    for r in 0..RANKS {
        let line = format!("pmi2-ok rank={r} size={RANKS} ");
        assert!(
            out.stdout.contains(&line),
            "{}",
            fail(&format!("no {line:?}"), &out)
        );
    }
    timings.push((PMI2_ROLE.to_string(), out.elapsed));

    // The p2p semantics through oxmpi::init with PMI-2.
    for role in ROLES {
        let out = cluster.srun(role, &[("OXMPI_PMI", "2"), (EXPECT_PMI2, "1")]);
        assert!(
            out.success(),
            "{}",
            fail(&format!("{role} under srun, OXMPI_PMI=2"), &out)
        );
        timings.push((format!("{role} (OXMPI_PMI=2)"), out.elapsed));
    }
    // PMI_VERSION=2 selects PMI-2 too; with neither, the runtime speaks
    // PMI-1, which Slurm's pmi2 plugin serves on the same socket.
    let out = cluster.srun("basic", &[("PMI_VERSION", "2"), (EXPECT_PMI2, "1")]);
    assert!(
        out.success(),
        "{}",
        fail("basic under srun, PMI_VERSION=2", &out)
    );
    timings.push(("basic (PMI_VERSION=2)".to_string(), out.elapsed));
    let out = cluster.srun("basic", &[]);
    assert!(
        out.success(),
        "{}",
        fail("basic under srun, default PMI", &out)
    );
    timings.push(("basic (default: PMI-1)".to_string(), out.elapsed));

    let t = Instant::now();
    drop(cluster);
    timings.push(("stop".to_string(), t.elapsed()));
    for (what, took) in timings {
        eprintln!("slurm test: {what}: {took:.2?}");
    }
}
