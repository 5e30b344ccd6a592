//! Markdown output: side-by-side tables and the report header.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::stats::{ratio, Summary};

/// One line of a side-by-side table: both launchers at one rank count.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Number of ranks.
    pub ranks: usize,
    /// Timings under `oxrun`.
    pub oxrun: Summary,
    /// Timings under `mpiexec.hydra`.
    pub hydra: Summary,
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// A Markdown table: min/median/mean (ms) for both launchers and the ratio
/// of the medians, oxrun / hydra.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| N | reps | oxrun min | oxrun median | oxrun mean \
         | hydra min | hydra median | hydra mean | ratio (median) |\n\
         |--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (o, h) = (&r.oxrun, &r.hydra);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            r.ranks,
            o.count.min(h.count),
            ms(o.min),
            ms(o.median),
            ms(o.mean),
            ms(h.min),
            ms(h.median),
            ms(h.mean),
            ratio(o.median, h.median)
        );
    }
    out
}

/// `time` as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_timestamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day)
/// (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// CPU model and logical core count of this host, from `/proc/cpuinfo`.
pub fn host_cpu() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores usable ({model})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(utc_timestamp(t), "2023-11-14 22:13:20 UTC");
    }

    #[test]
    fn table_rows_and_ratio() {
        let s = |m: u64| Summary::of(&[Duration::from_millis(m)]).unwrap();
        let text = table(&[Row {
            ranks: 8,
            oxrun: s(30),
            hydra: s(20),
        }]);
        let last = text.lines().last().unwrap();
        assert_eq!(
            last,
            "| 8 | 1 | 30.0 | 30.0 | 30.0 | 20.0 | 20.0 | 20.0 | 1.50 |"
        );
        assert_eq!(text.lines().count(), 3);
    }
}
