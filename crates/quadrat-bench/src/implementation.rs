//! The implementations a benchmark run can choose from, behind dynamic
//! dispatch.

use clap::builder::PossibleValue;

use super::ours::{Quadrat, QuadratLoop, QuadratPar};
use super::peers::{Bbox, BroadPhase, Brute, Sweep, TutorialQuadtree};
#[cfg(feature = "peers")]
use super::peers::{Broccoli, FlatSpatial, Obvhs, Parry, ParryRebuild, Rstar};

/// One broad phase the benchmark can build, check and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Implementation {
    /// Every pair tested: the oracle, `O(n²)`.
    Brute,
    /// Sort and sweep on x.
    Sweep,
    /// The classic tutorial quadtree.
    Tutorial,
    /// quadrat, single-threaded.
    Quadrat,
    /// quadrat, pairs on all cores.
    QuadratPar,
    /// quadrat used as the tutorials teach: clear, one `insert` per box,
    /// then `for_each_pair` reading both values with `get`.
    QuadratLoop,
    /// rstar's R*-tree.
    #[cfg(feature = "peers")]
    Rstar,
    /// broccoli's KD-tree / sweep hybrid.
    #[cfg(feature = "peers")]
    Broccoli,
    /// parry2d's BVH, updated in place.
    #[cfg(feature = "peers")]
    Parry,
    /// parry2d's BVH, rebuilt every frame (moving frames only).
    #[cfg(feature = "peers")]
    ParryRebuild,
    /// flat_spatial's sparse grid.
    #[cfg(feature = "peers")]
    FlatSpatial,
    /// obvhs's BVH, built by PLOC.
    #[cfg(feature = "peers")]
    Obvhs,
}

/// What the benchmark needs to know about an implementation.
struct Spec {
    name: &'static str,
    incremental: bool,
    build: fn(Bbox, &[Bbox]) -> Box<dyn Index>,
}

impl Spec {
    const fn of<P: BroadPhase + 'static>() -> Spec {
        Spec {
            name: P::NAME,
            incremental: P::INCREMENTAL,
            build: |world, boxes| Box::new(P::build(world, boxes)),
        }
    }
}

impl Implementation {
    /// Every implementation this build knows, in report order.
    pub const ALL: &'static [Implementation] = &[
        Implementation::Brute,
        Implementation::Sweep,
        Implementation::Tutorial,
        #[cfg(feature = "peers")]
        Implementation::Rstar,
        #[cfg(feature = "peers")]
        Implementation::Broccoli,
        #[cfg(feature = "peers")]
        Implementation::Parry,
        #[cfg(feature = "peers")]
        Implementation::ParryRebuild,
        #[cfg(feature = "peers")]
        Implementation::FlatSpatial,
        #[cfg(feature = "peers")]
        Implementation::Obvhs,
        Implementation::Quadrat,
        Implementation::QuadratPar,
        Implementation::QuadratLoop,
    ];

    fn spec(self) -> Spec {
        match self {
            Implementation::Brute => Spec::of::<Brute>(),
            Implementation::Sweep => Spec::of::<Sweep>(),
            Implementation::Tutorial => Spec::of::<TutorialQuadtree>(),
            Implementation::Quadrat => Spec::of::<Quadrat>(),
            Implementation::QuadratPar => Spec::of::<QuadratPar>(),
            Implementation::QuadratLoop => Spec::of::<QuadratLoop>(),
            #[cfg(feature = "peers")]
            Implementation::Rstar => Spec::of::<Rstar>(),
            #[cfg(feature = "peers")]
            Implementation::Broccoli => Spec::of::<Broccoli>(),
            #[cfg(feature = "peers")]
            Implementation::Parry => Spec::of::<Parry>(),
            #[cfg(feature = "peers")]
            Implementation::ParryRebuild => Spec::of::<ParryRebuild>(),
            #[cfg(feature = "peers")]
            Implementation::FlatSpatial => Spec::of::<FlatSpatial>(),
            #[cfg(feature = "peers")]
            Implementation::Obvhs => Spec::of::<Obvhs>(),
        }
    }

    /// The name used in reports and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Whether a moving frame updates the index in place (otherwise it is
    /// rebuilt).
    #[must_use]
    pub fn is_incremental(self) -> bool {
        self.spec().incremental
    }

    /// `true` for everything but quadrat: the implementations quadrat is
    /// measured against.
    #[must_use]
    pub fn is_peer(self) -> bool {
        !matches!(
            self,
            Implementation::Quadrat | Implementation::QuadratPar | Implementation::QuadratLoop
        )
    }

    /// Whether it takes part in build + pairs and queries; `false` for
    /// variants that differ only in how they follow moving boxes.
    #[must_use]
    pub fn is_static(self) -> bool {
        #[cfg(feature = "peers")]
        if self == Implementation::ParryRebuild {
            return false;
        }
        true
    }

    /// Builds this implementation's index over `boxes`.
    #[must_use]
    pub fn build(self, world: Bbox, boxes: &[Bbox]) -> Box<dyn Index> {
        (self.spec().build)(world, boxes)
    }
}

impl clap::ValueEnum for Implementation {
    fn value_variants<'a>() -> &'a [Self] {
        Implementation::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

/// A built index of any implementation: the object-safe part of
/// [`BroadPhase`].
pub trait Index {
    /// Appends every intersecting pair, each once as `(i, j)` with `i < j`.
    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>);

    /// Appends the index of every box intersecting `area`.
    fn query(&mut self, area: Bbox, out: &mut Vec<u32>);

    /// Moves the boxes to new positions (same count and indices).
    fn update(&mut self, world: Bbox, boxes: &[Bbox]);

    /// All intersecting pairs, sorted.
    fn sorted_pairs(&mut self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        self.pairs_into(&mut out);
        out.sort_unstable();
        out
    }
}

impl<P: BroadPhase> Index for P {
    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        BroadPhase::pairs_into(self, out);
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        BroadPhase::query(self, area, out);
    }

    fn update(&mut self, world: Bbox, boxes: &[Bbox]) {
        BroadPhase::update(self, world, boxes);
    }
}
