//! Summary statistics of timing samples and of figures.

use std::time::Duration;

/// Min, median and mean of a non-empty set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Smallest sample.
    pub min: Duration,
    /// Middle sample; the mean of the two middle ones for an even count.
    pub median: Duration,
    /// Arithmetic mean.
    pub mean: Duration,
    /// Largest sample.
    pub max: Duration,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none.
    pub fn of(samples: &[Duration]) -> Option<Summary> {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let count = sorted.len();
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let median = if count % 2 == 1 {
            sorted[count / 2]
        } else {
            (sorted[count / 2 - 1] + sorted[count / 2]) / 2
        };
        let total: Duration = sorted.iter().sum();
        let mean = total / count as u32;
        Some(Summary {
            count,
            min,
            median,
            mean,
            max,
        })
    }
}

/// `a / b` as a float (infinite when `b` is zero).
pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// Sorts `v` and returns its median (mean of the middle two for even n).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Geometric mean; `None` when empty or with a value not above zero.
pub fn geomean(v: &[f64]) -> Option<f64> {
    if v.is_empty() || v.iter().any(|&x| x <= 0.0) {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn empty_has_no_summary() {
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn single_sample() {
        let s = Summary::of(&ms(&[7])).unwrap();
        let d = Duration::from_millis(7);
        assert_eq!((s.count, s.min, s.median, s.mean, s.max), (1, d, d, d, d));
    }

    #[test]
    fn odd_count_median_is_middle_of_sorted() {
        let s = Summary::of(&ms(&[30, 10, 20, 100, 40])).unwrap();
        assert_eq!(s.min, Duration::from_millis(10));
        assert_eq!(s.median, Duration::from_millis(30));
        assert_eq!(s.mean, Duration::from_millis(40));
        assert_eq!(s.max, Duration::from_millis(100));
    }

    #[test]
    fn even_count_median_averages_middle_pair() {
        let s = Summary::of(&ms(&[4, 1, 3, 2])).unwrap();
        assert_eq!(s.median, Duration::from_micros(2500));
        assert_eq!(s.mean, Duration::from_micros(2500));
    }

    #[test]
    fn mean_keeps_sub_millisecond_precision() {
        let v = [Duration::from_micros(1), Duration::from_micros(2)];
        assert_eq!(Summary::of(&v).unwrap().mean, Duration::from_nanos(1500));
    }

    #[test]
    fn ratio_of_durations() {
        let r = ratio(Duration::from_millis(30), Duration::from_millis(20));
        assert!((r - 1.5).abs() < 1e-12);
        assert!(ratio(Duration::from_secs(1), Duration::ZERO).is_infinite());
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn geometric_mean() {
        assert!((geomean(&[2.0, 0.5]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
    }
}
