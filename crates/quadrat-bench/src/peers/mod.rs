//! Other broad phases behind one interface, [`BroadPhase`], so they can be
//! checked against each other and timed on the same input.
//!
//! Input is a slice of [`Bbox`]es, `[min_x, min_y, max_x, max_y]`, which are
//! **closed**: boxes that only touch along an edge or at a corner intersect,
//! and so does a zero-size box lying on another box's boundary. Each adapter
//! reports exactly these intersections, whatever its library does at the
//! boundary; the module docs of each peer say what its library does and what
//! the adapter corrects.
//!
//! | peer | type | update between frames |
//! |---|---|---|
//! | brute force, the oracle | [`Brute`] | copies the boxes |
//! | sort and sweep on x | [`Sweep`] | re-sorts the nearly sorted entries |
//! | the classic tutorial quadtree | [`TutorialQuadtree`] | clears and re-inserts |
//! | rstar's R*-tree | [`Rstar`] | rebuilds (bulk load) |
//! | broccoli's KD-tree / sweep hybrid | [`Broccoli`] | rebuilds |
//! | parry2d's BVH | [`Parry`] | moves leaves, refits, re-optimises |
//! | the same, rebuilt | [`ParryRebuild`] | rebuilds (moving frames only) |
//! | flat_spatial's sparse grid | [`FlatSpatial`] | moves boxes between cells |
//! | obvhs's BVH, built by PLOC | [`Obvhs`] | rebuilds (PLOC) |
//!
//! The last six need the `peers` feature.

mod brute;
mod sweep;
mod tutorial;

#[cfg(feature = "peers")]
mod broccoli;
#[cfg(feature = "peers")]
mod flat_spatial;
#[cfg(feature = "peers")]
mod obvhs;
#[cfg(feature = "peers")]
mod parry;
#[cfg(feature = "peers")]
mod rstar;

pub use self::brute::Brute;
pub use self::sweep::Sweep;
pub use self::tutorial::TutorialQuadtree;

#[cfg(feature = "peers")]
pub use self::broccoli::Broccoli;
#[cfg(feature = "peers")]
pub use self::flat_spatial::FlatSpatial;
#[cfg(feature = "peers")]
pub use self::obvhs::Obvhs;
#[cfg(feature = "peers")]
pub use self::parry::{Parry, ParryRebuild};
#[cfg(feature = "peers")]
pub use self::rstar::Rstar;

/// An axis-aligned box `[min_x, min_y, max_x, max_y]`, closed on all sides.
pub type Bbox = [f32; 4];

/// Closed intersection test: touching edges and corners count.
#[inline(always)]
#[must_use]
pub fn intersects(a: &Bbox, b: &Bbox) -> bool {
    a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3]
}

/// Grows a box outwards by one unit in the last place on every side.
///
/// Boxes that touch (or a zero-size box on another box's boundary) overlap
/// with a positive extent after this, so a library that only reports strict
/// overlaps still produces them as candidates. Candidates must then be
/// filtered with [`intersects`] on the original boxes.
#[inline]
#[must_use]
pub fn expand_ulp(b: &Bbox) -> Bbox {
    [
        b[0].next_down(),
        b[1].next_down(),
        b[2].next_up(),
        b[3].next_up(),
    ]
}

/// `(min(a, b), max(a, b))`.
#[inline(always)]
#[must_use]
pub fn ordered(a: u32, b: u32) -> (u32, u32) {
    if a < b { (a, b) } else { (b, a) }
}

/// The bounding box of all `boxes`, or `None` when there are none.
#[must_use]
pub fn bounds(boxes: &[Bbox]) -> Option<Bbox> {
    let (first, rest) = boxes.split_first()?;
    Some(rest.iter().fold(*first, |acc, b| {
        [
            acc[0].min(b[0]),
            acc[1].min(b[1]),
            acc[2].max(b[2]),
            acc[3].max(b[3]),
        ]
    }))
}

/// A broad-phase index over a set of boxes.
///
/// Indices reported by the methods refer to positions in the slice given to
/// [`BroadPhase::build`] (or to the latest [`BroadPhase::update`]). Methods
/// take `&mut self` because broccoli can only query through a mutable borrow
/// of its tree.
pub trait BroadPhase: Sized {
    /// Short, stable name used in reports and on the command line.
    const NAME: &'static str;

    /// Whether [`BroadPhase::update`] changes the index in place rather than
    /// rebuilding it.
    const INCREMENTAL: bool = false;

    /// Builds the index over `boxes`.
    ///
    /// `world` is the area the boxes are meant to occupy; boxes may still lie
    /// partly or wholly outside it. Only indexes that are built over fixed
    /// bounds use it.
    fn build(world: Bbox, boxes: &[Bbox]) -> Self;

    /// Appends every intersecting pair to `out`, each unordered pair exactly
    /// once as `(i, j)` with `i < j`, in no particular order.
    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>);

    /// Appends the index of every box intersecting `area` to `out`, each
    /// once, in no particular order.
    fn query(&mut self, area: Bbox, out: &mut Vec<u32>);

    /// Replaces the boxes with new positions of the same boxes (same count,
    /// same indices): the moving-frame path.
    ///
    /// The default rebuilds the index; peers with a native update override it
    /// and set [`BroadPhase::INCREMENTAL`].
    fn update(&mut self, world: Bbox, boxes: &[Bbox]) {
        *self = Self::build(world, boxes);
    }

    /// All intersecting pairs, each as `(i, j)` with `i < j`, sorted.
    fn pairs(&mut self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        self.pairs_into(&mut out);
        out.sort_unstable();
        out
    }

    /// For each query box, the sorted indices of the boxes it intersects.
    fn queries(&mut self, areas: &[Bbox]) -> Vec<Vec<u32>> {
        areas
            .iter()
            .map(|&area| {
                let mut hits = Vec::new();
                self.query(area, &mut hits);
                hits.sort_unstable();
                hits
            })
            .collect()
    }
}
