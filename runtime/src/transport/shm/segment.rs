//! Creating, sharing and attaching a node's segment file.
//!
//! Preferred: a `memfd` (mode 0600) that peers open through
//! `/proc/<leader pid>/fd/<fd>`, so no name ever exists and `kill -9` leaves
//! nothing behind. Fallback (`OXMPI_SHM_MEMFD=off`, or no memfd support): a
//! `/dev/shm/oxmpi-<jobid>-<node>-<leader pid>-<random>` file created
//! `O_EXCL`, mode 0600, which the leader unlinks once every local rank has
//! attached. A leader killed before unlinking would leave its file: the
//! launcher removes the job's files ([`remove_job_files`]) once the job's
//! ranks on a host are gone, however the job ended (its host agent, or oxrun
//! when the agent itself was killed); files of other launchers' jobs whose
//! creator died are removed by the next leader of the same user
//! ([`remove_stale`]).

use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;

use crate::Error;

/// Where fallback segment files live.
pub(crate) const SHM_DIR: &str = "/dev/shm";
/// Prefix of every segment file name.
pub(crate) const PREFIX: &str = "oxmpi-";

/// Which kind of file backs a node's segment.
///
/// ```no_run
/// use oxmpi::transport::shm::Backing;
/// # use oxmpi::bootstrap::{connect, Bootstrap};
/// # use oxmpi::config::Config;
/// # use oxmpi::transport::shm::{ShmConfig, ShmNode};
/// # let mut boot = connect()?;
/// # let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
/// match node.backing() {
///     Backing::Memfd => println!("memfd: nothing to clean up"),
///     Backing::File(name) => println!("/dev/shm file {name}, unlinked once attached"),
/// }
/// # boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// An anonymous memfd: nothing to clean up, ever.
    Memfd,
    /// A named file in `/dev/shm` (its name given), unlinked once attached.
    File(String),
}

/// A segment file just created by the leader.
#[derive(Debug)]
pub(crate) struct Created {
    pub file: File,
    pub backing: Backing,
    /// What peers need to open it (published through PMI).
    pub address: String,
}

pub(crate) fn io(call: &'static str, detail: String, e: std::io::Error) -> Error {
    Error::Os {
        call,
        source: std::io::Error::new(e.kind(), format!("{detail}: {e}")),
    }
}

/// Creates a zero-filled segment file of `len` bytes: a memfd if `memfd`
/// and the kernel has it, else a `/dev/shm` file.
pub(crate) fn create(memfd: bool, jobid: &str, node: usize, len: usize) -> Result<Created, Error> {
    let pid = std::process::id();
    if memfd {
        match nix::sys::memfd::memfd_create(
            c"oxmpi-shm",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        ) {
            Ok(fd) => {
                let address = format!("memfd:{pid}:{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
                let file = File::from(fd);
                size(&file, len, "memfd")?;
                return Ok(Created {
                    file,
                    backing: Backing::Memfd,
                    address,
                });
            }
            Err(Errno::ENOSYS | Errno::EINVAL) => {}
            Err(e) => return Err(io("memfd_create", "segment".into(), e.into())),
        }
    }
    let name = format!("{}{pid}-{:016x}", job_file_prefix(jobid, node), random());
    let path = Path::new(SHM_DIR).join(&name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| io("open", path.display().to_string(), e))?;
    if let Err(e) = size(&file, len, &name) {
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    Ok(Created {
        file,
        address: format!("file:{name}"),
        backing: Backing::File(name),
    })
}

fn size(file: &File, len: usize, what: &str) -> Result<(), Error> {
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io("fchmod", what.into(), e))?;
    file.set_len(len as u64)
        .map_err(|e| io("ftruncate", format!("{what} to {len} bytes"), e))
}

/// Opens the segment named by a leader's published `address`.
pub(crate) fn open(address: &str) -> Result<File, Error> {
    let path = match address.split_once(':') {
        Some(("memfd", pid_fd)) => match pid_fd.split_once(':') {
            Some((pid, fd)) if pid.parse::<u32>().is_ok() && fd.parse::<u32>().is_ok() => {
                PathBuf::from(format!("/proc/{pid}/fd/{fd}"))
            }
            _ => return Err(bad_address(address)),
        },
        Some(("file", name)) if name.starts_with(PREFIX) && !name.contains('/') => {
            Path::new(SHM_DIR).join(name)
        }
        _ => return Err(bad_address(address)),
    };
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| {
            let hint = if address.starts_with("memfd") {
                " (if /proc/<pid>/fd of a peer is not accessible here, set OXMPI_SHM_MEMFD=off)"
            } else {
                ""
            };
            io("open", format!("node segment {}{hint}", path.display()), e)
        })
}

fn bad_address(address: &str) -> Error {
    Error::Bootstrap(format!("node segment address {address:?} is malformed"))
}

/// The start of the name of every `/dev/shm` segment file of job `jobid`
/// on node `node` (`oxmpi-<jobid>-<node>-`, the job id reduced to
/// `[A-Za-z0-9_]`, so no other job's or node's name starts with it).
///
/// ```
/// use oxmpi::transport::shm::job_file_prefix;
/// assert_eq!(job_file_prefix("kvs_42_0", 3), "oxmpi-kvs_42_0-3-");
/// assert_eq!(job_file_prefix("a-b.c", 0), "oxmpi-a_b_c-0-");
/// ```
pub fn job_file_prefix(jobid: &str, node: usize) -> String {
    format!("{PREFIX}{}-{node}-", clean(jobid))
}

/// Removes the `/dev/shm` segment files of job `jobid` on the given
/// `nodes` (whatever their creator's state) and returns how many. The
/// launcher's host agent calls it once the job's ranks on its host are
/// gone, so a leader killed between creating its file and unlinking it
/// leaves nothing behind.
///
/// ```
/// use oxmpi::transport::shm::remove_job_files;
/// // No such job: nothing to remove.
/// assert_eq!(remove_job_files("no-such-job-here", &[0, 1]), 0);
/// ```
pub fn remove_job_files(jobid: &str, nodes: &[usize]) -> usize {
    remove_job_files_in(Path::new(SHM_DIR), jobid, nodes)
}

fn remove_job_files_in(dir: &Path, jobid: &str, nodes: &[usize]) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let prefixes: Vec<String> = nodes.iter().map(|&n| job_file_prefix(jobid, n)).collect();
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| prefixes.iter().any(|p| n.starts_with(p.as_str())))
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Keeps `[A-Za-z0-9_]` of a job id, so the name parses back unambiguously.
fn clean(jobid: &str) -> String {
    let s: String = jobid
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(64)
        .collect();
    if s.is_empty() {
        "job".into()
    } else {
        s
    }
}

fn random() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// Removes `oxmpi-*` files in `dir` that belong to this user and whose
/// creator (the pid in the name) no longer exists; returns how many.
pub(crate) fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(creator_pid) else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| m.uid() == me && m.is_file());
        let dead =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(Errno::ESRCH);
        if ours && dead && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The creator pid in `oxmpi-<jobid>-<node>-<pid>-<random>`.
fn creator_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.rsplitn(4, '-');
    let (_random, pid, node, _jobid) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    node.parse::<usize>().ok()?;
    pid.parse().ok().filter(|&p: &i32| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        assert_eq!(creator_pid("oxmpi-kvs_1_0-0-4242-00ff"), Some(4242));
        assert_eq!(creator_pid("oxmpi-0-4242-00ff"), None);
        assert_eq!(creator_pid("other-kvs-0-4242-00ff"), None);
        assert_eq!(creator_pid("oxmpi-kvs-0--1-00ff"), None);
        assert_eq!(clean("kvs-1.0/x"), "kvs_1_0_x");
    }

    #[test]
    fn stale_files_of_dead_creators_go_live_ones_stay() {
        let dir = std::env::temp_dir().join(format!("oxmpi-stale-test-{}", random()));
        std::fs::create_dir(&dir).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        for name in [
            format!("oxmpi-j-0-{dead}-1"),
            format!("oxmpi-j-0-{me}-2"),
            "keep".into(),
        ] {
            File::create(dir.join(name)).unwrap();
        }
        assert_eq!(remove_stale(&dir), 1);
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, vec!["keep".to_string(), format!("oxmpi-j-0-{me}-2")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn job_files_of_the_named_nodes_go_others_stay() {
        let dir = std::env::temp_dir().join(format!("oxmpi-jobfiles-test-{}", random()));
        std::fs::create_dir(&dir).unwrap();
        for name in [
            "oxmpi-kvs_7_0-0-11-aa",
            "oxmpi-kvs_7_0-2-12-bb",
            "oxmpi-kvs_7_0-1-13-cc",
            "oxmpi-kvs_77_0-0-14-dd",
            "oxmpi-kvs_7_0-10-15-ee",
        ] {
            File::create(dir.join(name)).unwrap();
        }
        assert_eq!(remove_job_files_in(&dir, "kvs_7_0", &[0, 2]), 2);
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "oxmpi-kvs_77_0-0-14-dd",
                "oxmpi-kvs_7_0-1-13-cc",
                "oxmpi-kvs_7_0-10-15-ee"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn addresses_are_checked() {
        assert!(open("memfd:12:x").is_err());
        assert!(open("file:../etc/passwd").is_err());
        assert!(open("file:oxmpi-a/b").is_err());
        let c = create(true, "kvs", 0, 8192).unwrap();
        assert_eq!(c.backing, Backing::Memfd);
        let f = open(&c.address).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 8192);
        assert_eq!(c.file.metadata().unwrap().mode() & 0o777, 0o600);
    }
}
