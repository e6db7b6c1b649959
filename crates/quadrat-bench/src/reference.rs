//! The reference result every implementation is checked against: brute
//! force while it is affordable, else sort and sweep (itself checked against
//! brute force at the smaller n, and by the test suite).

use std::time::Duration;

use super::implementation::Implementation;
use super::peers::{Bbox, BroadPhase, Brute, Sweep};
use super::timing::time;

/// Largest n at which brute force runs without a measurement to go by.
const UNMEASURED_BRUTE_N: usize = 20_000;

/// Decides when brute force is affordable, from its measured times.
#[derive(Clone, Debug)]
pub(crate) struct Oracle {
    limit: Duration,
    /// The largest n brute force was timed at, and its single-run time.
    brute: Option<(usize, Duration)>,
}

impl Oracle {
    /// Brute force is affordable while one run is expected to take less
    /// than `limit`.
    #[must_use]
    pub(crate) fn new(limit: Duration) -> Oracle {
        Oracle { limit, brute: None }
    }

    /// Records a brute-force run over `n` boxes.
    pub(crate) fn record_brute(&mut self, n: usize, t: Duration) {
        if self.brute.is_none_or(|(m, _)| n >= m) {
            self.brute = Some((n, t));
        }
    }

    /// The expected time of one brute-force run over `n` boxes: the time at
    /// the largest measured n, scaled as n².
    #[must_use]
    pub(crate) fn brute_estimate(&self, n: usize) -> Option<Duration> {
        let (m, t) = self.brute?;
        let scale = (n as f64 / m.max(1) as f64).powi(2);
        Some(t.mul_f64(scale))
    }

    /// Whether a brute-force run over `n` boxes fits the time limit.
    #[must_use]
    pub(crate) fn brute_affordable(&self, n: usize) -> bool {
        match self.brute_estimate(n) {
            Some(t) => t < self.limit,
            None => n <= UNMEASURED_BRUTE_N,
        }
    }

    /// The sorted pairs of `boxes`, which implementation found them, and
    /// for brute force how long its build + all pairs took (it is recorded).
    pub(crate) fn pairs(
        &mut self,
        world: Bbox,
        boxes: &[Bbox],
    ) -> (Implementation, Vec<(u32, u32)>, Option<Duration>) {
        let mut pairs = Vec::new();
        if self.brute_affordable(boxes.len()) {
            let (t, ()) = time(|| Brute::build(world, boxes).pairs_into(&mut pairs));
            self.record_brute(boxes.len(), t);
            pairs.sort_unstable();
            (Implementation::Brute, pairs, Some(t))
        } else {
            Sweep::build(world, boxes).pairs_into(&mut pairs);
            pairs.sort_unstable();
            (Implementation::Sweep, pairs, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brute_force_is_extrapolated_as_n_squared_from_the_largest_n() {
        let mut o = Oracle::new(Duration::from_secs(30));
        assert!(o.brute_affordable(10_000));
        assert!(!o.brute_affordable(1_000_000));
        o.record_brute(10_000, Duration::from_millis(100));
        o.record_brute(1_000, Duration::from_millis(5));
        assert_eq!(o.brute_estimate(100_000), Some(Duration::from_secs(10)));
        assert!(o.brute_affordable(100_000));
        assert!(!o.brute_affordable(1_000_000));
    }
}
