//! [`QuadTree<T>`]: a loose quadtree with stable keys.
//!
//! This file is the API: the data layout, construction and the small
//! accessors. The rest, one concern per file:
//! - [`node`](node.rs): the node, and its geometry kept apart (cells,
//!   loose bounds, quadrants, border edges), and the records every
//!   operation shares;
//! - [`runs`](runs.rs): the run engine (each node's items as a sorted run
//!   of the entry array), compaction, child blocks;
//! - [`insert`](insert.rs), [`build`](build.rs), [`remove`](remove.rs),
//!   [`update`](update.rs), [`parallel`](parallel.rs): the mutations;
//! - [`order`](order.rs): the key and sort engine of the bulk build
//!   (Morton codes, radix sort, gather);
//! - [`query`](query.rs), [`pairs`](pairs.rs), [`nearest`](nearest.rs),
//!   [`raycast`](raycast.rs): the questions;
//! - [`validate`](validate.rs): the invariant checker.

mod build;
mod insert;
mod nearest;
mod node;
mod order;
mod pairs;
#[cfg(feature = "parallel")]
mod parallel;
mod query;
mod raycast;
mod remove;
mod runs;
#[cfg(feature = "serde")]
mod snapshot;
mod update;
mod validate;

pub(crate) use node::{Entry, Geo, Hot, Node, NodeStack, Sorter, quadrant};
pub use pairs::PairStats;
pub(crate) use pairs::{NodeFilter, sort_pairs};
pub use query::{Query, Region};

use crate::error::Error;
use crate::geom::{Aabb, Vec2};
use crate::key::{Key, Ranks, Slab, Slot};
use std::sync::OnceLock;

/// The box that contains nothing and is the identity of [`Aabb::union`].
pub(crate) const EMPTY: Aabb = Aabb {
    min: Vec2 {
        x: f32::INFINITY,
        y: f32::INFINITY,
    },
    max: Vec2 {
        x: f32::NEG_INFINITY,
        y: f32::NEG_INFINITY,
    },
};

/// "No node" / "no child" marker.
pub(crate) const NONE: u32 = u32::MAX;

/// The deepest level any tree may split to. Below it, cells of any world are
/// narrower than the spacing of `f32` values, and splitting buys nothing.
pub const MAX_DEPTH: u8 = 24;

/// A bulk build of new or deferred items splits across threads from this
/// many times [`Config::par_min_items`] items (2¹⁸ by default): on 2
/// cores, `par_insert_many` of 100k boxes took 1.1-1.35× the time of
/// `insert_many` when split (in mixed scenes 0.9×), about the same at
/// 200k, and 0.75-0.86× at 300k; placing 100k deferred inserts for
/// `par_map_pairs_into` took 1.13-1.21× the time split in clustered
/// scenes, 0.87-1.0× in the others.
pub(crate) const BUILD_SPLIT: usize = 4;

/// Capacity of the fixed traversal stacks: a depth-first walk keeps at most
/// three pending siblings per level plus the four children just pushed.
pub(crate) const STACK: usize = 3 * MAX_DEPTH as usize + 8;

/// Tuning knobs of a [`QuadTree`].
///
/// `Config::default()` (also [`Config::DEFAULT`]) is the tuned choice:
///
/// | field | default |
/// |---|---|
/// | [`max_items`](Config::max_items) | 64 |
/// | [`max_depth`](Config::max_depth) | 16 |
/// | [`key_seed`](Config::key_seed) | 0 |
/// | [`par_min_items`](Config::par_min_items) | 65,536 |
///
/// Change it to study the tree (the lab's sliders do) or when profiling says
/// so.
///
/// ```
/// use quadrat::{Aabb, Config, QuadTree};
/// let config = Config { max_items: 4, ..Config::default() };
/// let tree: QuadTree<u32> = QuadTree::with_config(Aabb::new([0.0, 0.0], [64.0, 64.0]), config);
/// assert_eq!(tree.config().max_items, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Config {
    /// Split threshold: a leaf splits when more than this many of its items
    /// would fit into a child. At least 1, and less than 2³² − 1 (a tree
    /// holds fewer items than that, so `u32::MAX as usize - 1` never
    /// splits). Default 64: larger leaves mean fewer nodes for the pair
    /// walk and the moves to visit, and their runs are swept without
    /// branches (see ARCHITECTURE.md, *Placement*); against 32,
    /// a moving frame of 100k drifting boxes (`update_all` and every pair)
    /// took 0.93× the time, and the tree of 1M boxes held 0.88× the
    /// memory.
    pub max_items: usize,
    /// The deepest level a node may have (the root is level 0). At most
    /// [`MAX_DEPTH`]. Default 16.
    pub max_depth: u8,
    /// Where key generations start (see [`Key`]): any value. Trees with
    /// the same seed hand out the same keys for the same calls; trees with
    /// different seeds almost surely refuse each other's keys. Default 0.
    #[cfg_attr(feature = "serde", serde(default))]
    pub key_seed: u32,
    /// With the `parallel` feature: below this many items, the `par_`
    /// methods find pairs and rebuild on the calling thread, and below
    /// four times as many `par_insert_many` (and the first parallel
    /// question after deferred inserts) builds there, and `par_update_all`
    /// chooses as `update_all` does how to re-place the items that left
    /// their node (all at once on the calling thread from 1/128 to 1/16 of
    /// the items), because splitting that work costs more than it saves. (The pass of
    /// `par_update_all` that asks for each new
    /// box is split in chunks of 16,384 items whatever this says, so a
    /// smaller tree is one chunk.) Any value; 0 splits at every size, except
    /// that the pair walks are not split on a pool of one thread. Default
    /// 65,536 (2¹⁶), measured on 2 cores: splitting build and pairs took
    /// 1.2-1.6× the time of one thread at 1k-10k boxes and about the same
    /// at 30k; at 100k, the pair walk alone took 0.4-0.7×, but the build
    /// 1.1-1.2×, and about the same at 200k. Where its work splits, a
    /// `par_` call made from outside rayon's pools also keeps the pool's
    /// other threads awake until it returns (`par_insert_many` for its
    /// build, once it has taken in the items, and while it places waiting
    /// inserts first), where rayon would put them to sleep
    /// between the call's rounds of jobs: each waits for the call's jobs,
    /// busy but yielding to the system between looks, and leaves after
    /// 2 ms without one. Without the feature it does nothing.
    #[cfg_attr(feature = "serde", serde(default = "Config::default_par_min_items"))]
    pub par_min_items: usize,
}

/// `max_items` 64, `max_depth` 16, `key_seed` 0, `par_min_items` 65,536.
///
/// ```
/// use quadrat::Config;
/// let c = Config::default();
/// assert_eq!((c.max_items, c.max_depth, c.key_seed), (64, 16, 0));
/// assert_eq!(c.par_min_items, 1 << 16);
/// ```
impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

impl Config {
    /// `Config::default()`, usable in `const` items.
    ///
    /// ```
    /// use quadrat::Config;
    /// const SMALL_LEAVES: Config = Config { max_items: 4, ..Config::DEFAULT };
    /// assert_eq!(Config::DEFAULT, Config::default());
    /// assert_eq!(SMALL_LEAVES.max_depth, 16);
    /// ```
    pub const DEFAULT: Config = Config {
        max_items: 64,
        max_depth: 16,
        key_seed: 0,
        par_min_items: 1 << 16,
    };

    /// The default of `par_min_items`, for snapshots written without it.
    #[cfg(feature = "serde")]
    fn default_par_min_items() -> usize {
        Config::DEFAULT.par_min_items
    }

    /// Checks the values: `1 <= max_items < 2³² − 1` and
    /// `max_depth <= MAX_DEPTH`.
    ///
    /// ```
    /// use quadrat::Config;
    /// let err = Config { max_items: 0, ..Config::default() }.validate().unwrap_err();
    /// assert_eq!(err.to_string(), "config.max_items must be at least 1");
    /// let err = Config { max_items: usize::MAX, ..Config::default() }.validate().unwrap_err();
    /// assert_eq!(err.to_string(), "config.max_items must be less than 2^32 - 1");
    /// assert!(Config { max_items: u32::MAX as usize - 1, ..Config::default() }.validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_items == 0 {
            return Err(Error::InvalidConfig {
                field: "max_items",
                reason: "must be at least 1",
            });
        }
        if self.max_items >= u32::MAX as usize {
            return Err(Error::InvalidConfig {
                field: "max_items",
                reason: "must be less than 2^32 - 1",
            });
        }
        if self.max_depth > MAX_DEPTH {
            return Err(Error::InvalidConfig {
                field: "max_depth",
                reason: "must be at most 24 (quadrat::MAX_DEPTH)",
            });
        }
        Ok(())
    }
}

/// A read-only view of one node, for drawing and inspecting the tree.
///
/// ```
/// use quadrat::{Aabb, Config, QuadTree};
/// let config = Config { max_items: 4, ..Config::default() };
/// let mut tree = QuadTree::with_config(Aabb::new([0.0, 0.0], [16.0, 16.0]), config);
/// for i in 0..20 {
///     let p = i as f32 * 0.7;
///     tree.insert(Aabb::new([p, p], [p + 0.1, p + 0.1]), i);
/// }
/// let root = tree.nodes().next().unwrap();
/// assert_eq!(root.depth, 0);
/// assert!(!root.is_leaf);
/// assert_eq!(tree.nodes().map(|n| n.items).sum::<usize>(), 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct NodeView {
    /// The node's cell: the quadrant of space it covers.
    pub bounds: Aabb,
    /// The loose bounds: every item stored in this node lies inside them
    /// (for the root, only items inside the world's loose bounds do).
    pub loose: Aabb,
    /// Level; the root is 0.
    pub depth: u8,
    /// How many items are stored in this node itself.
    pub items: usize,
    /// `true` when the node has no children.
    pub is_leaf: bool,
}

/// A loose quadtree of axis-aligned boxes, each carrying a value of type `T`
/// and addressed by a stable [`Key`].
///
/// # Meanings
/// - Boxes are **closed**: touching boxes intersect; zero-size boxes are fine.
/// - Invalid boxes (NaN or infinite coordinates, `min > max`) are refused
///   with an [`Error`] naming the problem (`try_*` methods) or a panic with
///   the same message, and the tree is left unchanged.
/// - Keys are generational: after [`remove`](QuadTree::remove) the old key
///   answers `None`/`false` forever.
/// - Items outside the world box are **kept** and found by every query and
///   by the pair finder. Items far outside it (not inside the world grown by
///   half its size on each side) are held by the root and checked on every
///   query, so size the world to cover your objects.
/// - Every query and the pair finder take `&self`. The area, circle and
///   point queries, [`raycast`](QuadTree::raycast) and
///   [`for_each_pair`](QuadTree::for_each_pair) allocate nothing (except
///   the first question after inserts into an empty tree, which builds
///   their index: see [`insert`](QuadTree::insert)), nor do the `_into`
///   forms ([`pairs_into`](QuadTree::pairs_into),
///   [`map_pairs_into`](QuadTree::map_pairs_into),
///   [`query_keys_into`](QuadTree::query_keys_into)) into a vector with
///   room; [`nearest`](QuadTree::nearest) keeps a heap of `k` candidates,
///   and the forms that return a `Vec` ([`pairs`](QuadTree::pairs),
///   [`raycast_all`](QuadTree::raycast_all)) allocate it; `pairs`, when it
///   has many pairs to sort, also allocates a second vector as long and a
///   count a slot (see its docs).
/// - **Keys are deterministic** (see [`Key`]): the same calls from the same
///   [`Config`] give the same keys in every process.
/// - **Snapshots** (feature `serde`): a tree serializes completely, its
///   layout included, and a restored copy behaves exactly as the original
///   from then on: its keys stay valid, the next inserts hand out the keys
///   the original would, and every answer comes in the same order. A
///   snapshot is checked in full as it is read; a damaged one is refused
///   with an error.
/// - Depth is capped by [`Config::max_depth`], so any number of items on one
///   point stays correct and bounded.
/// - **The whole finite `f32` range works**, from subnormal sizes to worlds
///   spanning `-f32::MAX..=f32::MAX`. Box intersection is exact; distances
///   (circle queries, [`nearest`](QuadTree::nearest), ray casts) are
///   computed in `f64`, where nothing overflows or underflows, and reported
///   rounded to `f32`; a distance beyond `f32::MAX` is reported as
///   `f32::INFINITY`. Results are ranked by the reported distance, then key.
/// - **Panics in your code leave the tree valid.** If the iterator given to
///   [`insert_many`](QuadTree::insert_many) panics, nothing of it is
///   inserted. If the closure of [`update_all`](QuadTree::update_all)
///   panics, each item keeps its old box or has the new one, and the tree
///   is consistent with whichever it has (with `par_update_all`, every
///   item keeps its old box); in [`retain`](QuadTree::retain),
///   the items already judged are removed or kept as judged. A value whose
///   destructor panics during [`clear`](QuadTree::clear) leaves an empty
///   tree (the values not yet dropped are leaked).
///
/// # How it works
/// Each item is stored once, in the deepest node along its centre's path
/// whose *loose* bounds (the cell grown by half its size) contain the whole
/// box. Small items sink to small cells wherever they are, so items that
/// straddle a split line do not pile up near the root. A leaf splits when
/// more than `max_items` of its items would fit into a child; a subtree
/// collapses back into its root as soon as it would no longer split, so the
/// tree's shape depends only on the items it holds, never on the order of
/// the calls that put them there.
///
/// ```
/// use quadrat::{Aabb, QuadTree};
///
/// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let a = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), "a");
/// let b = tree.insert(Aabb::new([15.0, 15.0], [30.0, 30.0]), "b");
/// let c = tree.insert(Aabb::new([80.0, 80.0], [90.0, 90.0]), "c");
///
/// assert_eq!(tree.pairs(), vec![(a, b)]);
/// let hits: Vec<_> = tree.query(Aabb::new([85.0, 0.0], [100.0, 85.0])).collect();
/// assert_eq!(hits, vec![(c, &"c")]);
///
/// tree.update(c, Aabb::new([25.0, 25.0], [35.0, 35.0]));
/// assert_eq!(tree.pairs().len(), 2);
/// assert_eq!(tree.remove(a), Some("a"));
/// assert_eq!(tree.get(a), None);
/// ```
#[derive(Debug)]
pub struct QuadTree<T> {
    pub(crate) world: Aabb,
    pub(crate) config: Config,
    /// `max_items` as the `u32` the loads are compared with.
    pub(crate) max_items: u32,
    /// All nodes; index 0 is the root; children come in blocks of four.
    pub(crate) nodes: Vec<Node>,
    /// Each node's geometry, at the node's index (as long as `nodes`).
    pub(crate) geo: Vec<Geo>,
    /// What the searches read of each node, at the node's index (as long
    /// as `nodes`; exact for every node reachable from the root).
    pub(crate) hot: Vec<Hot>,
    /// First indices of blocks of four nodes that are free for reuse.
    pub(crate) free_blocks: Vec<u32>,
    /// Every item's box and slab slot, grouped into one run per node; each
    /// run is sorted by `min.x` so that pairs can be found by sweeping.
    pub(crate) entries: Vec<Entry>,
    /// Entries reserved by no live node's run (left behind by moved runs).
    pub(crate) garbage: usize,
    pub(crate) slab: Slab<T>,
    /// Scratch kept between calls of `try_update_all`: items that leave their
    /// node, and leaves that must split.
    pub(crate) movers: Vec<(u32, Aabb)>,
    pub(crate) splits: Vec<u32>,
    /// Scratch of `refit_below_all`: the nodes in breadth-first order
    /// (freed with `cats`).
    pub(crate) order: Vec<u32>,
    /// Scratch of `place_in_bulk`: the nodes by where their runs sit, and
    /// the movers' entries by where they go.
    pub(crate) placing: Placing,
    /// Scratch of `try_par_update_all`: each slot's new box, or NaN.
    #[cfg(feature = "parallel")]
    pub(crate) fresh: Vec<Aabb>,
    /// Scratch of `try_update_all`: one bit per node whose run changed.
    pub(crate) dirty: Vec<u64>,
    /// Scratch of the bulk build: each entry's destination in the node
    /// being partitioned (one byte per item, kept for the next rebuild;
    /// freed by a bulk `insert_many` into a tree with no items and no
    /// free slot, like `order`: see `fill_empty` in `build.rs`).
    pub(crate) cats: Vec<u8>,
    /// `true` while the items inserted one by one into an empty tree wait
    /// to be placed: they sit in `entries` in insertion order, their slots
    /// point at them, and `nodes` is an empty root. The first question
    /// (a query, pairs, `validate`…) builds their index in bulk into
    /// `lazy`; the next change moves it into the tree.
    pub(crate) deferred: bool,
    /// The index of a deferred tree, once a question has built it.
    pub(crate) lazy: OnceLock<Lazy>,
    /// The buffers of the last index (and of the arrays it replaced when
    /// adopted), kept for the next lazy build once the tree has been
    /// cleared: a loop of clearing, inserting each item, asking questions
    /// and changing things allocates nothing once warm. The far-jump
    /// presort of `update_all` (`presort_kept`) sorts in them too, in any
    /// tree, and leaves the arrays it replaced here; so does the placing of
    /// a refill that a change places before any question
    /// (`place_deferred`).
    pub(crate) spare: Spare,
    /// Set by `clear`: the tree keeps a spare index (see `spare`).
    pub(crate) recycles: bool,
}

impl<T: Clone> Clone for QuadTree<T> {
    /// A copy of the tree: its items, keys, shape and order, and what it
    /// answers, without the scratch its builds and updates keep for their
    /// next call (the copy makes that again when it needs it, as after
    /// [`shrink_to_fit`](QuadTree::shrink_to_fit)). After frames of
    /// `par_update_all` over 1M uniform boxes (`u32` values), that scratch
    /// takes 17 MB, 16 of them a new box per slot: a copy holds 45.5 MB
    /// where it held 62.7–63.0 (after `update_all`, 45.5 where 46.7;
    /// ARCHITECTURE.md, *Bulk build*).
    fn clone(&self) -> QuadTree<T> {
        QuadTree {
            world: self.world,
            config: self.config,
            max_items: self.max_items,
            nodes: self.nodes.clone(),
            geo: self.geo.clone(),
            hot: self.hot.clone(),
            free_blocks: self.free_blocks.clone(),
            entries: self.entries.clone(),
            garbage: self.garbage,
            slab: self.slab.clone(),
            movers: Vec::new(),
            splits: Vec::new(),
            order: Vec::new(),
            placing: Placing::default(),
            #[cfg(feature = "parallel")]
            fresh: Vec::new(),
            dirty: Vec::new(),
            cats: Vec::new(),
            deferred: self.deferred,
            lazy: self.lazy.clone(),
            spare: Spare::default(),
            recycles: self.recycles,
        }
    }
}

/// The scratch of `update::place_in_bulk`, kept between calls.
#[derive(Debug, Default)]
pub(crate) struct Placing {
    /// `(start << 32) | node` for every node of the tree.
    pub(crate) runs: Vec<u64>,
    /// Each mover's new entry, after the key of the node it goes to.
    pub(crate) arrivals: Vec<(u64, Entry)>,
    /// Per node: movers gained minus lost, then the same for its subtree.
    pub(crate) net: Vec<i32>,
}

/// A [`Lazy`] kept for its allocations. Cloning a tree does not clone it.
#[derive(Debug, Default)]
pub(crate) struct Spare(std::sync::Mutex<Lazy>);

impl Clone for Spare {
    fn clone(&self) -> Spare {
        Spare::default()
    }
}

/// The index of a deferred tree's items, built on first use: the nodes and
/// the entries in run order, as a bulk build makes them. The items' slots
/// still point into the tree's own `entries` until the index is adopted.
#[derive(Debug, Default)]
pub(crate) struct Lazy {
    pub(crate) nodes: Vec<Node>,
    pub(crate) geo: Vec<Geo>,
    pub(crate) hot: Vec<Hot>,
    pub(crate) entries: Vec<Entry>,
    /// The build's scratch, kept with it for the next build: category
    /// bytes, breadth-first node order, Morton keys and the radix sort's
    /// spare keys.
    cats: Vec<u8>,
    order: Vec<u32>,
    keys: Vec<u64>,
    spare: Vec<u64>,
}

impl Lazy {
    /// Fills this entry array with the entries of `from`, in the order the
    /// bulk build starts from (`build::gather_entries`), reusing its
    /// allocation and the sort's buffers (the keys and the radix sort's
    /// spare keys).
    pub(crate) fn gather(&mut self, from: &[Entry], world: Aabb, parallel: bool) {
        self.entries.clear();
        let kept = Some((&mut self.keys, &mut self.spare));
        build::gather_entries(from, world, parallel, kept, &mut self.entries);
    }
}

impl Clone for Lazy {
    /// The index without its scratch.
    fn clone(&self) -> Lazy {
        Lazy {
            nodes: self.nodes.clone(),
            geo: self.geo.clone(),
            hot: self.hot.clone(),
            entries: self.entries.clone(),
            ..Lazy::default()
        }
    }
}

/// The nodes and the entries in run order that a question walks: the
/// tree's own, or those of its deferred index.
#[derive(Clone, Copy)]
pub(crate) struct Ix<'a> {
    pub(crate) nodes: &'a [Node],
    pub(crate) geo: &'a [Geo],
    pub(crate) hot: &'a [Hot],
    pub(crate) entries: &'a [Entry],
}

impl Ix<'_> {
    /// Where the item of each of `slots` slots sits in these nodes and
    /// entries, as `(node, position)`: what the slots of a deferred tree
    /// will say once its index is adopted ((0, 0) for a slot not found,
    /// such as a free one). Reads only positions that exist.
    pub(crate) fn places(&self, slots: usize) -> Vec<(u32, u32)> {
        let mut at = vec![(0u32, 0u32); slots];
        for (n, node) in self.nodes.iter().enumerate() {
            for p in node.start..node.start + node.len.min(node.cap) {
                if let Some(e) = self.entries.get(p as usize)
                    && let Some(a) = at.get_mut(e.owner as usize)
                {
                    *a = (n as u32, p);
                }
            }
        }
        at
    }

    /// Starts fetching what a search visiting the node of `h` reads first:
    /// the first entry of its run and its children's search copies.
    #[inline]
    pub(crate) fn warm(&self, h: &Hot) {
        if h.len > 0
            && let Some(e) = self.entries.get(h.start as usize)
        {
            crate::prefetch::prefetch(e);
        }
        if let Some(c) = self.hot.get(h.children as usize) {
            crate::prefetch::prefetch(c);
        }
    }

    /// The run of node `n`.
    #[inline]
    pub(crate) fn run(&self, n: u32) -> &[Entry] {
        let h = &self.hot[n as usize];
        &self.entries[h.start as usize..(h.start + h.len) as usize]
    }

    /// Node `n`'s `tight` box: read from its search copy for a leaf, whose
    /// subtree bounds it is, so that only an internal node's own run makes
    /// a search read the node itself.
    #[inline]
    pub(crate) fn tight(&self, n: u32) -> Aabb {
        let h = &self.hot[n as usize];
        if h.is_leaf() {
            h.sub
        } else {
            self.nodes[n as usize].tight
        }
    }
}

impl<T> QuadTree<T> {
    /// Creates an empty tree covering `world` with the default [`Config`].
    ///
    /// # Panics
    /// When `world` is not a valid box (see [`Aabb::validate`]).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let tree: QuadTree<()> = QuadTree::new(Aabb::new([0.0, 0.0], [800.0, 600.0]));
    /// assert!(tree.is_empty());
    /// ```
    #[must_use]
    pub fn new(world: Aabb) -> QuadTree<T> {
        QuadTree::with_config(world, Config::default())
    }

    /// Creates an empty tree covering `world` with the given configuration.
    ///
    /// # Panics
    /// When `world` is not a valid box or `config` is out of range; the
    /// message says which.
    #[must_use]
    pub fn with_config(world: Aabb, config: Config) -> QuadTree<T> {
        match QuadTree::try_with_config(world, config) {
            Ok(tree) => tree,
            Err(e) => panic!("quadrat: invalid argument to QuadTree::with_config: {e}"),
        }
    }

    /// Creates an empty tree, or says why the world box or the configuration
    /// is refused.
    ///
    /// ```
    /// use quadrat::{Aabb, Config, QuadTree};
    /// let bad = Aabb::new([0.0, 0.0], [f32::NAN, 1.0]);
    /// let err = QuadTree::<()>::try_with_config(bad, Config::default()).unwrap_err();
    /// assert_eq!(err.to_string(), "max.x is NaN");
    /// ```
    pub fn try_with_config(world: Aabb, config: Config) -> Result<QuadTree<T>, Error> {
        world.validate()?;
        config.validate()?;
        Ok(QuadTree {
            world,
            config,
            max_items: config.max_items as u32,
            nodes: vec![Node::root()],
            geo: vec![Geo::root(world)],
            hot: vec![Hot::of(&Node::root())],
            free_blocks: Vec::new(),
            entries: Vec::new(),
            garbage: 0,
            slab: Slab::new(config.key_seed),
            movers: Vec::new(),
            splits: Vec::new(),
            dirty: Vec::new(),
            order: Vec::new(),
            placing: Placing::default(),
            #[cfg(feature = "parallel")]
            fresh: Vec::new(),
            cats: Vec::new(),
            deferred: false,
            lazy: OnceLock::new(),
            spare: Spare::default(),
            recycles: false,
        })
    }

    /// The world box given at creation.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let world = Aabb::new([0.0, 0.0], [10.0, 10.0]);
    /// assert_eq!(QuadTree::<()>::new(world).world(), world);
    /// ```
    #[inline]
    #[must_use]
    pub fn world(&self) -> Aabb {
        self.world
    }

    /// The nodes and entries questions walk; for a deferred tree, its
    /// index, built now if no question built it yet.
    #[inline]
    pub(crate) fn ix(&self) -> Ix<'_> {
        self.ix_with(false)
    }

    /// [`ix`](QuadTree::ix), building a deferred tree's index on rayon's
    /// pool when `parallel` (and the feature) is on.
    #[inline]
    pub(crate) fn ix_with(&self, parallel: bool) -> Ix<'_> {
        if self.deferred {
            let lazy = match self.lazy.get() {
                Some(lazy) => lazy,
                None => self.init_lazy(parallel),
            };
            Ix {
                nodes: &lazy.nodes,
                geo: &lazy.geo,
                hot: &lazy.hot,
                entries: &lazy.entries,
            }
        } else {
            Ix {
                nodes: &self.nodes,
                geo: &self.geo,
                hot: &self.hot,
                entries: &self.entries,
            }
        }
    }

    /// Builds the index of a deferred tree and keeps it. Built outside the
    /// `OnceLock`, then set: a build on rayon's pool may run other tasks
    /// while it waits, and one of them asking this tree a question must not
    /// wait on the build it is part of (nor re-enter the lock). Threads
    /// that race build an index each; the first one set is kept.
    #[cold]
    fn init_lazy(&self, parallel: bool) -> &Lazy {
        let built = self.build_lazy(parallel);
        if let Err(lost) = self.lazy.set(built) {
            // Give the loser's buffers back for the next build.
            *self.spare.0.lock().unwrap_or_else(|e| e.into_inner()) = lost;
        }
        self.lazy.get().expect("the index was just set")
    }

    /// Builds the index of a deferred tree from its entries (which stay as
    /// they are), in the buffers of the spare: the tree `insert_many`
    /// builds, node for node (see `gather_by_slot` for the order it starts
    /// from).
    #[cold]
    fn build_lazy(&self, parallel: bool) -> Lazy {
        let parallel = self.splits_build(parallel, self.entries.len());
        let mut l = core::mem::take(&mut *self.spare.0.lock().unwrap_or_else(|e| e.into_inner()));
        if !self.gather_by_slot(&mut l.entries) {
            l.gather(&self.entries, self.world, parallel);
        }
        let limits = build::Limits {
            max_items: self.config.max_items,
            max_depth: self.config.max_depth,
        };
        let scratch = build::Scratch {
            cats: &mut l.cats,
            order: &mut l.order,
            fresh: None,
        };
        let nodes = core::mem::take(&mut l.nodes);
        l.nodes = build::build_nodes(
            &mut l.entries,
            nodes,
            &mut l.geo,
            scratch,
            self.world,
            limits,
            parallel,
        );
        runs::hot_of(&l.nodes, &mut l.hot);
        l
    }

    /// Fills `out` with the entries of a deferred tree in the order of
    /// their slots, and returns `true`, when that order nearly follows the
    /// tree's ([`order::nearly_z_ordered`]). Otherwise it leaves `out` as it
    /// is and returns `false`, and the build sorts the entries along a
    /// Morton curve first. From [`order::PRESORT_MIN`] entries on, as that
    /// sort, and while the slots are at most twice the entries (each slot
    /// is read).
    ///
    /// After a [`clear`](QuadTree::clear) that ranked the items, the slots
    /// hand the values out in the order of the tree they were in (see
    /// `Slab::clear`). Refilled in the same order, as the tutorials' loop
    /// refills its objects every frame, each slot holds the object that
    /// had its place in that tree. The slots' order is then the tree's last
    /// order, and nearly this one's when the objects moved little. The
    /// build starts from it, as a rebuild after a frame of moves does: no
    /// Morton codes, no sort, and a partition that finds nearly every entry
    /// in place.
    ///
    /// When every slot holds an item (the slab is exactly as long as the
    /// refill, as when the same objects come back every frame), the item
    /// of slot `i` goes to position `i`: each entry is written straight
    /// there, reading the entries in their order and no place (only the
    /// sample above reads some; `scatter_by_slot`). Otherwise the slots
    /// are read in order and each occupied one's entry is fetched from
    /// where its place points.
    fn gather_by_slot(&self, out: &mut Vec<Entry>) -> bool {
        let (places, entries) = (&self.slab.places, &self.entries);
        if entries.len() < order::PRESORT_MIN || places.len() / 2 > entries.len() {
            return false;
        }
        // In a deferred tree, the occupied slots are those that own the
        // entry their place points at: a test that reads no value.
        let owned = |i: usize| {
            entries
                .get(places[i].pos as usize)
                .filter(|e| e.owner as usize == i)
        };
        let aabb = |i: usize| owned(i).map(|e| e.aabb);
        if !order::nearly_z_ordered(places.len(), entries.len(), aabb, self.world) {
            return false;
        }
        if places.len() == entries.len() {
            scatter_by_slot(entries, out);
            return true;
        }
        out.clear();
        out.reserve(entries.len());
        for i in 0..places.len() {
            if let Some(e) = places
                .get(i + order::AHEAD)
                .and_then(|p| entries.get(p.pos as usize))
            {
                crate::prefetch::prefetch(e);
            }
            if let Some(e) = owned(i) {
                out.push(*e);
            }
        }
        debug_assert_eq!(out.len(), entries.len(), "one entry per occupied slot");
        true
    }

    /// Places the items of a deferred tree: adopts the index a question
    /// built, or builds it now. Every change to the tree's structure
    /// starts here.
    #[inline]
    pub(crate) fn undefer(&mut self) {
        self.undefer_with(false);
    }

    /// [`undefer`](QuadTree::undefer), building on rayon's pool when
    /// `parallel` (and the feature) is on.
    #[inline]
    pub(crate) fn undefer_with(&mut self, parallel: bool) {
        if self.deferred {
            self.place_deferred(parallel);
        }
    }

    #[cold]
    fn place_deferred(&mut self, parallel: bool) {
        self.deferred = false;
        match self.lazy.take() {
            Some(mut lazy) => {
                core::mem::swap(&mut self.nodes, &mut lazy.nodes);
                core::mem::swap(&mut self.geo, &mut lazy.geo);
                core::mem::swap(&mut self.hot, &mut lazy.hot);
                core::mem::swap(&mut self.entries, &mut lazy.entries);
                core::mem::swap(&mut self.cats, &mut lazy.cats);
                core::mem::swap(&mut self.order, &mut lazy.order);
                self.free_blocks.clear();
                self.garbage = 0;
                self.index_slots();
                // A tree that was ever cleared is likely refilled again and
                // again: it keeps the replaced arrays and the build's
                // scratch for its next index. Any other tree frees them.
                if self.recycles {
                    *self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner()) = lazy;
                }
            }
            None => {
                let parallel = self.splits_build(parallel, self.entries.len());
                if self.recycles {
                    // Ordered in the buffers of the spare index, as a
                    // question's build orders them (`build_lazy`); the
                    // array they replace goes to the spare in turn. So a
                    // refill changed before any question, frame after
                    // frame, allocates nothing once warm either.
                    let spare = self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner());
                    let mut l = core::mem::take(spare);
                    let by_slot = self.gather_by_slot(&mut l.entries);
                    if by_slot {
                        core::mem::swap(&mut self.entries, &mut l.entries);
                    }
                    *self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner()) = l;
                    if !by_slot {
                        self.presort_kept(parallel);
                    }
                } else {
                    let mut by_slot = Vec::new();
                    if self.gather_by_slot(&mut by_slot) {
                        self.entries = by_slot;
                    } else {
                        self.presort(parallel);
                    }
                }
                self.build_all(parallel);
            }
        }
    }

    /// Makes the nodes one empty root.
    pub(crate) fn reset_nodes(&mut self) {
        self.nodes.truncate(1);
        self.nodes[0] = Node::root();
        self.geo.truncate(1);
        self.geo[0] = Geo::root(self.world);
        self.hot.clear();
        self.hot.push(Hot::of(&self.nodes[0]));
    }

    /// Forgets that the tree is deferred, for a caller that empties it.
    fn drop_deferred(&mut self) {
        self.deferred = false;
        if let Some(lazy) = self.lazy.take() {
            *self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner()) = lazy;
        }
    }

    /// `true` when work over `items` items is split across threads: asked
    /// for by the caller (`parallel`), and at least
    /// [`Config::par_min_items`] items, below which splitting costs more
    /// than it saves. Every `par_` path decides here, in
    /// [`splits_build`](QuadTree::splits_build) or (the pair walks) in
    /// `walk_splits`, once per call.
    #[inline]
    pub(crate) fn splits(&self, parallel: bool, items: usize) -> bool {
        parallel && items >= self.config.par_min_items
    }

    /// `true` when a bulk build over `items` items, for new items or to
    /// place deferred inserts, is split across threads: asked for by the
    /// caller (`parallel`), and at least [`BUILD_SPLIT`] times
    /// [`Config::par_min_items`] items. Such a build sorts the items along
    /// a Morton curve first, whose split costs more than it saves on small
    /// trees, and `par_insert_many` takes the items in on the calling
    /// thread. (A rebuild of a placed tree, as in `par_rebuild` and
    /// `par_update_all`, splits from `par_min_items`.)
    #[inline]
    pub(crate) fn splits_build(&self, parallel: bool, items: usize) -> bool {
        parallel && items >= self.config.par_min_items.saturating_mul(BUILD_SPLIT)
    }

    /// The configuration given at creation.
    #[inline]
    #[must_use]
    pub fn config(&self) -> Config {
        self.config
    }

    /// Number of items.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// tree.insert(Aabb::from_point([1.0, 1.0]), ());
    /// assert_eq!(tree.len(), 1);
    /// assert!(!tree.is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.slab.len()
    }

    /// `true` when the tree holds no items.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slab.len() == 0
    }

    /// `true` when `key` names a live item of this tree.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), ());
    /// assert!(tree.contains_key(k));
    /// tree.remove(k);
    /// assert!(!tree.contains_key(k));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: Key) -> bool {
        self.slab.index_of(key).is_some()
    }

    /// The value of a live item; `None` for a stale or foreign key.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), "rock");
    /// assert_eq!(tree.get(k), Some(&"rock"));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: Key) -> Option<&T> {
        self.slab.get(key)
    }

    /// The value of a live item, mutably; `None` for a stale or foreign key.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 1);
    /// *tree.get_mut(k).unwrap() += 1;
    /// assert_eq!(tree[k], 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.slab.get_mut(key)
    }

    /// The box of a live item; `None` for a stale or foreign key.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let b = Aabb::new([1.0, 1.0], [2.0, 2.0]);
    /// let k = tree.insert(b, ());
    /// assert_eq!(tree.aabb(k), Some(b));
    /// ```
    #[inline]
    #[must_use]
    pub fn aabb(&self, key: Key) -> Option<Aabb> {
        let idx = self.slab.index_of(key)?;
        Some(self.entries[self.slab.places[idx].pos as usize].aabb)
    }

    /// Every item as `(key, box, value)`, in slot order.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a');
    /// tree.insert(Aabb::new([3.0, 3.0], [4.0, 4.0]), 'b');
    /// let values: String = tree.iter().map(|(_, _, v)| *v).collect();
    /// assert_eq!(values, "ab");
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Key, Aabb, &T)> + '_ {
        let slab = &self.slab;
        (0u32..)
            .zip(slab.slots.iter().zip(&slab.places))
            .filter_map(move |(i, (s, place))| {
                let v = s.value()?;
                let aabb = self.entries[place.pos as usize].aabb;
                Some((Key::new(i, s.generation()), aabb, v))
            })
    }

    /// Every item as `(key, box, value)` with mutable values, in slot order.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// tree.insert(Aabb::from_point([1.0, 1.0]), 1);
    /// for (_, _, hp) in tree.iter_mut() {
    ///     *hp += 99;
    /// }
    /// assert_eq!(tree.values().copied().collect::<Vec<_>>(), [100]);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Key, Aabb, &mut T)> + '_ {
        let entries = &self.entries;
        let slab = &mut self.slab;
        (0u32..)
            .zip(slab.slots.iter_mut().zip(&slab.places))
            .filter_map(move |(i, (s, place))| {
                let generation = s.generation();
                let v = s.value_mut()?;
                let aabb = entries[place.pos as usize].aabb;
                Some((Key::new(i, generation), aabb, v))
            })
    }

    /// The keys of all items, in slot order.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::from_point([1.0, 1.0]), ());
    /// assert_eq!(tree.keys().collect::<Vec<_>>(), [k]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.iter().map(|(k, _, _)| k)
    }

    /// The values of all items, in slot order.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// tree.insert(Aabb::from_point([1.0, 1.0]), "a");
    /// tree.insert(Aabb::from_point([2.0, 1.0]), "b");
    /// assert_eq!(tree.values().copied().collect::<String>(), "ab");
    /// ```
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.slab.slots.iter().filter_map(Slot::value)
    }

    /// Removes every item, keeping all allocations for a refill: the
    /// per-frame "clear and insert everything again" pattern allocates
    /// nothing once the tree has grown to its working size. Every key handed
    /// out before is invalidated. [`shrink_to_fit`](QuadTree::shrink_to_fit)
    /// frees what a refill would have reused.
    ///
    /// A refill reuses the tree's slots, lowest first, but does not hand
    /// them out in ascending order: the n-th insert after `clear` gets the
    /// slot whose rank among the usable ones is the place, in the tree's
    /// order, of the item the n-th insert before it stored (in the order
    /// the slots were handed out since the clear before; an item inserted
    /// after a removal may be counted in another place). Refilled in the
    /// same order, as a game loop refills its objects every frame, each
    /// object's value sits next to those of its neighbours in space, so a
    /// closure that reads the values of the pairs
    /// [`for_each_pair`](QuadTree::for_each_pair) finds (`tree[a]`) reads
    /// them nearly in order. At 1M boxes, such a loop (clear, one `insert`
    /// per box, the pairs with both values read) took 0.85× the time in
    /// clustered scenes and 0.79× in mixed ones; in uniform ones, with
    /// about 1.5 pairs a box, 1.03×, since the inserts now write their
    /// slots out of order. Where the tree's order was never built (inserts
    /// into an empty tree that no question followed; writing a snapshot is
    /// a question), a refill takes the slots in ascending order. The same
    /// calls still give the same keys, and a tree restored from a snapshot
    /// refills as the original does.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), ());
    /// tree.clear();
    /// assert!(tree.is_empty());
    /// assert!(!tree.contains_key(k));
    /// ```
    pub fn clear(&mut self) {
        self.recycles = true;
        let ranks = self.rank_items();
        self.drop_deferred();
        self.reset_nodes();
        self.free_blocks.clear();
        self.entries.clear();
        self.garbage = 0;
        self.slab.clear(ranks);
    }

    /// For [`clear`](QuadTree::clear): the place of each item in the
    /// tree's order (the order of the entry array, `0..len`), which
    /// `Slab::clear` makes the order of the refill's slots (see
    /// [`Ranks`]).
    ///
    /// In a deferred tree whose index a question built, the items wait in
    /// the order they were inserted, each slot pointing at its own. While
    /// those inserts took their slots in the order the last clear made
    /// (`Slab::in_order`), the index, read in order, writes each rank
    /// straight where the refill wants it: at the item's place among the
    /// inserts, in `refill`. Reading the slots in the order of the inserts
    /// instead, which after such a refill is no order of theirs, cost a
    /// clear of 1M items about 5 ms of cache misses. Otherwise (after a
    /// removal, or in a tree read from a snapshot, which knows the order
    /// but not the inserts) each item's rank goes into its slot's place,
    /// read from the index or, in a placed tree, from the entry array,
    /// skipping the entries that are not where their slot points: the
    /// same ranks in the same order, so a tree and its copy refill alike.
    /// A deferred tree whose index no question built is not ranked: the
    /// order it would have is not known, and building it only for this
    /// costs more than the refill saves.
    fn rank_items(&mut self) -> Ranks {
        let (slots, places) = (&self.slab.slots, &mut self.slab.places);
        let mut rank = 0;
        if self.deferred {
            let Some(lazy) = self.lazy.get() else {
                return Ranks::Unknown;
            };
            if self.slab.in_order {
                let wanted = &mut self.slab.refill;
                wanted.clear();
                wanted.resize(lazy.entries.len(), NONE);
                for e in &lazy.entries {
                    let at = places.get(e.owner as usize).map(|p| p.pos as usize);
                    if let Some(w) = at.and_then(|at| wanted.get_mut(at)) {
                        *w = rank;
                    }
                    rank += 1;
                }
                // An index holds every item once, each at its own place
                // among the inserts; anything else leaves a place unranked.
                if wanted.len() != self.slab.len || wanted.contains(&NONE) {
                    wanted.clear();
                    return Ranks::Unknown;
                }
                return Ranks::Wanted;
            }
            for e in &lazy.entries {
                if let Some(place) = places.get_mut(e.owner as usize) {
                    place.node = rank;
                    rank += 1;
                }
            }
        } else {
            // Entries past a run's end, and those a run left behind when it
            // moved, are not where their slot's place points.
            for (pos, e) in self.entries.iter().enumerate() {
                let owner = e.owner as usize;
                if slots.get(owner).is_some_and(Slot::is_full) && places[owner].pos == pos as u32 {
                    places[owner].node = rank;
                    rank += 1;
                }
            }
        }
        if rank as usize == self.slab.len {
            Ranks::InPlaces
        } else {
            Ranks::Unknown
        }
    }

    /// Makes room for at least `additional` more items, so that the next
    /// `additional` inserts into an empty tree, which waits to place them,
    /// grow no array. Into a placed tree they still may: a node's run that
    /// fills up moves to the end of the entry array, and the nodes grow as
    /// the tree splits. Filling a tree one insert at a time grows those
    /// arrays by doubling, and can leave up to half of them unused;
    /// reserving first allocates them once, at their size. Free slots count
    /// as room: inserts take them first.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.reserve(1000);
    /// for i in 0..1000 {
    ///     tree.insert(Aabb::from_point([(i % 100) as f32, (i / 10) as f32]), i);
    /// }
    /// assert_eq!(tree.len(), 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
        self.slab.reserve(additional);
    }

    /// Frees the memory the tree holds beyond what its items need: the
    /// unused room of its arrays (the entry array is compacted first, so
    /// no run keeps room it does not use), the scratch its bulk builds and
    /// `update_all` keep for the next call, and the spare index a cleared
    /// tree keeps for its refill. Keys, values, boxes and answers are
    /// unchanged; the next rebuild, `update_all` or refill allocates its
    /// scratch again.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.insert_many((0..1000).map(|i| {
    ///     (Aabb::from_point([(i % 100) as f32, (i / 10) as f32]), i)
    /// }));
    /// for k in &keys[..900] {
    ///     tree.remove(*k);
    /// }
    /// tree.shrink_to_fit();
    /// assert_eq!(tree.len(), 100);
    /// assert_eq!(tree.get(keys[950]), Some(&950));
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.undefer();
        if self.entries.len() > self.len() {
            // Runs give up their unused room and the holes between them.
            self.compact();
        }
        self.nodes.shrink_to_fit();
        self.geo.shrink_to_fit();
        self.hot.shrink_to_fit();
        self.free_blocks.shrink_to_fit();
        self.entries.shrink_to_fit();
        self.slab.slots.shrink_to_fit();
        self.slab.places.shrink_to_fit();
        self.slab.refill.shrink_to_fit();
        self.movers = Vec::new();
        self.splits = Vec::new();
        self.order = Vec::new();
        self.placing = Placing::default();
        #[cfg(feature = "parallel")]
        {
            self.fresh = Vec::new();
        }
        self.dirty = Vec::new();
        self.cats = Vec::new();
        *self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner()) = Lazy::default();
    }

    /// Removes every item for which `keep` returns `false`.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// for i in 0..10 {
    ///     tree.insert(Aabb::from_point([i as f32, 1.0]), i);
    /// }
    /// tree.retain(|_, _, v| *v % 2 == 0);
    /// assert_eq!(tree.len(), 5);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(Key, Aabb, &mut T) -> bool) {
        self.undefer();
        for idx in 0..self.slab.slots.len() {
            let pos = self.slab.places[idx].pos as usize;
            let slot = &mut self.slab.slots[idx];
            let generation = slot.generation();
            let Some(v) = slot.value_mut() else {
                continue;
            };
            if !keep(Key::new(idx as u32, generation), self.entries[pos].aabb, v) {
                self.remove_slot(idx);
            }
        }
    }

    /// The nodes in depth-first order, root first: bounds, depth and item
    /// count, for drawing the tree.
    pub fn nodes(&self) -> impl Iterator<Item = NodeView> + '_ {
        let ix = self.ix();
        let mut stack = NodeStack::with_root();
        core::iter::from_fn(move || {
            let n = stack.pop()?;
            let (node, geo) = (&ix.nodes[n as usize], &ix.geo[n as usize]);
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
            Some(NodeView {
                bounds: geo.cell,
                loose: geo.loose,
                depth: node.depth,
                items: node.len as usize,
                is_leaf: node.is_leaf(),
            })
        })
    }

    /// Number of nodes in the tree (leaves and internal nodes).
    ///
    /// ```
    /// use quadrat::{Aabb, Config, QuadTree};
    /// let config = Config { max_items: 1, ..Config::default() };
    /// let mut tree = QuadTree::with_config(Aabb::new([0.0, 0.0], [10.0, 10.0]), config);
    /// assert_eq!(tree.node_count(), 1);
    /// tree.insert(Aabb::from_point([1.0, 1.0]), ());
    /// tree.insert(Aabb::from_point([9.0, 9.0]), ());
    /// assert_eq!(tree.node_count(), 5); // the root split into four
    /// assert_eq!(tree.depth(), 1);
    /// ```
    #[must_use]
    pub fn node_count(&self) -> usize {
        if self.deferred {
            return self.ix().nodes.len();
        }
        self.nodes.len() - 4 * self.free_blocks.len()
    }

    /// The deepest level of any node (0 for a tree that never split).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let tree: QuadTree<()> = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// assert_eq!(tree.depth(), 0);
    /// ```
    #[must_use]
    pub fn depth(&self) -> u8 {
        self.nodes().map(|n| n.depth).max().unwrap_or(0)
    }
}

impl<T> core::ops::Index<Key> for QuadTree<T> {
    type Output = T;
    /// # Panics
    /// When the key is stale or foreign.
    fn index(&self, key: Key) -> &T {
        self.get(key).expect("quadrat: stale or foreign key")
    }
}

impl<T> core::ops::IndexMut<Key> for QuadTree<T> {
    /// # Panics
    /// When the key is stale or foreign.
    fn index_mut(&mut self, key: Key) -> &mut T {
        self.get_mut(key).expect("quadrat: stale or foreign key")
    }
}

impl<T> Extend<(Aabb, T)> for QuadTree<T> {
    /// Inserts every `(box, value)`.
    ///
    /// # Panics
    /// On the first invalid box, like [`QuadTree::insert`]; the items before
    /// it stay inserted.
    fn extend<I: IntoIterator<Item = (Aabb, T)>>(&mut self, iter: I) {
        for (b, v) in iter {
            self.insert(b, v);
        }
    }
}

/// Writes each of `entries`, the items of a deferred tree whose slots
/// are all occupied (as many as the entries), at its slot's index in
/// `out`: the array `QuadTree::gather_by_slot` makes slot by slot (each
/// slot's entry, found through its place), in slot order. The entries are
/// read in their order and no place is read: in the tutorials' loop
/// refilled frame after frame (clear, one `insert` a box, then the pairs
/// reading both values), the whole loop took 0.96-0.99x the time it took
/// with the gather at 1M boxes, and about the same time at 100k
/// (0.99-1.02x; ARCHITECTURE.md, *Deferred inserts*).
///
/// The caller guarantees that the owners are distinct slots below
/// `entries.len()`, as a deferred tree's entries are (its items, each in
/// a slot of its own), so every position of `out` is written once. An
/// owner out of range panics, where skipping it would leave a filler or
/// last frame's entry in the tree. `out`'s old entries are overwritten,
/// so a refill of as many items as the last writes no filler first.
fn scatter_by_slot(entries: &[Entry], out: &mut Vec<Entry>) {
    #[cfg(test)]
    tests::SCATTERS.with(|c| c.set(c.get() + 1));
    out.resize(entries.len(), Entry::VACANT);
    let far = core::mem::size_of_val(entries) >= order::PREFETCH_MIN;
    for (k, e) in entries.iter().enumerate() {
        if far
            && let Some(ahead) = entries.get(k + order::AHEAD)
            && let Some(at) = out.get(ahead.owner as usize)
        {
            crate::prefetch::prefetch(at);
        }
        out[e.owner as usize] = *e;
    }
    // Owners only: an entry of the last frame left at its own slot's
    // index would pass (the tests compare boxes and generations).
    debug_assert!(
        out.iter().zip(0u32..).all(|(e, i)| e.owner == i),
        "every slot's entry at its slot"
    );
}

#[cfg(test)]
mod tests {
    use super::Entry;
    use crate::scenario::{Layout, Scenario};
    use crate::{Aabb, Config, Key, QuadTree};

    std::thread_local! {
        /// Calls of [`scatter_by_slot`](super::scatter_by_slot) on this
        /// thread.
        pub(super) static SCATTERS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    }

    /// Refilled in the same order after a question built the tree's order,
    /// the items take the slots in that order: the index of the same boxes
    /// lists slots 0, 1, 2… in its order, deferred or placed. Without a
    /// question before the clear, the refill takes them in the order of
    /// the inserts. Every value stays the one its insert stored.
    #[test]
    fn a_refill_in_the_same_order_stores_the_values_in_the_trees_order() {
        for layout in Layout::ALL {
            let s = Scenario::new(layout, 5_000, 4);
            let boxes: Vec<Aabb> = s.boxes();
            let fill = |tree: &mut QuadTree<u32>| -> Vec<Key> {
                let keys: Vec<Key> = (boxes.iter().zip(0u32..))
                    .map(|(b, v)| tree.insert(*b, v))
                    .collect();
                for (v, &k) in (0u32..).zip(&keys) {
                    assert_eq!(tree[k], v);
                }
                keys
            };
            let in_order = |tree: &QuadTree<u32>| {
                let owners: Vec<u32> = tree.ix().entries.iter().map(|e| e.owner).collect();
                owners == (0..boxes.len() as u32).collect::<Vec<_>>()
            };
            let mut tree = QuadTree::new(s.world);
            let keys = fill(&mut tree);
            assert!(keys.iter().zip(0..).all(|(k, i)| k.index() == i));
            assert!(!in_order(&tree), "{layout:?}: the boxes come in no order");
            tree.clear();
            fill(&mut tree);
            assert!(in_order(&tree), "{layout:?}: deferred");
            // Placed, and cleared from its entry array.
            tree.rebuild();
            tree.clear();
            fill(&mut tree);
            assert!(in_order(&tree), "{layout:?}: placed");
            tree.validate().unwrap();
            // No question since the inserts (`in_order` asked one): by
            // insert.
            tree.clear();
            fill(&mut tree);
            tree.clear();
            let keys = fill(&mut tree);
            assert!(keys.iter().zip(0..).all(|(k, i)| k.index() == i));
        }
    }

    /// The index of a deferred tree starts from the slots' order exactly
    /// when that order follows the last tree's: after a clear that ranked
    /// the items and a refill in the same order, moved a little or not,
    /// of every item (each slot full: the entries are scattered to their
    /// slots) or of fewer (the slots are read in order); not after the
    /// first fill (slots in insertion order, which follows no place), nor
    /// after a refill in another order. Either way the index, built by a
    /// question or by a change, is the one `insert_many` builds.
    #[test]
    fn the_index_starts_from_the_slots_order_when_it_follows_the_tree() {
        for layout in Layout::ALL {
            let s = Scenario::new(layout, 5_000, 6);
            let mut boxes: Vec<Aabb> = s.boxes();
            let mut tree = QuadTree::new(s.world);
            let mut rng = crate::scenario::Rng::new(2);
            let mut out = Vec::new();
            // (shuffled, how many, expected): the gather's output array
            // is kept from frame to frame, so the scatter meets one as
            // long as its entries, and one shorter. Each kind of frame
            // comes at an even index too, where a change places the
            // inserts before any question.
            for (frame, (shuffled, count, expected)) in [
                (false, 5_000, false),
                (false, 5_000, true),
                (false, 5_000, true),
                (true, 5_000, false),
                (false, 5_000, true),
                (false, 4_500, true),
                (false, 4_500, true),
                (false, 5_000, true),
            ]
            .into_iter()
            .enumerate()
            {
                if shuffled {
                    for i in (1..boxes.len()).rev() {
                        boxes.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                } else if frame > 1 {
                    for b in &mut boxes {
                        let d = rng.range(-0.2, 0.2) * s.size;
                        *b = b.translate([d, -d]);
                    }
                }
                tree.clear();
                let live = &boxes[..count];
                let keys: Vec<Key> = (live.iter().zip(0u32..))
                    .map(|(b, i)| tree.insert(*b, i))
                    .collect();
                let scatters = SCATTERS.with(core::cell::Cell::get);
                assert_eq!(
                    tree.gather_by_slot(&mut out),
                    expected,
                    "{layout:?}, frame {frame}"
                );
                // Scattered exactly when every slot was refilled.
                let scattered = SCATTERS.with(core::cell::Cell::get) - scatters;
                assert_eq!(scattered, usize::from(expected && count == 5_000));
                if expected {
                    assert_eq!(out.len(), count, "{layout:?}");
                    let mut owners: Vec<u32> = out.iter().map(|e| e.owner).collect();
                    assert!(owners.is_sorted(), "{layout:?}: in the slots' order");
                    owners.dedup();
                    assert_eq!(owners.len(), count, "{layout:?}: every item once");
                    for e in &out {
                        let slot = &tree.slab.slots[e.owner as usize];
                        let i = *slot.value().expect("an item's slot") as usize;
                        assert_eq!(e.aabb, live[i], "{layout:?}: its own box");
                        assert_eq!(e.generation, slot.generation(), "{layout:?}");
                    }
                }
                if frame % 2 == 0 {
                    // A change before any question places the inserts
                    // itself, from the same order.
                    assert!(tree.update(keys[7], boxes[7]));
                }
                tree.validate().unwrap();
                let mut built = QuadTree::new(s.world);
                built.insert_many(live.iter().copied().zip(0u32..));
                let shape =
                    |t: &QuadTree<u32>| t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>();
                assert_eq!(shape(&tree), shape(&built), "{layout:?}, frame {frame}");
            }
        }
    }

    /// The scatter puts each entry at its slot's position whatever `out`
    /// held: nothing, fewer entries, as many, or more (kept from a larger
    /// frame); with few entries and with enough to prefetch.
    #[test]
    fn the_scatter_puts_each_entry_at_its_slot() {
        let mut rng = crate::scenario::Rng::new(5);
        for n in [0usize, 1, 2, 1_000, 200_000] {
            let mut owners: Vec<u32> = (0..n as u32).collect();
            for i in (1..owners.len()).rev() {
                owners.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let entries: Vec<Entry> = owners
                .iter()
                .map(|&o| Entry {
                    aabb: Aabb::new([o as f32, 0.0], [o as f32 + 1.0, 1.0]),
                    owner: o,
                    generation: core::num::NonZeroU32::new(o + 1).unwrap(),
                })
                .collect();
            let mut expected = entries.clone();
            expected.sort_by_key(|e| e.owner);
            // What `out` held: filler, or the expected entries each with
            // another box (an entry of another frame at its slot's index),
            // so that a position left unwritten shows either way.
            let moved: Vec<Entry> = (expected.iter())
                .map(|e| Entry {
                    aabb: e.aabb.translate([0.5, 0.5]),
                    ..*e
                })
                .chain(core::iter::repeat(Entry::VACANT))
                .take(n + 7)
                .collect();
            for held in [0, n.saturating_sub(3), n, n + 7] {
                for start in [vec![Entry::VACANT; held], moved[..held].to_vec()] {
                    let mut out = start;
                    super::scatter_by_slot(&entries, &mut out);
                    // Not `assert_eq!`, whose message would print every
                    // entry.
                    assert!(out == expected, "{n} entries into {held}");
                }
            }
        }
    }

    /// The slots' order is not taken when the sample says nothing of it:
    /// every item in one cell of the sample's grid, or slots more than
    /// twice the items (after a larger frame), where the gather would read
    /// mostly free slots. The tree is `insert_many`'s all the same.
    #[test]
    fn the_slots_order_is_not_taken_on_too_little_evidence() {
        let s = Scenario::new(Layout::Uniform, 5_000, 8);
        let boxes: Vec<Aabb> = s.boxes();
        let mut tree = QuadTree::new(s.world);
        let fill = |tree: &mut QuadTree<u32>, boxes: &[Aabb]| {
            tree.clear();
            for (b, i) in boxes.iter().zip(0u32..) {
                tree.insert(*b, i);
            }
            let mut built = QuadTree::new(s.world);
            built.insert_many(boxes.iter().copied().zip(0u32..));
            let shape =
                |t: &QuadTree<u32>| t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>();
            let taken = tree.gather_by_slot(&mut Vec::new());
            assert_eq!(shape(tree), shape(&built));
            taken
        };
        fill(&mut tree, &boxes);
        assert!(fill(&mut tree, &boxes), "refilled in the same order");
        assert!(
            !fill(&mut tree, &boxes[..2_400]),
            "slots over twice the items"
        );
        // 2,400 items in the lower left quadrant: one cell of a 2 x 2 grid.
        let w = s.world;
        let corner: Vec<Aabb> = boxes[..2_400]
            .iter()
            .map(|b| {
                let c = b.center();
                let x = w.min.x + (c.x - w.min.x) * 0.45;
                let y = w.min.y + (c.y - w.min.y) * 0.45;
                Aabb::new([x, y], [x + 0.01, y + 0.01])
            })
            .collect();
        let mut tree = QuadTree::new(s.world);
        fill(&mut tree, &corner);
        assert!(!fill(&mut tree, &corner), "every sample in one cell");
    }

    /// `shrink_to_fit` leaves every array at its length, the entry array
    /// holding exactly the live entries, and no scratch; the tree still
    /// answers as before and stays valid for what follows.
    #[test]
    fn shrink_to_fit_leaves_no_room() {
        let s = Scenario::new(Layout::Clustered, 20_000, 3);
        let boxes = s.boxes();
        let config = Config {
            max_items: 8,
            ..Config::default()
        };
        let mut tree = QuadTree::with_config(s.world, config);
        let keys = tree.insert_many(boxes.iter().copied().zip(0u32..));
        // Moves and removals that leave room in runs and holes between
        // them, but not enough garbage for a compaction.
        for (i, &k) in keys.iter().enumerate() {
            match i % 5 {
                0 => drop(tree.remove(k)),
                1 => drop(tree.update(k, boxes[(i * 7) % boxes.len()])),
                _ => {}
            }
        }
        assert!(tree.entries.len() > tree.len(), "nothing to compact");
        let pairs = tree.pairs().len();
        tree.shrink_to_fit();
        tree.validate().unwrap();
        assert_eq!(tree.entries.len(), tree.len());
        assert_eq!(tree.entries.capacity(), tree.len());
        assert_eq!(tree.nodes.capacity(), tree.nodes.len());
        assert_eq!(tree.geo.capacity(), tree.geo.len());
        assert_eq!(tree.slab.slots.capacity(), tree.slab.slots.len());
        assert_eq!(tree.slab.places.capacity(), tree.slab.places.len());
        for scratch in [
            tree.cats.capacity(),
            tree.order.capacity(),
            tree.dirty.capacity(),
        ] {
            assert_eq!(scratch, 0);
        }
        assert_eq!(tree.pairs().len(), pairs);
        // And on: the next changes allocate what they need again.
        tree.update_all(|_, _, b| b.translate([-0.5, 0.25]));
        tree.rebuild();
        tree.validate().unwrap();
    }

    /// A copy of a tree that has been updated, in parallel and in all three
    /// ways `update_all` re-places movers (a rebuild, the bulk placement,
    /// one by one), holds none of the scratch those keep, and is the same
    /// tree: the same nodes, order, keys and pairs, before and after the
    /// same changes of each kind, and after a clear and the same refill.
    #[test]
    fn a_copy_holds_no_scratch_and_is_the_same_tree() {
        let s = Scenario::new(Layout::MixedSizes, 20_000, 8);
        let mut boxes = s.boxes();
        let config = Config {
            max_items: 8,
            par_min_items: 0,
            ..Config::default()
        };
        let mut tree = QuadTree::with_config(s.world, config);
        let keys = tree.insert_many(boxes.iter().copied().zip(0u32..));
        // Every `every`-th item jumps 40 units, the others stay: a third
        // of them calls for a rebuild, a thirtieth (3.3%, above 1/128) for
        // the bulk placement, a three-hundredth (below 1/128) for moves
        // one by one.
        let frame = |tree: &mut QuadTree<u32>,
                     boxes: &mut Vec<Aabb>,
                     shift: f32,
                     every: usize,
                     parallel: bool| {
            for (i, b) in boxes.iter_mut().enumerate().step_by(every) {
                let d = 40.0;
                *b = b.translate([d * (shift + i as f32).sin(), d * (shift * 1.3).cos()]);
            }
            let at = |k: Key| boxes[k.index() as usize];
            if parallel {
                #[cfg(feature = "parallel")]
                tree.par_update_all(|k, _, _| at(k));
            } else {
                tree.update_all(|k, _, _| at(k));
            }
        };
        frame(&mut tree, &mut boxes, 0.37, 3, true);
        frame(&mut tree, &mut boxes, 0.74, 3, false);
        frame(&mut tree, &mut boxes, 0.91, 30, false);
        assert!(
            tree.placing.runs.capacity() > 0 && tree.placing.arrivals.capacity() > 0,
            "the bulk placement keeps its scratch"
        );
        frame(&mut tree, &mut boxes, 1.03, 300, false);
        assert!(tree.movers.capacity() > 0 && tree.dirty.capacity() > 0);
        #[cfg(feature = "parallel")]
        assert!(
            tree.fresh.capacity() > 0,
            "par_update_all keeps its scratch"
        );
        tree.remove(keys[5]);
        tree.update(keys[6], Aabb::from_point([1.0, 1.0]));
        let same = |a: &QuadTree<u32>, b: &QuadTree<u32>, what: &str| {
            a.validate().unwrap();
            b.validate().unwrap();
            assert!(a.nodes().eq(b.nodes()), "{what}: nodes");
            assert_eq!(a.entries, b.entries, "{what}: order");
            assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
            assert_eq!(a.pairs(), b.pairs(), "{what}: pairs");
        };
        let mut copy = tree.clone();
        #[cfg(feature = "parallel")]
        assert_eq!(copy.fresh.capacity(), 0);
        for scratch in [
            copy.movers.capacity(),
            copy.splits.capacity(),
            copy.order.capacity(),
            copy.dirty.capacity(),
            copy.cats.capacity(),
            copy.placing.runs.capacity(),
            copy.placing.arrivals.capacity(),
            copy.placing.net.capacity(),
        ] {
            assert_eq!(scratch, 0);
        }
        same(&tree, &copy, "copied");
        let mut twin = boxes.clone();
        for (shift, every) in [(1.11, 300), (1.23, 30), (1.37, 3), (1.41, 30)] {
            frame(&mut tree, &mut boxes, shift, every, false);
            frame(&mut copy, &mut twin, shift, every, false);
            same(&tree, &copy, &format!("both updated, every {every}th item"));
        }
        // A clear and the same refill hand out the same keys.
        for t in [&mut tree, &mut copy] {
            t.clear();
            let refilled: Vec<Key> = boxes
                .iter()
                .zip(0u32..)
                .map(|(&b, v)| t.insert(b, v))
                .collect();
            assert_eq!(t.len(), refilled.len());
        }
        same(&tree, &copy, "cleared and refilled");
    }

    /// A bulk build that grew the node arrays leaves them at most an eighth
    /// longer than the nodes, on one thread and on several (the tests of
    /// the whole tree's heap, in `tests/alloc`, run no thread pool).
    #[test]
    fn bulk_builds_trim_the_node_arrays() {
        let config = Config {
            par_min_items: 0,
            ..Config::default()
        };
        for (n, parallel) in [30_000, 100_000]
            .into_iter()
            .flat_map(|n| [(n, false), (n, true)])
        {
            let s = Scenario::new(Layout::Uniform, n, 5);
            let mut tree = QuadTree::with_config(s.world, config);
            let items = s.boxes().into_iter().zip(0u32..);
            #[cfg(feature = "parallel")]
            if parallel {
                tree.par_insert_many(items.clone());
            }
            if tree.is_empty() {
                tree.insert_many(items);
            }
            let (nodes, geo) = (tree.nodes.len(), tree.geo.len());
            assert!(nodes > 1000);
            let what = format!("n = {n}, parallel: {parallel}");
            assert!(tree.nodes.capacity() <= nodes + nodes / 8, "{what}");
            assert!(tree.geo.capacity() <= geo + geo / 8, "{what}");
        }
    }

    /// A batch whose iterator does not know its length (a `filter`, a
    /// `flat_map`, one whose `size_hint` says nothing, or one that claims
    /// at most 10 or 100 items whatever it holds) is built in bulk
    /// when it turns out as large as one that does: into a placed tree at
    /// most twice its size. Into an empty tree it is built in bulk at once,
    /// even when it turns out short. The bulk build leaves the entry array
    /// packed, runs back to back in depth-first order with nothing else
    /// between them, which inserts one by one, each run growing where it
    /// can, do not. The tree, the keys and the values are the ones the
    /// same batch with its length known gives.
    #[test]
    fn a_batch_of_unknown_length_is_built_in_bulk_when_large() {
        /// An iterator with the `size_hint` it is given, true or not.
        struct Hint<I>(I, (usize, Option<usize>));
        impl<I: Iterator> Iterator for Hint<I> {
            type Item = I::Item;
            fn next(&mut self) -> Option<I::Item> {
                self.0.next()
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.1
            }
        }
        fn packed<T>(tree: &QuadTree<T>) -> bool {
            let mut at = 0;
            let mut stack = super::NodeStack::with_root();
            while let Some(n) = stack.pop() {
                let node = &tree.nodes[n as usize];
                if node.len > 0 && node.start != at {
                    return false;
                }
                at += node.len;
                if !node.is_leaf() {
                    for q in (0..4).rev() {
                        stack.push(node.children + q);
                    }
                }
            }
            at as usize == tree.entries.len()
        }
        let s = Scenario::new(Layout::Clustered, 6_000, 9);
        let boxes = s.boxes();
        let (old, new) = boxes.split_at(2_500);
        for (before, len, bulk) in [
            (0, 3_500, true),
            (2_500, 3_500, true),
            (7_000, 3_500, true),
            (8_000, 3_500, false),
            (0, 40, false),
            (100, 40, false),
        ] {
            let batch = || new[..len].iter().copied().zip(1_000_000u32..);
            let start = || {
                let mut tree = QuadTree::with_config(
                    s.world,
                    Config {
                        max_items: 8,
                        ..Config::default()
                    },
                );
                for (b, v) in old.iter().chain(boxes.iter()).take(before).zip(0u32..) {
                    tree.insert(*b, v);
                }
                tree.rebuild();
                tree
            };
            let mut known = start();
            let want = known.insert_many(batch());
            if len > 64 {
                assert_eq!(packed(&known), bulk, "{before}: known");
            }
            let kinds = [
                "filter",
                "flat_map",
                "no hint",
                "a low hint",
                "a hint of 100",
                #[cfg(feature = "parallel")]
                "parallel",
            ];
            for what in kinds {
                let mut tree = start();
                let items: Box<dyn Iterator<Item = (Aabb, u32)>> = match what {
                    "filter" => Box::new(batch().filter(|_| true)),
                    "flat_map" => Box::new(batch().flat_map(Some)),
                    // A hint that says at most 10 items, whatever the
                    // batch holds.
                    "a low hint" => Box::new(Hint(batch(), (0, Some(10)))),
                    // At most 100: more than 64, whatever the batch holds.
                    "a hint of 100" => Box::new(Hint(batch(), (0, Some(100)))),
                    _ => Box::new(Hint(batch(), (0, None))),
                };
                // Into an empty tree, a batch that may hold more than 64
                // items goes in bulk before it is counted.
                let most = items.size_hint().1;
                let keys = match what {
                    #[cfg(feature = "parallel")]
                    "parallel" => tree.par_insert_many(items),
                    _ => tree.insert_many(items),
                };
                let bulk = bulk || (before == 0 && most.is_none_or(|most| most > 64));
                let what = format!("{what}, {len} items into {before}");
                tree.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(keys, want, "{what}: keys");
                for (&k, v) in keys.iter().zip(1_000_000u32..) {
                    assert_eq!(tree[k], v, "{what}");
                }
                assert!(tree.nodes().eq(known.nodes()), "{what}: nodes");
                let (mut got, mut pairs) = (tree.pairs(), known.pairs());
                got.sort_unstable();
                pairs.sort_unstable();
                assert_eq!(got, pairs, "{what}: pairs");
                assert_eq!(packed(&tree), bulk, "{what}: built in bulk");
            }
        }
    }
}
