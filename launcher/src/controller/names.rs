//! The name service behind `MPI_Publish_name` / `MPI_Lookup_name`: the
//! job's own table, or a directory that several jobs share (`--name-dir`,
//! else `OXMPI_NAME_DIR`), so that a client job finds what a server job
//! published. In the directory each service is a file whose name is the
//! service's bytes in hex and whose content is the port; publishing links
//! a complete temporary file to that name (`link` fails if it exists, so
//! two jobs never both publish a service). Services this job published and
//! did not withdraw are removed when the job ends: a name must not outlive
//! its port.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use crate::proto::NameOp;

/// Where the services live.
pub(crate) enum Names {
    /// This job's table: service -> port.
    Job(HashMap<String, String>),
    /// A directory shared by jobs; `mine`: the services this job published.
    Dir { dir: PathBuf, mine: HashSet<String> },
}

impl Names {
    /// The table of a job, or the directory `dir` (created if missing).
    pub(crate) fn new(dir: Option<&Path>) -> io::Result<Names> {
        Ok(match dir {
            None => Names::Job(HashMap::new()),
            Some(d) => {
                std::fs::create_dir_all(d)?;
                Names::Dir {
                    dir: d.to_path_buf(),
                    mine: HashSet::new(),
                }
            }
        })
    }

    /// One request: whether it succeeded, and the port found.
    pub(crate) fn serve(&mut self, op: NameOp) -> (bool, String) {
        match self {
            Names::Job(names) => match op {
                NameOp::Publish { service, port } => match names.entry(service) {
                    Entry::Occupied(_) => (false, String::new()),
                    Entry::Vacant(v) => {
                        v.insert(port);
                        (true, String::new())
                    }
                },
                NameOp::Unpublish { service } => (names.remove(&service).is_some(), String::new()),
                NameOp::Lookup { service } => match names.get(&service) {
                    Some(port) => (true, port.clone()),
                    None => (false, String::new()),
                },
            },
            Names::Dir { dir, mine } => match op {
                NameOp::Publish { service, port } => {
                    let ok = publish(dir, &service, &port).is_ok();
                    if ok {
                        mine.insert(service);
                    }
                    (ok, String::new())
                }
                NameOp::Unpublish { service } => {
                    mine.remove(&service);
                    (
                        std::fs::remove_file(file_of(dir, &service)).is_ok(),
                        String::new(),
                    )
                }
                NameOp::Lookup { service } => {
                    match std::fs::read_to_string(file_of(dir, &service)) {
                        Ok(port) => (true, port),
                        Err(_) => (false, String::new()),
                    }
                }
            },
        }
    }
}

impl Drop for Names {
    fn drop(&mut self) {
        if let Names::Dir { dir, mine } = self {
            for service in mine.drain() {
                let _ = std::fs::remove_file(file_of(dir, &service));
            }
        }
    }
}

fn file_of(dir: &Path, service: &str) -> PathBuf {
    let hex: String = service.bytes().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("service-{hex}"))
}

/// Publishes `port` under `service` unless the service exists.
fn publish(dir: &Path, service: &str, port: &str) -> io::Result<()> {
    let tmp = dir.join(format!(
        ".publish-{}-{}",
        std::process::id(),
        file_of(dir, service)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, port)?;
    let linked = std::fs::hard_link(&tmp, file_of(dir, service));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(e),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish_op(s: &str, p: &str) -> NameOp {
        NameOp::Publish {
            service: s.into(),
            port: p.into(),
        }
    }

    fn lookup(s: &str) -> NameOp {
        NameOp::Lookup { service: s.into() }
    }

    #[test]
    fn two_jobs_share_a_directory_and_names_go_with_their_job() {
        let dir = std::env::temp_dir().join(format!("oxrun-names-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut server = Names::new(Some(&dir)).unwrap();
        let mut client = Names::new(Some(&dir)).unwrap();
        assert_eq!(
            server.serve(publish_op("svc/a b", "port-1")),
            (true, String::new())
        );
        assert_eq!(client.serve(lookup("svc/a b")), (true, "port-1".into()));
        assert!(
            !client.serve(publish_op("svc/a b", "port-2")).0,
            "published twice"
        );
        assert!(!client.serve(lookup("other")).0);
        assert!(server.serve(publish_op("kept", "port-3")).0);
        assert!(
            server
                .serve(NameOp::Unpublish {
                    service: "svc/a b".into()
                })
                .0
        );
        assert!(!client.serve(lookup("svc/a b")).0);
        drop(server);
        assert!(!client.serve(lookup("kept")).0, "a name outlived its job");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
