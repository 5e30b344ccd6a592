//! Singleton start: no launcher, a world of one rank with an in-memory KV.

use std::collections::HashMap;

use std::path::Path;

use super::name_dir::NameDir;
use super::{Bootstrap, JobInfo};
use crate::Error;

/// A one-rank job with a local key/value store.
#[derive(Debug)]
pub(crate) struct Singleton {
    info: JobInfo,
    kv: HashMap<String, String>,
    /// The name service: a directory shared with jobs (`OXMPI_NAME_DIR`).
    names: Option<NameDir>,
    finalized: bool,
}

impl Default for Singleton {
    fn default() -> Self {
        Self::new()
    }
}

impl Singleton {
    /// Rank 0 of 1, appnum 0, job id `singleton-<pid>`.
    pub(crate) fn new() -> Self {
        Singleton {
            info: JobInfo {
                rank: 0,
                size: 1,
                appnum: 0,
                jobid: format!("singleton-{}", std::process::id()),
                universe_size: Some(1),
                node_of_rank: vec![0],
            },
            kv: HashMap::new(),
            names: None,
            finalized: false,
        }
    }

    /// The name directory, opened at first use; MPI_ERR_UNSUPPORTED_OPERATION
    /// without `OXMPI_NAME_DIR`.
    fn names(&mut self) -> Result<&mut NameDir, Error> {
        if self.names.is_none() {
            let dir = crate::config::get(&crate::config::NAME_DIR)?;
            if dir.is_empty() {
                return Err(super::no_name_service());
            }
            let d = NameDir::open(Path::new(&dir))
                .map_err(|e| Error::State(format!("OXMPI_NAME_DIR={dir:?}: {e}")))?;
            self.names = Some(d);
        }
        Ok(self.names.as_mut().expect("opened above"))
    }

    fn live(&self, op: &str) -> Result<(), Error> {
        if self.finalized {
            return Err(Error::Bootstrap(format!("singleton {op} after finalize")));
        }
        Ok(())
    }
}

impl Bootstrap for Singleton {
    fn info(&self) -> &JobInfo {
        &self.info
    }

    fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.live("put")?;
        self.kv.insert(key.to_string(), value.to_string());
        Ok(())
    }

    fn fence(&mut self) -> Result<(), Error> {
        self.live("fence")
    }

    fn get(&mut self, key: &str) -> Result<Option<String>, Error> {
        self.live("get")?;
        Ok(self.kv.get(key).cloned())
    }

    fn finalize(&mut self) -> Result<(), Error> {
        self.live("finalize")?;
        self.finalized = true;
        Ok(())
    }

    fn abort(&mut self, _code: i32, _message: &str) -> Result<(), Error> {
        Ok(())
    }

    fn publish_name(&mut self, service: &str, port: &str) -> Result<(), Error> {
        if self.names()?.publish(service, port) {
            return Ok(());
        }
        Err(Error::Service(format!(
            "publishing service {service:?}: it is published already"
        )))
    }

    fn unpublish_name(&mut self, service: &str) -> Result<(), Error> {
        if self.names()?.unpublish(service) {
            return Ok(());
        }
        Err(Error::Service(format!(
            "unpublishing service {service:?}: it is not published"
        )))
    }

    fn lookup_name(&mut self, service: &str) -> Result<Option<String>, Error> {
        Ok(self.names()?.lookup(service))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_of_one() {
        let mut s = Singleton::new();
        assert_eq!((s.rank(), s.size(), s.appnum()), (0, 1, 0));
        assert_eq!(s.local_ranks(), vec![0]);
        assert!(s.jobid().starts_with("singleton-"));
        s.put("k", "v").unwrap();
        s.fence().unwrap();
        assert_eq!(s.get("k").unwrap().as_deref(), Some("v"));
        assert_eq!(s.get("other").unwrap(), None);
        s.finalize().unwrap();
        assert!(s.get("k").is_err());
    }
}
