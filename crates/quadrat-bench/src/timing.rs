//! Wall-clock timing: single runs, medians, and a time budget.

use std::time::{Duration, Instant};

/// Runs `f` once and returns how long it took, with its result.
pub(crate) fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

/// The median of `samples` (the mean of the middle two for an even count);
/// zero for no samples.
#[must_use]
pub(crate) fn median(samples: &[Duration]) -> Duration {
    let mut s = samples.to_vec();
    s.sort_unstable();
    match s.len() {
        0 => Duration::ZERO,
        n if !n.is_multiple_of(2) => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2,
    }
}

/// Collects up to `runs` samples, stopping early once the samples add up to
/// `budget` (there is always at least one).
#[derive(Debug)]
pub(crate) struct Sampler {
    runs: usize,
    budget: Duration,
    samples: Vec<Duration>,
}

impl Sampler {
    /// A sampler for `runs` samples (at least 1) within `budget`.
    #[must_use]
    pub(crate) fn new(runs: usize, budget: Duration) -> Sampler {
        Sampler {
            runs: runs.max(1),
            budget,
            samples: Vec::new(),
        }
    }

    /// `true` while another sample is wanted.
    #[must_use]
    pub(crate) fn wants_more(&self) -> bool {
        self.samples.is_empty()
            || (self.samples.len() < self.runs
                && self.samples.iter().sum::<Duration>() < self.budget)
    }

    /// Records one sample.
    pub(crate) fn push(&mut self, sample: Duration) {
        self.samples.push(sample);
    }

    /// The samples so far.
    #[must_use]
    pub(crate) fn samples(&self) -> &[Duration] {
        &self.samples
    }

    /// The median of the samples so far.
    #[must_use]
    pub(crate) fn median(&self) -> Duration {
        median(&self.samples)
    }
}

/// Runs `run(i)` once in each round for every sampler `i` that wants more
/// samples, and records what it returns, until none wants more: the
/// participants take turns, so that a slow spell of a shared machine falls
/// on all of them alike instead of on whichever ran then.
pub(crate) fn take_turns(samplers: &mut [Sampler], mut run: impl FnMut(usize) -> Duration) {
    while samplers.iter().any(Sampler::wants_more) {
        for (i, sampler) in samplers.iter_mut().enumerate() {
            if sampler.wants_more() {
                sampler.push(run(i));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[]), Duration::ZERO);
        assert_eq!(median(&[ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(
            median(&[ms(4), ms(1), ms(3), ms(100)]),
            Duration::from_micros(3500)
        );
    }

    #[test]
    fn samplers_take_turns_until_each_has_enough() {
        let ms = Duration::from_millis;
        let mut samplers = [
            Sampler::new(3, ms(1000)),
            Sampler::new(2, ms(1000)),
            Sampler::new(3, ms(1000)),
        ];
        let mut order = Vec::new();
        take_turns(&mut samplers, |i| {
            order.push(i);
            ms(1)
        });
        assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 2]);
        let counts: Vec<usize> = samplers.iter().map(|s| s.samples().len()).collect();
        assert_eq!(counts, [3, 2, 3]);
    }

    #[test]
    fn sampler_stops_at_the_count_or_the_budget() {
        let mut s = Sampler::new(3, Duration::from_secs(10));
        while s.wants_more() {
            s.push(Duration::from_secs(1));
        }
        assert_eq!(s.samples().len(), 3);
        let mut s = Sampler::new(5, Duration::from_secs(10));
        while s.wants_more() {
            s.push(Duration::from_secs(6));
        }
        assert_eq!(s.samples().len(), 2);
        let s = Sampler::new(0, Duration::ZERO);
        assert!(s.wants_more(), "always at least one sample");
    }
}
