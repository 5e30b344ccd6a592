//! Host lists: `--host name[:slots],...` and hostfiles.

use crate::LaunchError;

/// A host and how many ranks it takes before it counts as oversubscribed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// Name as given (also passed to the launch command).
    pub name: String,
    /// Slots (default 1 per listed entry).
    pub slots: usize,
}

fn entry(name: &str, slots: Option<&str>, origin: &str) -> Result<HostSpec, LaunchError> {
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(LaunchError::Usage(format!(
            "{origin}: bad host name '{name}'"
        )));
    }
    let slots = match slots {
        None => 1,
        Some(text) => match text.trim().parse::<usize>() {
            Ok(n) if n > crate::limits::MAX_RANKS => {
                return Err(LaunchError::Usage(format!(
                    "{origin}: slots for host '{name}' got {n}, more than the limit of {}",
                    crate::limits::MAX_RANKS
                )))
            }
            Ok(n) if n > 0 => n,
            _ => {
                return Err(LaunchError::Usage(format!(
                    "{origin}: slots for host '{name}' must be a positive number, got '{text}'"
                )))
            }
        },
    };
    Ok(HostSpec {
        name: name.to_string(),
        slots,
    })
}

/// Parses `a,b:2,c`.
pub fn parse_list(text: &str) -> Result<Vec<HostSpec>, LaunchError> {
    text.split(',')
        .map(|item| {
            let (name, slots) = match item.split_once(':') {
                Some((n, s)) => (n, Some(s)),
                None => (item, None),
            };
            entry(name, slots, "--host")
        })
        .collect()
}

/// Parses hostfile text: `name`, `name:N`, `name slots=N`; `#` starts a comment.
pub fn parse_hostfile(text: &str, path: &str) -> Result<Vec<HostSpec>, LaunchError> {
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let origin = format!("hostfile {path} line {}", i + 1);
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default();
        let (name, mut slots) = match first.split_once(':') {
            Some((n, s)) => (n, Some(s)),
            None => (first, None),
        };
        for word in words {
            match word.split_once('=') {
                Some(("slots" | "cpu" | "max_slots", v)) if slots.is_none() => slots = Some(v),
                Some(("slots" | "cpu" | "max_slots", _)) => {}
                _ => {
                    return Err(LaunchError::Usage(format!(
                        "{origin}: unexpected '{word}' (expected name, name:N or name slots=N)"
                    )))
                }
            }
        }
        hosts.push(entry(name, slots, &origin)?);
    }
    if hosts.is_empty() {
        return Err(LaunchError::Usage(format!(
            "hostfile {path} lists no hosts"
        )));
    }
    Ok(hosts)
}

/// Reads and parses a hostfile.
pub fn read_file(path: &str) -> Result<Vec<HostSpec>, LaunchError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LaunchError::Usage(format!("cannot read hostfile '{path}': {e}")))?;
    parse_hostfile(&text, path)
}

/// This machine's host name.
pub fn local_hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether `name` means this machine.
pub fn is_local(name: &str) -> bool {
    if matches!(name, "localhost" | "127.0.0.1" | "::1") || name.starts_with("127.") {
        return true;
    }
    let me = local_hostname();
    name == me || me.split('.').next() == Some(name) || name.split('.').next() == Some(&me)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_files() {
        assert_eq!(
            parse_list("a,b:3").unwrap(),
            vec![
                HostSpec {
                    name: "a".into(),
                    slots: 1
                },
                HostSpec {
                    name: "b".into(),
                    slots: 3
                }
            ]
        );
        let file = "# cluster\nnode1 slots=4\nnode2:2 # gpu\n\nnode3\n";
        let hosts = parse_hostfile(file, "hf").unwrap();
        assert_eq!(hosts.iter().map(|h| h.slots).collect::<Vec<_>>(), [4, 2, 1]);
    }

    #[test]
    fn malformed_hostfile_names_the_line() {
        let err = parse_hostfile("ok\nnode2 banana\n", "hf")
            .unwrap_err()
            .to_string();
        assert!(err.contains("hostfile hf line 2"), "{err}");
        let err = parse_hostfile("n:zero\n", "hf").unwrap_err().to_string();
        assert!(err.contains("got 'zero'"), "{err}");
        assert!(parse_hostfile("# nothing\n", "hf").is_err());
        assert!(parse_list("a,,b").is_err());
        assert!(parse_list("a:0").is_err());
    }

    #[test]
    fn localhost_is_local() {
        assert!(is_local("localhost"));
        assert!(is_local(&local_hostname()));
        assert!(!is_local("surely-not-this-host.invalid"));
    }
}
