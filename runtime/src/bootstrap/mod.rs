//! How a rank learns who it is: PMI wire formats and clients, singleton start.
//!
//! [`connect`] reads the environment once ([`PmiEnv`]), picks a [`Method`]
//! and returns a [`Bootstrap`]: a PMI-1 or PMI-2 client talking to the
//! launcher (hydra, Slurm, `oxrun`), or a singleton world of one rank.

mod conn;
pub mod framed_client;
pub(crate) mod line_client;
pub mod mapping;
pub mod name_dir;
pub(crate) mod singleton;
pub mod spawn_wire;
pub mod wire;

pub(crate) use conn::Stream;

use crate::Error;

/// Who this rank is, learned once at connect time.
///
/// ```no_run
/// use oxmpi::bootstrap::{connect, JobInfo};
/// let boot = connect()?;
/// let info: &JobInfo = boot.info();
/// assert_eq!(info.node_of_rank.len(), info.size);
/// println!("rank {} of {} on node {}", info.rank, info.size, info.node());
/// # let mut boot = boot;
/// # boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// This rank, `0..size`.
    pub rank: usize,
    /// Number of ranks in the job.
    pub size: usize,
    /// Application number (MPMD launches number their apps from 0).
    pub appnum: i32,
    /// KVS name (PMI-1) or job id (PMI-2) that scopes this job's keys.
    pub jobid: String,
    /// Universe size if the launcher reported one.
    pub universe_size: Option<usize>,
    /// Node id of every rank (index = rank), from `PMI_process_mapping`. If
    /// the launcher gives no mapping, every rank is assumed on its own node.
    pub node_of_rank: Vec<usize>,
}

impl JobInfo {
    /// Node id of this rank.
    ///
    /// See the example on [`JobInfo`].
    pub fn node(&self) -> usize {
        self.node_of_rank[self.rank]
    }

    /// Ranks on this rank's node, ascending (this rank included).
    pub(crate) fn local_ranks(&self) -> Vec<usize> {
        let me = self.node();
        (0..self.size)
            .filter(|&r| self.node_of_rank[r] == me)
            .collect()
    }
}

/// Checks what a server reported: `rank < size <= MAX_RANKS`.
pub(crate) fn check_identity(rank: usize, size: usize) -> Result<(), Error> {
    if size == 0 || size > mapping::MAX_RANKS || rank >= size {
        return Err(Error::Bootstrap(format!(
            "PMI server reported rank {rank} of size {size} (need rank < size <= {})",
            mapping::MAX_RANKS
        )));
    }
    Ok(())
}

/// Node ids from a `PMI_process_mapping` value, or one node per rank if absent.
pub(crate) fn node_map(value: Option<&str>, size: usize) -> Result<Vec<usize>, Error> {
    match value {
        Some(text) => Ok(mapping::decode(text, size)?),
        None => Ok((0..size).collect()),
    }
}

/// A rank's view of the process manager: identity, a key/value space shared
/// by the job, and a collective fence.
///
/// Keys put before a [`fence`](Bootstrap::fence) are visible to every rank's
/// [`get`](Bootstrap::get) after it.
///
/// ```no_run
/// use oxmpi::bootstrap::{connect, Bootstrap};
/// let mut boot = connect()?; // from PMI_* (a world of one without a launcher)
/// let (rank, size) = (boot.rank(), boot.size());
/// boot.put(&format!("card-{rank}"), &format!("tcp://10.0.0.{rank}:4000"))?;
/// boot.fence()?; // every rank's puts are visible after this
/// let next = (rank + 1) % size;
/// let card = boot.get(&format!("card-{next}"))?.expect("every rank put one");
/// println!("job {} app {}: my neighbour is at {card}", boot.jobid(), boot.appnum());
/// println!("ranks on my node: {:?} (nodes {:?})", boot.local_ranks(), boot.node_of_rank());
/// boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub trait Bootstrap: Send + std::fmt::Debug {
    /// Identity and layout of the job.
    ///
    /// See the example on [`JobInfo`].
    fn info(&self) -> &JobInfo;

    /// This rank.
    ///
    /// See the example on [`Bootstrap`].
    fn rank(&self) -> usize {
        self.info().rank
    }

    /// Number of ranks.
    ///
    /// See the example on [`Bootstrap`].
    fn size(&self) -> usize {
        self.info().size
    }

    /// Application number.
    ///
    /// See the example on [`Bootstrap`].
    fn appnum(&self) -> i32 {
        self.info().appnum
    }

    /// KVS name / job id.
    ///
    /// See the example on [`Bootstrap`].
    fn jobid(&self) -> &str {
        &self.info().jobid
    }

    /// Node id of every rank.
    ///
    /// See the example on [`Bootstrap`].
    fn node_of_rank(&self) -> &[usize] {
        &self.info().node_of_rank
    }

    /// Ranks sharing this rank's node, ascending.
    ///
    /// See the example on [`Bootstrap`].
    fn local_ranks(&self) -> Vec<usize> {
        self.info().local_ranks()
    }

    /// Publishes `key` = `value` (visible to others after the next fence).
    ///
    /// See the example on [`Bootstrap`].
    fn put(&mut self, key: &str, value: &str) -> Result<(), Error>;

    /// Collective: returns once every rank has called it; commits puts.
    ///
    /// See the example on [`Bootstrap`].
    fn fence(&mut self) -> Result<(), Error>;

    /// Looks `key` up; `Ok(None)` if no rank put it.
    ///
    /// See the example on [`Bootstrap`].
    fn get(&mut self, key: &str) -> Result<Option<String>, Error>;

    /// Tells the server this rank is done. Further calls are errors.
    ///
    /// See the example on [`Bootstrap`].
    fn finalize(&mut self) -> Result<(), Error>;

    /// Asks the launcher to end the whole job with `code`. This only sends
    /// the request; the caller should exit the process afterwards.
    ///
    /// ```no_run
    /// use oxmpi::bootstrap::{connect, Bootstrap};
    /// let mut boot = connect()?;
    /// if boot.get("input-checked")?.is_none() {
    ///     boot.abort(3, "input was never checked")?; // the launcher ends the job...
    ///     std::process::exit(3); // ...and this process leaves at once
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    fn abort(&mut self, code: i32, message: &str) -> Result<(), Error>;

    /// Publishes `port` under `service` in the launcher's name service
    /// (`MPI_Publish_name`). Errors: `MPI_ERR_SERVICE` when the launcher
    /// refuses (the service is published already); without a launcher,
    /// `MPI_ERR_UNSUPPORTED_OPERATION`.
    fn publish_name(&mut self, service: &str, port: &str) -> Result<(), Error> {
        let _ = (service, port);
        Err(no_name_service())
    }

    /// Withdraws `service` (`MPI_Unpublish_name`). Errors: `MPI_ERR_SERVICE`
    /// when it is not published.
    fn unpublish_name(&mut self, service: &str) -> Result<(), Error> {
        let _ = service;
        Err(no_name_service())
    }

    /// The port published under `service`, `None` if none is
    /// (`MPI_Lookup_name`).
    fn lookup_name(&mut self, service: &str) -> Result<Option<String>, Error> {
        let _ = service;
        Err(no_name_service())
    }

    /// Asks the launcher to start `req` as a new job (`MPI_Comm_spawn`).
    /// Errors: `MPI_ERR_SPAWN` when the launcher refuses, naming why;
    /// without a launcher, `MPI_ERR_UNSUPPORTED_OPERATION`.
    fn spawn(&mut self, req: &spawn_wire::SpawnRequest) -> Result<(), Error> {
        let _ = req;
        Err(Error::Unsupported(
            "spawning processes needs a launcher that starts them (run under oxrun); this \
             process has none"
                .into(),
        ))
    }
}

pub(crate) fn no_name_service() -> Error {
    Error::Unsupported(
        "name publishing needs a launcher's name service (run under oxrun) or, for a \
         singleton, a name directory (OXMPI_NAME_DIR); this process has neither"
            .into(),
    )
}

/// Whether a name-service reply (`rc`, and PMI-1's `info`) says yes; else
/// the launcher's reason.
pub(crate) fn name_reply_ok(reply: &wire::Command) -> Result<(), String> {
    let rc_ok = reply.get("rc").is_none_or(|rc| rc.trim() == "0");
    let info_ok = reply.get("info").is_none_or(|i| i == "ok");
    if rc_ok && info_ok {
        return Ok(());
    }
    Err(reply
        .get("info")
        .or(reply.get("errmsg"))
        .or(reply.get("msg"))
        .unwrap_or("refused")
        .to_string())
}

/// The PMI-related environment, read in one place.
///
/// ```
/// use oxmpi::bootstrap::{Method, PmiEnv};
/// let env = PmiEnv {
///     port: Some("node1:5000".into()),
///     version: Some("2".into()),
///     ..PmiEnv::default()
/// };
/// assert_eq!(env.method()?, Method::Pmi2);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmiEnv {
    /// `PMI_FD`: an inherited, connected socket.
    pub fd: Option<String>,
    /// `PMI_PORT`: `host:port` to connect to when there is no `PMI_FD`.
    pub port: Option<String>,
    /// `PMI_ID`: identifies this rank in the `PMI_PORT` handshake.
    pub id: Option<String>,
    /// `PMI_RANK`.
    pub rank: Option<String>,
    /// `PMI_SIZE`.
    pub size: Option<String>,
    /// `PMI_JOBID` (Slurm's PMI-2).
    pub jobid: Option<String>,
    /// `PMI_VERSION`.
    pub version: Option<String>,
    /// `OXMPI_PMI`: `1`, `2` or `singleton`; overrides `PMI_VERSION`.
    pub oxmpi_pmi: Option<String>,
}

/// How to bootstrap.
///
/// ```
/// use oxmpi::bootstrap::{Method, PmiEnv};
/// assert_eq!(PmiEnv::default().method()?, Method::Singleton); // no launcher
/// let fd = PmiEnv { fd: Some("3".into()), ..PmiEnv::default() };
/// assert_eq!(fd.method()?, Method::Pmi1);
/// let forced = PmiEnv { oxmpi_pmi: Some("singleton".into()), ..fd.clone() };
/// assert_eq!(forced.method()?, Method::Singleton);
/// let bad = PmiEnv { version: Some("3".into()), ..fd };
/// assert!(bad.method().is_err());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// PMI-1 simple protocol.
    Pmi1,
    /// PMI-2 protocol.
    Pmi2,
    /// No launcher: a world of one.
    Singleton,
}

impl PmiEnv {
    /// Reads the variables from the process environment.
    ///
    /// ```
    /// use oxmpi::bootstrap::PmiEnv;
    /// let env = PmiEnv::from_env();
    /// // Outside a launcher nothing is set and the method is a singleton.
    /// println!("PMI_FD={:?} PMI_PORT={:?} -> {:?}", env.fd, env.port, env.method());
    /// ```
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        PmiEnv {
            fd: var("PMI_FD"),
            port: var("PMI_PORT"),
            id: var("PMI_ID"),
            rank: var("PMI_RANK"),
            size: var("PMI_SIZE"),
            jobid: var("PMI_JOBID"),
            version: var("PMI_VERSION"),
            oxmpi_pmi: var("OXMPI_PMI"),
        }
    }

    /// Picks the method: `OXMPI_PMI` if set, else PMI-2 when `PMI_VERSION=2`,
    /// else PMI-1 when a server is reachable, else singleton.
    ///
    /// See the examples on [`Method`] and [`PmiEnv`].
    pub fn method(&self) -> Result<Method, Error> {
        let has_server = self.fd.is_some() || self.port.is_some();
        let (var, asked) = match (&self.oxmpi_pmi, &self.version) {
            (Some(v), _) => ("OXMPI_PMI", v.trim()),
            (None, Some(v)) => ("PMI_VERSION", v.trim()),
            (None, None) => ("", ""),
        };
        let method = match asked {
            "" => {
                return Ok(if has_server {
                    Method::Pmi1
                } else {
                    Method::Singleton
                })
            }
            "1" => Method::Pmi1,
            "2" => Method::Pmi2,
            "singleton" if var == "OXMPI_PMI" => return Ok(Method::Singleton),
            other => {
                return Err(Error::Bootstrap(format!(
                    "{var}={other:?} is not a PMI version this runtime speaks (1 or 2)"
                )))
            }
        };
        if !has_server {
            return Err(Error::Bootstrap(format!(
                "{var}={asked} asks for PMI but neither PMI_FD nor PMI_PORT is set"
            )));
        }
        Ok(method)
    }

    /// `PMI_RANK` as a number, if set.
    pub(crate) fn rank_number(&self) -> Result<Option<usize>, Error> {
        parse_var("PMI_RANK", self.rank.as_deref())
    }

    /// `PMI_SIZE` as a number, if set.
    pub(crate) fn size_number(&self) -> Result<Option<usize>, Error> {
        parse_var("PMI_SIZE", self.size.as_deref())
    }
}

fn parse_var(name: &str, value: Option<&str>) -> Result<Option<usize>, Error> {
    value
        .map(|v| {
            v.trim().parse().map_err(|_| {
                Error::Bootstrap(format!("{name}={v:?} is not a non-negative integer"))
            })
        })
        .transpose()
}

/// Opens the server connection named by `PMI_FD` or `PMI_PORT`.
pub(crate) fn open_stream(env: &PmiEnv) -> Result<Box<dyn Stream>, Error> {
    if let Some(fd) = &env.fd {
        return line_client::stream_from_fd(fd);
    }
    if let Some(port) = &env.port {
        return line_client::stream_from_port(port);
    }
    Err(Error::Bootstrap(
        "neither PMI_FD nor PMI_PORT is set".into(),
    ))
}

/// Bootstraps from the process environment (see [`PmiEnv::method`]).
///
/// ```no_run
/// use oxmpi::bootstrap::Bootstrap;
/// let mut boot = oxmpi::bootstrap::connect()?;
/// boot.fence()?;
/// boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn connect() -> Result<Box<dyn Bootstrap>, Error> {
    connect_with(&PmiEnv::from_env())
}

/// Bootstraps from an explicit environment.
pub(crate) fn connect_with(env: &PmiEnv) -> Result<Box<dyn Bootstrap>, Error> {
    Ok(match env.method()? {
        Method::Singleton => Box::new(singleton::Singleton::new()),
        Method::Pmi1 => Box::new(line_client::Pmi1::connect(env)?),
        Method::Pmi2 => Box::new(framed_client::Pmi2::connect(env)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(fd: bool, version: Option<&str>, ox: Option<&str>) -> PmiEnv {
        PmiEnv {
            fd: fd.then(|| "3".to_string()),
            version: version.map(String::from),
            oxmpi_pmi: ox.map(String::from),
            ..PmiEnv::default()
        }
    }

    #[test]
    fn method_choice() {
        assert_eq!(env(false, None, None).method().unwrap(), Method::Singleton);
        assert_eq!(env(true, None, None).method().unwrap(), Method::Pmi1);
        assert_eq!(env(true, Some("2"), None).method().unwrap(), Method::Pmi2);
        assert_eq!(
            env(true, Some("1"), Some("2")).method().unwrap(),
            Method::Pmi2
        );
        assert_eq!(
            env(true, None, Some("singleton")).method().unwrap(),
            Method::Singleton
        );
        let err = env(true, Some("3"), None).method().unwrap_err().to_string();
        assert!(
            err.contains("PMI_VERSION") && err.contains("\"3\""),
            "{err}"
        );
        let err = env(false, None, Some("2"))
            .method()
            .unwrap_err()
            .to_string();
        assert!(err.contains("PMI_FD"), "{err}");
    }

    #[test]
    fn job_info_locality_and_identity_checks() {
        let info = JobInfo {
            rank: 2,
            size: 4,
            appnum: 0,
            jobid: "kvs".into(),
            universe_size: None,
            node_of_rank: vec![0, 1, 0, 1],
        };
        assert_eq!(info.node(), 0);
        assert_eq!(info.local_ranks(), vec![0, 2]);
        assert!(check_identity(3, 4).is_ok());
        assert!(check_identity(4, 4).is_err());
        assert!(check_identity(0, 0).is_err());
        assert!(check_identity(0, mapping::MAX_RANKS + 1).is_err());
    }

    #[test]
    fn absent_mapping_means_one_node_per_rank() {
        assert_eq!(node_map(None, 3).unwrap(), vec![0, 1, 2]);
        assert_eq!(
            node_map(Some("(vector,(0,1,3))"), 3).unwrap(),
            vec![0, 0, 0]
        );
        assert!(node_map(Some("junk"), 3).is_err());
    }
}
