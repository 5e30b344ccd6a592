//! Splits a rank's output stream into whole lines, so the controller can
//! print each line in one write and never mix two ranks' bytes in a line.

/// A line longer than this is forwarded in pieces rather than buffered forever.
pub const MAX_LINE: usize = 1 << 20;

/// Takes the complete lines at the front of `buf` (everything up to the last
/// newline), or everything when `eof` or when the buffer exceeds [`MAX_LINE`].
/// A last line without a newline gets one at end of file, so the next line
/// printed (maybe another rank's) starts on a line of its own.
/// Returns `None` when nothing is ready.
pub fn take_lines(buf: &mut Vec<u8>, eof: bool) -> Option<Vec<u8>> {
    if buf.is_empty() {
        return None;
    }
    let cut = if eof || buf.len() > MAX_LINE {
        buf.len()
    } else {
        buf.iter().rposition(|&b| b == b'\n')? + 1
    };
    let rest = buf.split_off(cut);
    let mut lines = std::mem::replace(buf, rest);
    if eof && lines.last() != Some(&b'\n') {
        lines.push(b'\n');
    }
    Some(lines)
}

/// Prefixes every line of `data` with `label` (the last line may lack a newline).
pub fn label_lines(label: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 8 * label.len());
    for line in data.split_inclusive(|&b| b == b'\n') {
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_only() {
        let mut buf = b"a\nb\npart".to_vec();
        assert_eq!(take_lines(&mut buf, false).unwrap(), b"a\nb\n");
        assert_eq!(buf, b"part");
        assert_eq!(take_lines(&mut buf, false), None);
        assert_eq!(take_lines(&mut buf, true).unwrap(), b"part\n");
        assert_eq!(take_lines(&mut buf, true), None);
    }

    #[test]
    fn labels_each_line() {
        assert_eq!(label_lines("[3] ", b"x\ny\nz"), b"[3] x\n[3] y\n[3] z");
    }
}
