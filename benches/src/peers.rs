//! Running one benchmark under the three implementations compared: OxMPI
//! (`oxrun`), MPICH (`mpiexec.hydra`) and Open MPI (`mpirun.openmpi`).
//!
//! * [`Impl`]: the three, with their CSV keys and labels.
//! * [`compile_c`], [`beside_me`], [`on_path`]: the programs run.
//! * [`Launchers`]: the command line that starts N ranks under each.
//! * [`Record`] / [`parse_records`]: the `impl,what,ranks,size,metric,value`
//!   lines the benchmarks print.
//! * [`settle`], [`version_of`], [`tree_state`], [`show`], [`plot`]: what a
//!   report needs around the measurements.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::capture::cpu_busy;

/// The three implementations compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Impl {
    /// OxMPI, through its Rust API, under `oxrun`.
    Ox,
    /// MPICH, the C benchmark under `mpiexec.hydra`.
    Mpich,
    /// Open MPI, the C benchmark under `mpirun.openmpi`.
    Ompi,
}

/// All three, OxMPI first.
pub const IMPLS: [Impl; 3] = [Impl::Ox, Impl::Mpich, Impl::Ompi];

/// The two peers OxMPI is compared with.
pub const PEERS: [Impl; 2] = [Impl::Mpich, Impl::Ompi];

impl Impl {
    /// The `impl` column of the benchmarks' CSV.
    pub fn key(self) -> &'static str {
        match self {
            Impl::Ox => "oxmpi",
            Impl::Mpich => "mpich",
            Impl::Ompi => "openmpi",
        }
    }

    /// Name for people.
    pub fn label(self) -> &'static str {
        match self {
            Impl::Ox => "OxMPI",
            Impl::Mpich => "MPICH",
            Impl::Ompi => "Open MPI",
        }
    }
}

/// `name` in a `PATH` directory, if any.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Builds `src` with `mpicc -O2 -Wall -Wextra` into `exe`.
pub fn compile_c(mpicc: &str, src: &Path, exe: &Path) -> Result<(), String> {
    compile_c_with(mpicc, &["-O2", "-Wall", "-Wextra"], src, exe)
}

/// Builds `src` with `mpicc FLAGS` into `exe`.
pub fn compile_c_with(mpicc: &str, flags: &[&str], src: &Path, exe: &Path) -> Result<(), String> {
    let cc = on_path(mpicc).ok_or(format!("{mpicc} not found on PATH"))?;
    let status = Command::new(cc)
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(exe)
        .status()
        .map_err(|e| format!("running {mpicc}: {e}"))?;
    if !status.success() {
        return Err(format!("{mpicc} -O2 {} failed: {status}", src.display()));
    }
    Ok(())
}

/// UCX (MPICH's netmod here) scans network interfaces in `MPI_Init` and
/// can fail when one vanishes mid-scan; one node needs only shared memory.
pub fn ucx_tls() -> String {
    std::env::var("UCX_TLS").unwrap_or_else(|_| "self,sm".into())
}

/// The three launchers and how each starts a job.
#[derive(Debug, Clone)]
pub struct Launchers {
    /// OxMPI's `oxrun`.
    pub oxrun: PathBuf,
    /// MPICH's `mpiexec.hydra`.
    pub hydra: PathBuf,
    /// Open MPI's `mpirun.openmpi`.
    pub ompi_run: PathBuf,
    /// Cores on this host: MPICH binds ranks to cores only up to this many.
    pub cores: u32,
}

impl Launchers {
    /// Finds `oxrun` next to this program and the other two on `PATH`.
    pub fn find() -> Result<Launchers, String> {
        let oxrun = beside_me("oxrun")?;
        let found = |name: &str| on_path(name).ok_or(format!("{name} not found on PATH"));
        Ok(Launchers {
            oxrun,
            hydra: found("mpiexec.hydra")?,
            ompi_run: found("mpirun.openmpi")?,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        })
    }

    /// The command that starts `prog` on `ranks` ranks under `imp`:
    /// `oxrun -n N` (binds to cores; oversubscribed, round-robin when even);
    /// `UCX_TLS=self,sm mpiexec.hydra -n N` plus `-bind-to core` when N is
    /// at most the core count; `mpirun.openmpi --allow-run-as-root
    /// --oversubscribe -n N`.
    pub fn command(&self, imp: Impl, prog: &Path, ranks: u32) -> Command {
        let n = ranks.to_string();
        let mut c;
        match imp {
            Impl::Ox => {
                c = Command::new(&self.oxrun);
                c.args(["-n", &n]);
            }
            Impl::Mpich => {
                c = Command::new(&self.hydra);
                c.args(["-n", &n]);
                if ranks <= self.cores {
                    c.args(["-bind-to", "core"]);
                }
                c.env("UCX_TLS", ucx_tls());
            }
            Impl::Ompi => {
                c = Command::new(&self.ompi_run);
                c.args(["--allow-run-as-root", "--oversubscribe", "-n", &n]);
            }
        }
        c.arg(prog);
        c
    }

    /// One line per launcher: its version.
    pub fn versions(&self) -> [String; 3] {
        [
            version_of(&self.oxrun, &["--version"], "oxrun"),
            version_of(&self.hydra, &["--version"], "Version:"),
            version_of(&self.ompi_run, &["--version"], "Open"),
        ]
    }
}

/// One benchmark built three ways: OxMPI's program on its Rust API and the
/// C program built with MPICH's and Open MPI's `mpicc`.
#[derive(Debug, Clone)]
pub struct Builds {
    /// The Rust program (run under `oxrun`).
    pub ox: PathBuf,
    /// The C program built with `mpicc.mpich`.
    pub mpich: PathBuf,
    /// The C program built with `mpicc.openmpi`.
    pub ompi: PathBuf,
}

impl Builds {
    /// `ox` next to this program; the C builds to be, beside it, named
    /// `C_mpich` and `C_openmpi`.
    pub fn beside_me(ox: &str, c: &str) -> Result<Builds, String> {
        let ox = beside_me(ox)?;
        let dir = ox.parent().ok_or("executable has no directory")?;
        Ok(Builds {
            mpich: dir.join(format!("{c}_mpich")),
            ompi: dir.join(format!("{c}_openmpi")),
            ox,
        })
    }

    /// Builds the C benchmark `src` both ways.
    pub fn compile(&self, src: &Path) -> Result<(), String> {
        compile_c("mpicc.mpich", src, &self.mpich)?;
        compile_c("mpicc.openmpi", src, &self.ompi)
    }

    /// The program `imp` runs.
    pub fn of(&self, imp: Impl) -> &Path {
        match imp {
            Impl::Ox => &self.ox,
            Impl::Mpich => &self.mpich,
            Impl::Ompi => &self.ompi,
        }
    }

    /// All three (to find their stray ranks).
    pub fn all(&self) -> [&Path; 3] {
        [&self.ox, &self.mpich, &self.ompi]
    }
}

/// `name` in the directory of the running program (`target/release/` for
/// the runners), or how to build it.
pub fn beside_me(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let p = exe
        .parent()
        .ok_or("executable has no directory")?
        .join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} not found; build it first: cargo build --release --workspace --bins --examples",
            p.display()
        ))
    }
}

/// Wraps `cmd` so that its standard error goes to its standard output
/// (`sh -c 'exec "$0" "$@" 2>&1'`), keeping the environment set on it:
/// for a [`crate::capture::Capturer`], which keeps all of stdout but only
/// the tail of stderr.
pub fn stderr_to_stdout(cmd: &Command) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", "exec \"$0\" \"$@\" 2>&1"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// One figure a benchmark printed: `impl,what,ranks,size,metric,value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Implementation key (`oxmpi`, `mpich`, `openmpi`).
    pub imp: String,
    /// What was measured (a mode or a collective).
    pub what: String,
    /// Ranks in the job.
    pub ranks: u32,
    /// Message size in bytes.
    pub size: u64,
    /// Name of the figure.
    pub metric: String,
    /// Its value.
    pub value: f64,
}

/// The `impl,what,ranks,size,metric,value` lines of `stdout`; other lines
/// are skipped.
pub fn parse_records(stdout: &str) -> Vec<Record> {
    stdout
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.trim().split(',').collect();
            let [imp, what, ranks, size, metric, value] = f[..] else {
                return None;
            };
            Some(Record {
                imp: imp.into(),
                what: what.into(),
                ranks: ranks.parse().ok()?,
                size: size.parse().ok()?,
                metric: metric.into(),
                value: value.parse().ok()?,
            })
        })
        .collect()
}

/// `records` as CSV: the header `impl,WHAT,ranks,size,metric,value`
/// (`WHAT` naming the second column), then a line each.
pub fn records_csv<'a>(what: &str, records: impl IntoIterator<Item = &'a Record>) -> String {
    let mut out = format!("impl,{what},ranks,size,metric,value\n");
    for r in records {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            r.imp, r.what, r.ranks, r.size, r.metric, r.value
        );
    }
    out
}

/// Busy share of the CPUs below which the machine counts as quiet.
pub const QUIET: f64 = 0.15;

/// Waits (at most `max`) until other programs leave the CPUs nearly idle
/// (busy below [`QUIET`]); returns the last busy share measured.
pub fn settle(max: Duration) -> Option<f64> {
    let start = Instant::now();
    loop {
        let busy = cpu_busy(Duration::from_millis(300));
        if busy.is_none_or(|b| b < QUIET) || start.elapsed() >= max {
            return busy;
        }
    }
}

/// First line of `prog args` output that contains `pick` (else the first
/// line), whitespace squeezed.
pub fn version_of(prog: &Path, args: &[&str], pick: &str) -> String {
    let out = Command::new(prog).args(args).output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let text = text.unwrap_or_default();
    let line = text.lines().find(|l| l.contains(pick));
    let line = line.or_else(|| text.lines().next()).unwrap_or("unknown");
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The commit measured, noting uncommitted changes to the runtime or the
/// launcher.
pub fn tree_state() -> String {
    tree_state_of(&["runtime", "launcher"])
}

/// The commit measured, noting uncommitted changes below `dirs` (paths
/// from the top of the repository).
pub fn tree_state_of(dirs: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(&dir).args(args).output();
        out.ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown (not a git checkout)".into();
    };
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(dirs);
    match git(&status).as_deref() {
        Some("") => head,
        _ => {
            let named: Vec<String> = dirs.iter().map(|d| format!("{d}/")).collect();
            format!("{head} + uncommitted changes in {}", named.join(" or "))
        }
    }
}

/// `cmd` as a shell-like line: environment set on it, program, arguments
/// (absolute paths shortened to their file names).
pub fn show(cmd: &Command) -> String {
    let mut parts: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, v?.to_str()?)))
        .collect();
    let short = |s: &std::ffi::OsStr| {
        let p = Path::new(s);
        if p.is_absolute() {
            p.file_name().unwrap_or(s).to_string_lossy().into_owned()
        } else {
            s.to_string_lossy().into_owned()
        }
    };
    parts.push(short(cmd.get_program()));
    parts.extend(cmd.get_args().map(short));
    parts.join(" ")
}

/// Runs `python3 SCRIPT CSV PNG`; a note saying how to draw the plot by
/// hand when it cannot (a script exiting with status 3 means matplotlib is
/// missing).
pub fn plot(script: &Path, csv: &Path, png: &Path) -> Result<(), String> {
    let manual = format!(
        "python3 {} {} {}",
        script.display(),
        csv.display(),
        png.display()
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(csv)
        .arg(png)
        .output()
        .map_err(|e| {
            format!(
                "python3 not runnable ({e}); no plot. Install Python 3 with matplotlib, \
                 then: {manual}"
            )
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("No module named 'matplotlib'") || out.status.code() == Some(3) {
        return Err(format!(
            "matplotlib is missing, so no plot was drawn. Install it \
             (`pip install matplotlib`), then: {manual}"
        ));
    }
    Err(format!("{manual} failed ({}):\n{err}", out.status))
}

/// [`plot`], then a line on stderr from `tool`: what it wrote, or why not.
pub fn plot_and_say(tool: &str, script: &Path, csv: &Path, png: &Path) {
    match plot(script, csv, png) {
        Ok(()) => eprintln!("{tool}: wrote {}", png.display()),
        Err(e) => eprintln!("{tool}: {e}"),
    }
}

/// A folder `folder` beside OxMPI's library `lib` (as built) where it is
/// found under both names a program built by MPICH's mpicc may need:
/// `libmpich.so.12` (what Debian's mpicc.mpich links) and `libmpi.so.12`.
/// Without the first, such a program would load MPICH's own library under
/// oxrun.
pub fn oxmpi_lib_dir(lib: &Path, folder: &str) -> Result<PathBuf, String> {
    let dir = lib.parent().ok_or("no folder")?.join(folder);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for name in ["libmpich.so.12", "libmpi.so.12"] {
        // A new file renamed into place: a running job (another runner's)
        // keeps the copy it mapped, which rewriting in place would break
        // (SIGBUS).
        let temp = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::copy(lib, &temp).map_err(|e| e.to_string())?;
        std::fs::rename(&temp, dir.join(name)).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// Checks that `exe`, with `dir` first on its library path, loads every
/// MPI library it needs from `dir` (what `ldd` resolves).
pub fn loads_from(exe: &Path, dir: &Path) -> Result<(), String> {
    let out = Command::new("ldd")
        .arg(exe)
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let stray: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("libmpi") && !l.contains(&*dir.to_string_lossy()))
        .collect();
    if stray.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} would not load OxMPI's library from {}: {}",
            exe.display(),
            dir.display(),
            stray.join("; ").trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_benchmark_lines_only() {
        let r = parse_records("noise\noxmpi,bcast,4,1024,time_us,0.5\nx,y\n");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].ranks, r[0].size, r[0].value), (4, 1024, 0.5));
        assert_eq!(
            (r[0].what.as_str(), r[0].metric.as_str()),
            ("bcast", "time_us")
        );
        let r = parse_records("noise\noxmpi,latency,2,1024,lat_us_median,0.5\nx,y\n");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].size, r[0].value), (1024, 0.5));
        assert_eq!(r[0].metric, "lat_us_median");
        assert_eq!(
            records_csv("mode", &r),
            "impl,mode,ranks,size,metric,value\noxmpi,latency,2,1024,lat_us_median,0.5\n"
        );
    }

    #[test]
    fn shows_commands_short() {
        let mut c = Command::new("/usr/bin/env");
        c.env("A", "1").args(["/x/y/prog", "quick"]);
        assert_eq!(show(&c), "A=1 env prog quick");
    }

    #[test]
    fn merged_stderr_reaches_stdout() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo \"$X\" >&2"]).env("X", "hi");
        let out = stderr_to_stdout(&c).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
        assert!(out.stderr.is_empty());
    }

    #[test]
    fn mpich_binds_only_when_not_oversubscribed() {
        let l = Launchers {
            oxrun: "/o/oxrun".into(),
            hydra: "/h/mpiexec.hydra".into(),
            ompi_run: "/m/mpirun.openmpi".into(),
            cores: 2,
        };
        let prog = Path::new("/b/bench");
        assert!(show(&l.command(Impl::Mpich, prog, 2)).contains("-bind-to core"));
        assert!(!show(&l.command(Impl::Mpich, prog, 4)).contains("-bind-to"));
        assert_eq!(show(&l.command(Impl::Ox, prog, 4)), "oxrun -n 4 bench");
    }
}
