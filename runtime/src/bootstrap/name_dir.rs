//! A name service (`MPI_Publish_name` / `MPI_Lookup_name`) in a directory
//! that several jobs share: oxrun's with `--name-dir` / `OXMPI_NAME_DIR`,
//! and a singleton's with `OXMPI_NAME_DIR`. Each service is a file whose
//! name is the service's bytes in hex and whose content is the port;
//! publishing links a complete temporary file to that name (`link` fails
//! if it exists, so two jobs never both publish a service). The services
//! published through a [`NameDir`] and not withdrawn are removed when it
//! is dropped: a name must not outlive its port.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

/// One job's view of a shared name directory.
#[derive(Debug)]
pub struct NameDir {
    dir: PathBuf,
    mine: HashSet<String>,
}

impl NameDir {
    /// The directory `dir`, created if missing.
    pub fn open(dir: &Path) -> io::Result<NameDir> {
        std::fs::create_dir_all(dir)?;
        Ok(NameDir {
            dir: dir.to_path_buf(),
            mine: HashSet::new(),
        })
    }

    fn file_of(&self, service: &str) -> PathBuf {
        let hex: String = service.bytes().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("service-{hex}"))
    }

    /// Publishes `port` under `service`; false if the service exists (or
    /// the directory cannot be written).
    pub fn publish(&mut self, service: &str, port: &str) -> bool {
        let name = self.file_of(service);
        let tmp = self.dir.join(format!(
            ".publish-{}-{}",
            std::process::id(),
            name.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        if std::fs::write(&tmp, port).is_err() {
            return false;
        }
        let linked = std::fs::hard_link(&tmp, &name);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                self.mine.insert(service.to_string());
                true
            }
            Err(_) => false,
        }
    }

    /// Withdraws `service`; false if it is not published.
    pub fn unpublish(&mut self, service: &str) -> bool {
        self.mine.remove(service);
        std::fs::remove_file(self.file_of(service)).is_ok()
    }

    /// The port published under `service`.
    pub fn lookup(&self, service: &str) -> Option<String> {
        std::fs::read_to_string(self.file_of(service)).ok()
    }
}

impl Drop for NameDir {
    fn drop(&mut self) {
        for service in std::mem::take(&mut self.mine) {
            let _ = std::fs::remove_file(self.file_of(&service));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_jobs_share_a_directory_and_names_go_with_their_job() {
        let dir = std::env::temp_dir().join(format!("oxmpi-names-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut server = NameDir::open(&dir).unwrap();
        let mut client = NameDir::open(&dir).unwrap();
        assert!(server.publish("svc/a b", "port-1"));
        assert_eq!(client.lookup("svc/a b").as_deref(), Some("port-1"));
        assert!(!client.publish("svc/a b", "port-2"), "published twice");
        assert_eq!(client.lookup("other"), None);
        assert!(server.publish("kept", "port-3"));
        assert!(server.unpublish("svc/a b"));
        assert!(!server.unpublish("svc/a b"), "unpublished twice");
        assert_eq!(client.lookup("svc/a b"), None);
        drop(server);
        assert_eq!(client.lookup("kept"), None, "a name outlived its job");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
