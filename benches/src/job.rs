//! One job of a side-by-side run, around the measurement: wait for others
//! to leave the CPUs, probe the machine's speed, and after the job clear
//! away stray ranks and say how it ended.

use std::path::Path;
use std::time::Duration;

use crate::capture::{kill_survivors, Captured, Ending};
use crate::machine::core_to_core_ns;
use crate::peers::{parse_records, settle};

/// The machine just before a job.
#[derive(Debug, Clone, Copy)]
pub struct Before {
    /// Busy share of the CPUs (other programs) after waiting for it to drop.
    pub load: Option<f64>,
    /// Core-to-core half round trip, in ns.
    pub machine_ns: Option<f64>,
}

impl Before {
    /// Waits (at most `max`) for a quiet machine, then probes it.
    pub fn wait_and_probe(max: Duration) -> Before {
        let load = settle(max);
        let machine_ns = core_to_core_ns(Duration::from_millis(50));
        Before { load, machine_ns }
    }

    /// The probe for people: `25` (ns) or `?`.
    pub fn machine_text(&self) -> String {
        self.machine_ns.map_or("?".into(), |ns| format!("{ns:.0}"))
    }
}

/// How one job went, as the reports show it.
#[derive(Debug, Clone, Default)]
pub struct JobRun {
    /// Its command line ([`crate::peers::show`]).
    pub command: String,
    /// `ok`, `dnf` or `failed`.
    pub status: &'static str,
    /// Why it is not `ok`, and the stray ranks killed after it.
    pub detail: String,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Busy share of the CPUs just before it started (other programs).
    pub load_before: Option<f64>,
    /// The machine's core-to-core half round trip just before it, in ns.
    pub machine_ns: Option<f64>,
}

impl JobRun {
    /// The job `command` that found the machine as `before` says and left
    /// `out`: `ok`, `dnf` (killed at `timeout`) or `failed` with the last
    /// line of `said` that is not a figure; the stray ranks of `programs`
    /// are killed, and counted in the detail.
    pub fn finish(
        command: String,
        before: Before,
        out: &Captured,
        timeout: Duration,
        said: &str,
        programs: &[&Path],
    ) -> JobRun {
        let t = timeout.as_secs_f64();
        let (status, mut detail) = match &out.ending {
            Ending::TimedOut => ("dnf", format!("did not finish within {t:.0} s")),
            Ending::Exited(s) if s.success() => ("ok", String::new()),
            Ending::Exited(s) => {
                let why = said
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty() && parse_records(l).is_empty());
                ("failed", format!("{s}: `{}`", why.unwrap_or("").trim()))
            }
        };
        let leftovers = kill_survivors(programs);
        if leftovers > 0 {
            detail += &format!(" ({leftovers} stray ranks killed after the job)");
        }
        JobRun {
            command,
            status,
            detail,
            elapsed: out.elapsed,
            load_before: before.load,
            machine_ns: before.machine_ns,
        }
    }

    /// Whether it exited by itself with status 0.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// `DETAIL (REACHED)` for a job that is not `ok`: "did not finish
    /// within 60 s (last size reported: 2 MiB)" and the like.
    pub fn note(&self, reached: &str) -> Option<String> {
        (!self.ok()).then(|| format!("{} ({reached})", self.detail))
    }

    /// The machine probe as a table cell: `25` (ns) or `–`.
    pub fn machine_cell(&self) -> String {
        self.machine_ns.map_or("–".into(), |ns| format!("{ns:.0}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{sh, Capturer};

    #[test]
    fn a_failure_names_its_last_words() {
        let c = Capturer::new(Duration::from_secs(10));
        let out = c
            .run(&mut sh(
                "echo oxmpi,bcast,2,8,time_us,1; echo boom >&2; exit 3",
            ))
            .unwrap();
        let before = Before {
            load: Some(0.1),
            machine_ns: None,
        };
        let run = JobRun::finish("x".into(), before, &out, c.timeout(), &out.stderr_tail, &[]);
        assert_eq!(run.status, "failed");
        assert!(run.detail.ends_with(": `boom`"), "{}", run.detail);
        assert_eq!(
            run.note("nothing reported"),
            Some(format!("{} (nothing reported)", run.detail))
        );
        assert_eq!(
            (run.load_before, run.machine_cell()),
            (Some(0.1), "–".to_string())
        );
        let out = c.run(&mut sh("true")).unwrap();
        let run = JobRun::finish("x".into(), before, &out, c.timeout(), "", &[]);
        assert!(run.ok() && run.note("-").is_none());
    }
}
