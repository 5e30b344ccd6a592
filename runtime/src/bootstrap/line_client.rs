//! PMI-1 "simple" client: one `cmd=...` line per message.
//!
//! Start-up sends, in order: (`PMI_PORT` only) `initack`, then `init`,
//! `get_maxes`, `get_appnum`, `get_my_kvsname`, `get_universe_size` and
//! `get kvsname=K key=PMI_process_mapping`. Rank and size come from
//! `PMI_RANK`/`PMI_SIZE`, or from the `set` lines of the `PMI_PORT` handshake.

use std::net::TcpStream;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use super::conn::{self, Conn};
use super::wire::Command;
use super::{check_identity, node_map, Bootstrap, JobInfo, PmiEnv, Stream};
use crate::Error;

/// Size limits the server announced in `maxes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Maxes {
    /// Longest KVS name, including the C terminator.
    pub kvsname_max: usize,
    /// Longest key, including the C terminator.
    pub keylen_max: usize,
    /// Longest value, including the C terminator.
    pub vallen_max: usize,
}

/// A PMI-1 client connection.
#[derive(Debug)]
pub(crate) struct Pmi1 {
    conn: Conn,
    info: JobInfo,
    maxes: Maxes,
    finalized: bool,
}

/// Takes ownership of the inherited socket whose number is `text` (`PMI_FD`).
pub(crate) fn stream_from_fd(text: &str) -> Result<Box<dyn Stream>, Error> {
    let fd: RawFd = text
        .trim()
        .parse()
        .ok()
        .filter(|&fd: &RawFd| fd >= 0)
        .ok_or_else(|| Error::Bootstrap(format!("PMI_FD={text:?} is not a descriptor number")))?;
    // Checks that it is open, and keeps it from the rank's own children.
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(|e| Error::Os {
        call: "fcntl(PMI_FD, F_SETFD, FD_CLOEXEC)",
        source: std::io::Error::from_raw_os_error(e as i32),
    })?;
    // SAFETY: the descriptor is open (checked above) and, by the PMI
    // contract, handed to this process for its exclusive use; nothing else in
    // the runtime refers to it, so taking ownership here is sound.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok(Box::new(UnixStream::from(owned)))
}

/// Connects to `PMI_PORT` (`host:port`).
pub(crate) fn stream_from_port(addr: &str) -> Result<Box<dyn Stream>, Error> {
    let stream = TcpStream::connect(addr.trim())
        .map_err(|e| Error::Bootstrap(format!("cannot connect to PMI_PORT={addr:?}: {e}")))?;
    // Latency matters more than throughput for PMI; failure here is harmless.
    let _ = stream.set_nodelay(true);
    Ok(Box::new(stream))
}

/// The `PMI_PORT` handshake: `initack pmiid=ID`, then the server's `initack`
/// and `set` lines. Returns (rank, size).
pub(crate) fn port_handshake(conn: &mut Conn, id: Option<&str>) -> Result<(usize, usize), Error> {
    let id = id.ok_or_else(|| Error::Bootstrap("PMI_PORT is set but PMI_ID is not".into()))?;
    let ack = conn.request(&Command::new("initack").with("pmiid", id), "initack")?;
    conn::check_rc(&ack, "initack")?;
    let (mut rank, mut size) = (None, None);
    // The server sends exactly three: size, rank and debug (in any order here).
    for _ in 0..3 {
        let set = conn.expect("set")?;
        if set.get("rank").is_some() {
            rank = Some(conn::int(&set, "rank")?);
        } else if set.get("size").is_some() {
            size = Some(conn::int(&set, "size")?);
        }
    }
    match (rank, size) {
        (Some(rank), Some(size)) => Ok((rank, size)),
        _ => Err(Error::Bootstrap(
            "PMI_PORT handshake ended without `set rank=` and `set size=`".into(),
        )),
    }
}

/// Sends the PMI-1 style `init` line and checks the server accepted `version`.
pub(crate) fn init_line(conn: &mut Conn, version: u8, subversion: u8) -> Result<(), Error> {
    let init = Command::new("init")
        .with("pmi_version", version)
        .with("pmi_subversion", subversion);
    let reply = conn.request(&init, "response_to_init")?;
    conn::check_rc(&reply, "init")?;
    if let Some(v) = reply.get("pmi_version") {
        if v.trim() != version.to_string() {
            return Err(Error::Bootstrap(format!(
                "asked the PMI server for version {version}, it answered pmi_version={v:?}"
            )));
        }
    }
    Ok(())
}

impl Pmi1 {
    /// Opens `PMI_FD` (or `PMI_PORT`) and runs the start-up exchange.
    pub(crate) fn connect(env: &PmiEnv) -> Result<Self, Error> {
        Self::over(super::open_stream(env)?, env)
    }

    /// Runs the start-up exchange over an already connected stream. The
    /// `PMI_PORT` handshake is done when `env.fd` is unset and `env.port` set.
    pub(crate) fn over(stream: Box<dyn Stream>, env: &PmiEnv) -> Result<Self, Error> {
        let mut conn = Conn::new(stream);
        let from_port = if env.fd.is_none() && env.port.is_some() {
            Some(port_handshake(&mut conn, env.id.as_deref())?)
        } else {
            None
        };
        init_line(&mut conn, 1, 1)?;
        let m = conn.request(&Command::new("get_maxes"), "maxes")?;
        let maxes = Maxes {
            kvsname_max: conn::int(&m, "kvsname_max")?,
            keylen_max: conn::int(&m, "keylen_max")?,
            vallen_max: conn::int(&m, "vallen_max")?,
        };
        let a = conn.request(&Command::new("get_appnum"), "appnum")?;
        let appnum = conn::int(&a, "appnum")?;
        let k = conn.request(&Command::new("get_my_kvsname"), "my_kvsname")?;
        let jobid = k.require("kvsname")?.to_string();
        let u = conn.request(&Command::new("get_universe_size"), "universe_size")?;
        let universe_size = conn::int(&u, "size").ok();
        let (rank, size) = match from_port {
            Some(rs) => rs,
            None => (
                env.rank_number()?.ok_or_else(|| missing("PMI_RANK"))?,
                env.size_number()?.ok_or_else(|| missing("PMI_SIZE"))?,
            ),
        };
        check_identity(rank, size)?;
        let mut client = Pmi1 {
            conn,
            info: JobInfo {
                rank,
                size,
                appnum,
                jobid,
                universe_size,
                node_of_rank: Vec::new(),
            },
            maxes,
            finalized: false,
        };
        let mapping = client.get("PMI_process_mapping")?;
        client.info.node_of_rank = node_map(mapping.as_deref(), size)?;
        Ok(client)
    }

    /// The limits the server announced.
    #[allow(dead_code)] // kept with the handshake that reads them; no caller checks sizes yet
    pub(crate) fn maxes(&self) -> Maxes {
        self.maxes
    }

    fn live(&self, op: &str) -> Result<(), Error> {
        if self.finalized {
            return Err(Error::Bootstrap(format!("PMI {op} after finalize")));
        }
        Ok(())
    }
}

fn missing(var: &str) -> Error {
    Error::Bootstrap(format!("PMI_FD is set but {var} is not"))
}

fn check_len(what: &str, text: &str, max: usize) -> Result<(), Error> {
    if text.len() >= max {
        return Err(Error::Bootstrap(format!(
            "PMI {what} of {} bytes is too long (server allows {} plus terminator): {:.40?}",
            text.len(),
            max.saturating_sub(1),
            text
        )));
    }
    Ok(())
}

fn is_not_found(reply: &Command) -> bool {
    match reply.get("msg") {
        None => true,
        Some(msg) => {
            let msg = msg.to_ascii_lowercase();
            msg.contains("not_found") || msg.contains("not found")
        }
    }
}

impl Bootstrap for Pmi1 {
    fn info(&self) -> &JobInfo {
        &self.info
    }

    fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.live("put")?;
        check_len("key", key, self.maxes.keylen_max)?;
        check_len("value", value, self.maxes.vallen_max)?;
        let cmd = Command::new("put")
            .with("kvsname", &self.info.jobid)
            .with("key", key)
            .with("value", value);
        let reply = self.conn.request(&cmd, "put_result")?;
        conn::check_rc(&reply, &format!("put of key {key:?}"))
    }

    fn fence(&mut self) -> Result<(), Error> {
        self.live("barrier")?;
        self.conn
            .request(&Command::new("barrier_in"), "barrier_out")
            .map(drop)
    }

    fn get(&mut self, key: &str) -> Result<Option<String>, Error> {
        self.live("get")?;
        check_len("key", key, self.maxes.keylen_max)?;
        let cmd = Command::new("get")
            .with("kvsname", &self.info.jobid)
            .with("key", key);
        let reply = self.conn.request(&cmd, "get_result")?;
        if reply.get("rc").is_some_and(|rc| rc.trim() != "0") {
            if is_not_found(&reply) {
                return Ok(None);
            }
            conn::check_rc(&reply, &format!("get of key {key:?}"))?;
        }
        Ok(Some(reply.require("value")?.to_string()))
    }

    fn finalize(&mut self) -> Result<(), Error> {
        self.live("finalize")?;
        self.finalized = true;
        self.conn
            .request(&Command::new("finalize"), "finalize_ack")
            .map(drop)
    }

    fn abort(&mut self, code: i32, message: &str) -> Result<(), Error> {
        let cmd = Command::new("abort")
            .with("exitcode", code)
            .with("message", message);
        self.conn.send(&cmd)
    }

    fn publish_name(&mut self, service: &str, port: &str) -> Result<(), Error> {
        self.live("publish_name")?;
        let cmd = Command::new("publish_name")
            .with("service", service)
            .with("port", port);
        let reply = self.conn.request(&cmd, "publish_result")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Service(format!(
                "publishing service {service:?}: the launcher says {why}"
            ))
        })
    }

    fn unpublish_name(&mut self, service: &str) -> Result<(), Error> {
        self.live("unpublish_name")?;
        let cmd = Command::new("unpublish_name").with("service", service);
        let reply = self.conn.request(&cmd, "unpublish_result")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Service(format!(
                "unpublishing service {service:?}: the launcher says {why}"
            ))
        })
    }

    fn spawn(&mut self, req: &super::spawn_wire::SpawnRequest) -> Result<(), Error> {
        self.live("spawn")?;
        self.conn.send_raw(&req.to_pmi1()?)?;
        let reply = self.conn.expect("spawn_result")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Spawn(format!("the launcher could not start the processes: {why}"))
        })
    }

    fn lookup_name(&mut self, service: &str) -> Result<Option<String>, Error> {
        self.live("lookup_name")?;
        let cmd = Command::new("lookup_name").with("service", service);
        let reply = self.conn.request(&cmd, "lookup_result")?;
        match super::name_reply_ok(&reply) {
            Ok(()) => Ok(Some(reply.require("port")?.to_string())),
            Err(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::conn::fake::{serve, Step};

    const START: [Step; 6] = [
        (
            b"cmd=init pmi_version=1 pmi_subversion=1\n",
            b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        ),
        (
            b"cmd=get_maxes\n",
            b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
        ),
        (b"cmd=get_appnum\n", b"cmd=appnum appnum=0\n"),
        (b"cmd=get_my_kvsname\n", b"cmd=my_kvsname kvsname=kvs_7_0\n"),
        (b"cmd=get_universe_size\n", b"cmd=universe_size size=4\n"),
        (
            b"cmd=get kvsname=kvs_7_0 key=PMI_process_mapping\n",
            b"cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n",
        ),
    ];

    fn env() -> PmiEnv {
        PmiEnv {
            fd: Some("9".into()),
            rank: Some("2".into()),
            size: Some("4".into()),
            ..PmiEnv::default()
        }
    }

    #[test]
    fn full_session_byte_for_byte() {
        let mut script = START.to_vec();
        script.extend_from_slice(&[
            (
                b"cmd=put kvsname=kvs_7_0 key=card-2 value=a\\ b\n",
                b"cmd=put_result rc=0 msg=success\n",
            ),
            (b"cmd=barrier_in\n", b"cmd=barrier_out\n"),
            (
                b"cmd=get kvsname=kvs_7_0 key=card-0\n",
                b"cmd=get_result rc=0 msg=success value=x\n",
            ),
            (
                b"cmd=get kvsname=kvs_7_0 key=nope\n",
                b"cmd=get_result rc=-1 msg=key_nope_not_found value=unknown\n",
            ),
            (b"cmd=finalize\n", b"cmd=finalize_ack\n"),
        ]);
        let (client, server) = serve(script);
        let mut pmi = Pmi1::over(Box::new(client), &env()).unwrap();
        assert_eq!((pmi.rank(), pmi.size(), pmi.appnum()), (2, 4, 0));
        assert_eq!(pmi.jobid(), "kvs_7_0");
        assert_eq!(pmi.info().universe_size, Some(4));
        assert_eq!(pmi.node_of_rank(), &[0, 0, 1, 1]);
        assert_eq!(pmi.local_ranks(), vec![2, 3]);
        pmi.put("card-2", "a b").unwrap();
        pmi.fence().unwrap();
        assert_eq!(pmi.get("card-0").unwrap().as_deref(), Some("x"));
        assert_eq!(pmi.get("nope").unwrap(), None);
        pmi.finalize().unwrap();
        assert!(pmi.put("k", "v").is_err());
        drop(pmi);
        assert!(server.join().unwrap().is_empty());
    }

    #[test]
    fn abort_sends_exit_code_and_message() {
        let (client, server) = serve(START.to_vec());
        let mut pmi = Pmi1::over(Box::new(client), &env()).unwrap();
        pmi.abort(3, "bad thing").unwrap();
        drop(pmi);
        let rest = server.join().unwrap();
        assert_eq!(rest, b"cmd=abort exitcode=3 message=bad\\ thing\n");
    }

    #[test]
    fn missing_mapping_and_limits() {
        let mut script = START[..5].to_vec();
        script.push((
            b"cmd=get kvsname=kvs_7_0 key=PMI_process_mapping\n",
            b"cmd=get_result rc=-1 msg=key_PMI_process_mapping_not_found value=unknown\n",
        ));
        let (client, server) = serve(script);
        let mut pmi = Pmi1::over(Box::new(client), &env()).unwrap();
        assert_eq!(pmi.node_of_rank(), &[0, 1, 2, 3]);
        let err = pmi.put(&"k".repeat(64), "v").unwrap_err().to_string();
        assert!(err.contains("key of 64 bytes"), "{err}");
        drop(pmi);
        server.join().unwrap();
    }

    #[test]
    fn server_errors_are_reported_not_panicked() {
        let (client, server) = serve(vec![(
            b"cmd=init pmi_version=1 pmi_subversion=1\n",
            b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n",
        )]);
        let err = Pmi1::over(Box::new(client), &env())
            .unwrap_err()
            .to_string();
        assert!(err.contains("init") && err.contains("-1"), "{err}");
        server.join().unwrap();

        let mut script = START[..1].to_vec();
        script.push((b"cmd=get_maxes\n", b"cmd=maxes kvsname_max=x\n"));
        let (client, server) = serve(script);
        let err = Pmi1::over(Box::new(client), &env())
            .unwrap_err()
            .to_string();
        assert!(err.contains("kvsname_max"), "{err}");
        server.join().unwrap();

        let (client, server) = serve(START[..5].to_vec());
        let bad_rank = PmiEnv {
            rank: Some("7".into()),
            ..env()
        };
        let err = Pmi1::over(Box::new(client), &bad_rank)
            .unwrap_err()
            .to_string();
        assert!(err.contains("rank 7 of size 4"), "{err}");
        server.join().unwrap();
    }

    #[test]
    fn port_handshake_sets_rank_and_size() {
        let mut script: Vec<Step> = vec![(
            b"cmd=initack pmiid=5\n",
            b"cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=1\ncmd=set debug=0\n",
        )];
        script.extend_from_slice(&START);
        let (client, server) = serve(script);
        let env = PmiEnv {
            port: Some("127.0.0.1:1".into()),
            id: Some("5".into()),
            ..PmiEnv::default()
        };
        let pmi = Pmi1::over(Box::new(client), &env).unwrap();
        assert_eq!((pmi.rank(), pmi.size()), (1, 4));
        drop(pmi);
        server.join().unwrap();
    }

    #[test]
    fn bad_fd_is_reported() {
        let err = stream_from_fd("abc").unwrap_err().to_string();
        assert!(err.contains("abc"), "{err}");
        let err = stream_from_fd("100000").unwrap_err().to_string();
        assert!(err.contains("F_SETFD"), "{err}");
    }
}
