//! A PMI connection: a byte stream plus a [`FrameReader`], speaking one request
//! and one reply at a time. Shared by the PMI-1 and PMI-2 clients.
//!
//! Error policy: every failure (I/O, end of stream, unparsable or unexpected
//! reply) becomes a [`crate::Error`] naming the request and what came back;
//! nothing here panics on peer input. A read that sees end of stream fails at
//! once, so a dead server never leaves a rank hanging.

use std::io::{ErrorKind, Read, Write};

use super::wire::{self, Command, FrameReader, Framing};
use crate::Error;

/// The byte stream under a connection.
pub(crate) trait Stream: Read + Write + Send + std::fmt::Debug {}
impl<T: Read + Write + Send + std::fmt::Debug> Stream for T {}

/// One connection to a PMI server.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: Box<dyn Stream>,
    reader: FrameReader,
}

impl Conn {
    /// Wraps a connected stream; starts in PMI-1 line framing.
    pub(crate) fn new(stream: Box<dyn Stream>) -> Self {
        Conn {
            stream,
            reader: FrameReader::new(),
        }
    }

    /// Switches framing for both directions.
    pub(crate) fn set_framing(&mut self, framing: Framing) {
        self.reader.set_framing(framing);
    }

    /// Writes bytes already framed (a PMI-1 multi-line command).
    pub(crate) fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.stream.write_all(bytes).map_err(|source| Error::Os {
            call: "write to the PMI server",
            source,
        })?;
        self.stream.flush().map_err(|source| Error::Os {
            call: "write to the PMI server",
            source,
        })
    }

    /// Encodes and writes `cmd` in the current framing.
    pub(crate) fn send(&mut self, cmd: &Command) -> Result<(), Error> {
        let bytes = match self.reader.framing() {
            Framing::Line => wire::line::encode(cmd)?,
            Framing::LengthPrefixed => wire::framed::encode(cmd)?,
        };
        self.stream.write_all(&bytes).map_err(|source| Error::Os {
            call: "write to PMI server",
            source,
        })?;
        self.stream.flush().map_err(|source| Error::Os {
            call: "flush to PMI server",
            source,
        })
    }

    /// Reads the next message; `waiting_for` names it in errors.
    pub(crate) fn recv(&mut self, waiting_for: &str) -> Result<Command, Error> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(cmd) = self.reader.next_command()? {
                return Ok(cmd);
            }
            let n = match self.stream.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(Error::Os {
                        call: "read from PMI server",
                        source,
                    })
                }
            };
            if n == 0 {
                return Err(Error::Bootstrap(format!(
                    "PMI server closed the connection while this rank waited for {waiting_for:?} \
                     ({} unparsed bytes pending)",
                    self.reader.pending()
                )));
            }
            self.reader.push(&buf[..n]);
        }
    }

    /// Reads the next message and checks that it is named `expect`.
    pub(crate) fn expect(&mut self, expect: &str) -> Result<Command, Error> {
        let reply = self.recv(expect)?;
        if reply.name != expect {
            return Err(Error::Bootstrap(format!(
                "PMI server answered {reply:?} where {expect:?} was expected"
            )));
        }
        Ok(reply)
    }

    /// Sends `cmd`, then reads a reply that must be named `expect`.
    pub(crate) fn request(&mut self, cmd: &Command, expect: &str) -> Result<Command, Error> {
        self.send(cmd)?;
        self.expect(expect)
    }
}

/// Fails unless the reply's `rc` is 0 (a missing `rc` counts as 0); the
/// error carries `msg`/`errmsg` when the server gave one.
pub(crate) fn check_rc(reply: &Command, op: &str) -> Result<(), Error> {
    let Some(rc) = reply.get("rc") else {
        return Ok(());
    };
    if rc.trim() == "0" {
        return Ok(());
    }
    let msg = reply
        .get("msg")
        .or_else(|| reply.get("errmsg"))
        .unwrap_or("");
    Err(Error::Bootstrap(format!(
        "PMI {op} failed: rc={rc:?} msg={msg:?}"
    )))
}

/// Parses `key` of `reply` as an integer, naming the operation on failure.
pub(crate) fn int<T: std::str::FromStr>(reply: &Command, key: &str) -> Result<T, Error> {
    Ok(reply.require_int(key)?)
}

#[cfg(test)]
pub(crate) mod fake {
    //! A fake PMI server on the other end of a socketpair, for client tests.

    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::thread::JoinHandle;

    /// One scripted step: bytes the client must send, then bytes to answer.
    pub(crate) type Step = (&'static [u8], &'static [u8]);

    /// Runs `script` on a thread; returns the client end and a handle that
    /// yields everything the client sent after the script (until EOF).
    pub(crate) fn serve(script: Vec<Step>) -> (UnixStream, JoinHandle<Vec<u8>>) {
        let (client, mut server) = UnixStream::pair().expect("socketpair");
        let handle = std::thread::spawn(move || {
            for (want, answer) in script {
                let mut got = vec![0u8; want.len()];
                server.read_exact(&mut got).expect("client sent too little");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(want),
                    "client sent unexpected bytes"
                );
                server.write_all(answer).expect("answer");
            }
            let mut rest = Vec::new();
            let _ = server.read_to_end(&mut rest);
            rest
        });
        (client, handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eof_is_an_error_not_a_hang() {
        let (client, server) = std::os::unix::net::UnixStream::pair().unwrap();
        drop(server);
        let mut conn = Conn::new(Box::new(client));
        let err = conn.recv("barrier_out").unwrap_err().to_string();
        assert!(
            err.contains("closed") && err.contains("barrier_out"),
            "{err}"
        );
    }

    #[test]
    fn unexpected_reply_is_named() {
        let (client, h) = fake::serve(vec![(b"cmd=get_maxes\n", b"cmd=bogus rc=0\n")]);
        let mut conn = Conn::new(Box::new(client));
        let err = conn
            .request(&Command::new("get_maxes"), "maxes")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bogus") && err.contains("maxes"), "{err}");
        drop(conn);
        h.join().unwrap();
    }

    #[test]
    fn rc_checks() {
        let ok = Command::new("x").with("rc", "0");
        assert!(check_rc(&ok, "put").is_ok());
        assert!(check_rc(&Command::new("x"), "put").is_ok());
        let bad = Command::new("x").with("rc", "-1").with("msg", "nope");
        let err = check_rc(&bad, "put").unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("-1"), "{err}");
    }
}
