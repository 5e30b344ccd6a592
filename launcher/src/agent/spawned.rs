//! Jobs the ranks spawn (`MPI_Comm_spawn`): each request starts a nested
//! `oxrun` (this binary) running the children as a job of their own, with
//! its own key-value space and shared-memory segment; the request's
//! preput pairs reach the children as environment variables. The agent
//! keeps the nested launcher's pid: its output goes where the agent's
//! goes, it dies with the agent, a non-zero exit fails the whole job, and
//! the agent is done only once it has ended.

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
}

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

/// The nested oxrun's command line for `req`: every command of a request
/// runs in one job; when they differ in program, arguments or directory,
/// each rank starts as `oxrun --spawn-exec`, which becomes its command.
fn command_line(req: &SpawnRequest) -> Result<Command, String> {
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
        add_hosts_and_env(&mut cmd, req);
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
    add_hosts_and_env(&mut cmd, req);
    cmd.arg(&program).args(&first.args);
    if let Some(dir) = info(first, "wdir") {
        if !Path::new(dir).is_dir() {
            return Err(format!("wdir {dir:?} is not a directory"));
        }
        cmd.current_dir(dir);
    }
    Ok(cmd)
}

fn add_hosts_and_env(cmd: &mut Command, req: &SpawnRequest) {
    let hosts: Vec<&str> = req.cmds.iter().filter_map(|c| info(c, "host")).collect();
    if !hosts.is_empty() {
        cmd.arg("--host").arg(hosts.join(","));
    }
    for (k, v) in &req.preput {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
}

/// Starts the nested job for `req`, asked by `by_rank`.
pub fn start(req: &SpawnRequest, by_rank: u32) -> Result<Spawned, String> {
    let mut cmd = command_line(req)?;
    cmd.stdin(Stdio::null()).process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs in the child
    // between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the spawned job: {e}"))?;
    Ok(Spawned {
        pid: child.id() as i32,
        by_rank,
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
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &args[..8],
            [
                "-n",
                "3",
                "--bind-to",
                "none",
                "--host",
                "localhost",
                "--env",
                "OXMPI_PARENT=p"
            ]
        );
        assert!(args[8].ends_with("/true"), "{args:?}");
        assert_eq!(args[9], "-v");
        assert_eq!(c.get_current_dir(), Some(Path::new("/tmp")));
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
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
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
