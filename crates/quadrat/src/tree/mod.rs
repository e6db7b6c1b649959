//! [`QuadTree<T>`]: a loose quadtree with stable keys.
//!
//! One operation per file: [`insert`](insert.rs), [`remove`](remove.rs),
//! [`update`](update.rs), [`query`](query.rs), [`pairs`](pairs.rs),
//! [`validate`](validate.rs). This file holds the data layout, the node
//! geometry every operation shares, and the small accessors.

mod build;
mod insert;
mod nearest;
mod pairs;
#[cfg(feature = "parallel")]
mod parallel;
mod query;
mod raycast;
mod remove;
mod update;
mod validate;

pub(crate) use pairs::NodeFilter;
pub use query::{Query, Region};

use crate::error::Error;
use crate::geom::{Aabb, Vec2};
use crate::key::{Key, Slab};

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

/// Capacity of the fixed traversal stacks: a depth-first walk keeps at most
/// three pending siblings per level plus the four children just pushed.
pub(crate) const STACK: usize = 3 * MAX_DEPTH as usize + 8;

/// Tuning knobs of a [`QuadTree`].
///
/// `Config::default()` is the tuned choice; change it to study the tree
/// (the lab's sliders do) or when profiling says so.
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
    /// would fit into a child. At least 1.
    pub max_items: usize,
    /// The deepest level a node may have (the root is level 0). At most
    /// [`MAX_DEPTH`].
    pub max_depth: u8,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_items: 32,
            max_depth: 16,
        }
    }
}

impl Config {
    /// Checks the values: `max_items >= 1` and `max_depth <= MAX_DEPTH`.
    ///
    /// ```
    /// use quadrat::Config;
    /// let err = Config { max_items: 0, ..Config::default() }.validate().unwrap_err();
    /// assert_eq!(err.to_string(), "config.max_items must be at least 1");
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

/// One node of the tree. The four children of a node are contiguous in
/// [`QuadTree::nodes`], starting at `children`; the node's items are the
/// contiguous run `start .. start + len` of the entry array.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The quadrant of space this node covers.
    pub(crate) cell: Aabb,
    /// `cell` grown by half its size on every side, clipped to the parent's
    /// loose bounds: every item stored here lies inside it (root excepted).
    pub(crate) loose: Aabb,
    /// Index of the first of four children, or [`NONE`] for a leaf.
    pub(crate) children: u32,
    /// First entry of this node's run.
    pub(crate) start: u32,
    /// Items in the run.
    pub(crate) len: u32,
    /// Reserved length of the run.
    pub(crate) cap: u32,
    /// Internal node: items stored strictly below it. Leaf: its items that
    /// would move into a child if it split. The tree's shape follows from
    /// it: a node has children exactly when its load exceeds `max_items`.
    pub(crate) load: u32,
    /// A box containing every item of this node's own run (exact after a
    /// build or a split, grown by inserts and moves, [`EMPTY`] when the run
    /// is empty). The pair finder skips and filters with it.
    pub(crate) tight: Aabb,
    /// Internal node: a box containing the subtree bounds of each child, so
    /// every item stored strictly below it (exact after a build and after
    /// `update_all`, grown by inserts and moves, never shrunk by removals).
    /// Queries, the pair finder, `nearest` and ray casts prune with it.
    pub(crate) below: Aabb,
    /// The parent's index; [`NONE`] for the root.
    pub(crate) parent: u32,
    /// Level; the root is 0. `u8::MAX` marks a node in a free block.
    pub(crate) depth: u8,
    /// Which sides of the cell lie on the world's border (see [`Edges`]):
    /// on those sides the cell reaches to infinity for placement, so that
    /// centres outside the world still descend deterministically.
    pub(crate) edges: u8,
}

/// Bits of [`Node::edges`].
struct Edges;
impl Edges {
    const LEFT: u8 = 1;
    const RIGHT: u8 = 2;
    const BOTTOM: u8 = 4;
    const TOP: u8 = 8;
    const ALL: u8 = 15;
}

impl Node {
    pub(crate) fn root(world: Aabb) -> Node {
        Node::new(world, loose_of(&world), 0, Edges::ALL)
    }

    /// An empty leaf with the given geometry.
    fn new(cell: Aabb, loose: Aabb, depth: u8, edges: u8) -> Node {
        Node {
            cell,
            loose,
            children: NONE,
            start: 0,
            len: 0,
            cap: 0,
            load: 0,
            tight: EMPTY,
            below: EMPTY,
            parent: NONE,
            depth,
            edges,
        }
    }

    /// A box containing every item in this node's subtree.
    #[inline]
    pub(crate) fn subtree_bounds(&self) -> Aabb {
        if self.is_leaf() {
            self.tight
        } else {
            self.tight.union(&self.below)
        }
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.children == NONE
    }

    /// The cell and loose bounds of child `q` (bit 0: right half, bit 1:
    /// upper half). A pure function of the parent, so that a child computed
    /// when the node splits and one imagined while it is a leaf agree to the
    /// last bit.
    #[inline]
    pub(crate) fn child_geometry(&self, q: usize) -> (Aabb, Aabb) {
        let mid = self.cell.center();
        let (x0, x1) = if q & 1 == 0 {
            (self.cell.min.x, mid.x)
        } else {
            (mid.x, self.cell.max.x)
        };
        let (y0, y1) = if q & 2 == 0 {
            (self.cell.min.y, mid.y)
        } else {
            (mid.y, self.cell.max.y)
        };
        let cell = Aabb::new([x0, y0], [x1, y1]);
        let l = loose_of(&cell);
        let loose = Aabb::new(l.min.max(self.loose.min), l.max.min(self.loose.max));
        (cell, loose)
    }

    /// The loose bounds of the four children, whether or not they exist.
    #[inline]
    pub(crate) fn children_loose(&self) -> [Aabb; 4] {
        core::array::from_fn(|q| self.child_geometry(q).1)
    }

    /// Which sides of child `q` lie on the world's border.
    #[inline]
    fn child_edges(&self, q: usize) -> u8 {
        let mut e = 0;
        if q & 1 == 0 {
            e |= self.edges & Edges::LEFT;
        } else {
            e |= self.edges & Edges::RIGHT;
        }
        if q & 2 == 0 {
            e |= self.edges & Edges::BOTTOM;
        } else {
            e |= self.edges & Edges::TOP;
        }
        e
    }

    /// `true` when descending by centre from the root reaches this node's
    /// cell: the cell is closed below and open above, except on the world's
    /// border, where it extends to infinity.
    #[inline]
    pub(crate) fn reaches(&self, c: Vec2) -> bool {
        let e = self.edges;
        (c.x >= self.cell.min.x || e & Edges::LEFT != 0)
            && (c.x < self.cell.max.x || e & Edges::RIGHT != 0)
            && (c.y >= self.cell.min.y || e & Edges::BOTTOM != 0)
            && (c.y < self.cell.max.y || e & Edges::TOP != 0)
    }
}

/// The quadrant of `cell` that centre `c` descends into.
#[inline]
pub(crate) fn quadrant(cell: &Aabb, c: Vec2) -> usize {
    let mid = cell.center();
    usize::from(c.x >= mid.x) | (usize::from(c.y >= mid.y) << 1)
}

/// A cell grown by half its width and height on every side.
#[inline]
fn loose_of(cell: &Aabb) -> Aabb {
    let h = Vec2::new(
        cell.max.x * 0.5 - cell.min.x * 0.5,
        cell.max.y * 0.5 - cell.min.y * 0.5,
    );
    Aabb::new(cell.min - h, cell.max + h)
}

/// One item as the tree stores it: its box and its key (slab slot and
/// generation). The generation is fixed for the entry's life, and keeping
/// it here lets the pair finder and queries make keys without reading the
/// slab.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) aabb: Aabb,
    pub(crate) owner: u32,
    pub(crate) generation: core::num::NonZeroU32,
}

impl Entry {
    /// Filler for reserved, unused positions.
    pub(crate) const VACANT: Entry = Entry {
        aabb: Aabb {
            min: Vec2::ZERO,
            max: Vec2::ZERO,
        },
        owner: NONE,
        generation: core::num::NonZeroU32::MIN,
    };

    /// The item's key.
    #[inline]
    pub(crate) fn key(&self) -> Key {
        Key::new(self.owner, self.generation)
    }
}

/// A fixed-capacity stack of node indices for walks that must not allocate.
#[derive(Clone)]
pub(crate) struct NodeStack {
    buf: [u32; STACK],
    len: usize,
}

impl NodeStack {
    #[inline]
    pub(crate) fn new() -> NodeStack {
        NodeStack {
            buf: [0; STACK],
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn with_root() -> NodeStack {
        let mut s = NodeStack::new();
        s.push(0);
        s
    }

    #[inline]
    pub(crate) fn push(&mut self, n: u32) {
        self.buf[self.len] = n;
        self.len += 1;
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.len = self.len.checked_sub(1)?;
        Some(self.buf[self.len])
    }
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
/// - Every query and the pair finder take `&self` and allocate nothing.
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
///   is consistent with whichever it has; in [`retain`](QuadTree::retain),
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
#[derive(Clone, Debug)]
pub struct QuadTree<T> {
    pub(crate) world: Aabb,
    pub(crate) config: Config,
    /// `max_items` as the `u32` the loads are compared with.
    pub(crate) max_items: u32,
    /// All nodes; index 0 is the root; children come in blocks of four.
    pub(crate) nodes: Vec<Node>,
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
    /// Scratch of `refit_below_all`: the nodes in breadth-first order.
    pub(crate) order: Vec<u32>,
    /// Scratch of `try_par_update_all`: each slot's new box, or NaN.
    #[cfg(feature = "parallel")]
    pub(crate) fresh: Vec<Aabb>,
    /// Scratch of `try_update_all`: one bit per node whose run changed.
    pub(crate) dirty: Vec<u64>,
    /// Scratch of the bulk build: each entry's destination in the node
    /// being partitioned (one byte per item, kept for the next rebuild).
    pub(crate) cats: Vec<u8>,
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
            nodes: vec![Node::root(world)],
            free_blocks: Vec::new(),
            entries: Vec::new(),
            garbage: 0,
            slab: Slab::new(),
            movers: Vec::new(),
            splits: Vec::new(),
            dirty: Vec::new(),
            order: Vec::new(),
            #[cfg(feature = "parallel")]
            fresh: Vec::new(),
            cats: Vec::new(),
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
        let idx = self.slab.index_of(key)?;
        self.slab.slots[idx].value.as_ref()
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
        let idx = self.slab.index_of(key)?;
        self.slab.slots[idx].value.as_mut()
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
        Some(self.entries[self.slab.slots[idx].pos as usize].aabb)
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
        self.slab.slots.iter().enumerate().filter_map(|(i, s)| {
            let v = s.value.as_ref()?;
            Some((self.slab.key_at(i), self.entries[s.pos as usize].aabb, v))
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
        let generations = &self.slab.generations;
        self.slab
            .slots
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, s)| {
                let generation = generations[i];
                let pos = s.pos as usize;
                let v = s.value.as_mut()?;
                Some((Key::new(i as u32, generation), entries[pos].aabb, v))
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
        self.slab.slots.iter().filter_map(|s| s.value.as_ref())
    }

    /// Removes every item, keeping all allocations for a refill: the
    /// per-frame "clear and insert everything again" pattern allocates
    /// nothing once the tree has grown to its working size. Every key handed
    /// out before is invalidated.
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
        self.nodes.truncate(1);
        self.nodes[0] = Node::root(self.world);
        self.free_blocks.clear();
        self.entries.clear();
        self.garbage = 0;
        self.slab.clear();
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
        for idx in 0..self.slab.slots.len() {
            let generation = self.slab.generations[idx];
            let slot = &mut self.slab.slots[idx];
            let pos = slot.pos as usize;
            let Some(v) = slot.value.as_mut() else {
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
        let mut stack = NodeStack::with_root();
        core::iter::from_fn(move || {
            let n = stack.pop()?;
            let node = &self.nodes[n as usize];
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
            Some(NodeView {
                bounds: node.cell,
                loose: node.loose,
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

    // ----- internals shared by the operations -----

    /// The key of the item in entry `pos`.
    #[inline]
    pub(crate) fn key_of_entry(&self, pos: usize) -> Key {
        self.entries[pos].key()
    }

    /// The node where a box is stored: the deepest existing node along its
    /// centre's path whose loose bounds contain it.
    pub(crate) fn locate(&self, b: &Aabb) -> u32 {
        let c = b.center();
        let mut n = 0u32;
        loop {
            let node = &self.nodes[n as usize];
            if node.is_leaf() {
                return n;
            }
            let child = node.children + quadrant(&node.cell, c) as u32;
            if !self.nodes[child as usize].loose.contains(b) {
                return n;
            }
            n = child;
        }
    }

    /// Whether an item with box `b` stored in leaf `n` would move into a
    /// child if `n` split (and so counts towards its load).
    #[inline]
    pub(crate) fn leaf_wants_deeper(&self, n: u32, b: &Aabb) -> bool {
        let node = &self.nodes[n as usize];
        if node.depth >= self.config.max_depth {
            return false;
        }
        let (_, loose) = node.child_geometry(quadrant(&node.cell, b.center()));
        loose.contains(b)
    }

    /// Records in the slab that entry `p` sits at position `p`.
    #[inline]
    pub(crate) fn set_pos(&mut self, p: usize) {
        self.slab.slots[self.entries[p].owner as usize].pos = p as u32;
    }

    /// Adds an item to node `n`'s run, keeping the run sorted by `min.x`,
    /// and records where it went.
    pub(crate) fn insert_entry(&mut self, n: u32, e: Entry) {
        self.append_entry(n, e);
        let node = &self.nodes[n as usize];
        self.resort_entry(n, node.start + node.len - 1);
    }

    /// Appends an item to node `n`'s run without keeping the order (the
    /// caller sorts the run afterwards) and records where it went.
    pub(crate) fn append_entry(&mut self, n: u32, e: Entry) {
        let node = &self.nodes[n as usize];
        if node.len == node.cap {
            self.grow_run(n);
        }
        let node = &mut self.nodes[n as usize];
        let p = (node.start + node.len) as usize;
        node.len += 1;
        node.tight = node.tight.union(&e.aabb);
        self.entries[p] = e;
        let slot = &mut self.slab.slots[e.owner as usize];
        slot.node = n;
        slot.pos = p as u32;
    }

    /// Removes entry `pos` from node `n`'s run, keeping the run sorted: the
    /// run's last entry takes its place and moves right to where it belongs.
    /// O(1) when those two start at the same `x` (as for items piled on one
    /// point), else linear in the entries it passes.
    pub(crate) fn remove_entry(&mut self, n: u32, pos: u32) {
        let node = &mut self.nodes[n as usize];
        node.len -= 1;
        let last = node.start + node.len;
        let gone = self.entries[pos as usize].aabb;
        if pos != last {
            self.entries[pos as usize] = self.entries[last as usize];
            self.set_pos(pos as usize);
            self.resort_entry(n, pos);
        }
        // Keep the bounds exact where that is cheap: only a box on the
        // boundary can shrink them, and large runs keep a conservative box.
        let node = &self.nodes[n as usize];
        let t = node.tight;
        let on_edge = gone.min.x <= t.min.x
            || gone.min.y <= t.min.y
            || gone.max.x >= t.max.x
            || gone.max.y >= t.max.y;
        if on_edge && node.len <= 64 {
            self.refit(n);
        }
    }

    /// Restores the order of node `n`'s nearly sorted run by insertion
    /// sort, recording new positions only for entries that moved, and
    /// refits its bounds.
    pub(crate) fn resort_run(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        let (start, end) = (node.start as usize, (node.start + node.len) as usize);
        for i in start + 1..end {
            let e = self.entries[i];
            let mut p = i;
            while p > start && self.entries[p - 1].aabb.min.x > e.aabb.min.x {
                self.entries[p] = self.entries[p - 1];
                self.set_pos(p);
                p -= 1;
            }
            if p != i {
                self.entries[p] = e;
                self.set_pos(p);
            }
        }
        self.refit(n);
    }

    /// `true` when every position of the entry array holds a live item: no
    /// garbage and no reserved slack in any run.
    pub(crate) fn all_entries_live(&self) -> bool {
        self.garbage == 0 && self.entries.len() == self.len()
    }

    /// Recomputes node `n`'s `tight` box from its run.
    pub(crate) fn refit(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        let run = &self.entries[node.start as usize..(node.start + node.len) as usize];
        let tight = run.iter().fold(EMPTY, |t, e| t.union(&e.aabb));
        self.nodes[n as usize].tight = tight;
    }

    /// Restores the order of node `n`'s run after the box of entry `pos`
    /// changed, by moving that entry left or right.
    pub(crate) fn resort_entry(&mut self, n: u32, pos: u32) {
        let node = &self.nodes[n as usize];
        let (start, end) = (node.start as usize, (node.start + node.len) as usize);
        let mut p = pos as usize;
        let e = self.entries[p];
        let x = e.aabb.min.x;
        if p > start && self.entries[p - 1].aabb.min.x > x {
            while p > start && self.entries[p - 1].aabb.min.x > x {
                self.entries[p] = self.entries[p - 1];
                self.set_pos(p);
                p -= 1;
            }
        } else {
            while p + 1 < end && self.entries[p + 1].aabb.min.x < x {
                self.entries[p] = self.entries[p + 1];
                self.set_pos(p);
                p += 1;
            }
        }
        if p != pos as usize {
            self.entries[p] = e;
            self.set_pos(p);
        }
    }

    /// Sorts node `n`'s run by `min.x` and records every position.
    pub(crate) fn sort_run(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        let (start, end) = (node.start as usize, (node.start + node.len) as usize);
        self.entries[start..end].sort_unstable_by(|a, b| a.aabb.min.x.total_cmp(&b.aabb.min.x));
        self.refit(n);
        for p in start..end {
            let slot = &mut self.slab.slots[self.entries[p].owner as usize];
            slot.node = n;
            slot.pos = p as u32;
        }
    }

    /// Doubles the reserved length of node `n`'s run, in place when the run
    /// is the last one in the array, else by moving it to the end.
    fn grow_run(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        let (start, len, cap) = (node.start as usize, node.len as usize, node.cap as usize);
        let new_cap = (cap * 2).max(4);
        let end = self.entries.len();
        debug_assert!(cap > 0 || start == 0, "an empty reservation starts at 0");
        if cap > 0 && start + cap == end {
            self.entries.resize(start + new_cap, Entry::VACANT);
        } else {
            assert!(
                end + new_cap < NONE as usize,
                "quadrat: entry array exceeds 2^32 entries"
            );
            self.entries.extend_from_within(start..start + len);
            self.entries.resize(end + new_cap, Entry::VACANT);
            for p in end..end + len {
                self.set_pos(p);
            }
            self.garbage += cap;
            self.nodes[n as usize].start = end as u32;
        }
        self.nodes[n as usize].cap = new_cap as u32;
    }

    /// Gives the run of node `n` up (its entries become garbage).
    pub(crate) fn release_run(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        self.garbage += node.cap as usize;
        node.start = 0;
        node.len = 0;
        node.cap = 0;
        node.tight = EMPTY;
    }

    /// Re-packs the entry array in depth-first node order when more than
    /// half of it is garbage. Called between operations, never while an
    /// entry position is held.
    #[inline]
    pub(crate) fn maybe_compact(&mut self) {
        if self.garbage > 64 && self.garbage * 2 > self.entries.len() {
            self.compact();
        }
    }

    /// Re-packs the entry array in place, without allocating once warm: runs
    /// are moved left in the order in which they sit (so no run overwrites
    /// one not yet moved), each reserving exactly its length.
    #[cold]
    fn compact(&mut self) {
        let mut order = core::mem::take(&mut self.splits);
        order.clear();
        let mut stack = NodeStack::with_root();
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if node.cap > 0 {
                order.push(n);
            }
            if !node.is_leaf() {
                for q in 0..4 {
                    stack.push(node.children + q);
                }
            }
        }
        order.sort_unstable_by_key(|&n| self.nodes[n as usize].start);
        let mut w = 0usize;
        for &n in &order {
            let node = &mut self.nodes[n as usize];
            let (start, len) = (node.start as usize, node.len as usize);
            // A run left empty gives its reservation up entirely, and starts
            // at 0 like every empty reservation: a start past the end of the
            // truncated array would be sliced out of range later.
            node.start = if len == 0 { 0 } else { w as u32 };
            node.cap = len as u32;
            if start != w {
                self.entries.copy_within(start..start + len, w);
                for p in w..w + len {
                    self.set_pos(p);
                }
            }
            w += len;
        }
        self.entries.truncate(w);
        self.garbage = 0;
        self.splits = order;
    }

    /// Takes a block of four nodes (from the free list or the end of the
    /// array) and makes it the children of `n`.
    pub(crate) fn alloc_children(&mut self, n: u32) -> u32 {
        let parent = &self.nodes[n as usize];
        let kids: [Node; 4] = core::array::from_fn(|q| {
            let (cell, loose) = parent.child_geometry(q);
            let mut kid = Node::new(cell, loose, parent.depth + 1, parent.child_edges(q));
            kid.parent = n;
            kid
        });
        let first = match self.free_blocks.pop() {
            Some(first) => {
                for (q, kid) in kids.into_iter().enumerate() {
                    self.nodes[first as usize + q] = kid;
                }
                first
            }
            None => {
                let first = self.nodes.len();
                assert!(first + 4 < NONE as usize, "quadrat: too many nodes");
                self.nodes.extend(kids);
                first as u32
            }
        };
        self.nodes[n as usize].children = first;
        first
    }

    /// Grows the `below` boxes of node `n`'s ancestors to contain `b`, an
    /// item box of `n`'s, stopping at the first that already does (the
    /// boxes of higher ancestors contain it then).
    pub(crate) fn grow_below(&mut self, n: u32, b: &Aabb) {
        let mut p = self.nodes[n as usize].parent;
        while p != NONE {
            let node = &mut self.nodes[p as usize];
            if node.below.contains(b) {
                break;
            }
            node.below = node.below.union(b);
            p = node.parent;
        }
    }

    /// Recomputes every internal node's `below` box exactly, children first.
    pub(crate) fn refit_below_all(&mut self) {
        let mut order = core::mem::take(&mut self.order);
        order.clear();
        order.push(0);
        let mut i = 0;
        while i < order.len() {
            let n = order[i];
            i += 1;
            let c = self.nodes[n as usize].children;
            if c != NONE {
                order.extend(c..c + 4);
            }
        }
        for &n in order.iter().rev() {
            let c = self.nodes[n as usize].children;
            if c != NONE {
                let b = (c..c + 4).fold(EMPTY, |u, k| {
                    u.union(&self.nodes[k as usize].subtree_bounds())
                });
                self.nodes[n as usize].below = b;
            }
        }
        self.order = order;
    }

    /// Returns the block of four nodes starting at `first` to the free list.
    pub(crate) fn free_children(&mut self, first: u32) {
        for q in 0..4 {
            // `children` is left as it is: a collapse may still be walking it.
            let node = &mut self.nodes[(first + q) as usize];
            node.depth = u8::MAX;
            node.load = 0;
        }
        self.free_blocks.push(first);
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
