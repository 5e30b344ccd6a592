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

/// The nested oxrun's command line for `req`. Every command of a request
/// runs in one job; commands that differ in program or arguments are
/// refused for now (oxrun has no MPMD launch).
fn command_line(req: &SpawnRequest) -> Result<Command, String> {
    let first = req.cmds.first().ok_or("a spawn request without commands")?;
    if let Some(other) = req
        .cmds
        .iter()
        .find(|c| c.program != first.program || c.args != first.args)
    {
        return Err(format!(
            "spawning different programs in one job ({:?} and {:?}) is not supported",
            first.program, other.program
        ));
    }
    let total: u32 = req.cmds.iter().map(|c| c.maxprocs).sum();
    if total == 0 {
        return Err("a spawn of no processes".into());
    }
    let program = locate(&first.program, info(first, "path"))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find oxrun itself: {e}"))?;
    let mut cmd = Command::new(exe);
    // The parents hold their cores: binding the children to the first
    // cores again would stack them on the parents.
    cmd.arg("-n")
        .arg(total.to_string())
        .args(["--bind-to", "none"]);
    let hosts: Vec<&str> = req.cmds.iter().filter_map(|c| info(c, "host")).collect();
    if !hosts.is_empty() {
        cmd.arg("--host").arg(hosts.join(","));
    }
    for (k, v) in &req.preput {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    cmd.arg(&program).args(&first.args);
    if let Some(dir) = info(first, "wdir") {
        if !Path::new(dir).is_dir() {
            return Err(format!("wdir {dir:?} is not a directory"));
        }
        cmd.current_dir(dir);
    }
    Ok(cmd)
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
            cmd("true", 1, &[]),
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
        let e = command_line(&req(vec![cmd("true", 1, &[]), cmd("false", 1, &[])])).unwrap_err();
        assert!(e.contains("different programs"), "{e}");
        let e = command_line(&req(vec![cmd("true", 0, &[])])).unwrap_err();
        assert!(e.contains("no processes"), "{e}");
        let e = command_line(&req(vec![cmd("true", 1, &[("wdir", "/no/such/dir")])])).unwrap_err();
        assert!(e.contains("wdir"), "{e}");
    }
}
