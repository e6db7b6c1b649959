//! Seeded object layouts shared by the tests, the benchmarks and the lab.
//!
//! **Not part of the public API.** This module is public only so that the
//! workspace's tests, benchmarks and lab can share it; it is hidden from the
//! docs, may change or disappear in any release, and has no semver promise.
//! Make your own test data instead (a few lines of a seeded generator do).
//!
//! The same `(layout, n, seed)` gives the same boxes on every machine and
//! every run, so a benchmark figure and a failing test can be reproduced
//! exactly. No dependency: a small [`Rng`] (SplitMix64) comes with it.
//!
//! ```
//! use quadrat::scenario::{Layout, Scenario};
//! let s = Scenario::new(Layout::Uniform, 1000, 7);
//! let boxes = s.boxes();
//! assert_eq!(boxes.len(), 1000);
//! assert_eq!(boxes, Scenario::new(Layout::Uniform, 1000, 7).boxes());
//! ```

use crate::geom::{Aabb, Vec2};

/// A small, fast, seeded pseudo-random generator (SplitMix64). Not for
/// cryptography; for reproducible test and benchmark data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A standard normal sample (Box–Muller).
    pub fn normal(&mut self) -> f32 {
        let u = 1.0 - self.unit(); // (0, 1]
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (core::f32::consts::TAU * v).cos()
    }
}

/// How objects are spread over the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Uniformly random centres, equal sizes.
    Uniform,
    /// Centres drawn from Gaussian blobs (about one blob per 1,000 objects),
    /// equal sizes: crowded spots and empty space.
    Clustered,
    /// Uniform centres; 5% of the objects are 20 times larger.
    MixedSizes,
}

impl Layout {
    /// All layouts, for sweeps.
    pub const ALL: [Layout; 3] = [Layout::Uniform, Layout::Clustered, Layout::MixedSizes];

    /// A short lowercase name: `uniform`, `clustered`, `mixed`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Layout::Uniform => "uniform",
            Layout::Clustered => "clustered",
            Layout::MixedSizes => "mixed",
        }
    }
}

/// A reproducible set of `n` square boxes in a square world.
///
/// The box side is chosen so that in the uniform layout each box overlaps
/// `overlaps` others on average (3 unless changed): two squares of side `s`
/// intersect when their centres are within `s` on both axes, so a box has
/// `n · 4s² / L²` partners in a world of side `L`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    /// The spread.
    pub layout: Layout,
    /// Number of boxes.
    pub n: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// The world: `[0, side]²`.
    pub world: Aabb,
    /// Side of an ordinary box.
    pub size: f32,
}

impl Scenario {
    /// `n` boxes in a 1000 × 1000 world, about 3 overlaps per box.
    #[must_use]
    pub fn new(layout: Layout, n: usize, seed: u64) -> Scenario {
        Scenario::with_overlaps(layout, n, seed, 3.0)
    }

    /// Like [`Scenario::new`], with another mean number of overlaps.
    #[must_use]
    pub fn with_overlaps(layout: Layout, n: usize, seed: u64, overlaps: f32) -> Scenario {
        let side = 1000.0f32;
        let size = side * (overlaps / (4.0 * n.max(1) as f32)).sqrt();
        Scenario {
            layout,
            n,
            seed,
            world: Aabb::new([0.0, 0.0], [side, side]),
            size,
        }
    }

    /// The centre of each box.
    #[must_use]
    pub fn centers(&self) -> Vec<Vec2> {
        let mut rng = Rng::new(self.seed);
        let (lo, hi) = (self.world.min, self.world.max);
        match self.layout {
            Layout::Uniform | Layout::MixedSizes => (0..self.n)
                .map(|_| Vec2::new(rng.range(lo.x, hi.x), rng.range(lo.y, hi.y)))
                .collect(),
            Layout::Clustered => {
                let blobs = (self.n / 1000).max(1);
                let sigma = self.world.width() / (4.0 * (blobs as f32).sqrt()) / 2.0;
                let centers: Vec<Vec2> = (0..blobs)
                    .map(|_| Vec2::new(rng.range(lo.x, hi.x), rng.range(lo.y, hi.y)))
                    .collect();
                (0..self.n)
                    .map(|_| {
                        let c = centers[rng.below(blobs as u64) as usize];
                        let p = c + Vec2::new(rng.normal(), rng.normal()) * sigma;
                        p.max(lo).min(hi)
                    })
                    .collect()
            }
        }
    }

    /// The boxes, the same for the same scenario every time.
    #[must_use]
    pub fn boxes(&self) -> Vec<Aabb> {
        let mut rng = Rng::new(self.seed ^ 0x5EED_B0E5);
        self.centers()
            .into_iter()
            .map(|c| {
                let big = self.layout == Layout::MixedSizes && rng.below(100) < 5;
                let half = self.size * if big { 10.0 } else { 0.5 };
                Aabb::from_center(c, [half, half])
            })
            .collect()
    }
}
