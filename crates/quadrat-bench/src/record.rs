//! One measured (or extrapolated) figure of a benchmark run.

use std::time::Duration;

use quadrat::scenario::Layout;

use super::implementation::Implementation;
use super::scene::{Motion, QueryKind};

/// What was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Benchmark {
    /// Build the index, then find all pairs: one run.
    Pairs,
    /// Update the index to a new frame, then find all pairs: one frame.
    Moving(Motion),
    /// A batch of queries of one kind against a built index.
    Queries(QueryKind),
}

impl Benchmark {
    /// The name used in the CSV file: `pairs`, `moving-drift`,
    /// `moving-teleport`, `query-area`, `query-circle`, `query-point`,
    /// `query-nearest`, `query-raycast`.
    #[must_use]
    pub fn name(self) -> String {
        match self {
            Benchmark::Pairs => "pairs".to_owned(),
            Benchmark::Moving(m) => format!("moving-{}", m.name()),
            Benchmark::Queries(k) => format!("query-{}", k.name()),
        }
    }
}

/// One figure: the median time of an implementation on one scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// What was measured.
    pub benchmark: Benchmark,
    /// The scene's layout.
    pub layout: Layout,
    /// Number of boxes.
    pub n: usize,
    /// Who was measured.
    pub implementation: Implementation,
    /// The median of the samples: per run, per frame, or per query batch.
    pub median: Duration,
    /// How many samples the median is of; 0 when extrapolated.
    pub samples: usize,
    /// `true` when not measured but extrapolated from smaller n.
    pub extrapolated: bool,
    /// Pairs found (pairs and moving benchmarks) or hits over the batch
    /// (query benchmarks: boxes found by nearest queries, rays that hit).
    pub count: u64,
    /// Queries in the batch (query benchmarks), else 0.
    pub queries: usize,
}

impl Record {
    /// The median in milliseconds.
    #[must_use]
    pub fn millis(&self) -> f64 {
        self.median.as_secs_f64() * 1e3
    }

    /// Queries per second, for query benchmarks.
    #[must_use]
    pub fn queries_per_second(&self) -> Option<f64> {
        (self.queries > 0 && !self.median.is_zero())
            .then(|| self.queries as f64 / self.median.as_secs_f64())
    }
}
