//! Jobs the ranks spawn (`MPI_Comm_spawn`): each request starts a nested
//! `oxrun` (this binary) running the children as a job of their own, with
//! its own key-value space and shared-memory segment, in the parents' job
//! environment (what the parents got: oxrun's, `-x`, `--env`) plus the
//! request's preput pairs. It reaches other hosts as the parents' oxrun
//! does (its launch command) and listens for their agents on the address
//! the parents' job reached this host at. The agent keeps the nested
//! launcher's pid: its output goes where the agent's goes, it dies with
//! the agent, a non-zero exit fails the whole job (with the nested
//! launcher's own verdict line, which it writes to a pipe of ours instead
//! of its stderr), and the agent is done only once it has ended.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use oxmpi::bootstrap::spawn_wire::{SpawnCmd, SpawnRequest};

/// A nested job started for a rank.
#[derive(Debug)]
pub struct Spawned {
    /// The nested oxrun's pid (leader of its own process group).
    pub pid: i32,
    /// The rank that asked for it.
    pub by_rank: u32,
    /// The read end of the pipe the nested oxrun writes its verdict to.
    pub verdict: OwnedFd,
}

impl Spawned {
    /// The nested oxrun's verdict (its one line on a failure), once it has
    /// exited; empty when it wrote none.
    pub fn verdict(&self) -> String {
        let mut text = Vec::new();
        let mut buf = [0u8; 1024];
        // It has exited, so the pipe holds all it will ever hold; a reader
        // of ours never blocks on it (O_NONBLOCK).
        while text.len() < 4096 {
            match nix::unistd::read(self.verdict.as_raw_fd(), &mut buf) {
                Ok(n) if n > 0 => text.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        let text = String::from_utf8_lossy(&text);
        text.lines().next().unwrap_or_default().trim().to_string()
    }
}

/// What a nested job takes from the parents' job: their environment, the
/// launch command, and this host's address in their job (if it spans
/// hosts), where the nested oxrun listens for its own remote agents.
pub struct Parents<'a> {
    /// The parents' environment (their job's `LaunchSpec::env`).
    pub env: &'a [(String, String)],
    /// oxrun's `--launcher-cmd`.
    pub launcher_cmd: &'a str,
}

impl Parents<'_> {
    /// The address the parents' job reached this host at, if it spans hosts.
    fn here(&self) -> Option<&str> {
        let key = oxmpi::config::OFI_ADDR.entry.env;
        self.env
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }
}

/// The variable naming the descriptor a nested oxrun writes its verdict
/// line to (instead of its stderr).
pub const VERDICT_FD_ENV: &str = "OXRUN_VERDICT_FD";

/// Where `program` is: as given when it names a path, else the first
/// executable of that name in `path` (the `path` info key) or `PATH`.
fn locate(program: &str, path: Option<&str>) -> Result<PathBuf, String> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let dirs = path
        .map(str::to_string)
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    dirs.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                m.is_file() && {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                }
            })
        })
        .ok_or_else(|| format!("program {program:?} is not in the search path {dirs:?}"))
}

fn info<'a>(cmd: &'a SpawnCmd, key: &str) -> Option<&'a str> {
    cmd.info
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The variable that tells `oxrun --spawn-exec` what each rank runs.
pub const PLAN_ENV: &str = "OXMPI_SPAWN_PLAN";

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(t: &str) -> Option<String> {
    let bytes: Option<Vec<u8>> = (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(t.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// `MPI_Comm_spawn_multiple`'s commands as one job: each command's
/// processes, its program, directory and arguments
/// (`N:prog:wdir:arg:arg;...`, each string in hex).
fn plan(req: &SpawnRequest) -> Result<String, String> {
    let mut parts = Vec::new();
    for c in &req.cmds {
        let program = locate(&c.program, info(c, "path"))?;
        let mut fields = vec![
            c.maxprocs.to_string(),
            hex(&program.to_string_lossy()),
            hex(info(c, "wdir").unwrap_or("")),
        ];
        fields.extend(c.args.iter().map(|a| hex(a)));
        parts.push(fields.join(":"));
    }
    Ok(parts.join(";"))
}

/// What rank `rank` of a planned job runs: (program, directory, args).
fn planned(plan: &str, rank: u32) -> Option<(String, String, Vec<String>)> {
    let mut first = 0u32;
    for part in plan.split(';') {
        let mut f = part.split(':');
        let n: u32 = f.next()?.parse().ok()?;
        if rank < first + n {
            let program = unhex(f.next()?)?;
            let wdir = unhex(f.next()?)?;
            let args = f.map(unhex).collect::<Option<Vec<_>>>()?;
            return Some((program, wdir, args));
        }
        first += n;
    }
    None
}

/// `oxrun --spawn-exec`, the program of every rank of a job whose commands
/// differ: becomes this rank's command (`PMI_RANK` in [`PLAN_ENV`]'s plan),
/// keeping its PMI descriptor and environment. Returns only on failure.
pub fn exec_planned() -> i32 {
    let rank = std::env::var("PMI_RANK").ok().and_then(|r| r.parse().ok());
    let plan = std::env::var(PLAN_ENV).unwrap_or_default();
    let Some((program, wdir, args)) = rank.and_then(|r| planned(&plan, r)) else {
        eprintln!("oxrun --spawn-exec: no command for PMI_RANK in {PLAN_ENV}={plan:?}");
        return 1;
    };
    let mut cmd = Command::new(&program);
    cmd.args(&args).env_remove(PLAN_ENV);
    if !wdir.is_empty() {
        cmd.current_dir(&wdir);
    }
    let e = cmd.exec();
    eprintln!("oxrun --spawn-exec: cannot run {program:?}: {e}");
    127
}

/// Where each command's processes run, as a `--host` list for
/// `--map-by seq` (consecutive ranks on one host as one entry), or None
/// when no command has the `host` info key (every child then runs here,
/// on the spawning root's host). A command's `host` value is a host list
/// (`NAME[:SLOTS],...`) its processes fill slot by slot, round after
/// round; a command without one runs here.
fn placement(req: &SpawnRequest) -> Result<Option<String>, String> {
    if req.cmds.iter().all(|c| info(c, "host").is_none()) {
        return Ok(None);
    }
    let here = crate::hosts::local_hostname();
    let mut names: Vec<String> = Vec::new();
    for c in &req.cmds {
        let n = c.maxprocs as usize;
        match info(c, "host") {
            None => names.extend((0..n).map(|_| here.clone())),
            Some(list) => {
                let specs = crate::hosts::parse_list(list)
                    .map_err(|e| format!("info key \"host\" = {list:?}: {e}"))?;
                let plan = crate::plan::place(n, &specs, crate::cli::MapBy::Slot);
                names.extend(
                    plan.node_of_rank
                        .iter()
                        .map(|&node| plan.hosts[node].name.clone()),
                );
            }
        }
    }
    let mut entries: Vec<(String, usize)> = Vec::new();
    for name in names {
        match entries.last_mut() {
            Some((last, k)) if *last == name => *k += 1,
            _ => entries.push((name, 1)),
        }
    }
    let list: Vec<String> = entries.iter().map(|(n, k)| format!("{n}:{k}")).collect();
    Ok(Some(list.join(",")))
}

/// The nested oxrun's command line for `req`: every command of a request
/// runs in one job; when they differ in program, arguments or directory,
/// each rank starts as `oxrun --spawn-exec`, which becomes its command.
fn command_line(req: &SpawnRequest, parents: &Parents) -> Result<Command, String> {
    let first = req.cmds.first().ok_or("a spawn request without commands")?;
    let total: u32 = req.cmds.iter().map(|c| c.maxprocs).sum();
    if total == 0 {
        return Err("a spawn of no processes".into());
    }
    let alike = req.cmds.iter().all(|c| {
        c.program == first.program && c.args == first.args && info(c, "wdir") == info(first, "wdir")
    });
    let exe = std::env::current_exe().map_err(|e| format!("cannot find oxrun itself: {e}"))?;
    if !alike {
        for c in &req.cmds {
            if let Some(dir) = info(c, "wdir").filter(|d| !Path::new(d).is_dir()) {
                return Err(format!("wdir {dir:?} is not a directory"));
            }
        }
        let mut cmd = Command::new(&exe);
        cmd.arg("-n")
            .arg(total.to_string())
            .args(["--bind-to", "none"]);
        add_hosts_and_env(&mut cmd, req, parents)?;
        cmd.arg("--env").arg(format!("{PLAN_ENV}={}", plan(req)?));
        cmd.arg(&exe).arg("--spawn-exec");
        return Ok(cmd);
    }
    let program = locate(&first.program, info(first, "path"))?;
    let mut cmd = Command::new(exe);
    // The parents hold their cores: binding the children to the first
    // cores again would stack them on the parents.
    cmd.arg("-n")
        .arg(total.to_string())
        .args(["--bind-to", "none"]);
    add_hosts_and_env(&mut cmd, req, parents)?;
    cmd.arg(&program).args(&first.args);
    if let Some(dir) = info(first, "wdir") {
        if !Path::new(dir).is_dir() {
            return Err(format!("wdir {dir:?} is not a directory"));
        }
        cmd.current_dir(dir);
    }
    Ok(cmd)
}

fn add_hosts_and_env(
    cmd: &mut Command,
    req: &SpawnRequest,
    parents: &Parents,
) -> Result<(), String> {
    cmd.env_clear()
        .envs(parents.env.iter().map(|(k, v)| (k, v)))
        .args(["--launcher-cmd", parents.launcher_cmd]);
    if let Some(addr) = parents.here() {
        cmd.args(["--control-addr", addr]);
    }
    if let Some(list) = placement(req)? {
        cmd.args(["--host", &list, "--map-by", "seq"]);
    }
    for (k, v) in &req.preput {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    Ok(())
}

/// Starts the nested job for `req`, asked by `by_rank`.
pub fn start(req: &SpawnRequest, by_rank: u32, parents: &Parents) -> Result<Spawned, String> {
    let mut cmd = command_line(req, parents)?;
    let (verdict, theirs) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
            .map_err(|e| format!("cannot make a pipe for the spawned job: {e}"))?;
    let fd = theirs.as_raw_fd();
    cmd.env(VERDICT_FD_ENV, fd.to_string());
    cmd.stdin(Stdio::null()).process_group(0);
    // SAFETY: prctl and fcntl are async-signal-safe; nothing else runs in
    // the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // The nested oxrun keeps the pipe's write end across exec.
            let flags = libc::fcntl(fd, libc::F_GETFD);
            libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the spawned job: {e}"))?;
    drop(theirs);
    Ok(Spawned {
        pid: child.id() as i32,
        by_rank,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(cmds: Vec<SpawnCmd>) -> SpawnRequest {
        SpawnRequest {
            cmds,
            preput: vec![("OXMPI_PARENT".into(), "p".into())],
        }
    }

    const ENV: &[(&str, &str)] = &[("OXMPI_OFI_ADDR", "10.0.0.2"), ("FROM_PARENTS", "1")];

    fn command_line(req: &SpawnRequest) -> Result<Command, String> {
        let env: Vec<(String, String)> = ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let parents = Parents {
            env: &env,
            launcher_cmd: "ssh -x",
        };
        super::command_line(req, &parents)
    }

    fn args_of(c: &Command) -> Vec<String> {
        c.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn cmd(program: &str, n: u32, info: &[(&str, &str)]) -> SpawnCmd {
        SpawnCmd {
            program: program.into(),
            args: vec!["-v".into()],
            maxprocs: n,
            info: info
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_nested_launch_carries_count_hosts_env_and_wdir() {
        let c = command_line(&req(vec![
            cmd("true", 2, &[("host", "localhost"), ("wdir", "/tmp")]),
            cmd("true", 1, &[("wdir", "/tmp")]),
        ]))
        .unwrap();
        let args = args_of(&c);
        // The command without a host runs here, after the other's two.
        let here = crate::hosts::local_hostname();
        let hosts = format!("localhost:2,{here}:1");
        assert_eq!(
            &args[..14],
            [
                "-n",
                "3",
                "--bind-to",
                "none",
                "--launcher-cmd",
                "ssh -x",
                "--control-addr",
                "10.0.0.2",
                "--host",
                &hosts,
                "--map-by",
                "seq",
                "--env",
                "OXMPI_PARENT=p"
            ]
        );
        assert!(args[14].ends_with("/true"), "{args:?}");
        assert_eq!(args[15], "-v");
        assert_eq!(c.get_current_dir(), Some(Path::new("/tmp")));
        // The parents' environment, nothing of the agent's own.
        let env: Vec<(String, Option<String>)> = c
            .get_envs()
            .map(|(k, v)| {
                let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
                (text(k), v.map(text))
            })
            .collect();
        for (k, v) in ENV {
            assert!(
                env.contains(&(k.to_string(), Some(v.to_string()))),
                "{env:?}"
            );
        }
    }

    #[test]
    fn each_command_fills_its_own_hosts_in_order() {
        let c = command_line(&req(vec![
            cmd("true", 3, &[("host", "a,b:2")]),
            cmd("true", 1, &[("host", "a")]),
            cmd("true", 2, &[("host", "b")]),
        ]))
        .unwrap();
        let args = args_of(&c);
        let at = args.iter().position(|a| a == "--host").unwrap();
        assert_eq!(args[at + 1], "a:1,b:2,a:1,b:2");
        assert_eq!(args[at + 2..at + 4], ["--map-by", "seq"]);
        // Without the key anywhere, every child runs here: no host list.
        let c = command_line(&req(vec![cmd("true", 2, &[])])).unwrap();
        assert!(!args_of(&c).contains(&"--host".to_string()));
        let e = command_line(&req(vec![cmd("true", 1, &[("host", "a:0")])])).unwrap_err();
        assert!(e.contains("\"host\"") && e.contains("a:0"), "{e}");
    }

    #[test]
    fn bad_requests_say_why() {
        let e = command_line(&req(vec![cmd("no-such-program-here", 1, &[])])).unwrap_err();
        assert!(e.contains("no-such-program-here"), "{e}");
        let e = command_line(&req(vec![cmd("true", 0, &[])])).unwrap_err();
        assert!(e.contains("no processes"), "{e}");
        let e = command_line(&req(vec![cmd("true", 1, &[("wdir", "/no/such/dir")])])).unwrap_err();
        assert!(e.contains("wdir"), "{e}");
    }

    #[test]
    fn different_commands_run_through_a_plan() {
        let c = command_line(&req(vec![
            cmd("true", 2, &[("wdir", "/tmp")]),
            cmd("false", 1, &[]),
        ]))
        .unwrap();
        let args = args_of(&c);
        assert_eq!(args.last().unwrap(), "--spawn-exec");
        let plan_arg = args
            .iter()
            .find_map(|a| a.strip_prefix(&format!("{PLAN_ENV}=")))
            .unwrap();
        let (p0, w0, a0) = planned(plan_arg, 1).unwrap();
        assert!(
            p0.ends_with("/true") && w0 == "/tmp" && a0 == ["-v"],
            "{p0} {w0} {a0:?}"
        );
        let (p2, w2, _) = planned(plan_arg, 2).unwrap();
        assert!(p2.ends_with("/false") && w2.is_empty(), "{p2}");
        assert_eq!(planned(plan_arg, 3), None);
    }
}
