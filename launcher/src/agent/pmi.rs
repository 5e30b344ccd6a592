//! The PMI server side of one host agent: PMI-1 and PMI-2 sessions with its
//! local ranks, a replica of the job's key-value space, and local fences.
//!
//! A fence costs one message per host to the controller and one back, so a
//! job-wide fence is O(hosts) messages, never O(ranks^2). Any message that is
//! malformed, oversized or out of protocol is a [`Violation`] that ends the job.

use std::collections::HashMap;

use oxmpi::bootstrap::spawn_wire::SpawnRequest;
use oxmpi::bootstrap::wire::{framed, line, Command, FrameReader, Framing, WireError};

use crate::proto::{NameOp, PmiState};

/// Limits advertised by `get_maxes` and enforced on puts.
pub const KVSNAME_MAX: usize = 256;
/// Longest key.
pub const KEYLEN_MAX: usize = 64;
/// Longest value.
pub const VALLEN_MAX: usize = 1024;

/// A rank broke the protocol; the message says how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

/// Facts about the job every session can answer.
#[derive(Debug, Clone)]
pub struct JobFacts {
    /// kvs name / PMI-2 job id.
    pub jobid: String,
    /// Ranks in the job.
    pub size: u32,
    /// `PMI_process_mapping`.
    pub process_mapping: String,
}

/// What the agent must do after a message was handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing beyond the replies already queued.
    None,
    /// The rank entered the fence (barrier_in / kvs-fence).
    Fence,
    /// The rank asked the job's name service; the answer comes back
    /// through [`Session::name_result`].
    Name(NameOp),
    /// The rank asked to start a new job (`MPI_Comm_spawn`); the answer
    /// goes back through [`Session::spawn_result`].
    Spawn(SpawnRequest),
    /// The rank asked to abort the job.
    Abort {
        /// Exit code requested.
        code: i32,
        /// Its message.
        message: String,
    },
}

/// The agent's view of the key-value space.
#[derive(Debug, Default)]
pub struct Store {
    /// Entries known job-wide (after fences) plus this host's own puts.
    kvs: HashMap<String, String>,
    /// This host's puts since the last fence, to send to the controller.
    pub unfenced: Vec<(String, String)>,
    /// PMI-2 node attributes (this host only).
    node_attrs: HashMap<String, String>,
}

impl Store {
    /// Adds the entries of a completed fence.
    pub fn absorb(&mut self, entries: Vec<(String, String)>) {
        self.kvs.extend(entries);
    }

    fn put(&mut self, key: &str, value: &str) {
        self.kvs.insert(key.to_string(), value.to_string());
        self.unfenced.push((key.to_string(), value.to_string()));
    }
}

/// One rank's PMI connection state.
#[derive(Debug)]
pub struct Session {
    /// Global rank.
    pub rank: u32,
    reader: FrameReader,
    /// 0 before init, else 1 or 2.
    version: u8,
    /// PMI progress.
    pub state: PmiState,
    /// Waiting in a fence.
    pub in_fence: bool,
    /// PMI-2 node-attribute gets waiting for a put (`wait=TRUE`).
    waiting_node_attrs: Vec<String>,
    /// A name-service request waiting for the controller's answer.
    waiting_name: Option<NameOp>,
    /// PMI-1 spawn segments received so far (`mcmd=spawn`), if any.
    spawn_segments: Option<SpawnRequest>,
    /// A spawn waiting for its result.
    waiting_spawn: bool,
    /// Replies to send.
    pub replies: Vec<u8>,
}

fn encode_reply(version: u8, cmd: &Command) -> Vec<u8> {
    // Our own replies only carry values that passed validation, so encoding
    // cannot fail; fall back to an rc=-1 reply rather than panic.
    let encoded = if version == 2 {
        framed::encode(cmd)
    } else {
        line::encode(cmd)
    };
    encoded.unwrap_or_else(|e| {
        let fallback = Command::new(cmd.name.clone())
            .with("rc", -1)
            .with("msg", format!("{e}").replace([' ', ';'], "_"));
        if version == 2 {
            framed::encode(&fallback)
        } else {
            line::encode(&fallback)
        }
        .unwrap_or_default()
    })
}

fn bool_word(b: bool) -> &'static str {
    if b {
        "TRUE"
    } else {
        "FALSE"
    }
}

impl Session {
    /// A session for `rank`, before init.
    pub fn new(rank: u32) -> Self {
        Session {
            rank,
            reader: FrameReader::new(),
            version: 0,
            state: PmiState::Silent,
            in_fence: false,
            waiting_node_attrs: Vec::new(),
            waiting_name: None,
            spawn_segments: None,
            waiting_spawn: false,
            replies: Vec::new(),
        }
    }

    fn reply(&mut self, cmd: Command) {
        let bytes = encode_reply(self.version.max(1), &cmd);
        self.replies.extend_from_slice(&bytes);
    }

    /// Feeds bytes from the rank; handles every complete message and returns
    /// the effects in order.
    pub fn receive(
        &mut self,
        bytes: &[u8],
        job: &JobFacts,
        store: &mut Store,
    ) -> Result<Vec<Effect>, Violation> {
        self.reader.push(bytes);
        let mut effects = Vec::new();
        loop {
            let cmd = match self.reader.next_command() {
                Ok(Some(cmd)) => cmd,
                Ok(None) => return Ok(effects),
                Err(e) => return Err(self.violation(format!("{e}"))),
            };
            if self.in_fence {
                return Err(self.violation(format!("sent {:?} while waiting in a fence", cmd.name)));
            }
            if self.waiting_name.is_some() || self.waiting_spawn {
                return Err(self.violation(format!(
                    "sent {:?} while waiting for the name service",
                    cmd.name
                )));
            }
            let effect = match self.version {
                0 => self.init(&cmd)?,
                1 => self.pmi1(&cmd, job, store)?,
                _ => self.pmi2(&cmd, job, store)?,
            };
            if effect == Effect::Fence {
                self.in_fence = true;
            }
            if let Effect::Name(op) = &effect {
                self.waiting_name = Some(op.clone());
            }
            if let Effect::Spawn(_) = &effect {
                self.waiting_spawn = true;
            }
            if effect != Effect::None {
                effects.push(effect);
            }
        }
    }

    fn violation(&self, what: String) -> Violation {
        Violation(format!("rank {} broke the PMI protocol: {what}", self.rank))
    }

    fn wire(&self, e: WireError) -> Violation {
        self.violation(e.to_string())
    }

    fn init(&mut self, cmd: &Command) -> Result<Effect, Violation> {
        if cmd.name != "init" {
            return Err(self.violation(format!("expected cmd=init first, got cmd={}", cmd.name)));
        }
        let version: u8 = cmd.require_int("pmi_version").map_err(|e| self.wire(e))?;
        match version {
            1 => {
                self.version = 1;
                self.reply(
                    Command::new("response_to_init")
                        .with("pmi_version", 1)
                        .with("pmi_subversion", 1)
                        .with("rc", 0),
                );
            }
            2 => {
                self.version = 1; // the init answer itself is still a PMI-1 line
                self.reply(
                    Command::new("response_to_init")
                        .with("pmi_version", 2)
                        .with("pmi_subversion", 0)
                        .with("rc", 0),
                );
                self.version = 2;
                self.reader.set_framing(Framing::LengthPrefixed);
            }
            v => return Err(self.violation(format!("unsupported pmi_version={v}"))),
        }
        self.state = PmiState::Initialized;
        Ok(Effect::None)
    }

    fn check_put(&self, key: &str, value: &str) -> Result<(), Violation> {
        if key.is_empty() || key.len() > KEYLEN_MAX {
            return Err(self.violation(format!("put key {key:?} must be 1..{KEYLEN_MAX} bytes")));
        }
        if value.len() > VALLEN_MAX {
            return Err(self.violation(format!(
                "put value for key {key:?} has {} bytes, limit {VALLEN_MAX}",
                value.len()
            )));
        }
        Ok(())
    }

    fn check_kvsname(&self, cmd: &Command, job: &JobFacts) -> Result<(), Violation> {
        let name = cmd.require("kvsname").map_err(|e| self.wire(e))?;
        if name != job.jobid {
            return Err(self.violation(format!(
                "kvsname={name:?} is not this job's ({:?})",
                job.jobid
            )));
        }
        Ok(())
    }

    fn lookup<'a>(key: &str, job: &'a JobFacts, store: &'a Store) -> Option<&'a str> {
        if key == "PMI_process_mapping" {
            return Some(&job.process_mapping);
        }
        if key == oxmpi::bootstrap::spawn_wire::SPAWN_KEY {
            return Some("1");
        }
        store.kvs.get(key).map(|s| s.as_str())
    }

    fn pmi1(
        &mut self,
        cmd: &Command,
        job: &JobFacts,
        store: &mut Store,
    ) -> Result<Effect, Violation> {
        if self.state == PmiState::Finalized {
            return Err(self.violation(format!("sent cmd={} after finalize", cmd.name)));
        }
        match cmd.name.as_str() {
            "get_maxes" => self.reply(
                Command::new("maxes")
                    .with("kvsname_max", KVSNAME_MAX)
                    .with("keylen_max", KEYLEN_MAX)
                    .with("vallen_max", VALLEN_MAX),
            ),
            "get_appnum" => self.reply(Command::new("appnum").with("appnum", 0)),
            "get_universe_size" => self.reply(Command::new("universe_size").with("size", job.size)),
            "get_my_kvsname" => self.reply(Command::new("my_kvsname").with("kvsname", &job.jobid)),
            "put" => {
                self.check_kvsname(cmd, job)?;
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let value = cmd.require("value").map_err(|e| self.wire(e))?;
                self.check_put(key, value)?;
                store.put(key, value);
                self.reply(
                    Command::new("put_result")
                        .with("rc", 0)
                        .with("msg", "success"),
                );
            }
            "get" => {
                self.check_kvsname(cmd, job)?;
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let reply = match Self::lookup(key, job, store) {
                    Some(v) => Command::new("get_result")
                        .with("rc", 0)
                        .with("msg", "success")
                        .with("value", v),
                    None => Command::new("get_result")
                        .with("rc", -1)
                        .with("msg", format!("key_{key}_not_found"))
                        .with("value", "unknown"),
                };
                self.reply(reply);
            }
            "barrier_in" => return Ok(Effect::Fence),
            "publish_name" | "unpublish_name" | "lookup_name" => {
                return self.name_op(cmd, "service", "port")
            }
            "spawn" => {
                let req = self
                    .spawn_segments
                    .get_or_insert_with(SpawnRequest::default);
                let (so_far, total) = req.add_pmi1_segment(cmd).map_err(|e| self.wire(e))?;
                if so_far >= total {
                    let req = self.spawn_segments.take().unwrap_or_default();
                    return Ok(Effect::Spawn(req));
                }
            }
            "finalize" => {
                self.state = PmiState::Finalized;
                self.reply(Command::new("finalize_ack"));
            }
            "abort" => {
                return Ok(self.abort(cmd.get("exitcode"), cmd.get("message").or(cmd.get("msg"))))
            }
            "init" => return Err(self.violation("sent cmd=init twice".into())),
            other => return Err(self.violation(format!("unsupported PMI-1 command cmd={other}"))),
        }
        Ok(Effect::None)
    }

    fn abort(&self, code: Option<&str>, message: Option<&str>) -> Effect {
        Effect::Abort {
            code: code.and_then(|c| c.trim().parse().ok()).unwrap_or(1),
            message: message.unwrap_or("").to_string(),
        }
    }

    fn pmi2(
        &mut self,
        cmd: &Command,
        job: &JobFacts,
        store: &mut Store,
    ) -> Result<Effect, Violation> {
        if self.state == PmiState::Finalized {
            return Err(self.violation(format!("sent cmd={} after finalize", cmd.name)));
        }
        let response = format!("{}-response", cmd.name);
        match cmd.name.as_str() {
            "fullinit" => {
                let rank: u32 = cmd.require_int("pmirank").map_err(|e| self.wire(e))?;
                if rank != self.rank {
                    return Err(self.violation(format!("fullinit claims pmirank={rank}")));
                }
                self.reply(
                    Command::new(response)
                        .with("pmi-version", 2)
                        .with("pmi-subversion", 0)
                        .with("rank", self.rank)
                        .with("size", job.size)
                        .with("appnum", 0)
                        .with("debugged", "FALSE")
                        .with("pmiverbose", "FALSE")
                        .with("rc", 0),
                );
            }
            "job-getid" => self.reply(
                Command::new(response)
                    .with("rc", 0)
                    .with("jobid", &job.jobid),
            ),
            "kvs-put" => {
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let value = cmd.require("value").map_err(|e| self.wire(e))?;
                self.check_put(key, value)?;
                store.put(key, value);
                self.reply(Command::new(response).with("rc", 0));
            }
            "kvs-get" => {
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let reply = match Self::lookup(key, job, store) {
                    Some(v) => Command::new(response)
                        .with("rc", 0)
                        .with("found", "TRUE")
                        .with("value", v),
                    None => Command::new(response).with("rc", 0).with("found", "FALSE"),
                };
                self.reply(reply);
            }
            "kvs-fence" => return Ok(Effect::Fence),
            "name-publish" | "name-unpublish" | "name-lookup" => {
                return self.name_op(cmd, "name", "port")
            }
            "spawn" => {
                let req = SpawnRequest::from_pmi2(cmd).map_err(|e| self.wire(e))?;
                return Ok(Effect::Spawn(req));
            }
            "info-getjobattr" => {
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let value = match key {
                    "PMI_process_mapping" => Some(job.process_mapping.clone()),
                    "universeSize" => Some(job.size.to_string()),
                    _ => None,
                };
                let mut reply = Command::new(response)
                    .with("rc", 0)
                    .with("found", bool_word(value.is_some()));
                if let Some(v) = value {
                    reply = reply.with("value", v);
                }
                self.reply(reply);
            }
            "info-putnodeattr" => {
                let key = cmd.require("key").map_err(|e| self.wire(e))?;
                let value = cmd.require("value").map_err(|e| self.wire(e))?;
                self.check_put(key, value)?;
                store.node_attrs.insert(key.to_string(), value.to_string());
                self.reply(Command::new(response).with("rc", 0));
            }
            "info-getnodeattr" => {
                let key = cmd.require("key").map_err(|e| self.wire(e))?.to_string();
                let wait = cmd.get("wait") == Some("TRUE");
                match store.node_attrs.get(&key) {
                    Some(v) => {
                        let reply = Command::new(response)
                            .with("rc", 0)
                            .with("found", "TRUE")
                            .with("value", v);
                        self.reply(reply);
                    }
                    None if wait => self.waiting_node_attrs.push(key),
                    None => self.reply(Command::new(response).with("rc", 0).with("found", "FALSE")),
                }
            }
            "finalize" => {
                self.state = PmiState::Finalized;
                self.reply(Command::new(response).with("rc", 0));
            }
            "abort" => return Ok(self.abort(cmd.get("exitcode"), cmd.get("msg"))),
            other => return Err(self.violation(format!("unsupported PMI-2 command cmd={other}"))),
        }
        Ok(Effect::None)
    }

    /// A name-service request: the service under key `service_key`, the
    /// port (of a publish) under `port_key`.
    fn name_op(
        &self,
        cmd: &Command,
        service_key: &str,
        port_key: &str,
    ) -> Result<Effect, Violation> {
        let service = cmd.require(service_key).map_err(|e| self.wire(e))?;
        if service.is_empty() || service.len() > VALLEN_MAX {
            return Err(self.violation(format!(
                "service name of {} bytes: must be 1..{VALLEN_MAX}",
                service.len()
            )));
        }
        let service = service.to_string();
        let op = match cmd.name.as_str() {
            "publish_name" | "name-publish" => {
                let port = cmd.require(port_key).map_err(|e| self.wire(e))?;
                if port.len() > VALLEN_MAX {
                    return Err(self.violation(format!(
                        "port name of {} bytes: limit {VALLEN_MAX}",
                        port.len()
                    )));
                }
                NameOp::Publish {
                    service,
                    port: port.to_string(),
                }
            }
            "unpublish_name" | "name-unpublish" => NameOp::Unpublish { service },
            _ => NameOp::Lookup { service },
        };
        Ok(Effect::Name(op))
    }

    /// Answers the waiting spawn: started (`Ok`) or why not.
    pub fn spawn_result(&mut self, outcome: Result<(), String>) {
        if !std::mem::take(&mut self.waiting_spawn) {
            return;
        }
        let rc = if outcome.is_ok() { 0 } else { -1 };
        let name = if self.version == 2 {
            "spawn-response"
        } else {
            "spawn_result"
        };
        let mut reply = Command::new(name).with("rc", rc);
        if let Err(why) = outcome {
            let key = if self.version == 2 { "errmsg" } else { "msg" };
            reply = reply.with(key, why.replace([';', '\n'], ","));
        }
        self.reply(reply);
    }

    /// Answers the waiting name-service request: `ok` (published,
    /// unpublished, found) and the port a lookup found.
    pub fn name_result(&mut self, ok: bool, port: &str) {
        let Some(op) = self.waiting_name.take() else {
            return;
        };
        let rc = if ok { 0 } else { -1 };
        let (pmi1, pmi2, why) = match &op {
            NameOp::Publish { .. } => ("publish_result", "name-publish", "already_published"),
            NameOp::Unpublish { .. } => ("unpublish_result", "name-unpublish", "not_published"),
            NameOp::Lookup { .. } => ("lookup_result", "name-lookup", "not_published"),
        };
        let looked_up = matches!(op, NameOp::Lookup { .. }) && ok;
        let reply = if self.version == 2 {
            let mut c = Command::new(format!("{pmi2}-response")).with("rc", rc);
            if looked_up {
                c = c.with("value", port);
            } else if !ok {
                c = c.with("errmsg", format!("service_{why}"));
            }
            c
        } else {
            let info = if ok {
                "ok".to_string()
            } else {
                format!("service_{why}")
            };
            let mut c = Command::new(pmi1).with("rc", rc).with("info", info);
            if looked_up {
                c = c.with("port", port);
            }
            c
        };
        self.reply(reply);
    }

    /// Answers node-attribute gets that were waiting for a put.
    pub fn retry_node_attrs(&mut self, store: &Store) {
        let waiting = std::mem::take(&mut self.waiting_node_attrs);
        for key in waiting {
            match store.node_attrs.get(&key) {
                Some(v) => {
                    let reply = Command::new("info-getnodeattr-response")
                        .with("rc", 0)
                        .with("found", "TRUE")
                        .with("value", v);
                    self.reply(reply);
                }
                None => self.waiting_node_attrs.push(key),
            }
        }
    }

    /// Ends this rank's fence, queuing the protocol's answer.
    pub fn release_fence(&mut self) {
        self.in_fence = false;
        if self.version == 2 {
            self.reply(Command::new("kvs-fence-response").with("rc", 0));
        } else {
            self.reply(Command::new("barrier_out"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobFacts {
        JobFacts {
            jobid: "kvs_7_0".into(),
            size: 2,
            process_mapping: "(vector,(0,1,2))".into(),
        }
    }

    fn talk(s: &mut Session, store: &mut Store, bytes: &[u8]) -> (Vec<Effect>, String) {
        let effects = s.receive(bytes, &job(), store).unwrap();
        let out = String::from_utf8(std::mem::take(&mut s.replies)).unwrap();
        (effects, out)
    }

    #[test]
    fn pmi1_exchange_byte_for_byte() {
        let mut s = Session::new(0);
        let mut st = Store::default();
        let (_, out) = talk(&mut s, &mut st, b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\ncmd=get_appnum\ncmd=get_my_kvsname\ncmd=get_universe_size\n");
        assert_eq!(out, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\ncmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\ncmd=appnum appnum=0\ncmd=my_kvsname kvsname=kvs_7_0\ncmd=universe_size size=2\n");
        let (_, out) = talk(&mut s, &mut st, b"cmd=put kvsname=kvs_7_0 key=k value=v\ncmd=get kvsname=kvs_7_0 key=k\ncmd=get kvsname=kvs_7_0 key=nope\ncmd=get kvsname=kvs_7_0 key=PMI_process_mapping\n");
        assert_eq!(out, "cmd=put_result rc=0 msg=success\ncmd=get_result rc=0 msg=success value=v\ncmd=get_result rc=-1 msg=key_nope_not_found value=unknown\ncmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n");
        let (eff, out) = talk(&mut s, &mut st, b"cmd=barrier_in\n");
        assert_eq!((eff, out.as_str()), (vec![Effect::Fence], ""));
        s.release_fence();
        let (_, out) = talk(&mut s, &mut st, b"cmd=finalize\n");
        assert_eq!(out, "cmd=barrier_out\ncmd=finalize_ack\n");
        assert_eq!(s.state, PmiState::Finalized);
    }

    #[test]
    fn name_service_requests_wait_for_the_answer() {
        let mut s = Session::new(0);
        let mut st = Store::default();
        talk(
            &mut s,
            &mut st,
            b"cmd=init pmi_version=1 pmi_subversion=1\n",
        );
        let (effects, out) = talk(
            &mut s,
            &mut st,
            b"cmd=publish_name service=svc port=oxmpi-port:j:0:1\n",
        );
        let publish = NameOp::Publish {
            service: "svc".into(),
            port: "oxmpi-port:j:0:1".into(),
        };
        assert_eq!((effects, out.as_str()), (vec![Effect::Name(publish)], ""));
        let early = s.receive(b"cmd=get_appnum\n", &job(), &mut st).unwrap_err();
        assert!(
            early.0.contains("waiting for the name service"),
            "{early:?}"
        );
        s.name_result(true, "");
        assert_eq!(
            String::from_utf8(std::mem::take(&mut s.replies)).unwrap(),
            "cmd=publish_result rc=0 info=ok\n"
        );

        let mut s = Session::new(1);
        talk(
            &mut s,
            &mut st,
            b"cmd=init pmi_version=1 pmi_subversion=1\n",
        );
        let (effects, _) = talk(&mut s, &mut st, b"cmd=lookup_name service=svc\n");
        assert_eq!(
            effects,
            vec![Effect::Name(NameOp::Lookup {
                service: "svc".into()
            })]
        );
        s.name_result(true, "oxmpi-port:j:0:1");
        let (_, out) = talk(&mut s, &mut st, b"");
        assert_eq!(
            out,
            "cmd=lookup_result rc=0 info=ok port=oxmpi-port:j:0:1\n"
        );

        let mut s = Session::new(1);
        talk(
            &mut s,
            &mut st,
            b"cmd=init pmi_version=2 pmi_subversion=0\n",
        );
        let msg = |body: &str| format!("{:<6}{body}", body.len());
        let (effects, _) = talk(
            &mut s,
            &mut st,
            msg("cmd=name-unpublish;name=svc;").as_bytes(),
        );
        assert_eq!(
            effects,
            vec![Effect::Name(NameOp::Unpublish {
                service: "svc".into()
            })]
        );
        s.name_result(false, "");
        let (_, out) = talk(&mut s, &mut st, b"");
        assert_eq!(
            out,
            msg("cmd=name-unpublish-response;rc=-1;errmsg=service_not_published;")
        );
    }

    #[test]
    fn pmi2_exchange_byte_for_byte() {
        let mut s = Session::new(1);
        let mut st = Store::default();
        let (_, out) = talk(
            &mut s,
            &mut st,
            b"cmd=init pmi_version=2 pmi_subversion=0\n",
        );
        assert_eq!(
            out,
            "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"
        );
        let msg = |body: &str| format!("{:<6}{body}", body.len());
        let input = [
            msg("cmd=fullinit;pmirank=1;"),
            msg("cmd=job-getid;"),
            msg("cmd=kvs-put;key=a;value=1;"),
            msg("cmd=kvs-get;jobid=kvs_7_0;srcid=-1;key=a;"),
            msg("cmd=kvs-get;jobid=kvs_7_0;srcid=-1;key=b;"),
            msg("cmd=info-getjobattr;key=PMI_process_mapping;"),
        ]
        .concat();
        let (_, out) = talk(&mut s, &mut st, input.as_bytes());
        let expected = [
            msg("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
            msg("cmd=job-getid-response;rc=0;jobid=kvs_7_0;"),
            msg("cmd=kvs-put-response;rc=0;"),
            msg("cmd=kvs-get-response;rc=0;found=TRUE;value=1;"),
            msg("cmd=kvs-get-response;rc=0;found=FALSE;"),
            msg("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));"),
        ]
        .concat();
        assert_eq!(out, expected);
        assert_eq!(st.unfenced, vec![("a".to_string(), "1".to_string())]);
    }

    #[test]
    fn protocol_violations_are_reported() {
        let bad = |bytes: &[u8]| {
            let mut s = Session::new(3);
            s.receive(bytes, &job(), &mut Store::default())
                .unwrap_err()
                .0
        };
        assert!(bad(b"cmd=get_maxes\n").contains("expected cmd=init first"));
        assert!(bad(b"cmd=init pmi_version=9\n").contains("unsupported pmi_version=9"));
        assert!(bad(b"garbage\n").contains("rank 3 broke the PMI protocol"));
        assert!(
            bad(b"cmd=init pmi_version=1\ncmd=put kvsname=other key=k value=v\n")
                .contains("not this job")
        );
        let long_key = format!(
            "cmd=init pmi_version=1\ncmd=put kvsname=kvs_7_0 key={} value=v\n",
            "k".repeat(65)
        );
        assert!(bad(long_key.as_bytes()).contains("must be 1..64 bytes"));
        assert!(
            bad(b"cmd=init pmi_version=1\ncmd=barrier_in\ncmd=get_maxes\n")
                .contains("while waiting in a fence")
        );
        assert!(bad(b"cmd=init pmi_version=1\ncmd=spawn\n").contains("lacks the key"));
        assert!(bad(b"cmd=init pmi_version=1\ncmd=connect\n").contains("unsupported PMI-1 command"));
        let mut oversized = b"cmd=init pmi_version=1\n".to_vec();
        oversized.extend(std::iter::repeat_n(b'x', 70_000));
        assert!(bad(&oversized).contains("exceeds the limit"));
    }

    #[test]
    fn abort_carries_code_and_message() {
        let mut s = Session::new(0);
        let eff = s
            .receive(
                b"cmd=init pmi_version=1\ncmd=abort exitcode=7 message=bye\\ now\n",
                &job(),
                &mut Store::default(),
            )
            .unwrap();
        assert_eq!(
            eff,
            vec![Effect::Abort {
                code: 7,
                message: "bye now".into()
            }]
        );
    }
}
