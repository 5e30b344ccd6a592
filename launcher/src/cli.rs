//! Command-line parsing for `oxrun` (also invoked as `mpirun` / `mpiexec`).
//!
//! Accepts the common spellings of MPICH's hydra and Open MPI's mpirun.
//! Options come before the program; everything after the program belongs to it.

use std::time::Duration;

use crate::hosts::{self, HostSpec};
use crate::limits::MAX_RANKS;
use crate::LaunchError;

/// How ranks are placed on hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapBy {
    /// Fill each host's slots before moving to the next host.
    Slot,
    /// Round-robin ranks over hosts.
    Node,
    /// Take the host list's entries in the order given, each entry's
    /// slots in turn (entries naming one host are still one node: with
    /// `a:2,b,a`, ranks 0, 1 and 3 run on a, 2 on b); how a spawned job
    /// places each command's processes.
    Seq,
}

/// How ranks are bound to processing units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindTo {
    /// One core per rank, round-robin over the host's cores.
    Core,
    /// No binding.
    None,
}

/// One environment instruction for the ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSetting {
    /// Set VAR to VAL.
    Set(String, String),
    /// Pass oxrun's own value of VAR (matters for remote hosts).
    Pass(String),
}

/// A job to run.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// Number of ranks.
    pub nprocs: usize,
    /// Hosts and their slots; empty means this host only.
    pub hosts: Vec<HostSpec>,
    /// Environment instructions, in order.
    pub env: Vec<EnvSetting>,
    /// Prefix each output line with `[rank] `.
    pub label: bool,
    /// End the job after this long.
    pub timeout: Option<Duration>,
    /// Binding policy; `None` means automatic (see `bind::core_sets`).
    pub bind: Option<BindTo>,
    /// Placement policy.
    pub map_by: MapBy,
    /// Command that starts an agent on a remote host (`HOST` appended, then the agent command).
    pub launcher_cmd: String,
    /// Address remote agents connect back to; default: this host's address.
    pub control_addr: Option<String>,
    /// The directory of a name service shared with other jobs (`--name-dir`,
    /// else `OXMPI_NAME_DIR`); `None`: the job's own.
    pub name_dir: Option<std::path::PathBuf>,
    /// The program and its arguments.
    pub program: String,
    /// Arguments for the program.
    pub args: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Run a job.
    Run(JobOptions),
    /// Print the version.
    Version,
    /// Print usage.
    Help,
    /// Print what this host offers.
    Info,
    /// Print the collective algorithm choice and every algorithm's predicted cost.
    Explain {
        /// Collective name (allreduce, bcast, reduce, allgather).
        coll: String,
        /// Bytes per rank.
        bytes: usize,
        /// Ranks.
        ranks: usize,
        /// Whether the reduction operation is commutative.
        commutative: bool,
        /// Nodes the ranks are spread over, in blocks of consecutive ranks.
        nodes: usize,
    },
    /// Internal: run as the host agent for a job (`--proxy-fd FD` locally,
    /// `--proxy-connect ADDR --proxy-host NAME` remotely, secret on stdin).
    Proxy(ProxyTarget),
}

/// Where an agent finds its controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyTarget {
    /// An inherited connected socket.
    Fd(i32),
    /// A TCP address; the per-job secret comes on stdin.
    Tcp {
        /// host:port of the controller.
        addr: String,
        /// The name the controller knows this host by.
        host: String,
    },
}

/// The usage text.
pub const USAGE: &str = "\
usage: oxrun [options] PROGRAM [ARGS...]
  -n, -np N                 number of ranks (default: total slots of --host/--hostfile, else 1)
  -H, --host LIST           hosts as name[:slots],... (this host if absent)
  --hostfile, -f FILE       one host per line: name, name:slots or name slots=N; # comments
  --map-by slot|node|seq    fill hosts in order (default), round-robin over them,
                            or take the --host entries in order, unmerged
  --bind-to core|none       bind each rank to one core (default: core; oversubscribed,
                            ranks dealt round-robin if the cores share them evenly, else none)
  -x VAR[=VAL]              pass VAR (with oxrun's value or VAL) to the ranks
  -genv VAR VAL, --env VAR=VAL   set VAR for every rank
  -l, --label, --tag-output prefix each output line with [rank]
  --timeout SECONDS         end the job, non-zero, after SECONDS (also MPIEXEC_TIMEOUT)
  --launcher-cmd CMD        how to start agents on other hosts (default: ssh); HOST is appended
  --control-addr ADDR       the one address oxrun listens on for remote agents
                            (default: this host's address)
  --name-dir DIR            MPI_Publish_name / MPI_Lookup_name through files in DIR, shared
                            with other jobs (also OXMPI_NAME_DIR; default: per job)
  --explain COLL --bytes N [-n P] [--nodes K] [--noncommutative]
                            print the algorithm chosen for collective COLL of N bytes per rank
                            on P ranks (on K nodes of consecutive ranks, default 1) and every
                            algorithm's predicted cost (N may end in k, M, G)
  --info                    print version, transports and what this host offers
  --version                 print the version
  -h, --help                print this text
";

fn value<'a>(
    name: &str,
    inline: Option<&'a str>,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<&'a str, LaunchError> {
    match inline {
        Some(v) => Ok(v),
        None => rest
            .next()
            .map(|s| s.as_str())
            .ok_or_else(|| LaunchError::Usage(format!("option '{name}' needs a value"))),
    }
}

fn parse_count(name: &str, text: &str) -> Result<usize, LaunchError> {
    let t = text.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LaunchError::Usage(format!(
            "option '{name}' expects a number, got '{text}'"
        )));
    }
    if t.starts_with('-') || digits.bytes().all(|b| b == b'0') {
        return Err(LaunchError::Usage(format!(
            "option '{name}' must be at least 1, got {t}"
        )));
    }
    match t.parse::<usize>() {
        Ok(n) if n <= MAX_RANKS => Ok(n),
        _ => Err(LaunchError::Usage(format!(
            "option '{name}' got {t}, more than the limit of {MAX_RANKS}"
        ))),
    }
}

fn parse_env_pair(name: &str, text: &str) -> Result<EnvSetting, LaunchError> {
    match text.split_once('=') {
        Some(("", _)) => Err(LaunchError::Usage(format!(
            "option '{name}' got an empty variable name in '{text}'"
        ))),
        Some((k, v)) => Ok(EnvSetting::Set(k.to_string(), v.to_string())),
        None if text.is_empty() => Err(LaunchError::Usage(format!(
            "option '{name}' needs a variable name"
        ))),
        None => Ok(EnvSetting::Pass(text.to_string())),
    }
}

/// Parses `args` (without the program name).
pub fn parse(args: &[String]) -> Result<Mode, LaunchError> {
    let mut nprocs = None;
    let mut hosts = Vec::new();
    let mut env = Vec::new();
    let mut label = false;
    let mut timeout = None;
    let mut bind = None;
    let mut map_by = MapBy::Slot;
    let mut launcher_cmd = "ssh".to_string();
    let mut control_addr = None;
    let mut proxy_fd = None;
    let mut proxy_connect = None;
    let mut proxy_host = None;
    let mut explain = None;
    let mut bytes = None;
    let mut commutative = true;
    let mut nodes = 1;
    let mut name_dir = None;

    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if !arg.starts_with('-') || arg == "-" {
            let mut program_args: Vec<String> = it.cloned().collect();
            if arg == "--" {
                program_args.remove(0);
            }
            let nprocs = match nprocs {
                Some(n) => n,
                None => {
                    let slots = hosts
                        .iter()
                        .fold(0usize, |sum, h: &HostSpec| sum.saturating_add(h.slots));
                    if slots > MAX_RANKS {
                        return Err(LaunchError::Usage(format!(
                            "the hosts' slots add up to {slots}, more ranks than the limit of {MAX_RANKS}"
                        )));
                    }
                    slots.max(1)
                }
            };
            return Ok(Mode::Run(JobOptions {
                nprocs,
                hosts,
                env,
                label,
                timeout: timeout.or(env_timeout()?),
                bind,
                map_by,
                launcher_cmd,
                control_addr,
                name_dir: name_dir.or_else(env_name_dir),
                program: arg.clone(),
                args: program_args,
            }));
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg.as_str(), None),
        };
        match name.trim_start_matches('-') {
            "n" | "np" | "c" => nprocs = Some(parse_count(name, value(name, inline, &mut it)?)?),
            "H" | "host" | "hosts" => {
                hosts.extend(hosts::parse_list(value(name, inline, &mut it)?)?)
            }
            "f" | "hostfile" | "machinefile" => {
                hosts.extend(hosts::read_file(value(name, inline, &mut it)?)?)
            }
            "map-by" => {
                map_by = match value(name, inline, &mut it)? {
                    "slot" | "core" => MapBy::Slot,
                    "node" => MapBy::Node,
                    "seq" => MapBy::Seq,
                    other => {
                        return Err(LaunchError::Usage(format!(
                            "option '{name}' accepts slot, node or seq, got '{other}'"
                        )))
                    }
                }
            }
            "bind-to" => {
                bind = Some(match value(name, inline, &mut it)? {
                    "core" => BindTo::Core,
                    "none" => BindTo::None,
                    other => {
                        return Err(LaunchError::Usage(format!(
                            "option '{name}' accepts core or none, got '{other}'"
                        )))
                    }
                })
            }
            "x" => env.push(parse_env_pair(name, value(name, inline, &mut it)?)?),
            "env" if name.starts_with("--") => {
                env.push(parse_env_pair(name, value(name, inline, &mut it)?)?)
            }
            "genv" | "env" => {
                let var = value(name, inline, &mut it)?;
                let val = value(name, None, &mut it)?;
                if var.is_empty() || var.contains('=') {
                    return Err(LaunchError::Usage(format!(
                        "option '{name}' needs VAR VAL, got variable name '{var}'"
                    )));
                }
                env.push(EnvSetting::Set(var.to_string(), val.to_string()));
            }
            "l" | "label" | "tag-output" | "prepend-rank" => label = true,
            "timeout" => timeout = Some(parse_timeout(name, value(name, inline, &mut it)?)?),
            "launcher-cmd" | "launcher-exec" | "launcher" => {
                let cmd = value(name, inline, &mut it)?;
                if cmd.trim().is_empty() {
                    return Err(LaunchError::Usage(format!(
                        "option '{name}' got an empty command"
                    )));
                }
                launcher_cmd = cmd.to_string();
            }
            "control-addr" => control_addr = Some(value(name, inline, &mut it)?.to_string()),
            "name-dir" => {
                let dir = value(name, inline, &mut it)?;
                if dir.is_empty() {
                    return Err(LaunchError::Usage(format!(
                        "option '{name}' got an empty directory"
                    )));
                }
                name_dir = Some(std::path::PathBuf::from(dir));
            }
            "proxy-fd" => {
                let text = value(name, inline, &mut it)?;
                proxy_fd = Some(text.parse::<i32>().map_err(|_| {
                    LaunchError::Usage(format!(
                        "option '{name}' expects a descriptor, got '{text}'"
                    ))
                })?);
            }
            "proxy-connect" => proxy_connect = Some(value(name, inline, &mut it)?.to_string()),
            "proxy-host" => proxy_host = Some(value(name, inline, &mut it)?.to_string()),
            "info" => return Ok(Mode::Info),
            "explain" => explain = Some(value(name, inline, &mut it)?.to_string()),
            "bytes" => bytes = Some(parse_bytes(name, value(name, inline, &mut it)?)?),
            "noncommutative" => commutative = false,
            "nodes" => nodes = parse_count(name, value(name, inline, &mut it)?)?,
            "version" | "V" => return Ok(Mode::Version),
            "h" | "help" => return Ok(Mode::Help),
            _ => {
                return Err(LaunchError::Usage(format!(
                    "unknown option '{arg}' (see oxrun --help)"
                )))
            }
        }
    }
    if let Some(coll) = explain {
        let bytes = bytes.ok_or_else(|| LaunchError::Usage("--explain needs --bytes N".into()))?;
        return Ok(Mode::Explain {
            coll,
            bytes,
            ranks: nprocs.unwrap_or(2),
            commutative,
            nodes,
        });
    }
    if let Some(fd) = proxy_fd {
        return Ok(Mode::Proxy(ProxyTarget::Fd(fd)));
    }
    if let Some(addr) = proxy_connect {
        let host = proxy_host.unwrap_or_default();
        return Ok(Mode::Proxy(ProxyTarget::Tcp { addr, host }));
    }
    Err(LaunchError::Usage(
        "missing program to run (usage: oxrun -n N PROGRAM [ARGS...])".into(),
    ))
}

fn parse_bytes(name: &str, text: &str) -> Result<usize, LaunchError> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&t[..t.len() - 1], 1usize << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| {
            LaunchError::Usage(format!(
                "option '{name}' expects a byte count like 4096 or 1M, got '{text}'"
            ))
        })
}

fn parse_timeout(name: &str, text: &str) -> Result<Duration, LaunchError> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
        _ => Err(LaunchError::Usage(format!(
            "option '{name}' expects a positive number of seconds, got '{text}'"
        ))),
    }
}

fn env_name_dir() -> Option<std::path::PathBuf> {
    std::env::var_os(oxmpi::config::NAME_DIR.entry.env)
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
}

fn env_timeout() -> Result<Option<Duration>, LaunchError> {
    match std::env::var("MPIEXEC_TIMEOUT") {
        Ok(text) if !text.is_empty() => parse_timeout("MPIEXEC_TIMEOUT", &text).map(Some),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn job(s: &str) -> JobOptions {
        match parse(&args(s)).unwrap() {
            Mode::Run(j) => j,
            other => panic!("expected a job, got {other:?}"),
        }
    }

    #[test]
    fn common_spellings() {
        let j = job("-np 4 -l -x FOO=1 -x BAR -genv A B --env C=D --timeout 2.5 prog -n 3 x");
        assert_eq!(j.nprocs, 4);
        assert!(j.label);
        assert_eq!(
            j.env,
            vec![
                EnvSetting::Set("FOO".into(), "1".into()),
                EnvSetting::Pass("BAR".into()),
                EnvSetting::Set("A".into(), "B".into()),
                EnvSetting::Set("C".into(), "D".into()),
            ]
        );
        assert_eq!(j.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(j.program, "prog");
        assert_eq!(j.args, args("-n 3 x"));
        assert_eq!(job("--n=2 --bind-to=none prog").bind, Some(BindTo::None));
        assert_eq!(job("--map-by node prog").map_by, MapBy::Node);
        assert_eq!(job("-H a:2,b:3 prog").nprocs, 5);
        assert_eq!(
            job("--name-dir /tmp/n prog").name_dir,
            Some(std::path::PathBuf::from("/tmp/n"))
        );
        assert_eq!(
            job("--name-dir=d prog").name_dir,
            Some(std::path::PathBuf::from("d"))
        );
    }

    #[test]
    fn bad_input_names_the_argument() {
        let err = |s: &str| parse(&args(s)).unwrap_err().to_string();
        assert!(err("-n 0 prog").contains("'-n' must be at least 1, got 0"));
        assert!(err("-n x prog").contains("got 'x'"));
        assert!(err("--name-dir= prog").contains("'--name-dir' got an empty directory"));
        assert!(err("--bogus prog").contains("unknown option '--bogus'"));
        assert!(err("-n 2").contains("missing program"));
        assert!(err("-n").contains("needs a value"));
        assert!(err("--bind-to socket p").contains("got 'socket'"));
        assert!(err("--timeout -1 p").contains("got '-1'"));
        assert!(err("--explain bcast --bytes 8 --nodes 0").contains("'--nodes' must be at least 1"));
        assert!(err("-n -1 p").contains("'-n' must be at least 1, got -1"));
        for huge in [
            "99999999999",
            "18446744073709551615",
            "18446744073709551616",
            "16777217",
        ] {
            let e = err(&format!("-n {huge} p"));
            assert!(e.contains(huge) && e.contains("limit of 16777216"), "{e}");
        }
        assert!(err("-H a:16777216,b:1 p").contains("add up to 16777217"));
    }

    #[test]
    fn explain_takes_an_optional_node_count() {
        let explain = |s: &str| match parse(&args(s)).unwrap() {
            Mode::Explain { ranks, nodes, .. } => (ranks, nodes),
            other => panic!("expected --explain, got {other:?}"),
        };
        assert_eq!(explain("--explain allreduce --bytes 1k -n 8"), (8, 1));
        assert_eq!(explain("--explain bcast --bytes 1k -n 8 --nodes 2"), (8, 2));
        assert_eq!(explain("--explain bcast --bytes 1k --nodes=3 -n 9"), (9, 3));
    }
}
