//! How figures are written in the reports: sizes, times, rates, ratios.

/// Bytes in a KiB.
pub const KIB: u64 = 1024;
/// Bytes in a MiB.
pub const MIB: u64 = 1024 * KIB;

/// `512 B`, `64 KiB`, `16 MiB`: the largest unit that divides `size`.
pub fn size_label(size: u64) -> String {
    if size >= MIB && size.is_multiple_of(MIB) {
        format!("{} MiB", size / MIB)
    } else if size >= KIB && size.is_multiple_of(KIB) {
        format!("{} KiB", size / KIB)
    } else {
        format!("{size} B")
    }
}

/// Microseconds: `digits` decimals below 10, one below 1000, none above;
/// `–` for no figure.
pub fn micros(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(v) if v < 10.0 => format!("{v:.digits$}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
        None => "–".into(),
    }
}

/// MB/s: one decimal below 100.
pub fn mbps(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 100.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
        None => "–".into(),
    }
}

/// GB/s: more decimals the smaller it is.
pub fn gbps(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 0.01 => format!("{v:.4}"),
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) => format!("{v:.2}"),
        None => "–".into(),
    }
}

/// `a / b` when both exist and `b` is above zero.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// A ratio with two decimals, `–` for none.
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| format!("{r:.2}"))
}

/// A share (0.25) as a percentage (`25%`), `?` when unknown.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |v| format!("{:.0}%", v * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_labels() {
        assert_eq!(size_label(0), "0 B");
        assert_eq!(size_label(512), "512 B");
        assert_eq!(size_label(64 * KIB), "64 KiB");
        assert_eq!(size_label(16 * MIB), "16 MiB");
        assert_eq!(size_label(64 * MIB), "64 MiB");
    }

    #[test]
    fn figures() {
        assert_eq!(micros(Some(0.12345), 3), "0.123");
        assert_eq!(micros(Some(0.12345), 2), "0.12");
        assert_eq!(micros(Some(123.45), 2), "123.5");
        assert_eq!(micros(None, 2), "–");
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(fmt_ratio(ratio(Some(3.0), Some(2.0))), "1.50");
        assert_eq!(pct(Some(0.25)), "25%");
    }
}
