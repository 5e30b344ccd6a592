//! The name service behind `MPI_Publish_name` / `MPI_Lookup_name`: the
//! job's own table, or a directory that several jobs share (`--name-dir`,
//! else `OXMPI_NAME_DIR`; `oxmpi::bootstrap::name_dir`), so that a client
//! job finds what a server job published.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io;
use std::path::Path;

use oxmpi::bootstrap::name_dir::NameDir;

use crate::proto::NameOp;

/// Where the services live.
pub(crate) enum Names {
    /// This job's table: service -> port.
    Job(HashMap<String, String>),
    /// A directory shared by jobs.
    Dir(NameDir),
}

impl Names {
    /// The table of a job, or the directory `dir` (created if missing).
    pub(crate) fn new(dir: Option<&Path>) -> io::Result<Names> {
        Ok(match dir {
            None => Names::Job(HashMap::new()),
            Some(d) => Names::Dir(NameDir::open(d)?),
        })
    }

    /// One request: whether it succeeded, and the port found.
    pub(crate) fn serve(&mut self, op: NameOp) -> (bool, String) {
        match (self, op) {
            (Names::Job(names), NameOp::Publish { service, port }) => match names.entry(service) {
                Entry::Occupied(_) => (false, String::new()),
                Entry::Vacant(v) => {
                    v.insert(port);
                    (true, String::new())
                }
            },
            (Names::Job(names), NameOp::Unpublish { service }) => {
                (names.remove(&service).is_some(), String::new())
            }
            (Names::Job(names), NameOp::Lookup { service }) => match names.get(&service) {
                Some(port) => (true, port.clone()),
                None => (false, String::new()),
            },
            (Names::Dir(d), NameOp::Publish { service, port }) => {
                (d.publish(&service, &port), String::new())
            }
            (Names::Dir(d), NameOp::Unpublish { service }) => {
                (d.unpublish(&service), String::new())
            }
            (Names::Dir(d), NameOp::Lookup { service }) => match d.lookup(&service) {
                Some(port) => (true, port),
                None => (false, String::new()),
            },
        }
    }
}
