//! The host agent: one per host of a job. It starts that host's ranks, serves
//! PMI to them, forwards their output and exit status to the controller, and
//! delivers signals. On this host it is a child of oxrun connected by a
//! socketpair; on other hosts it is started by the launch command and
//! connects back over TCP with the per-job secret.

pub(crate) mod cleanup;
mod output;
pub mod pmi;
mod spawn;
pub mod spawned;

pub use output::label_lines;

use std::io::{self, BufRead};
use std::net::IpAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::cli::ProxyTarget;
use crate::conn::Conn;
use crate::liveness;
use crate::poller::Poller;
use crate::proto::{
    self, ExitKind, LaunchSpec, PmiState, ToAgent, ToController, HEARTBEAT_INTERVAL,
    HEARTBEAT_LIMIT,
};
use pmi::{Effect, JobFacts, Session, Store};

/// How long ranks get between SIGTERM and SIGKILL when the job is ended.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// How long to wait for output pipes after every rank exited (a rank's
/// own children may hold them open).
const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// How long a remote agent waits for its launch request after connecting
/// (oxrun sends it as soon as it has read the hello, so this is generous).
const LAUNCH_WAIT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug)]
enum Token {
    Controller,
    Signals,
    Pmi(usize),
    Out(usize, u8),
    Stdin,
}

struct Rank {
    rank: u32,
    pid: i32,
    alive: bool,
    pmi: Option<Conn>,
    session: Session,
    stdout: Option<Conn>,
    stderr: Option<Conn>,
}

struct Agent {
    ctl: Conn,
    spec: LaunchSpec,
    job: JobFacts,
    store: Store,
    ranks: Vec<Rank>,
    stdin: Option<Conn>,
    stdin_eof: bool,
    kill_at: Option<Instant>,
    drain_until: Option<Instant>,
    /// This host's part of the current fence went to the controller.
    fence_sent: bool,
    /// Connected over TCP: heartbeats both ways, and oxrun is declared lost
    /// after [`HEARTBEAT_LIMIT`] without a byte from it while the link does
    /// not acknowledge, or a longer stall while it does (`liveness`).
    remote: bool,
    /// When bytes last came from oxrun.
    last_heard: Instant,
    /// When the next heartbeat goes to oxrun.
    next_beat: Instant,
    /// Nested jobs the ranks spawned and that still run.
    spawned: Vec<spawned::Spawned>,
}

/// Runs the agent until its ranks are done; returns the process exit code.
pub fn run(target: ProxyTarget) -> i32 {
    crate::signals::ignore_sigpipe();
    match serve(target) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("oxrun agent on {}: {e}", crate::hosts::local_hostname());
            1
        }
    }
}

/// The link to the controller and, over TCP, this host's address on it
/// (the interface the other hosts reach this one through).
fn connect(target: &ProxyTarget) -> io::Result<(Conn, Option<IpAddr>)> {
    match target {
        ProxyTarget::Fd(fd) => {
            // SAFETY: the controller passed us this descriptor and nothing else owns it.
            let fd = unsafe { spawn::adopt(*fd) };
            // It came to us across exec; our ranks must not inherit it.
            nix::fcntl::fcntl(
                fd.as_raw_fd(),
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
            )?;
            Ok((Conn::new(fd)?, None))
        }
        ProxyTarget::Tcp { addr, host } => {
            let mut secret = String::new();
            io::stdin().lock().read_line(&mut secret)?;
            let stream = std::net::TcpStream::connect(addr).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot reach oxrun at {addr}: {e}"))
            })?;
            stream.set_nodelay(true)?;
            let here = stream.local_addr().ok().map(|a| a.ip());
            let mut conn = Conn::new(OwnedFd::from(stream))?;
            let hello = ToController::Hello {
                host: host.clone(),
                secret: secret.trim().to_string(),
            };
            conn.send(&hello.encode())?;
            Ok((conn, here))
        }
    }
}

fn read_frames(conn: &mut Conn) -> io::Result<Vec<ToAgent>> {
    let mut msgs = Vec::new();
    let mut used = 0;
    while let Some((payload, n)) = proto::split_frame(&conn.input[used..]).map_err(bad_data)? {
        msgs.push(ToAgent::decode(payload).map_err(bad_data)?);
        used += n;
    }
    conn.input.drain(..used);
    Ok(msgs)
}

fn bad_data(e: proto::ProtoError) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("bad message from oxrun: {e}"),
    )
}

fn serve(target: ProxyTarget) -> io::Result<()> {
    // If oxrun dies (even by SIGKILL) we get SIGTERM and, reading it from the
    // signalfd, kill every rank's process group: ranks' own children included.
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    let mut sigfd = crate::signals::signal_fd(&[
        Signal::SIGCHLD,
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
    ])?;
    let (mut ctl, here) = connect(&target)?;
    let remote = matches!(target, ProxyTarget::Tcp { .. });
    // The local agent's socketpair cannot be cut: it waits as long as oxrun lives.
    let launch_by = remote.then(|| Instant::now() + LAUNCH_WAIT);
    let mut msgs = Vec::new();
    while msgs.is_empty() {
        ctl.flush_blocking(Duration::from_secs(10))?;
        let left = launch_by.map(|t| t.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Err(io::Error::other(format!(
                "no launch request from oxrun within {} s; giving up",
                LAUNCH_WAIT.as_secs()
            )));
        }
        wait_readable(ctl.raw(), left)?;
        ctl.fill()?;
        msgs = read_frames(&mut ctl)?;
        if msgs.is_empty() && ctl.eof {
            return Ok(());
        }
    }
    let mut msgs = msgs.into_iter();
    let mut spec = match msgs.next() {
        Some(ToAgent::Launch(spec)) => spec,
        other => {
            return Err(io::Error::other(format!(
                "expected a launch, got {other:?}"
            )))
        }
    };
    if let Some(ip) = here {
        spec.place_fabric(ip);
    }
    let mut agent = Agent::start(ctl, spec, remote)?;
    for msg in msgs {
        agent.handle(msg)?;
    }
    agent.run(&mut sigfd)
}

fn wait_readable(fd: i32, limit: Option<Duration>) -> io::Result<()> {
    let mut p: Poller<()> = Poller::default();
    p.add(fd, true, false, ());
    p.wait(limit).map(|_| ())
}

impl Drop for Agent {
    /// However the agent ends (its ranks done, an error, oxrun gone): no
    /// rank outlives it and no segment file of the job stays on this host.
    fn drop(&mut self) {
        let nodes = cleanup::nodes_of(&self.spec.process_mapping, self.spec.size, &self.spec.ranks);
        cleanup::finish(&self.spec.jobid, &nodes, &self.alive_pids());
    }
}

impl Agent {
    fn start(ctl: Conn, spec: LaunchSpec, remote: bool) -> io::Result<Agent> {
        let job = JobFacts {
            jobid: spec.jobid.clone(),
            size: spec.size,
            process_mapping: spec.process_mapping.clone(),
        };
        let mut agent = Agent {
            ctl,
            job,
            store: Store::default(),
            ranks: Vec::new(),
            stdin: None,
            stdin_eof: false,
            kill_at: None,
            drain_until: None,
            fence_sent: false,
            spec,
            remote,
            last_heard: Instant::now(),
            next_beat: Instant::now(),
            spawned: Vec::new(),
        };
        let cpu_sets = crate::bind::core_sets(agent.spec.bind, agent.spec.ranks.len());
        for (i, &rank) in agent.spec.ranks.clone().iter().enumerate() {
            let cpus = cpu_sets.as_ref().map(|s| s[i].as_slice());
            match spawn::start_rank(&agent.spec, rank, i, cpus) {
                Ok(s) => {
                    agent.send(ToController::Started { rank, pid: s.pid })?;
                    if let Some(fd) = s.stdin {
                        agent.stdin = Some(Conn::new(fd)?);
                    }
                    agent.ranks.push(Rank {
                        rank,
                        pid: s.pid,
                        alive: true,
                        pmi: Some(Conn::new(s.pmi)?),
                        session: Session::new(rank),
                        stdout: Some(Conn::new(s.stdout)?),
                        stderr: Some(Conn::new(s.stderr)?),
                    });
                }
                Err(e) => {
                    agent.send(ToController::Failed {
                        rank,
                        code: 1,
                        reason: e.to_string(),
                    })?;
                    agent.kill_all(libc::SIGKILL);
                    break;
                }
            }
        }
        Ok(agent)
    }

    fn alive_pids(&self) -> Vec<i32> {
        self.ranks
            .iter()
            .filter(|r| r.alive)
            .map(|r| r.pid)
            .collect()
    }

    fn send(&mut self, msg: ToController) -> io::Result<()> {
        self.ctl.send(&msg.encode())
    }

    fn run(&mut self, sigfd: &mut nix::sys::signalfd::SignalFd) -> io::Result<()> {
        let mut poller = Poller::default();
        loop {
            if self.finished() {
                self.send(ToController::Done)?;
                return self.ctl.flush_blocking(Duration::from_secs(5));
            }
            poller.add(
                self.ctl.raw(),
                true,
                self.ctl.wants_write(),
                Token::Controller,
            );
            poller.add(sigfd.as_raw_fd(), true, false, Token::Signals);
            for (i, r) in self.ranks.iter().enumerate() {
                if let Some(c) = &r.pmi {
                    poller.add(c.raw(), true, c.wants_write(), Token::Pmi(i));
                }
                if let Some(c) = &r.stdout {
                    poller.add(c.raw(), true, false, Token::Out(i, 1));
                }
                if let Some(c) = &r.stderr {
                    poller.add(c.raw(), true, false, Token::Out(i, 2));
                }
            }
            if let Some(c) = &self.stdin {
                if c.wants_write() {
                    poller.add(c.raw(), false, true, Token::Stdin);
                }
            }
            let heartbeats = self.remote.then(|| {
                [
                    self.next_beat,
                    liveness::next_check(self.last_heard, Instant::now()),
                ]
            });
            let timeout = [self.kill_at, self.drain_until]
                .into_iter()
                .flatten()
                .chain(heartbeats.into_iter().flatten())
                .min()
                .map(|t| t.saturating_duration_since(Instant::now()));
            for ready in poller.wait(timeout)? {
                match ready.token {
                    Token::Controller => self.on_controller(ready.writable)?,
                    Token::Signals => self.on_signals(sigfd)?,
                    Token::Pmi(i) => self.on_pmi(i)?,
                    Token::Out(i, stream) => self.on_output(i, stream)?,
                    Token::Stdin => self.flush_stdin(),
                }
            }
            self.on_timers()?;
        }
    }

    fn finished(&self) -> bool {
        let outputs_open = self
            .ranks
            .iter()
            .any(|r| r.stdout.is_some() || r.stderr.is_some());
        let drained = !outputs_open || self.drain_until.is_some_and(|t| Instant::now() >= t);
        self.ranks.iter().all(|r| !r.alive) && drained && self.spawned.is_empty()
    }

    fn on_timers(&mut self) -> io::Result<()> {
        let now = Instant::now();
        if self.kill_at.is_some_and(|t| now >= t) {
            self.kill_at = None;
            self.kill_all(libc::SIGKILL);
        }
        if !self.remote {
            return Ok(());
        }
        if now >= self.next_beat {
            self.next_beat = now + HEARTBEAT_INTERVAL;
            self.send(ToController::Heartbeat)?;
        }
        let silent = now.saturating_duration_since(self.last_heard);
        if silent < HEARTBEAT_LIMIT {
            return Ok(());
        }
        let reach = liveness::Reach::of(self.ctl.raw());
        if liveness::lost(silent, reach) {
            // A cut link or a dead host: oxrun cannot be told anything and
            // cannot stop these ranks, so end them here.
            self.kill_all(libc::SIGKILL);
            return Err(io::Error::other(format!(
                "lost contact with oxrun (no word for {:.1} s: {}); killed local ranks",
                silent.as_secs_f64(),
                liveness::cause(reach)
            )));
        }
        Ok(())
    }

    fn on_controller(&mut self, writable: bool) -> io::Result<()> {
        if writable {
            self.ctl.flush()?;
        }
        if self.ctl.fill()? > 0 {
            self.last_heard = Instant::now();
        }
        for msg in read_frames(&mut self.ctl)? {
            self.handle(msg)?;
        }
        if self.ctl.eof {
            // oxrun is gone: nobody is left to report to.
            self.kill_all(libc::SIGKILL);
            return Err(io::Error::other(
                "lost the connection to oxrun; killed local ranks",
            ));
        }
        Ok(())
    }

    fn handle(&mut self, msg: ToAgent) -> io::Result<()> {
        match msg {
            ToAgent::FenceDone(entries) => {
                self.fence_sent = false;
                self.store.absorb(entries);
                for i in 0..self.ranks.len() {
                    if self.ranks[i].session.in_fence {
                        self.ranks[i].session.release_fence();
                        self.flush_pmi(i)?;
                    }
                }
            }
            ToAgent::Stdin(data) => {
                if let Some(c) = &mut self.stdin {
                    let _ = c.send(&data);
                }
            }
            ToAgent::StdinEof => {
                self.stdin_eof = true;
                self.flush_stdin();
            }
            ToAgent::Signal(sig) => self.kill_all(sig),
            ToAgent::Kill => self.end_job(),
            ToAgent::Heartbeat => {} // any frame counts (see on_controller)
            ToAgent::NameResult { rank, ok, port } => {
                if let Some(i) = self.ranks.iter().position(|r| r.rank == rank) {
                    self.ranks[i].session.name_result(ok, &port);
                    self.flush_pmi(i)?;
                }
            }
            ToAgent::Launch(_) => {
                return Err(io::Error::other("received a second launch request"));
            }
        }
        Ok(())
    }

    fn end_job(&mut self) {
        self.kill_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    fn kill_all(&mut self, sig: i32) {
        for r in self.ranks.iter().filter(|r| r.alive) {
            spawn::signal_rank(r.pid, sig);
        }
        for s in &self.spawned {
            spawn::signal_rank(s.pid, sig);
        }
    }

    fn on_signals(&mut self, sigfd: &mut nix::sys::signalfd::SignalFd) -> io::Result<()> {
        for sig in crate::signals::drain(sigfd) {
            if sig == libc::SIGCHLD {
                self.reap()?;
            } else {
                // Signals meant for the job reach us only if someone targets
                // the agent itself; treat that as "end the job".
                self.end_job();
            }
        }
        Ok(())
    }

    fn reap(&mut self) -> io::Result<()> {
        loop {
            let status = match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD) => return Ok(()),
                Ok(s) => s,
                Err(e) => return Err(e.into()),
            };
            let (pid, how) = match status {
                WaitStatus::Exited(pid, code) => (pid, ExitKind::Code(code)),
                WaitStatus::Signaled(pid, sig, _) => (pid, ExitKind::Signal(sig as i32)),
                _ => continue,
            };
            if let Some(k) = self.spawned.iter().position(|s| s.pid == pid.as_raw()) {
                let s = self.spawned.remove(k);
                if how != ExitKind::Code(0) {
                    let verdict = s.verdict();
                    let verdict = verdict.strip_suffix("; ending the job").unwrap_or(&verdict);
                    let reason = match how {
                        _ if !verdict.is_empty() => format!("failed: {verdict}"),
                        ExitKind::Code(c) => format!("exited with code {c}"),
                        ExitKind::Signal(sig) => format!("was killed by signal {sig}"),
                    };
                    // The nested oxrun's status is its failed child's.
                    let code = match how {
                        ExitKind::Code(c) => c,
                        ExitKind::Signal(sig) => 128 + sig,
                    };
                    self.send(ToController::Failed {
                        rank: s.by_rank,
                        code,
                        reason: format!(
                            "the job rank {} spawned (oxrun pid {}) {reason}",
                            s.by_rank, s.pid
                        ),
                    })?;
                }
                continue;
            }
            let Some(i) = self.ranks.iter().position(|r| r.pid == pid.as_raw()) else {
                continue;
            };
            // Read whatever PMI messages it sent before dying (e.g. an abort).
            self.on_pmi(i)?;
            let r = &mut self.ranks[i];
            r.alive = false;
            r.pmi = None;
            // Whatever the rank left running in its process group goes with it.
            spawn::kill_group(r.pid);
            let msg = ToController::Exited {
                rank: r.rank,
                how,
                pmi: r.session.state,
            };
            if i == 0 {
                self.stdin = None;
            }
            self.send(msg)?;
            // A rank that is gone can no longer enter a fence: if the others
            // wait in one, the controller (told of the exit first) decides.
            self.maybe_fence()?;
            if self.ranks.iter().all(|r| !r.alive) {
                self.drain_until = Some(Instant::now() + DRAIN_LIMIT);
            }
        }
    }

    fn on_pmi(&mut self, i: usize) -> io::Result<()> {
        let Some(conn) = self.ranks[i].pmi.as_mut() else {
            return Ok(());
        };
        conn.flush()?;
        conn.fill()?;
        let bytes = std::mem::take(&mut conn.input);
        let eof = conn.eof;
        let r = &mut self.ranks[i];
        match r.session.receive(&bytes, &self.job, &mut self.store) {
            Ok(effects) => {
                for e in effects {
                    match e {
                        Effect::Fence => self.maybe_fence()?,
                        Effect::Abort { code, message } => {
                            let rank = self.ranks[i].rank;
                            self.send(ToController::Abort {
                                rank,
                                code,
                                message,
                            })?;
                        }
                        Effect::Name(op) => {
                            let rank = self.ranks[i].rank;
                            self.send(ToController::Name { rank, op })?;
                        }
                        Effect::Spawn(req) => {
                            let rank = self.ranks[i].rank;
                            let parents = spawned::Parents {
                                env: &self.spec.env,
                                launcher_cmd: &self.spec.launcher_cmd,
                            };
                            let outcome =
                                spawned::start(&req, rank, &parents).map(|s| self.spawned.push(s));
                            self.ranks[i].session.spawn_result(outcome);
                        }
                        Effect::None => {}
                    }
                }
                for other in self.ranks.iter_mut() {
                    other.session.retry_node_attrs(&self.store);
                }
                for j in 0..self.ranks.len() {
                    self.flush_pmi(j)?;
                }
            }
            Err(v) => {
                let rank = r.rank;
                r.pmi = None;
                self.send(ToController::Failed {
                    rank,
                    code: 1,
                    reason: v.0,
                })?;
                return Ok(());
            }
        }
        if eof {
            self.ranks[i].pmi = None;
        }
        Ok(())
    }

    fn flush_pmi(&mut self, i: usize) -> io::Result<()> {
        let r = &mut self.ranks[i];
        if let Some(conn) = &mut r.pmi {
            let replies = std::mem::take(&mut r.session.replies);
            if !replies.is_empty() {
                conn.send(&replies)?;
            } else {
                conn.flush()?;
            }
        }
        Ok(())
    }

    fn maybe_fence(&mut self) -> io::Result<()> {
        // A finalized or exited rank can no longer fence; every other rank
        // must be in it. An exited rank that did not finalize is the
        // controller's to judge (it ends the job naming that rank).
        let waiting = self.ranks.iter().any(|r| r.alive && r.session.in_fence);
        let ready = self
            .ranks
            .iter()
            .all(|r| r.session.in_fence || r.session.state == PmiState::Finalized || !r.alive);
        if waiting && ready && !self.fence_sent {
            self.fence_sent = true;
            let entries = std::mem::take(&mut self.store.unfenced);
            self.send(ToController::Fence(entries))?;
        }
        Ok(())
    }

    fn on_output(&mut self, i: usize, stream: u8) -> io::Result<()> {
        let r = &mut self.ranks[i];
        let slot = if stream == 1 {
            &mut r.stdout
        } else {
            &mut r.stderr
        };
        let Some(conn) = slot.as_mut() else {
            return Ok(());
        };
        conn.fill()?;
        let eof = conn.eof;
        let chunk = output::take_lines(&mut conn.input, eof);
        if eof {
            *slot = None;
        }
        if let Some(data) = chunk {
            let rank = r.rank;
            self.send(ToController::Output { rank, stream, data })?;
        }
        Ok(())
    }

    fn flush_stdin(&mut self) {
        if let Some(c) = &mut self.stdin {
            if c.flush().is_err() || c.eof || (self.stdin_eof && !c.wants_write()) {
                self.stdin = None;
            }
        }
    }
}
