//! Nodes, and their geometry kept apart (`Geo`: cells, loose bounds and
//! the border edges), quadrants, plus the two small records every
//! operation shares (`Entry`, `NodeStack`).

use super::{EMPTY, NONE, STACK};
use crate::geom::{Aabb, Vec2};
use crate::key::Key;

/// One node of the tree. The four children of a node are contiguous in
/// [`QuadTree::nodes`](super::QuadTree::nodes), starting at `children`;
/// the node's items are the contiguous run `start .. start + len` of the
/// entry array. Its geometry is kept apart, in
/// [`QuadTree::geo`](super::QuadTree::geo) at the same index, so a node
/// takes 60 bytes; the searches read a 32-byte copy of what they need,
/// [`Hot`], and the node itself only for an internal node's `tight` box.
#[derive(Clone, Debug)]
pub(crate) struct Node {
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
}

/// What the searches (queries, ray casts, `nearest`) read of a node, in
/// [`QuadTree::hot`](super::QuadTree::hot) at the node's index: its
/// subtree bounds, children and run, 32 bytes. A search tests each child
/// of a node it visits against the region, so it reads four of these, one
/// block of 128 bytes, where it read four 60-byte nodes; and the array,
/// half the size of the nodes, stays in the cache more. At 1M uniform
/// boxes, area and point queries take about 0.7× the time (see
/// ARCHITECTURE.md, *Queries and pairs*). A copy of fields of `Node`,
/// refreshed after every change (see `QuadTree::sync_path`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub(crate) struct Hot {
    /// [`Node::subtree_bounds`].
    pub(crate) sub: Aabb,
    /// [`Node::children`].
    pub(crate) children: u32,
    /// [`Node::start`].
    pub(crate) start: u32,
    /// [`Node::len`].
    pub(crate) len: u32,
}

impl Hot {
    /// The copy of `node`'s fields.
    #[inline]
    pub(crate) fn of(node: &Node) -> Hot {
        Hot {
            sub: node.subtree_bounds(),
            children: node.children,
            start: node.start,
            len: node.len,
        }
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.children == NONE
    }
}

/// Where a node lies: its cell, its loose bounds and which of its sides lie
/// on the world's border. A pure function of the node's path from the
/// root ([`Geo::root`], then [`Geo::child`] at each step), kept in
/// [`QuadTree::geo`](super::QuadTree::geo) beside the nodes: placement
/// reads it, the queries, ray casts, `nearest` and the pair walks do not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Geo {
    /// The quadrant of space the node covers.
    pub(crate) cell: Aabb,
    /// `cell` grown by half its size on every side, clipped to the parent's
    /// loose bounds: every item stored in the node lies inside it (root
    /// excepted).
    pub(crate) loose: Aabb,
    /// Which sides of the cell lie on the world's border (see [`Edges`]):
    /// on those sides the cell reaches to infinity for placement, so that
    /// centres outside the world still descend deterministically.
    pub(crate) edges: u8,
}

/// Bits of [`Geo::edges`].
struct Edges;
impl Edges {
    const LEFT: u8 = 1;
    const RIGHT: u8 = 2;
    const BOTTOM: u8 = 4;
    const TOP: u8 = 8;
    const ALL: u8 = 15;
}

impl Node {
    /// The root of an empty tree.
    pub(crate) fn root() -> Node {
        Node::new(0)
    }

    /// An empty leaf at level `depth`.
    pub(crate) fn new(depth: u8) -> Node {
        Node {
            children: NONE,
            start: 0,
            len: 0,
            cap: 0,
            load: 0,
            tight: EMPTY,
            below: EMPTY,
            parent: NONE,
            depth,
        }
    }

    /// A box containing every item in this node's subtree.
    #[inline]
    pub(crate) fn subtree_bounds(&self) -> Aabb {
        if self.is_leaf() {
            self.tight
        } else {
            self.tight.join(&self.below)
        }
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.children == NONE
    }
}

impl Geo {
    /// The root's geometry in `world`.
    pub(crate) fn root(world: Aabb) -> Geo {
        Geo {
            cell: world,
            loose: loose_of(&world),
            edges: Edges::ALL,
        }
    }

    /// The geometry of child `q` (bit 0: right half, bit 1: upper half). A
    /// pure function of the parent, so that a child computed when the node
    /// splits and one imagined while it is a leaf agree to the last bit.
    #[inline]
    pub(crate) fn child(&self, q: usize) -> Geo {
        let (cell, loose) = self.child_geometry(q);
        Geo {
            cell,
            loose,
            edges: self.child_edges(q),
        }
    }

    /// The cell and loose bounds of child `q`.
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
    pub(crate) fn child_edges(&self, q: usize) -> u8 {
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

/// Where the boxes of one node go, for the passes that ask it of every box
/// in a run (a build's partition, a leaf's recount): the quadrant of the
/// centre, as [`quadrant`] finds it, and whether that child's loose bounds
/// hold the box, as `Aabb::contains` tests. The children's bounds are kept
/// in `f64`, where the centre is computed: each corner of the box is
/// converted once for both tests, exactly, since every `f32` is an `f64`.
/// With the bounds in `f32`, the compiler rebuilt the box's lower corner
/// from the load it shared between the two tests, three instructions more
/// per box, and a rebuild of 300k uniform boxes ran 1.10× the instructions
/// (callgrind).
pub(crate) struct Sorter {
    mid: Vec2,
    kids: [[f64; 4]; 4],
}

impl Sorter {
    /// The sorter of the node whose geometry is `geo`.
    #[inline]
    pub(crate) fn of(geo: &Geo) -> Sorter {
        Sorter {
            mid: geo.cell.center(),
            kids: geo
                .children_loose()
                .map(|k| [k.min.x, k.min.y, k.max.x, k.max.y].map(f64::from)),
        }
    }

    /// The quadrant `b`'s centre descends into, and whether that child's
    /// loose bounds hold `b` (so that it would be stored below the node).
    #[inline(always)]
    pub(crate) fn place(&self, b: &Aabb) -> (usize, bool) {
        let lo = [f64::from(b.min.x), f64::from(b.min.y)];
        let hi = [f64::from(b.max.x), f64::from(b.max.y)];
        let c = b.center();
        let q = usize::from(c.x >= self.mid.x) | (usize::from(c.y >= self.mid.y) << 1);
        let k = &self.kids[q];
        let fits = (k[0] <= lo[0]) & (k[1] <= lo[1]) & (hi[0] <= k[2]) & (hi[1] <= k[3]);
        (q, fits)
    }
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

// What a question reads of a node stays within 60 bytes (see `Node`).
const _: () = assert!(core::mem::size_of::<Node>() == 60);
