//! A rank's side of oxrun's PMI socket, for test binaries that re-run
//! themselves as ranks: raw PMI-1 lines and PMI-2 frames over `PMI_FD`,
//! each reply checked byte for byte.

use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// The PMI connection oxrun handed this rank.
pub struct Pmi {
    /// The socket behind `PMI_FD`.
    pub sock: UnixStream,
    /// `PMI_RANK`.
    pub rank: usize,
    /// `PMI_SIZE`.
    pub size: usize,
}

impl Pmi {
    /// The connection described by `PMI_FD`, `PMI_RANK` and `PMI_SIZE`.
    pub fn from_env() -> Pmi {
        let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} not set"));
        let fd: i32 = var("PMI_FD").parse().unwrap();
        // SAFETY: oxrun handed us this descriptor for our exclusive use.
        let sock = unsafe { UnixStream::from_raw_fd(fd) };
        Pmi {
            sock,
            rank: var("PMI_RANK").parse().unwrap(),
            size: var("PMI_SIZE").parse().unwrap(),
        }
    }

    /// Writes `bytes` as they are.
    pub fn send(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).unwrap();
    }

    /// One PMI-1 reply line, newline included.
    pub fn line(&mut self) -> String {
        let mut out = Vec::new();
        let mut b = [0u8];
        while b[0] != b'\n' {
            self.sock.read_exact(&mut b).expect("reply line");
            out.push(b[0]);
        }
        String::from_utf8(out).unwrap()
    }

    /// PMI-1: sends a line, checks the exact reply.
    pub fn ask1(&mut self, msg: &str, expect: &str) {
        self.send(msg.as_bytes());
        let got = self.line();
        assert_eq!(got, expect, "rank {} sent {msg:?}", self.rank);
    }

    /// A PMI-2 frame: the body's length in six characters, then the body.
    pub fn frame(body: &str) -> String {
        format!("{:<6}{body}", body.len())
    }

    /// One PMI-2 reply's body.
    pub fn reply2(&mut self) -> String {
        let mut len = [0u8; 6];
        self.sock.read_exact(&mut len).unwrap();
        let n: usize = std::str::from_utf8(&len).unwrap().trim().parse().unwrap();
        let mut body = vec![0u8; n];
        self.sock.read_exact(&mut body).unwrap();
        String::from_utf8(body).unwrap()
    }

    /// PMI-2: sends a framed message, checks the exact framed reply.
    pub fn ask2(&mut self, body: &str, expect: &str) {
        self.send(Self::frame(body).as_bytes());
        let got = self.reply2();
        assert_eq!(got, expect, "rank {} sent {body:?}", self.rank);
    }

    /// PMI-1 `init` at version 1.1, checking the reply.
    pub fn init1(&mut self) {
        self.ask1(
            "cmd=init pmi_version=1 pmi_subversion=1\n",
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        );
    }

    /// PMI-1 `get_my_kvsname`: the job's key-value space.
    pub fn kvsname(&mut self) -> String {
        self.send(b"cmd=get_my_kvsname\n");
        self.line()
            .strip_prefix("cmd=my_kvsname kvsname=")
            .expect("my_kvsname reply")
            .trim()
            .to_string()
    }

    /// A second PMI-1 epoch in `kvs`: each rank puts `second-RANK`, and
    /// after the barrier reads its successor's.
    pub fn second_epoch(&mut self, kvs: &str) {
        let (r, n) = (self.rank, self.size);
        self.ask1(
            &format!("cmd=put kvsname={kvs} key=second-{r} value={}\n", r * 10),
            "cmd=put_result rc=0 msg=success\n",
        );
        self.ask1("cmd=barrier_in\n", "cmd=barrier_out\n");
        let peer = (r + 1) % n;
        self.ask1(
            &format!("cmd=get kvsname={kvs} key=second-{peer}\n"),
            &format!("cmd=get_result rc=0 msg=success value={}\n", peer * 10),
        );
    }

    /// Enters a PMI-1 barrier and waits for the job to end (the socket to
    /// close), giving up after 10 s; then exits 0, so that only oxrun's exit
    /// code can show a job that never ended.
    pub fn wait_in_fence_then_exit(&mut self) -> ! {
        self.send(b"cmd=barrier_in\n");
        self.sock
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut b = [0u8; 64];
        let _ = self.sock.read(&mut b);
        std::process::exit(0);
    }
}
