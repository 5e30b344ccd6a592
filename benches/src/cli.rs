//! What the runners' command lines have in common: flags read one by one,
//! durations in seconds, and the results directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// `benches/results`, where the runners write by default.
pub fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// Writes `body` to `dir/name`; the path written.
pub fn write_result(dir: &Path, name: &str, body: &str) -> Result<PathBuf, String> {
    let p = dir.join(name);
    std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(p)
}

/// Ends the runner `tool` with status 2 after printing `TOOL: ERROR` when
/// `result` is an error.
pub fn exit_on_error(tool: &str, result: Result<(), String>) {
    if let Err(e) = result {
        eprintln!("{tool}: {e}");
        std::process::exit(2);
    }
}

/// The arguments of a runner, read flag by flag; every error ends with
/// the usage line.
pub struct Flags<'a> {
    args: std::slice::Iter<'a, String>,
    usage: &'static str,
}

impl<'a> Flags<'a> {
    /// Reads `args` (without the program name).
    pub fn new(args: &'a [String], usage: &'static str) -> Self {
        Flags {
            args: args.iter(),
            usage,
        }
    }

    /// The next flag, if any.
    pub fn next_flag(&mut self) -> Option<&'a str> {
        self.args.next().map(String::as_str)
    }

    /// The value that follows `flag`.
    pub fn value(&mut self, flag: &str) -> Result<&'a str, String> {
        let usage = self.usage;
        self.args
            .next()
            .map(String::as_str)
            .ok_or_else(|| format!("{flag} needs a value\n{usage}"))
    }

    /// The value that follows `flag` as seconds: above zero, or zero too
    /// when `zero_ok`.
    pub fn seconds(&mut self, flag: &str, zero_ok: bool) -> Result<Duration, String> {
        let v = self.value(flag)?;
        let secs: f64 = v
            .parse()
            .ok()
            .filter(|&s| s > 0.0 || (zero_ok && s == 0.0))
            .ok_or_else(|| self.bad(flag, v))?;
        Ok(Duration::from_secs_f64(secs))
    }

    /// "bad value V for FLAG" and the usage.
    pub fn bad(&self, flag: &str, v: &str) -> String {
        format!("bad value {v:?} for {flag}\n{}", self.usage)
    }

    /// What `-h`, `--help` and an unknown flag get: the usage, after a word
    /// about the unknown flag.
    pub fn refuse(&self, flag: &str) -> String {
        match flag {
            "-h" | "--help" => self.usage.into(),
            other => format!("unknown argument {other:?}\n{}", self.usage),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_flags_values_and_seconds() {
        let a = args(&["--timeout", "2.5", "--settle", "0", "--x"]);
        let mut f = Flags::new(&a, "usage: x");
        assert_eq!(f.next_flag(), Some("--timeout"));
        assert_eq!(
            f.seconds("--timeout", false),
            Ok(Duration::from_millis(2500))
        );
        assert_eq!(f.next_flag(), Some("--settle"));
        assert_eq!(f.seconds("--settle", true), Ok(Duration::ZERO));
        assert_eq!(f.next_flag(), Some("--x"));
        assert!(f.value("--x").unwrap_err().starts_with("--x needs a value"));
        assert_eq!(f.next_flag(), None);
        assert_eq!(f.refuse("--help"), "usage: x");
        assert!(f.refuse("--y").starts_with("unknown argument \"--y\""));
    }

    #[test]
    fn zero_seconds_only_where_allowed() {
        let a = args(&["0", "-1"]);
        let mut f = Flags::new(&a, "u");
        assert!(f.seconds("--timeout", false).is_err());
        assert!(f.seconds("--settle", true).is_err());
    }
}
