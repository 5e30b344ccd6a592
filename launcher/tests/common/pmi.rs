//! A rank's side of oxrun's PMI socket, for test binaries that re-run
//! themselves as ranks: raw PMI-1 lines and PMI-2 frames over `PMI_FD`,
//! each reply checked byte for byte.

use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;

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
}
