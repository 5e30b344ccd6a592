//! `MPI_Dims_create`: a balanced grid shape for a number of processes.

use crate::error::Error;

/// Fills the zero entries of `dims` so that the product of all entries is
/// `nnodes` (`MPI_Dims_create`). Entries already set are kept; the filled
/// ones are as close to each other as possible (smallest difference
/// between the largest and smallest, then the smallest largest) and in
/// non-increasing order.
///
/// Errors: `nnodes < 1`, a negative entry, or set entries whose product
/// does not divide `nnodes`.
///
/// ```
/// let mut dims = [0, 0, 0];
/// oxmpi::topo::dims_create(24, &mut dims)?;
/// assert_eq!(dims, [4, 3, 2]);
/// let mut dims = [0, 3, 0];
/// oxmpi::topo::dims_create(6, &mut dims)?;
/// assert_eq!(dims, [2, 3, 1]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> Result<(), Error> {
    if nnodes < 1 {
        return Err(Error::InvalidArgument {
            arg: "nnodes",
            reason: format!("{nnodes} processes: need at least 1"),
        });
    }
    if let Some((i, d)) = dims.iter().enumerate().find(|(_, &d)| d < 0) {
        return Err(Error::InvalidArgument {
            arg: "dims",
            reason: format!("dims[{i}] is {d}: entries must be 0 (to fill) or positive"),
        });
    }
    let fixed: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| d as i64).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if nnodes as i64 % fixed != 0 || (free == 0 && fixed != nnodes as i64) {
        return Err(Error::InvalidArgument {
            arg: "dims",
            reason: format!(
                "the set entries {dims:?} multiply to {fixed}, which cannot make a grid of \
                 {nnodes} processes"
            ),
        });
    }
    let factors = balanced((nnodes as i64 / fixed) as u64, free);
    let mut it = factors.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free entry") as i32;
    }
    Ok(())
}

/// The non-increasing factorization of `n` into `k` factors with the
/// smallest (max - min), then the smallest max.
fn balanced(n: u64, k: usize) -> Vec<u64> {
    if k == 0 {
        return Vec::new();
    }
    let mut divisors: Vec<u64> = (1..)
        .take_while(|d| d * d <= n)
        .filter(|d| n.is_multiple_of(*d))
        .flat_map(|d| [d, n / d])
        .collect();
    divisors.sort_unstable();
    divisors.dedup();
    let mut best: Option<((u64, u64), Vec<u64>)> = None;
    let mut cur = Vec::with_capacity(k);
    search(n, k, u64::MAX, &divisors, &mut cur, &mut best);
    best.expect("n = n * 1 * ... * 1 always works").1
}

fn search(
    n: u64,
    k: usize,
    cap: u64,
    divisors: &[u64],
    cur: &mut Vec<u64>,
    best: &mut Option<((u64, u64), Vec<u64>)>,
) {
    if k == 1 {
        if n > cap {
            return;
        }
        cur.push(n);
        let (max, min) = (cur[0], n);
        let score = (max - min, max);
        if !matches!(best, Some((s, _)) if *s <= score) {
            *best = Some((score, cur.clone()));
        }
        cur.pop();
        return;
    }
    // The next factor f is the largest of the remaining k: f^k >= n.
    for &f in divisors.iter().rev() {
        if f > cap || !n.is_multiple_of(f) {
            continue;
        }
        if (f as u128).pow(k as u32) < n as u128 {
            break;
        }
        if let Some((s, _)) = best {
            // Already worse than the best on the (max - min) bound? The
            // smallest factor is at least 1, the largest is cur[0] (or f).
            let max = cur.first().copied().unwrap_or(f);
            let lower = max.saturating_sub(f); // min <= f
            if lower > s.0 {
                continue;
            }
        }
        cur.push(f);
        search(n / f, k - 1, f, divisors, cur, best);
        cur.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dc(n: i32, dims: &[i32]) -> Result<Vec<i32>, Error> {
        let mut d = dims.to_vec();
        dims_create(n, &mut d).map(|()| d)
    }

    #[test]
    fn table() {
        let cases: &[(i32, &[i32], &[i32])] = &[
            (1, &[0, 0], &[1, 1]),
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (8, &[0, 0, 0], &[2, 2, 2]),
            (12, &[0, 0], &[4, 3]),
            (12, &[0, 0, 0], &[3, 2, 2]),
            (16, &[0, 0, 0], &[4, 2, 2]),
            (24, &[0, 0, 0], &[4, 3, 2]),
            (36, &[0, 0, 0], &[4, 3, 3]),
            (64, &[0, 0, 0], &[4, 4, 4]),
            (6, &[0, 3, 0], &[2, 3, 1]),
            (12, &[2, 0, 0], &[2, 3, 2]),
            (9, &[3, 3], &[3, 3]),
            (5, &[0], &[5]),
            (1024, &[0; 10], &[2; 10]),
            (30, &[0, 0, 0, 0], &[5, 3, 2, 1]),
        ];
        for &(n, dims, want) in cases {
            assert_eq!(dc(n, dims).unwrap(), want, "dims_create({n}, {dims:?})");
        }
        assert_eq!(dc(4, &[]).unwrap_err().class(), crate::ErrorClass::Dims);
        let e = dc(7, &[0, 3, 0]).unwrap_err().to_string();
        assert!(
            e.contains("multiply to 3") && e.contains("7 processes"),
            "{e}"
        );
        assert!(dc(8, &[2, 2]).is_err());
        assert!(dc(0, &[0]).unwrap_err().to_string().contains("`nnodes`"));
        assert!(dc(4, &[0, -1])
            .unwrap_err()
            .to_string()
            .contains("dims[1] is -1"));
    }
}
