//! The controller: oxrun's main process. It places ranks, starts one agent
//! per host, merges fences, prints output, forwards stdin and signals, and
//! ends the job (cleanly, with one line saying why) when a rank fails.

mod exit_status;
mod names;
mod remote;
mod verdict;

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::agent::{cleanup, label_lines};
use crate::cli::{BindTo, EnvSetting, JobOptions};
use crate::conn::Conn;
use crate::liveness;
use crate::plan::{self, Plan};
use crate::poller::Poller;
use crate::proto::{
    self, ExitKind, LaunchSpec, NameOp, PmiState, ToAgent, ToController, HEARTBEAT_INTERVAL,
    HEARTBEAT_LIMIT,
};
use crate::signals;
pub use exit_status::exit_status;

/// Exit code when `--timeout` expires (as timeout(1)).
pub const TIMEOUT_EXIT: i32 = 124;
/// How long a remote agent may take to connect and authenticate.
const CONNECT_LIMIT: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug)]
enum Token {
    Agent(usize),
    Pending(usize),
    Listener,
    Signals,
    Stdin,
}

struct AgentLink {
    host: String,
    pid: i32,
    conn: Option<Conn>,
    in_fence: bool,
    done: bool,
    /// The agent said it was done (its ranks are gone and it cleaned up).
    said_done: bool,
    /// For an agent on this host: its ranks and their nodes (whose segment
    /// files are ours to remove if it dies before cleaning up).
    local: Option<(Vec<u32>, Vec<usize>)>,
    /// Launch command or agent process still running.
    running: bool,
    /// Reached over TCP (another host): heartbeats both ways, and declared
    /// lost after [`HEARTBEAT_LIMIT`] without a byte from it while its link
    /// does not acknowledge, or a longer stall while it does. The local
    /// agent's socketpair cannot be cut (its end closes when it dies).
    remote: bool,
    /// When bytes last came from it (or it connected).
    last_heard: Instant,
}

struct RankInfo {
    host: usize,
    pid: i32,
    exited: bool,
    finalized: bool,
    /// Exited without ever speaking PMI: it will never enter a fence.
    silent: bool,
}

struct Job {
    opts: JobOptions,
    agents: Vec<AgentLink>,
    ranks: Vec<RankInfo>,
    listener: Option<TcpListener>,
    pending: Vec<Option<(Conn, Instant)>>,
    secret: String,
    launch: Vec<LaunchSpec>,
    jobid: String,
    fence_entries: Vec<(String, String)>,
    /// The name service (`MPI_Publish_name`): the job's, or a directory's.
    names: names::Names,
    /// First failure: (exit code, message already printed).
    failure: Option<i32>,
    deadline: Option<Instant>,
    connect_deadline: Option<Instant>,
    stdin_open: bool,
    interrupts: u32,
    /// When the next heartbeat goes to the remote agents.
    next_beat: Instant,
}

/// Runs a job to the end and returns oxrun's exit code.
pub fn run(opts: JobOptions) -> i32 {
    signals::ignore_sigpipe();
    verdict::adopt();
    // Before placing (which allocates per rank): every rank runs here.
    if opts.hosts.iter().all(|h| crate::hosts::is_local(&h.name)) {
        if let Err(e) = crate::limits::check_local(opts.nprocs) {
            verdict::say(&e.to_string());
            return 1;
        }
    }
    match Job::start(opts).and_then(|mut job| job.run()) {
        Ok(code) => code,
        Err(e) => {
            verdict::say(&e.to_string());
            1
        }
    }
}

/// The ranks' environment: oxrun's, the job's settings, and this job's
/// random nonce (`oxmpi::dynamic::JOB_NONCE_ENV`: job ids alone can repeat
/// across hosts, and port connections must tell jobs apart).
fn rank_env(opts: &JobOptions, nonce: &str) -> Vec<(String, String)> {
    let mut env: HashMap<String, String> = std::env::vars()
        .filter(|(k, _)| !matches!(k.as_str(), "PMI_PORT" | "PMI_ID" | "PMI_FD"))
        .collect();
    env.insert(oxmpi::dynamic::JOB_NONCE_ENV.into(), nonce.into());
    for setting in &opts.env {
        match setting {
            EnvSetting::Set(k, v) => {
                env.insert(k.clone(), v.clone());
            }
            EnvSetting::Pass(_) => {} // already in oxrun's environment, which is passed whole
        }
    }
    let mut env: Vec<_> = env.into_iter().collect();
    env.sort();
    env
}

fn bind_policy(opts: &JobOptions) -> u8 {
    match opts.bind {
        Some(BindTo::Core) => proto::BIND_CORE,
        Some(BindTo::None) => proto::BIND_NONE,
        None => proto::BIND_AUTO,
    }
}

impl Job {
    fn start(opts: JobOptions) -> io::Result<Job> {
        let plan: Plan = plan::place(opts.nprocs, &opts.hosts, opts.map_by);
        let jobid = format!("kvs_{}_0", std::process::id());
        if let Some(dir) = &opts.name_dir {
            // Jobs this one starts (spawn's nested oxrun) share the directory.
            std::env::set_var(oxmpi::config::NAME_DIR.entry.env, dir);
        }
        let names = names::Names::new(opts.name_dir.as_deref()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the name directory {:?}: {e}", opts.name_dir),
            )
        })?;
        let process_mapping = oxmpi::bootstrap::mapping::encode(&plan.node_of_rank);
        let nonce = remote::new_secret()?;
        let env = rank_env(&opts, &nonce[..16]);
        let cwd = std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let secret = remote::new_secret()?;
        let needs_tcp = plan.hosts.iter().any(|h| !h.local);
        let (listener, addr) = if needs_tcp {
            let (l, a) = remote::listen(opts.control_addr.as_deref())?;
            (Some(l), a)
        } else {
            (None, String::new())
        };
        let control_ip = listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.ip());
        let mut ranks: Vec<RankInfo> = (0..opts.nprocs)
            .map(|_| RankInfo {
                host: 0,
                pid: 0,
                exited: false,
                finalized: false,
                silent: false,
            })
            .collect();
        let mut agents = Vec::new();
        let mut launch = Vec::new();
        for host in plan.hosts.iter().filter(|h| h.local) {
            crate::limits::check_local(host.ranks.len()).map_err(io::Error::other)?;
        }
        for (h, host) in plan.hosts.iter().enumerate() {
            for &r in &host.ranks {
                ranks[r].host = h;
            }
            let mut spec = LaunchSpec {
                jobid: jobid.clone(),
                size: opts.nprocs as u32,
                program: opts.program.clone(),
                args: opts.args.clone(),
                env: env.clone(),
                cwd: cwd.clone(),
                ranks: host.ranks.iter().map(|&r| r as u32).collect(),
                process_mapping: process_mapping.clone(),
                bind: bind_policy(&opts),
                forward_stdin: host.ranks.first() == Some(&0),
                launcher_cmd: opts.launcher_cmd.clone(),
            };
            // Remote agents name their own address (the one they reach
            // this host from); this host's is the one they dial.
            if let (true, Some(ip)) = (host.local, control_ip) {
                spec.place_fabric(ip);
            }
            launch.push(spec);
            let spawned = if host.local {
                remote::start_local()?
            } else {
                remote::start_remote(&opts.launcher_cmd, &host.name, &addr, &secret)?
            };
            let conn = spawned.link.map(Conn::new).transpose()?;
            agents.push(AgentLink {
                host: host.name.clone(),
                pid: spawned.pid,
                conn,
                in_fence: false,
                done: false,
                said_done: false,
                local: host.local.then(|| {
                    let ranks: Vec<u32> = host.ranks.iter().map(|&r| r as u32).collect();
                    let nodes = cleanup::nodes_of(&process_mapping, opts.nprocs as u32, &ranks);
                    (ranks, nodes)
                }),
                running: true,
                remote: !host.local,
                last_heard: Instant::now(),
            });
        }
        let now = Instant::now();
        let mut job = Job {
            deadline: opts.timeout.map(|t| now + t),
            connect_deadline: needs_tcp.then_some(now + CONNECT_LIMIT),
            opts,
            agents,
            ranks,
            listener,
            pending: Vec::new(),
            secret,
            launch,
            jobid,
            fence_entries: Vec::new(),
            names,
            failure: None,
            stdin_open: true,
            interrupts: 0,
            next_beat: now + HEARTBEAT_INTERVAL,
        };
        for a in 0..job.agents.len() {
            if job.agents[a].conn.is_some() {
                job.send_launch(a)?;
            }
        }
        Ok(job)
    }

    fn send_launch(&mut self, a: usize) -> io::Result<()> {
        let spec = std::mem::take(&mut self.launch[a]);
        self.send(a, &ToAgent::Launch(spec))
    }

    fn send(&mut self, a: usize, msg: &ToAgent) -> io::Result<()> {
        if let Some(conn) = &mut self.agents[a].conn {
            conn.send(&msg.encode())?;
        }
        Ok(())
    }

    /// One name-service request: whether it succeeded, and the port found.
    fn serve_name(&mut self, op: NameOp) -> (bool, String) {
        self.names.serve(op)
    }

    fn broadcast(&mut self, msg: &ToAgent) {
        let bytes = msg.encode();
        for agent in &mut self.agents {
            if let Some(conn) = &mut agent.conn {
                let _ = conn.send(&bytes);
            }
        }
    }

    /// Runs the job; however that ends (an error included), reaps the
    /// agents and removes what a killed local agent left.
    fn run(&mut self) -> io::Result<i32> {
        let result = self.run_loop();
        self.reap_all();
        self.clean_after_lost_agents();
        result
    }

    fn run_loop(&mut self) -> io::Result<i32> {
        let mut sigfd = signals::signal_fd(&[
            Signal::SIGINT,
            Signal::SIGTERM,
            Signal::SIGHUP,
            Signal::SIGUSR1,
            Signal::SIGUSR2,
            Signal::SIGCHLD,
        ])?;
        // A launch command may have exited before SIGCHLD was blocked and
        // routed to the signalfd (the signal is then lost): reap once now.
        self.reap_agents();
        let stdin_usable = stdin_is_ours();
        if !stdin_usable {
            self.close_stdin();
        }
        let mut poller = Poller::default();
        while !self.agents.iter().all(|a| a.done) {
            for (a, agent) in self.agents.iter().enumerate() {
                if let Some(c) = &agent.conn {
                    poller.add(c.raw(), true, c.wants_write(), Token::Agent(a));
                }
            }
            for (p, pending) in self.pending.iter().enumerate() {
                if let Some((c, _)) = pending {
                    poller.add(c.raw(), true, false, Token::Pending(p));
                }
            }
            if let Some(l) = &self.listener {
                poller.add(l.as_raw_fd(), true, false, Token::Listener);
            }
            poller.add(sigfd.as_raw_fd(), true, false, Token::Signals);
            if self.stdin_open && self.stdin_agent().is_some() {
                poller.add(0, true, false, Token::Stdin);
            }
            let timeout = [self.deadline, self.connect_deadline]
                .into_iter()
                .flatten()
                .chain(self.pending.iter().flatten().map(|(_, t)| *t))
                .chain(self.heartbeat_timers())
                .min()
                .map(|t| t.saturating_duration_since(Instant::now()));
            for ready in poller.wait(timeout)? {
                match ready.token {
                    Token::Agent(a) => self.on_agent(a, ready.writable)?,
                    Token::Pending(p) => self.on_pending(p)?,
                    Token::Listener => self.on_accept()?,
                    Token::Signals => self.on_signals(&mut sigfd),
                    Token::Stdin => self.on_stdin(),
                }
            }
            self.on_timers();
        }
        Ok(self.failure.unwrap_or(0))
    }

    fn stdin_agent(&self) -> Option<usize> {
        let a = self.ranks.first()?.host;
        self.agents[a].conn.as_ref().map(|_| a)
    }

    fn close_stdin(&mut self) {
        if self.stdin_open {
            self.stdin_open = false;
            if let Some(a) = self.stdin_agent() {
                let _ = self.send(a, &ToAgent::StdinEof);
            } else {
                self.stdin_open = true; // deliver EOF once the agent is connected
            }
        }
    }

    fn on_stdin(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        // SAFETY: poll said fd 0 is readable, so this read does not block.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            self.close_stdin();
        } else if let Some(a) = self.stdin_agent() {
            let _ = self.send(a, &ToAgent::Stdin(buf[..n as usize].to_vec()));
        }
    }

    fn fail(&mut self, code: i32, message: String) {
        if self.failure.is_some() {
            return;
        }
        verdict::say(&message);
        self.failure = Some(exit_status(code));
        self.broadcast(&ToAgent::Kill);
        // Agents still on their way have nothing to run any more: stop their
        // launch commands instead of waiting for them to connect.
        self.abandon_unconnected();
    }

    /// Remote agents we are connected to and still wait for.
    fn live_remotes(&self) -> impl Iterator<Item = &AgentLink> {
        self.agents
            .iter()
            .filter(|a| a.remote && a.conn.is_some() && !a.done)
    }

    /// The next heartbeat to send and when to look at each live remote
    /// agent's silence.
    fn heartbeat_timers(&self) -> impl Iterator<Item = Instant> + '_ {
        let any = self.live_remotes().next().is_some();
        let now = Instant::now();
        any.then_some(self.next_beat).into_iter().chain(
            self.live_remotes()
                .map(move |a| liveness::next_check(a.last_heard, now)),
        )
    }

    /// Sends heartbeats when due, and ends the job when a remote agent is
    /// lost (`liveness`: silent for [`HEARTBEAT_LIMIT`] while its link does
    /// not acknowledge, a cut link or a dead host; or for
    /// `HEARTBEAT_STALL_LIMIT` while it does): TCP alone would wait for it
    /// forever.
    fn on_heartbeats(&mut self, now: Instant) {
        if now >= self.next_beat {
            self.next_beat = now + HEARTBEAT_INTERVAL;
            let beat = ToAgent::Heartbeat.encode();
            for agent in self.agents.iter_mut().filter(|a| a.remote && !a.done) {
                if let Some(conn) = &mut agent.conn {
                    let _ = conn.send(&beat);
                }
            }
        }
        for a in 0..self.agents.len() {
            let agent = &mut self.agents[a];
            let silent = now.saturating_duration_since(agent.last_heard);
            let Some(conn) = agent.conn.as_ref().filter(|_| agent.remote && !agent.done) else {
                continue;
            };
            if silent < HEARTBEAT_LIMIT {
                continue;
            }
            let reach = liveness::Reach::of(conn.raw());
            if !liveness::lost(silent, reach) {
                continue;
            }
            agent.conn = None;
            agent.done = true;
            if agent.running {
                // The launch command (ssh) would wait on the dead link too.
                // SAFETY: kill(2) on the launch command's process group.
                unsafe { libc::kill(-agent.pid, libc::SIGKILL) };
            }
            let host = agent.host.clone();
            self.fail(
                1,
                format!(
                    "lost contact with host {host} (no word for {:.1} s: {}); ending the job",
                    silent.as_secs_f64(),
                    liveness::cause(reach)
                ),
            );
        }
    }

    fn on_timers(&mut self) {
        let now = Instant::now();
        self.on_heartbeats(now);
        if self.deadline.is_some_and(|d| now >= d) {
            self.deadline = None;
            let live = self.ranks.iter().filter(|r| !r.exited).count();
            let secs = self.opts.timeout.map_or(0.0, |t| t.as_secs_f64());
            self.fail(
                TIMEOUT_EXIT,
                format!("job timed out after {secs} s; killing {live} ranks"),
            );
        }
        if self.connect_deadline.is_some_and(|d| now >= d) {
            self.connect_deadline = None;
            let missing: Vec<_> = self
                .agents
                .iter()
                .filter(|a| a.conn.is_none() && !a.done)
                .map(|a| a.host.clone())
                .collect();
            if !missing.is_empty() {
                self.fail(
                    1,
                    format!(
                        "agents on {} did not connect within {} s",
                        missing.join(", "),
                        CONNECT_LIMIT.as_secs()
                    ),
                );
                self.abandon_unconnected();
            }
        }
        for slot in &mut self.pending {
            if slot.as_ref().is_some_and(|(_, t)| now >= *t) {
                *slot = None; // never authenticated: drop it
            }
        }
    }

    /// Agents that never connected cannot be told to stop; forget them.
    fn abandon_unconnected(&mut self) {
        for agent in &mut self.agents {
            if agent.conn.is_none() && !agent.done {
                if agent.running {
                    // SAFETY: kill(2) on the launch command's process group.
                    unsafe { libc::kill(-agent.pid, libc::SIGKILL) };
                }
                agent.done = true;
            }
        }
    }

    fn on_accept(&mut self) -> io::Result<()> {
        let Some(listener) = &self.listener else {
            return Ok(());
        };
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    let conn = Conn::new(remote::adopt_stream(stream)?)?;
                    let slot = Some((conn, Instant::now() + Duration::from_secs(5)));
                    match self.pending.iter_mut().find(|p| p.is_none()) {
                        Some(free) => *free = slot,
                        None => self.pending.push(slot),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// A TCP connection that has not yet proved it belongs to this job.
    fn on_pending(&mut self, p: usize) -> io::Result<()> {
        let Some((conn, _)) = self.pending[p].as_mut() else {
            return Ok(());
        };
        if conn.fill().is_err() || conn.eof {
            self.pending[p] = None;
            return Ok(());
        }
        let hello = match proto::split_frame(&conn.input) {
            Ok(Some((payload, used))) => {
                let msg = ToController::decode(payload);
                conn.input.drain(..used);
                msg
            }
            Ok(None) => return Ok(()),
            Err(e) => Err(e),
        };
        let Some((conn, _)) = self.pending[p].take() else {
            return Ok(());
        };
        let host = match hello {
            Ok(ToController::Hello { host, secret })
                if remote::secrets_match(&secret, &self.secret) =>
            {
                host
            }
            _ => return Ok(()), // wrong secret or not our protocol: drop silently
        };
        let Some(a) = self
            .agents
            .iter()
            .position(|ag| ag.host == host && ag.conn.is_none() && !ag.done)
        else {
            return Ok(());
        };
        if self.failure.is_some() {
            // The job is ending: start nothing there. Hanging up (dropping
            // `conn`) makes the agent exit quietly.
            self.agents[a].done = true;
            return Ok(());
        }
        self.agents[a].conn = Some(conn);
        self.agents[a].last_heard = Instant::now();
        if self.agents.iter().all(|ag| ag.conn.is_some() || ag.done) {
            self.connect_deadline = None;
            self.listener = None; // every agent is in: accept nobody else
        }
        self.send_launch(a)?;
        if !self.stdin_open && self.stdin_agent() == Some(a) {
            self.send(a, &ToAgent::StdinEof)?;
        }
        Ok(())
    }

    fn on_agent(&mut self, a: usize, writable: bool) -> io::Result<()> {
        let Some(conn) = self.agents[a].conn.as_mut() else {
            return Ok(());
        };
        if writable {
            let _ = conn.flush();
        }
        let read = conn.fill();
        if read.as_ref().is_ok_and(|&n| n > 0) {
            self.agents[a].last_heard = Instant::now();
        }
        let Some(conn) = self.agents[a].conn.as_mut() else {
            return Ok(());
        };
        let read_ok = read.is_ok();
        let mut msgs = Vec::new();
        let mut used = 0;
        let mut bad = None;
        loop {
            match proto::split_frame(&conn.input[used..]) {
                Ok(Some((payload, n))) => {
                    used += n;
                    match ToController::decode(payload) {
                        Ok(m) => msgs.push(m),
                        Err(e) => {
                            bad = Some(e.to_string());
                            break;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    bad = Some(e.to_string());
                    break;
                }
            }
        }
        conn.input.drain(..used);
        let eof = conn.eof || !read_ok;
        for msg in msgs {
            self.on_message(a, msg);
        }
        if let Some(e) = bad {
            let host = self.agents[a].host.clone();
            self.fail(
                1,
                format!("garbled message from the agent on {host} ({e}); ending the job"),
            );
            self.agents[a].conn = None;
            self.agents[a].done = true;
        } else if eof && !self.agents[a].done {
            let host = self.agents[a].host.clone();
            self.agents[a].conn = None;
            self.agents[a].done = true;
            self.fail(
                1,
                format!("lost contact with the agent on host {host}; ending the job"),
            );
        }
        Ok(())
    }

    fn rank_label(&self, rank: u32) -> String {
        let r = &self.ranks[rank as usize];
        format!(
            "rank {rank} (pid {} on {})",
            r.pid, self.agents[r.host].host
        )
    }

    fn valid_rank(&self, a: usize, rank: u32) -> bool {
        self.ranks.get(rank as usize).is_some_and(|r| r.host == a)
    }

    fn on_message(&mut self, a: usize, msg: ToController) {
        match msg {
            ToController::Output { rank, stream, data } if self.valid_rank(a, rank) => {
                let data = if self.opts.label {
                    label_lines(&format!("[{rank}] "), &data)
                } else {
                    data
                };
                let _ = if stream == 2 {
                    io::stderr().lock().write_all(&data)
                } else {
                    let mut out = io::stdout().lock();
                    out.write_all(&data).and_then(|_| out.flush())
                };
            }
            ToController::Started { rank, pid } if self.valid_rank(a, rank) => {
                self.ranks[rank as usize].pid = pid;
            }
            ToController::Fence(entries) => {
                self.fence_entries.extend(entries);
                self.agents[a].in_fence = true;
                if self.fence_misses_a_rank() {
                    return;
                }
                if self.agents.iter().all(|ag| ag.in_fence || ag.done) {
                    let entries = std::mem::take(&mut self.fence_entries);
                    for ag in &mut self.agents {
                        ag.in_fence = false;
                    }
                    self.broadcast(&ToAgent::FenceDone(entries));
                }
            }
            ToController::Name { rank, op } if self.valid_rank(a, rank) => {
                let (ok, port) = self.serve_name(op);
                let _ = self.send(a, &ToAgent::NameResult { rank, ok, port });
            }
            ToController::Exited { rank, how, pmi } if self.valid_rank(a, rank) => {
                self.on_exit(rank, how, pmi)
            }
            ToController::Abort {
                rank,
                code,
                message,
            } if self.valid_rank(a, rank) => {
                let who = self.rank_label(rank);
                let detail = if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                };
                let status = match exit_status(code) {
                    same if same == code => String::new(),
                    other => format!(" (exit status {other})"),
                };
                self.fail(
                    code,
                    format!("{who} aborted the job with exit code {code}{status}{detail}"),
                );
            }
            ToController::Failed { rank, code, reason } => {
                self.fail(code, format!("{reason}; ending the job (rank {rank})"));
            }
            ToController::Done => {
                self.agents[a].done = true;
                self.agents[a].said_done = true;
            }
            ToController::Heartbeat => {} // any frame counts (see on_agent)
            other => {
                let host = self.agents[a].host.clone();
                self.fail(
                    1,
                    format!("unexpected message from the agent on {host}: {other:?}"),
                );
            }
        }
    }

    /// A fence can never complete once a rank that never initialized has
    /// exited: ends the job naming that rank (true) if any fence waits.
    fn fence_misses_a_rank(&mut self) -> bool {
        if !self.agents.iter().any(|ag| ag.in_fence) {
            return false;
        }
        let Some(gone) = self.ranks.iter().position(|r| r.silent) else {
            return false;
        };
        let who = self.rank_label(gone as u32);
        self.fail(
            1,
            format!("{who} exited without initializing MPI (it never spoke PMI) while other ranks wait for it in a PMI fence; ending the job"),
        );
        true
    }

    fn on_exit(&mut self, rank: u32, how: ExitKind, pmi: PmiState) {
        let idx = rank as usize;
        self.ranks[idx].exited = true;
        self.ranks[idx].finalized = pmi == PmiState::Finalized;
        self.ranks[idx].silent = pmi == PmiState::Silent;
        let others_running = self.ranks.iter().any(|r| !r.exited);
        let who = self.rank_label(rank);
        match how {
            ExitKind::Code(0) if pmi == PmiState::Initialized && others_running => self.fail(
                1,
                format!("{who} exited with code 0 without finalizing MPI (PMI) while other ranks still run; ending the job"),
            ),
            ExitKind::Code(0) => {
                self.fence_misses_a_rank();
            }
            ExitKind::Code(code) => self.fail(code, format!("{who} exited with code {code}; ending the job")),
            ExitKind::Signal(sig) => self.fail(
                128 + sig,
                format!("{who} was killed by signal {}; ending the job", signals::describe(sig)),
            ),
        }
    }

    fn on_signals(&mut self, sigfd: &mut nix::sys::signalfd::SignalFd) {
        for sig in signals::drain(sigfd) {
            match sig {
                libc::SIGCHLD => self.reap_agents(),
                libc::SIGINT | libc::SIGTERM => {
                    self.interrupts += 1;
                    if self.interrupts >= 2 {
                        if self.failure.is_none() {
                            verdict::say("second interrupt: killing every rank");
                            self.failure = Some(128 + sig);
                        }
                        self.broadcast(&ToAgent::Kill);
                        self.abandon_unconnected();
                    } else {
                        self.broadcast(&ToAgent::Signal(sig));
                    }
                }
                other => self.broadcast(&ToAgent::Signal(other)),
            }
        }
    }

    fn reap_agents(&mut self) {
        loop {
            let (pid, status) = match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid, ExitKind::Code(code)),
                Ok(WaitStatus::Signaled(pid, sig, _)) => (pid, ExitKind::Signal(sig as i32)),
                Ok(WaitStatus::StillAlive) | Err(_) => return,
                Ok(_) => continue,
            };
            let Some(a) = self.agents.iter().position(|ag| ag.pid == pid.as_raw()) else {
                continue;
            };
            self.agents[a].running = false;
            // A launch command that fails before its agent connected means the
            // agent will never come.
            if self.agents[a].conn.is_none() && !self.agents[a].done {
                let host = self.agents[a].host.clone();
                let how = match status {
                    ExitKind::Code(c) => format!("exited with code {c}"),
                    ExitKind::Signal(s) => format!("was killed by signal {}", signals::describe(s)),
                };
                self.agents[a].done = true;
                self.fail(
                    1,
                    format!("could not start the agent on host {host}: the launch command {how}"),
                );
                self.abandon_unconnected();
            }
        }
    }

    /// A local agent that died without saying it was done (killed) could
    /// not remove its node's segment files: once its ranks (which die
    /// with it) are gone, remove them here.
    fn clean_after_lost_agents(&self) {
        for agent in self.agents.iter().filter(|a| !a.said_done) {
            let Some((ranks, nodes)) = &agent.local else {
                continue;
            };
            let pids: Vec<i32> = ranks
                .iter()
                .map(|&r| self.ranks[r as usize].pid)
                .filter(|&p| p > 0)
                .collect();
            cleanup::wait_dead(&pids, Duration::from_secs(2));
            oxmpi::transport::shm::remove_job_files(&self.jobid, nodes);
        }
    }

    /// Waits (briefly) for agent processes so none is left behind.
    fn reap_all(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            self.reap_agents();
            if !self.agents.iter().any(|a| a.running) || Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        for agent in self.agents.iter().filter(|a| a.running) {
            // SAFETY: kill(2) on our own child's process group.
            unsafe { libc::kill(-agent.pid, libc::SIGKILL) };
        }
    }
}

/// Whether oxrun may read its stdin: not when it is a terminal of which we
/// are not the foreground job (a read would stop us with SIGTTIN).
fn stdin_is_ours() -> bool {
    // SAFETY: isatty/tcgetpgrp/getpgrp take no pointers.
    unsafe {
        if libc::isatty(0) == 1 {
            return libc::tcgetpgrp(0) == libc::getpgrp();
        }
    }
    true
}
