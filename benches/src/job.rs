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

/// How a job ended: `ok`, `dnf` (killed at `timeout`) or `failed` with
/// the last line of `said` that is not a figure; a note about the stray
/// ranks of `programs` killed after it, if any.
pub fn ending(
    out: &Captured,
    timeout: Duration,
    said: &str,
    programs: &[&Path],
) -> (&'static str, String) {
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
    (status, detail)
}
