//! PMI wire formats, shared by the client (this crate) and the server (`oxrun`).
//!
//! Two framings exist on one connection:
//! - PMI-1 "simple": one line per message, `cmd=NAME key=val key=val\n`, pairs
//!   separated by spaces; inside a value a backslash escapes the next byte.
//! - PMI-2: after a PMI-1 style `cmd=init pmi_version=2` exchange, each message
//!   is a 6-character ASCII decimal length (spaces allowed around the digits)
//!   followed by exactly that many bytes of `cmd=NAME;k=v;k=v;`. No escaping:
//!   a `;` inside a key or value cannot be represented and is refused.
//!
//! Everything here is pure and bounded, so it is fuzzed (`runtime/fuzz`).

use thiserror::Error;

/// Longest PMI-1 line (including the newline) or PMI-2 payload accepted.
///
/// ```
/// use oxmpi::bootstrap::wire::{line, WireError, MAX_MESSAGE};
/// let line = vec![b'x'; MAX_MESSAGE + 1];
/// assert!(matches!(line::decode(&line), Err(WireError::Oversized { max: MAX_MESSAGE, .. })));
/// ```
pub const MAX_MESSAGE: usize = 64 * 1024;

/// Width of the PMI-2 length prefix.
pub(crate) const PMI2_LEN_WIDTH: usize = 6;

/// Why bytes from a peer could not be read as a PMI message.
///
/// ```
/// use oxmpi::bootstrap::wire::{line, framed, Command, WireError};
/// assert!(matches!(line::decode(b"key=value\n"), Err(WireError::Malformed(_)))); // no cmd=
/// let semicolon = Command::new("put").with("value", "a;b");
/// assert!(matches!(framed::encode(&semicolon), Err(WireError::Unencodable { version: 2, .. })));
/// assert_eq!(
///     framed::decode_len(b"12x   ").unwrap_err().to_string(),
///     "PMI-2 length prefix \"12x   \" is not a decimal number"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// The message is longer than [`MAX_MESSAGE`].
    #[error("PMI message of {len} bytes exceeds the limit of {max} bytes")]
    Oversized {
        /// Length seen (or announced).
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The PMI-2 length prefix is not a decimal number.
    #[error("PMI-2 length prefix {0:?} is not a decimal number")]
    BadLength(String),
    /// The message does not follow the grammar.
    #[error("malformed PMI message: {0}")]
    Malformed(String),
    /// A key or value cannot be encoded in this framing.
    #[error("cannot encode {what} {text:?} in PMI-{version}: {why}")]
    Unencodable {
        /// "key" or "value".
        what: &'static str,
        /// The offending text.
        text: String,
        /// 1 or 2.
        version: u8,
        /// What character is not allowed.
        why: &'static str,
    },
}

/// One PMI message: the command name and its key/value pairs in wire order.
///
/// ```
/// use oxmpi::bootstrap::wire::Command;
/// let cmd = Command::new("put").with("key", "card-3").with("rank", 3);
/// assert_eq!(cmd.get("key"), Some("card-3"));
/// assert_eq!(cmd.require_int::<usize>("rank")?, 3);
/// assert!(cmd.require("value").is_err()); // names the missing key
/// # Ok::<(), oxmpi::bootstrap::wire::WireError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    /// Value of the leading `cmd=` pair (or `mcmd=` for PMI-1 multi-line commands).
    pub name: String,
    /// The remaining pairs, in the order they appeared.
    pub pairs: Vec<(String, String)>,
}

impl Command {
    /// A command with no pairs.
    ///
    /// See the example on [`Command`].
    pub fn new(name: impl Into<String>) -> Self {
        Command {
            name: name.into(),
            pairs: Vec::new(),
        }
    }

    /// Appends a pair (builder style).
    ///
    /// See the example on [`Command`].
    pub fn with(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.pairs.push((key.into(), value.to_string()));
        self
    }

    /// The value of the first pair named `key`.
    ///
    /// See the example on [`Command`].
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key`, or an error naming the missing key.
    ///
    /// See the example on [`Command`].
    pub fn require(&self, key: &str) -> Result<&str, WireError> {
        self.get(key).ok_or_else(|| {
            WireError::Malformed(format!("command {:?} lacks the key {key:?}", self.name))
        })
    }

    /// The value of `key` parsed as an integer, or an error naming key and value.
    ///
    /// See the example on [`Command`].
    pub fn require_int<T: std::str::FromStr>(&self, key: &str) -> Result<T, WireError> {
        let text = self.require(key)?;
        text.trim().parse().map_err(|_| {
            WireError::Malformed(format!(
                "command {:?}: {key}={text:?} is not an integer",
                self.name
            ))
        })
    }
}

fn split_pair(token: &str) -> Result<(String, String), WireError> {
    match token.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(WireError::Malformed(format!(
            "token {token:?} is not key=value"
        ))),
    }
}

fn into_command(mut pairs: Vec<(String, String)>) -> Result<Command, WireError> {
    if pairs.is_empty() {
        return Err(WireError::Malformed("empty message".into()));
    }
    let (k, name) = pairs.remove(0);
    if k != "cmd" && k != "mcmd" {
        return Err(WireError::Malformed(format!(
            "message must start with cmd=, found {k}="
        )));
    }
    if name.is_empty() {
        return Err(WireError::Malformed("empty command name".into()));
    }
    Ok(Command { name, pairs })
}

/// PMI-1 line framing.
pub mod line {
    use super::*;

    /// Encodes `cmd` as one line ending in `\n`, escaping the separators
    /// (space, tab), backslash and newline inside values.
    ///
    /// ```
    /// use oxmpi::bootstrap::wire::{line, Command};
    /// let cmd = Command::new("put").with("key", "k").with("value", "a b");
    /// let line = line::encode(&cmd)?;
    /// assert_eq!(line, b"cmd=put key=k value=a\\ b\n"); // the space is escaped
    /// assert_eq!(line::decode(&line)?, cmd);
    /// # Ok::<(), oxmpi::bootstrap::wire::WireError>(())
    /// ```
    pub fn encode(cmd: &Command) -> Result<Vec<u8>, WireError> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(b"cmd=");
        push_escaped(&mut out, "value", &cmd.name)?;
        for (k, v) in &cmd.pairs {
            if k.is_empty()
                || k.bytes()
                    .any(|b| matches!(b, b' ' | b'\t' | b'=' | b'\n' | b'\\'))
            {
                return Err(WireError::Unencodable {
                    what: "key",
                    text: k.clone(),
                    version: 1,
                    why: "keys must be non-empty without space, tab, '=', '\\' or newline",
                });
            }
            out.push(b' ');
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            push_escaped(&mut out, "value", v)?;
        }
        out.push(b'\n');
        if out.len() > MAX_MESSAGE {
            return Err(WireError::Oversized {
                len: out.len(),
                max: MAX_MESSAGE,
            });
        }
        Ok(out)
    }

    fn push_escaped(out: &mut Vec<u8>, _what: &'static str, v: &str) -> Result<(), WireError> {
        for b in v.bytes() {
            if matches!(b, b' ' | b'\t' | b'\\' | b'\n') {
                out.push(b'\\');
            }
            out.push(b);
        }
        Ok(())
    }

    /// Decodes one line (with or without its trailing `\n`).
    ///
    /// See the example on [`line::encode`].
    pub fn decode(line: &[u8]) -> Result<Command, WireError> {
        if line.len() > MAX_MESSAGE {
            return Err(WireError::Oversized {
                len: line.len(),
                max: MAX_MESSAGE,
            });
        }
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let text = std::str::from_utf8(line)
            .map_err(|_| WireError::Malformed("message is not UTF-8".into()))?;
        let mut pairs = Vec::new();
        let mut token = String::new();
        let mut chars = text.chars();
        let mut flush = |token: &mut String| -> Result<(), WireError> {
            if !token.is_empty() {
                pairs.push(split_pair(token)?);
                token.clear();
            }
            Ok(())
        };
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(n) => token.push(n),
                    None => {
                        return Err(WireError::Malformed("line ends in a lone backslash".into()))
                    }
                },
                ' ' | '\t' => flush(&mut token)?,
                '\n' => return Err(WireError::Malformed("newline inside a message".into())),
                c => token.push(c),
            }
        }
        flush(&mut token)?;
        into_command(pairs)
    }
}

/// PMI-2 length-prefixed framing.
pub mod framed {
    use super::*;

    /// Encodes `cmd` as a 6-character length followed by `cmd=NAME;k=v;...;`.
    ///
    /// ```
    /// use oxmpi::bootstrap::wire::{framed, Command};
    /// let cmd = Command::new("kvs-get").with("key", "card-1");
    /// let msg = framed::encode(&cmd)?;
    /// assert_eq!(msg, b"23    cmd=kvs-get;key=card-1;");
    /// let len = framed::decode_len(&msg[..6])?;
    /// assert_eq!(framed::decode(&msg[6..6 + len])?, cmd);
    /// # Ok::<(), oxmpi::bootstrap::wire::WireError>(())
    /// ```
    pub fn encode(cmd: &Command) -> Result<Vec<u8>, WireError> {
        let mut body = String::with_capacity(64);
        check("value", &cmd.name)?;
        body.push_str("cmd=");
        body.push_str(&cmd.name);
        body.push(';');
        for (k, v) in &cmd.pairs {
            if k.is_empty() || k.contains('=') {
                return Err(WireError::Unencodable {
                    what: "key",
                    text: k.clone(),
                    version: 2,
                    why: "keys must be non-empty without '='",
                });
            }
            check("key", k)?;
            check("value", v)?;
            body.push_str(k);
            body.push('=');
            body.push_str(v);
            body.push(';');
        }
        if body.len() > MAX_MESSAGE {
            return Err(WireError::Oversized {
                len: body.len(),
                max: MAX_MESSAGE,
            });
        }
        let mut out = format!("{:<6}", body.len()).into_bytes();
        out.extend_from_slice(body.as_bytes());
        Ok(out)
    }

    fn check(what: &'static str, text: &str) -> Result<(), WireError> {
        if text.contains(';') {
            return Err(WireError::Unencodable {
                what,
                text: text.to_string(),
                version: 2,
                why: "';' cannot be escaped",
            });
        }
        Ok(())
    }

    /// Parses the 6-byte length prefix.
    ///
    /// See the example on [`framed::encode`].
    pub fn decode_len(prefix: &[u8]) -> Result<usize, WireError> {
        let text = std::str::from_utf8(prefix)
            .map_err(|_| WireError::BadLength(String::from_utf8_lossy(prefix).into_owned()))?;
        let trimmed = text.trim_matches(|c: char| c == ' ' || c == '\0');
        if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
            return Err(WireError::BadLength(text.to_string()));
        }
        let len: usize = trimmed
            .parse()
            .map_err(|_| WireError::BadLength(text.to_string()))?;
        if len > MAX_MESSAGE {
            return Err(WireError::Oversized {
                len,
                max: MAX_MESSAGE,
            });
        }
        Ok(len)
    }

    /// Decodes a payload (without the length prefix).
    ///
    /// See the example on [`framed::encode`].
    pub fn decode(payload: &[u8]) -> Result<Command, WireError> {
        let text = std::str::from_utf8(payload)
            .map_err(|_| WireError::Malformed("message is not UTF-8".into()))?;
        let mut pairs = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let (token, after) = rest.split_once(';').ok_or_else(|| {
                WireError::Malformed(format!("pair {rest:?} is not terminated by ';'"))
            })?;
            pairs.push(split_pair(token)?);
            rest = after;
        }
        into_command(pairs)
    }
}

/// Which framing a connection currently speaks.
///
/// See the example on [`FrameReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// PMI-1 lines (also the first exchange of every PMI-2 connection).
    Line,
    /// PMI-2 length-prefixed messages.
    LengthPrefixed,
}

/// Accumulates bytes from a stream and yields complete messages.
///
/// ```
/// use oxmpi::bootstrap::wire::{Command, FrameReader, Framing};
/// let mut r = FrameReader::new(); // PMI-1 lines first
/// r.push(b"cmd=init pmi_version=2 pmi_subversion=0\n13    cmd=fullin");
/// let init = r.next_command()?.expect("one whole line");
/// assert_eq!(init.get("pmi_version"), Some("2"));
/// r.set_framing(Framing::LengthPrefixed); // after the init exchange
/// assert_eq!(r.next_command()?, None); // 13 bytes announced, 10 here so far
/// assert_eq!(r.pending(), 16);
/// r.push(b"it;");
/// assert_eq!(r.next_command()?, Some(Command::new("fullinit")));
/// assert_eq!(r.pending(), 0);
/// # Ok::<(), oxmpi::bootstrap::wire::WireError>(())
/// ```
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    framing: Framing,
}

impl Default for FrameReader {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameReader {
    /// A reader that starts in PMI-1 line framing.
    ///
    /// See the example on [`FrameReader`].
    pub fn new() -> Self {
        FrameReader {
            buf: Vec::new(),
            framing: Framing::Line,
        }
    }

    /// Switches framing (after a `pmi_version=2` init exchange).
    ///
    /// See the example on [`FrameReader`].
    pub fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
    }

    /// The framing in force.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Appends bytes read from the peer.
    ///
    /// See the example on [`FrameReader`].
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet consumed as messages.
    ///
    /// See the example on [`FrameReader`].
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// A PMI-1 multi-line command (`mcmd=NAME`, `key=value` lines, `endcmd`):
    /// values are taken verbatim up to the end of their line.
    fn next_multi_line(&mut self) -> Result<Option<Command>, WireError> {
        const END: &[u8] = b"\nendcmd\n";
        let Some(at) = self.buf.windows(END.len()).position(|w| w == END) else {
            if self.buf.len() > MAX_MESSAGE {
                return Err(WireError::Oversized {
                    len: self.buf.len(),
                    max: MAX_MESSAGE,
                });
            }
            return Ok(None);
        };
        let block: Vec<u8> = self.buf.drain(..at + END.len()).collect();
        let text = std::str::from_utf8(&block[..at])
            .map_err(|_| WireError::Malformed("multi-line command is not UTF-8".into()))?;
        let pairs = text
            .split('\n')
            .map(|l| match l.split_once('=') {
                Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
                _ => Err(WireError::Malformed(format!("line {l:?} is not key=value"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        into_command(pairs).map(Some)
    }

    /// The next complete message, `Ok(None)` if more bytes are needed, or an
    /// error (after which the connection should be closed).
    ///
    /// See the example on [`FrameReader`].
    pub fn next_command(&mut self) -> Result<Option<Command>, WireError> {
        match self.framing {
            Framing::Line if self.buf.starts_with(b"mcmd=") => self.next_multi_line(),
            Framing::Line => {
                let Some(end) = self.buf.iter().position(|&b| b == b'\n') else {
                    if self.buf.len() > MAX_MESSAGE {
                        return Err(WireError::Oversized {
                            len: self.buf.len(),
                            max: MAX_MESSAGE,
                        });
                    }
                    return Ok(None);
                };
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                line::decode(&line).map(Some)
            }
            Framing::LengthPrefixed => {
                if self.buf.len() < PMI2_LEN_WIDTH {
                    return Ok(None);
                }
                let len = framed::decode_len(&self.buf[..PMI2_LEN_WIDTH])?;
                if self.buf.len() < PMI2_LEN_WIDTH + len {
                    return Ok(None);
                }
                let frame: Vec<u8> = self.buf.drain(..PMI2_LEN_WIDTH + len).collect();
                framed::decode(&frame[PMI2_LEN_WIDTH..]).map(Some)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmi1_round_trip_with_escapes() {
        let cmd = Command::new("put")
            .with("kvsname", "kvs_1")
            .with("key", "k")
            .with("value", "a b\\c");
        let bytes = line::encode(&cmd).unwrap();
        assert_eq!(bytes, b"cmd=put kvsname=kvs_1 key=k value=a\\ b\\\\c\n");
        assert_eq!(line::decode(&bytes).unwrap(), cmd);
    }

    #[test]
    fn pmi1_tolerates_extra_spaces_and_empty_values() {
        let cmd = line::decode(b"cmd=get_result  rc=0 value=\n").unwrap();
        assert_eq!(cmd.name, "get_result");
        assert_eq!(cmd.get("rc"), Some("0"));
        assert_eq!(cmd.get("value"), Some(""));
    }

    #[test]
    fn pmi1_rejects_garbage() {
        assert!(line::decode(b"\n").is_err());
        assert!(line::decode(b"hello\n").is_err());
        assert!(line::decode(b"key=1 cmd=x\n").is_err());
        assert!(line::decode(b"cmd=x =1\n").is_err());
        assert!(line::decode(b"cmd=x a=\\").is_err());
        assert!(line::decode(&[b'c', b'm', b'd', b'=', 0xff, b'\n']).is_err());
    }

    #[test]
    fn pmi2_round_trip_and_exact_bytes() {
        let cmd = Command::new("kvs-put")
            .with("key", "k")
            .with("value", "v=1");
        let bytes = framed::encode(&cmd).unwrap();
        assert_eq!(bytes, b"28    cmd=kvs-put;key=k;value=v=1;");
        let mut r = FrameReader::new();
        r.set_framing(Framing::LengthPrefixed);
        r.push(&bytes[..10]);
        assert_eq!(r.next_command().unwrap(), None);
        r.push(&bytes[10..]);
        assert_eq!(r.next_command().unwrap(), Some(cmd));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn pmi2_length_prefix_variants() {
        assert_eq!(framed::decode_len(b"    12").unwrap(), 12);
        assert_eq!(framed::decode_len(b"12    ").unwrap(), 12);
        assert!(framed::decode_len(b"1 2   ").is_err());
        assert!(framed::decode_len(b"-1    ").is_err());
        assert!(framed::decode_len(b"      ").is_err());
        assert!(matches!(
            framed::decode_len(b"999999"),
            Err(WireError::Oversized { .. })
        ));
    }

    #[test]
    fn pmi2_rejects_semicolons_in_values() {
        let cmd = Command::new("kvs-put").with("value", "a;b");
        assert!(framed::encode(&cmd).is_err());
        assert!(framed::decode(b"cmd=x;a=1").is_err());
    }

    #[test]
    fn line_reader_splits_messages_and_bounds_size() {
        let mut r = FrameReader::new();
        r.push(b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\ncmd=par");
        assert_eq!(r.next_command().unwrap().unwrap().name, "init");
        assert_eq!(r.next_command().unwrap().unwrap().name, "get_maxes");
        assert_eq!(r.next_command().unwrap(), None);
        r.push(&vec![b'a'; MAX_MESSAGE + 1]);
        assert!(matches!(r.next_command(), Err(WireError::Oversized { .. })));
    }
}
