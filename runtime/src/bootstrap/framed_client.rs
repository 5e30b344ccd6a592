//! PMI-2 client: a PMI-1 style `init pmi_version=2` line, then
//! length-prefixed `cmd=NAME;k=v;` messages.
//!
//! Start-up sends `fullinit` (with `pmijobid` when `PMI_JOBID` is set, as
//! Slurm requires), `job-getid`, and `info-getjobattr` for
//! `PMI_process_mapping` and `universeSize`. Every reply is named
//! `<request>-response` (as hydra's `pmiserv` and Slurm's `mpi/pmi2` plugin
//! write them); `rc=` may come anywhere in it.

use super::conn::{self, Conn};
use super::line_client::{init_line, port_handshake};
use super::wire::{Command, Framing};
use super::{check_identity, node_map, Bootstrap, JobInfo, PmiEnv, Stream};
use crate::Error;

/// A PMI-2 client connection.
///
/// ```no_run
/// use oxmpi::bootstrap::framed_client::Pmi2;
/// use oxmpi::bootstrap::{Bootstrap, PmiEnv};
/// // Under `srun --mpi=pmi2`: talk PMI-2 whatever PMI_VERSION says.
/// let mut pmi = Pmi2::connect(&PmiEnv::from_env())?;
/// println!("rank {} of {} in job {}", pmi.rank(), pmi.size(), pmi.jobid());
/// pmi.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug)]
pub struct Pmi2 {
    conn: Conn,
    info: JobInfo,
    finalized: bool,
}

/// Sends `cmd` and returns its `<cmd>-response` after checking `rc`.
fn call(conn: &mut Conn, cmd: Command, what: &str) -> Result<Command, Error> {
    let expect = format!("{}-response", cmd.name);
    let reply = conn.request(&cmd, &expect)?;
    conn::check_rc(&reply, what)?;
    Ok(reply)
}

/// The value of a `found=TRUE;value=...` reply, `None` for `found=FALSE`.
fn found_value(reply: &Command) -> Result<Option<String>, Error> {
    match reply.get("found").map(str::trim) {
        Some("FALSE") | Some("false") => Ok(None),
        Some("TRUE") | Some("true") | None => Ok(reply.get("value").map(str::to_string)),
        Some(other) => Err(Error::Bootstrap(format!(
            "PMI-2 {:?} has found={other:?}, expected TRUE or FALSE",
            reply.name
        ))),
    }
}

fn job_attr(conn: &mut Conn, key: &str) -> Result<Option<String>, Error> {
    let cmd = Command::new("info-getjobattr").with("key", key);
    let reply = call(conn, cmd, &format!("info-getjobattr of {key:?}"))?;
    found_value(&reply)
}

impl Pmi2 {
    /// Opens `PMI_FD` (or `PMI_PORT`) and runs the start-up exchange.
    ///
    /// See the example on [`Pmi2`].
    pub fn connect(env: &PmiEnv) -> Result<Self, Error> {
        Self::over(super::open_stream(env)?, env)
    }

    /// Runs the start-up exchange over an already connected stream. The
    /// `PMI_PORT` handshake is done when `env.fd` is unset and `env.port` set.
    pub(crate) fn over(stream: Box<dyn Stream>, env: &PmiEnv) -> Result<Self, Error> {
        let mut conn = Conn::new(stream);
        let pmirank = if env.fd.is_none() && env.port.is_some() {
            port_handshake(&mut conn, env.id.as_deref())?.0
        } else {
            env.rank_number()?
                .ok_or_else(|| Error::Bootstrap("PMI-2 needs PMI_RANK, which is not set".into()))?
        };
        init_line(&mut conn, 2, 0)?;
        conn.set_framing(Framing::LengthPrefixed);

        let mut fullinit = Command::new("fullinit");
        if let Some(jobid) = &env.jobid {
            fullinit = fullinit.with("pmijobid", jobid);
        }
        let fullinit = fullinit.with("pmirank", pmirank).with("threaded", "FALSE");
        let r = call(&mut conn, fullinit, "fullinit")?;
        let rank: usize = conn::int(&r, "rank")?;
        let size: usize = conn::int(&r, "size")?;
        let appnum = if r.get("appnum").is_some() {
            conn::int(&r, "appnum")?
        } else {
            0
        };
        check_identity(rank, size)?;

        let id = call(&mut conn, Command::new("job-getid"), "job-getid")?;
        let jobid = id.require("jobid")?.to_string();
        let mapping = job_attr(&mut conn, "PMI_process_mapping")?;
        let node_of_rank = node_map(mapping.as_deref(), size)?;
        let universe_size =
            job_attr(&mut conn, "universeSize")?.and_then(|v| v.trim().parse().ok());
        Ok(Pmi2 {
            conn,
            info: JobInfo {
                rank,
                size,
                appnum,
                jobid,
                universe_size,
                node_of_rank,
            },
            finalized: false,
        })
    }

    fn live(&self, op: &str) -> Result<(), Error> {
        if self.finalized {
            return Err(Error::Bootstrap(format!("PMI-2 {op} after finalize")));
        }
        Ok(())
    }
}

impl Bootstrap for Pmi2 {
    fn info(&self) -> &JobInfo {
        &self.info
    }

    fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.live("kvs-put")?;
        let cmd = Command::new("kvs-put")
            .with("key", key)
            .with("value", value);
        call(&mut self.conn, cmd, &format!("kvs-put of key {key:?}")).map(drop)
    }

    fn fence(&mut self) -> Result<(), Error> {
        self.live("kvs-fence")?;
        call(&mut self.conn, Command::new("kvs-fence"), "kvs-fence").map(drop)
    }

    fn get(&mut self, key: &str) -> Result<Option<String>, Error> {
        self.live("kvs-get")?;
        let cmd = Command::new("kvs-get")
            .with("jobid", &self.info.jobid)
            .with("srcid", -1)
            .with("key", key);
        let reply = call(&mut self.conn, cmd, &format!("kvs-get of key {key:?}"))?;
        found_value(&reply)
    }

    fn finalize(&mut self) -> Result<(), Error> {
        self.live("finalize")?;
        self.finalized = true;
        call(&mut self.conn, Command::new("finalize"), "finalize").map(drop)
    }

    fn abort(&mut self, code: i32, message: &str) -> Result<(), Error> {
        // PMI-2 cannot carry ';' and has no exit-code field; the launcher
        // picks the job's exit status. Keep the code visible in the message.
        let msg = format!("exit code {code}: {message}").replace(';', ",");
        let cmd = Command::new("abort")
            .with("isworld", "TRUE")
            .with("msg", msg);
        self.conn.send(&cmd)
    }

    fn publish_name(&mut self, service: &str, port: &str) -> Result<(), Error> {
        self.live("name-publish")?;
        let cmd = Command::new("name-publish")
            .with("name", service)
            .with("port", port);
        let reply = self.conn.request(&cmd, "name-publish-response")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Service(format!(
                "publishing service {service:?}: the launcher says {why}"
            ))
        })
    }

    fn unpublish_name(&mut self, service: &str) -> Result<(), Error> {
        self.live("name-unpublish")?;
        let cmd = Command::new("name-unpublish").with("name", service);
        let reply = self.conn.request(&cmd, "name-unpublish-response")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Service(format!(
                "unpublishing service {service:?}: the launcher says {why}"
            ))
        })
    }

    fn spawn(&mut self, req: &super::spawn_wire::SpawnRequest) -> Result<(), Error> {
        self.live("spawn")?;
        self.conn.send(&req.to_pmi2())?;
        let reply = self.conn.expect("spawn-response")?;
        super::name_reply_ok(&reply).map_err(|why| {
            Error::Spawn(format!("the launcher could not start the processes: {why}"))
        })
    }

    fn lookup_name(&mut self, service: &str) -> Result<Option<String>, Error> {
        self.live("name-lookup")?;
        let cmd = Command::new("name-lookup").with("name", service);
        let reply = self.conn.request(&cmd, "name-lookup-response")?;
        match super::name_reply_ok(&reply) {
            Ok(()) => Ok(Some(reply.require("value")?.to_string())),
            Err(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::conn::fake::{serve, Step};

    const START: [Step; 5] = [
        (
            b"cmd=init pmi_version=2 pmi_subversion=0\n",
            b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
        ),
        (
            b"52    cmd=fullinit;pmijobid=77.0;pmirank=1;threaded=FALSE;",
            b"   113cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=3;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;",
        ),
        (
            b"14    cmd=job-getid;",
            b"    42cmd=job-getid-response;jobid=kvs_9_0;rc=0;",
        ),
        (
            b"44    cmd=info-getjobattr;key=PMI_process_mapping;",
            b"    76cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2),(1,1,1));",
        ),
        (
            b"37    cmd=info-getjobattr;key=universeSize;",
            b"    46cmd=info-getjobattr-response;found=FALSE;rc=0;",
        ),
    ];

    fn env() -> PmiEnv {
        PmiEnv {
            fd: Some("9".into()),
            rank: Some("1".into()),
            jobid: Some("77.0".into()),
            ..PmiEnv::default()
        }
    }

    #[test]
    fn full_session_byte_for_byte() {
        let mut script = START.to_vec();
        script.extend_from_slice(&[
            (
                b"31    cmd=kvs-put;key=card-1;value=x;",
                b"    26cmd=kvs-put-response;rc=0;",
            ),
            (
                b"14    cmd=kvs-fence;",
                b"    28cmd=kvs-fence-response;rc=0;",
            ),
            (
                b"46    cmd=kvs-get;jobid=kvs_9_0;srcid=-1;key=card-0;",
                b"    45cmd=kvs-get-response;found=TRUE;value=y;rc=0;",
            ),
            (
                b"44    cmd=kvs-get;jobid=kvs_9_0;srcid=-1;key=nope;",
                b"    38cmd=kvs-get-response;rc=0;found=FALSE;",
            ),
            (b"13    cmd=finalize;", b"    27cmd=finalize-response;rc=0;"),
        ]);
        let (client, server) = serve(script);
        let mut pmi = Pmi2::over(Box::new(client), &env()).unwrap();
        assert_eq!((pmi.rank(), pmi.size(), pmi.appnum()), (1, 3, 0));
        assert_eq!(pmi.jobid(), "kvs_9_0");
        assert_eq!(pmi.node_of_rank(), &[0, 0, 1]);
        assert_eq!(pmi.local_ranks(), vec![0, 1]);
        assert_eq!(pmi.info().universe_size, None);
        pmi.put("card-1", "x").unwrap();
        pmi.fence().unwrap();
        assert_eq!(pmi.get("card-0").unwrap().as_deref(), Some("y"));
        assert_eq!(pmi.get("nope").unwrap(), None);
        pmi.finalize().unwrap();
        assert!(pmi.fence().is_err());
        drop(pmi);
        assert!(server.join().unwrap().is_empty());
    }

    #[test]
    fn fullinit_without_jobid_and_abort() {
        let mut script = START.to_vec();
        script[1].0 = b"38    cmd=fullinit;pmirank=1;threaded=FALSE;";
        let (client, server) = serve(script);
        let env = PmiEnv {
            jobid: None,
            ..env()
        };
        let mut pmi = Pmi2::over(Box::new(client), &env).unwrap();
        pmi.abort(2, "a;b").unwrap();
        drop(pmi);
        let rest = server.join().unwrap();
        assert_eq!(
            String::from_utf8(rest).unwrap(),
            "44    cmd=abort;isworld=TRUE;msg=exit code 2: a,b;"
        );
    }

    #[test]
    fn failures_are_errors() {
        let mut script = START[..2].to_vec();
        script[1].1 = b"    42cmd=fullinit-response;rc=1;errmsg=no-such;";
        let (client, server) = serve(script);
        let err = Pmi2::over(Box::new(client), &env())
            .unwrap_err()
            .to_string();
        assert!(err.contains("fullinit") && err.contains("no-such"), "{err}");
        server.join().unwrap();

        let mut script = START.to_vec();
        script.push((
            b"31    cmd=kvs-put;key=card-1;value=x;",
            b"    26cmd=kvs-get-response;rc=0;",
        ));
        let (client, server) = serve(script);
        let mut pmi = Pmi2::over(Box::new(client), &env()).unwrap();
        let err = pmi.put("card-1", "x").unwrap_err().to_string();
        assert!(err.contains("kvs-put-response"), "{err}");
        let err = pmi.put("k", "a;b").unwrap_err().to_string();
        assert!(err.contains("';'"), "{err}");
        drop(pmi);
        server.join().unwrap();
    }
}
