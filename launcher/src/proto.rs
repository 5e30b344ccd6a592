//! The controller <-> agent protocol (one stream per host: a socketpair for
//! this host, TCP for others).
//!
//! Frame: `u32` little-endian payload length, then the payload: one tag byte
//! and the fields in declaration order. Integers are little-endian; strings
//! and byte strings are a `u32` length and the bytes; lists are a `u32` count
//! and the items. Frames above [`MAX_FRAME`] are refused, so a hostile peer
//! cannot make either side allocate without bound. Fuzzed in `launcher/fuzz`.

use std::time::Duration;

use thiserror::Error;

/// How often the controller and each remote agent send a heartbeat frame to
/// each other. Both event loops send one on this timer whatever else they
/// send; any frame from the peer counts as a sign of life.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_millis(500);

/// How long a remote link may stay silent, while TCP retransmits on it, before
/// its peer is declared lost (a cut link otherwise goes unnoticed: TCP just
/// waits). Four intervals; a stopped or slow rank never matters, since
/// heartbeats come from the agent. See `liveness`.
pub const HEARTBEAT_LIMIT: Duration = Duration::from_secs(2);

/// How long a peer whose kernel still acknowledges what we send (reachable,
/// its process not scheduled on a loaded machine, or stuck) may stay silent
/// before it is declared lost. See `liveness`.
pub const HEARTBEAT_STALL_LIMIT: Duration = Duration::from_secs(10);

/// Largest payload accepted.
pub const MAX_FRAME: usize = 16 << 20;

/// A decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtoError {
    /// Frame length over the limit.
    #[error("frame of {0} bytes exceeds the limit of {MAX_FRAME}")]
    TooLarge(usize),
    /// The payload ends early or has bytes left over.
    #[error("truncated or padded frame (tag {0})")]
    BadLength(u8),
    /// Unknown tag.
    #[error("unknown message tag {0}")]
    UnknownTag(u8),
    /// A string is not UTF-8.
    #[error("string field is not UTF-8")]
    NotUtf8,
}

/// Do not bind ranks.
pub const BIND_NONE: u8 = 0;
/// Bind each rank to one core, round-robin.
pub const BIND_CORE: u8 = 1;
/// Bind to cores when the host has at least one core per rank and runs more than one rank.
pub const BIND_AUTO: u8 = 2;

impl LaunchSpec {
    /// Tells the ranks which address of their host the other hosts reach
    /// it at (the runtime opens its fabric endpoint on the interface that
    /// holds it, `OXMPI_OFI_ADDR`), replacing any value inherited from
    /// oxrun's environment, which is another host's.
    pub fn place_fabric(&mut self, ip: std::net::IpAddr) {
        if ip.is_unspecified() {
            return;
        }
        let key = oxmpi::config::OFI_ADDR.entry.env;
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), ip.to_string()));
    }
}

/// What the controller tells one host agent to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchSpec {
    /// PMI job id / kvs name.
    pub jobid: String,
    /// Ranks in the job.
    pub size: u32,
    /// Program path as given.
    pub program: String,
    /// Program arguments.
    pub args: Vec<String>,
    /// Full environment for the ranks (before per-rank PMI variables).
    pub env: Vec<(String, String)>,
    /// Working directory.
    pub cwd: String,
    /// Global ranks this agent runs, ascending.
    pub ranks: Vec<u32>,
    /// `PMI_process_mapping` value.
    pub process_mapping: String,
    /// Binding policy: [`BIND_NONE`], [`BIND_CORE`] or [`BIND_AUTO`].
    pub bind: u8,
    /// This agent's host runs rank 0 and receives oxrun's stdin for it.
    pub forward_stdin: bool,
    /// oxrun's launch command (`--launcher-cmd`), which the jobs the ranks
    /// spawn use to reach other hosts.
    pub launcher_cmd: String,
}

/// Messages from the controller to an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToAgent {
    /// Start the ranks.
    Launch(LaunchSpec),
    /// Every rank reached the fence; these are all entries put since the previous one.
    FenceDone(Vec<(String, String)>),
    /// Bytes for rank 0's stdin.
    Stdin(Vec<u8>),
    /// oxrun's stdin reached end of file.
    StdinEof,
    /// Deliver this signal to every rank.
    Signal(i32),
    /// Kill every rank now (SIGTERM, then SIGKILL after a short grace).
    Kill,
    /// The controller is alive (remote agents only; see [`HEARTBEAT_INTERVAL`]).
    Heartbeat,
    /// The answer to a rank's [`ToController::Name`] request.
    NameResult {
        /// Global rank that asked.
        rank: u32,
        /// Whether it succeeded (published, unpublished, found).
        ok: bool,
        /// The port found by a lookup (empty otherwise).
        port: String,
    },
}

/// A request to the job's name service (`MPI_Publish_name` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameOp {
    /// Publish `port` under `service` (fails if the service is published).
    Publish {
        /// Service name.
        service: String,
        /// Port name.
        port: String,
    },
    /// Withdraw `service` (fails if it is not published).
    Unpublish {
        /// Service name.
        service: String,
    },
    /// Find the port published under `service`.
    Lookup {
        /// Service name.
        service: String,
    },
}

/// How a rank ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// How far a rank got with PMI when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PmiState {
    /// Never spoke PMI (not an MPI program, or died before init).
    Silent = 0,
    /// Initialized, not finalized.
    Initialized = 1,
    /// Finalized.
    Finalized = 2,
}

/// Messages from an agent to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToController {
    /// First message on a TCP connection: who is calling and the job secret.
    Hello {
        /// Host name the controller used.
        host: String,
        /// The per-job secret.
        secret: String,
    },
    /// A rank's process started.
    Started {
        /// Global rank.
        rank: u32,
        /// Its pid on the agent's host.
        pid: i32,
    },
    /// Every local rank entered the fence; entries put since the previous fence.
    Fence(Vec<(String, String)>),
    /// Complete output lines (or a final partial line) of one rank.
    Output {
        /// Global rank.
        rank: u32,
        /// 1 stdout, 2 stderr.
        stream: u8,
        /// The bytes.
        data: Vec<u8>,
    },
    /// A rank ended.
    Exited {
        /// Global rank.
        rank: u32,
        /// How.
        how: ExitKind,
        /// PMI progress at that time.
        pmi: PmiState,
    },
    /// A rank called PMI abort.
    Abort {
        /// Global rank.
        rank: u32,
        /// Requested exit code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// A rank broke the PMI protocol, the agent could not start it, or a
    /// job it spawned failed.
    Failed {
        /// Global rank.
        rank: u32,
        /// The exit status oxrun should end with (a spawned job's own).
        code: i32,
        /// What went wrong.
        reason: String,
    },
    /// All local ranks ended and their output was forwarded.
    Done,
    /// The agent is alive (remote agents only; see [`HEARTBEAT_INTERVAL`]).
    Heartbeat,
    /// A rank asks the name service (answered by [`ToAgent::NameResult`]).
    Name {
        /// Global rank.
        rank: u32,
        /// What it asks.
        op: NameOp,
    },
}

struct Writer(Vec<u8>);

impl Writer {
    fn new(tag: u8) -> Self {
        Writer(vec![0, 0, 0, 0, tag])
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|s| self.str(s));
    }
    fn pairs(&mut self, v: &[(String, String)]) {
        self.u32(v.len() as u32);
        for (k, val) in v {
            self.str(k);
            self.str(val);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    tag: u8,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        if self.buf.len() < n {
            return Err(ProtoError::BadLength(self.tag));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, ProtoError> {
        Ok(self.take(1)?[0])
    }
    /// A boolean: exactly 0 or 1 (one encoding per value, so frames are canonical).
    fn bool(&mut self) -> Result<bool, ProtoError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(ProtoError::BadLength(self.tag)),
        }
    }
    fn u32(&mut self) -> Result<u32, ProtoError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, ProtoError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, ProtoError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn str(&mut self) -> Result<String, ProtoError> {
        String::from_utf8(self.bytes()?).map_err(|_| ProtoError::NotUtf8)
    }
    /// A list count, bounded by what the remaining bytes could hold.
    fn count(&mut self, min_item: usize) -> Result<usize, ProtoError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item) > self.buf.len() {
            return Err(ProtoError::BadLength(self.tag));
        }
        Ok(n)
    }
    fn strs(&mut self) -> Result<Vec<String>, ProtoError> {
        let n = self.count(4)?;
        (0..n).map(|_| self.str()).collect()
    }
    fn pairs(&mut self) -> Result<Vec<(String, String)>, ProtoError> {
        let n = self.count(8)?;
        (0..n).map(|_| Ok((self.str()?, self.str()?))).collect()
    }
    fn end<T>(self, value: T) -> Result<T, ProtoError> {
        if self.buf.is_empty() {
            Ok(value)
        } else {
            Err(ProtoError::BadLength(self.tag))
        }
    }
}

/// Splits one frame off the front of `buf`: `Ok(Some((payload, consumed)))`,
/// `Ok(None)` when more bytes are needed.
pub fn split_frame(buf: &[u8]) -> Result<Option<(&[u8], usize)>, ProtoError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
    if len > MAX_FRAME {
        return Err(ProtoError::TooLarge(len));
    }
    if buf.len() < 4 + len {
        return Ok(None);
    }
    Ok(Some((&buf[4..4 + len], 4 + len)))
}

fn reader(payload: &[u8]) -> Result<Reader<'_>, ProtoError> {
    let (&tag, rest) = payload.split_first().ok_or(ProtoError::BadLength(0))?;
    Ok(Reader { buf: rest, tag })
}

impl ToAgent {
    /// Encodes as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut w;
        match self {
            ToAgent::Launch(s) => {
                w = Writer::new(1);
                w.str(&s.jobid);
                w.u32(s.size);
                w.str(&s.program);
                w.strs(&s.args);
                w.pairs(&s.env);
                w.str(&s.cwd);
                w.u32(s.ranks.len() as u32);
                s.ranks.iter().for_each(|&r| w.u32(r));
                w.str(&s.process_mapping);
                w.u8(s.bind);
                w.u8(s.forward_stdin as u8);
                w.str(&s.launcher_cmd);
            }
            ToAgent::FenceDone(kv) => {
                w = Writer::new(2);
                w.pairs(kv);
            }
            ToAgent::Stdin(data) => {
                w = Writer::new(3);
                w.bytes(data);
            }
            ToAgent::StdinEof => w = Writer::new(4),
            ToAgent::Signal(sig) => {
                w = Writer::new(5);
                w.i32(*sig);
            }
            ToAgent::Kill => w = Writer::new(6),
            ToAgent::Heartbeat => w = Writer::new(7),
            ToAgent::NameResult { rank, ok, port } => {
                w = Writer::new(8);
                w.u32(*rank);
                w.u8(*ok as u8);
                w.str(port);
            }
        }
        w.finish()
    }

    /// Decodes a frame payload.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtoError> {
        let mut r = reader(payload)?;
        let msg = match r.tag {
            1 => {
                let jobid = r.str()?;
                let size = r.u32()?;
                let program = r.str()?;
                let args = r.strs()?;
                let env = r.pairs()?;
                let cwd = r.str()?;
                let n = r.count(4)?;
                let ranks = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
                let process_mapping = r.str()?;
                let bind = r.u8()?;
                let forward_stdin = r.bool()?;
                let launcher_cmd = r.str()?;
                ToAgent::Launch(LaunchSpec {
                    jobid,
                    size,
                    program,
                    args,
                    env,
                    cwd,
                    ranks,
                    process_mapping,
                    bind,
                    forward_stdin,
                    launcher_cmd,
                })
            }
            2 => ToAgent::FenceDone(r.pairs()?),
            3 => ToAgent::Stdin(r.bytes()?),
            4 => ToAgent::StdinEof,
            5 => ToAgent::Signal(r.i32()?),
            6 => ToAgent::Kill,
            7 => ToAgent::Heartbeat,
            8 => ToAgent::NameResult {
                rank: r.u32()?,
                ok: r.bool()?,
                port: r.str()?,
            },
            t => return Err(ProtoError::UnknownTag(t)),
        };
        r.end(msg)
    }
}

fn exit_kind(r: &mut Reader<'_>) -> Result<ExitKind, ProtoError> {
    match (r.u8()?, r.i32()?) {
        (0, c) => Ok(ExitKind::Code(c)),
        (1, s) => Ok(ExitKind::Signal(s)),
        _ => Err(ProtoError::BadLength(r.tag)),
    }
}

fn pmi_state(v: u8, tag: u8) -> Result<PmiState, ProtoError> {
    match v {
        0 => Ok(PmiState::Silent),
        1 => Ok(PmiState::Initialized),
        2 => Ok(PmiState::Finalized),
        _ => Err(ProtoError::BadLength(tag)),
    }
}

impl ToController {
    /// Encodes as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut w;
        match self {
            ToController::Hello { host, secret } => {
                w = Writer::new(1);
                w.str(host);
                w.str(secret);
            }
            ToController::Started { rank, pid } => {
                w = Writer::new(2);
                w.u32(*rank);
                w.i32(*pid);
            }
            ToController::Fence(kv) => {
                w = Writer::new(3);
                w.pairs(kv);
            }
            ToController::Output { rank, stream, data } => {
                w = Writer::new(4);
                w.u32(*rank);
                w.u8(*stream);
                w.bytes(data);
            }
            ToController::Exited { rank, how, pmi } => {
                w = Writer::new(5);
                w.u32(*rank);
                match how {
                    ExitKind::Code(c) => {
                        w.u8(0);
                        w.i32(*c)
                    }
                    ExitKind::Signal(s) => {
                        w.u8(1);
                        w.i32(*s)
                    }
                }
                w.u8(*pmi as u8);
            }
            ToController::Abort {
                rank,
                code,
                message,
            } => {
                w = Writer::new(6);
                w.u32(*rank);
                w.i32(*code);
                w.str(message);
            }
            ToController::Failed { rank, code, reason } => {
                w = Writer::new(7);
                w.u32(*rank);
                w.i32(*code);
                w.str(reason);
            }
            ToController::Done => w = Writer::new(8),
            ToController::Heartbeat => w = Writer::new(9),
            ToController::Name { rank, op } => {
                w = Writer::new(10);
                w.u32(*rank);
                let (kind, service, port) = match op {
                    NameOp::Publish { service, port } => (0, service, port.as_str()),
                    NameOp::Unpublish { service } => (1, service, ""),
                    NameOp::Lookup { service } => (2, service, ""),
                };
                w.u8(kind);
                w.str(service);
                w.str(port);
            }
        }
        w.finish()
    }

    /// Decodes a frame payload.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtoError> {
        let mut r = reader(payload)?;
        let msg = match r.tag {
            1 => ToController::Hello {
                host: r.str()?,
                secret: r.str()?,
            },
            2 => ToController::Started {
                rank: r.u32()?,
                pid: r.i32()?,
            },
            3 => ToController::Fence(r.pairs()?),
            4 => ToController::Output {
                rank: r.u32()?,
                stream: r.u8()?,
                data: r.bytes()?,
            },
            5 => {
                let rank = r.u32()?;
                let how = exit_kind(&mut r)?;
                let pmi = pmi_state(r.u8()?, 5)?;
                ToController::Exited { rank, how, pmi }
            }
            6 => ToController::Abort {
                rank: r.u32()?,
                code: r.i32()?,
                message: r.str()?,
            },
            7 => ToController::Failed {
                rank: r.u32()?,
                code: r.i32()?,
                reason: r.str()?,
            },
            8 => ToController::Done,
            9 => ToController::Heartbeat,
            10 => {
                let rank = r.u32()?;
                let kind = r.u8()?;
                let service = r.str()?;
                let port = r.str()?;
                let op = match kind {
                    0 => NameOp::Publish { service, port },
                    1 => NameOp::Unpublish { service },
                    2 => NameOp::Lookup { service },
                    _ => return Err(ProtoError::BadLength(10)),
                };
                ToController::Name { rank, op }
            }
            t => return Err(ProtoError::UnknownTag(t)),
        };
        r.end(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_agent(m: ToAgent) {
        let bytes = m.encode();
        let (payload, used) = split_frame(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(ToAgent::decode(payload).unwrap(), m);
    }

    fn round_trip_controller(m: ToController) {
        let bytes = m.encode();
        let (payload, _) = split_frame(&bytes).unwrap().unwrap();
        assert_eq!(ToController::decode(payload).unwrap(), m);
    }

    #[test]
    fn every_message_round_trips() {
        round_trip_agent(ToAgent::Launch(LaunchSpec {
            jobid: "kvs_1_0".into(),
            size: 4,
            program: "/bin/true".into(),
            args: vec!["a".into(), "".into()],
            env: vec![("A".into(), "1".into())],
            cwd: "/tmp".into(),
            ranks: vec![1, 3],
            process_mapping: "(vector,(0,2,1))".into(),
            bind: BIND_AUTO,
            forward_stdin: false,
            launcher_cmd: "ssh -x".into(),
        }));
        round_trip_agent(ToAgent::FenceDone(vec![("k".into(), "v".into())]));
        round_trip_agent(ToAgent::Stdin(b"line\n".to_vec()));
        round_trip_agent(ToAgent::StdinEof);
        round_trip_agent(ToAgent::Signal(15));
        round_trip_agent(ToAgent::Kill);
        round_trip_agent(ToAgent::Heartbeat);
        round_trip_agent(ToAgent::NameResult {
            rank: 3,
            ok: true,
            port: "oxmpi-port:kvs_1_0:3:1".into(),
        });
        round_trip_controller(ToController::Hello {
            host: "h".into(),
            secret: "s".into(),
        });
        round_trip_controller(ToController::Started { rank: 2, pid: 99 });
        round_trip_controller(ToController::Fence(vec![]));
        round_trip_controller(ToController::Output {
            rank: 1,
            stream: 2,
            data: b"x\n".to_vec(),
        });
        round_trip_controller(ToController::Exited {
            rank: 0,
            how: ExitKind::Signal(9),
            pmi: PmiState::Initialized,
        });
        round_trip_controller(ToController::Abort {
            rank: 0,
            code: 7,
            message: "m".into(),
        });
        round_trip_controller(ToController::Failed {
            rank: 0,
            code: 137,
            reason: "r".into(),
        });
        round_trip_controller(ToController::Done);
        round_trip_controller(ToController::Heartbeat);
        for op in [
            NameOp::Publish {
                service: "s".into(),
                port: "p".into(),
            },
            NameOp::Unpublish {
                service: "s".into(),
            },
            NameOp::Lookup {
                service: "s".into(),
            },
        ] {
            round_trip_controller(ToController::Name { rank: 2, op });
        }
    }

    #[test]
    fn hostile_frames_are_refused() {
        assert_eq!(
            split_frame(&[0xff, 0xff, 0xff, 0x7f]),
            Err(ProtoError::TooLarge(0x7fffffff))
        );
        assert!(ToAgent::decode(&[]).is_err());
        assert!(ToAgent::decode(&[99]).is_err());
        // A list claiming four billion entries in a tiny frame.
        assert!(ToAgent::decode(&[2, 0xff, 0xff, 0xff, 0xff]).is_err());
        // Trailing bytes.
        assert!(ToController::decode(&[8, 0]).is_err());
        assert!(ToAgent::decode(&[7, 0]).is_err());
        assert!(ToController::decode(&[9, 0]).is_err());
        assert!(ToController::decode(&[5, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0]).is_err());
    }
}
