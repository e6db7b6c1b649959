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
/// in `f64`, where the box's bounds are summed: each corner of the box is
/// converted once for both tests, exactly, since every `f32` is an `f64`.
/// (When the centre was still computed here, with the bounds in `f32`, the
/// compiler rebuilt the box's lower corner from the load it shared between
/// the two tests, three instructions more per box, and a rebuild of 300k
/// uniform boxes ran 1.10× the instructions; callgrind.)
///
/// No centre is rounded to `f32` here. Along each axis, the centre
/// `midpoint(lo, hi)` is `(lo + hi) * 0.5` in `f64` rounded to `f32`, and
/// rounding is monotone, so `midpoint(lo, hi) >= mid` holds exactly when
/// the sum `lo + hi` in `f64` is at least one threshold, the least `f64`
/// whose half rounds to `mid` or above ([`at_least`]). The test compares
/// the sum with it, and gives [`quadrant`]'s answer for every box.
pub(crate) struct Sorter {
    /// Per axis, the least `f64` `s` such that a box whose bounds sum to
    /// `s` has its centre at or past the cell's centre.
    split: [f64; 2],
    kids: [[f64; 4]; 4],
}

impl Sorter {
    /// The sorter of the node whose geometry is `geo`.
    #[inline]
    pub(crate) fn of(geo: &Geo) -> Sorter {
        let mid = geo.cell.center();
        Sorter {
            split: [at_least(mid.x), at_least(mid.y)],
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
        let sum = [lo[0] + hi[0], lo[1] + hi[1]];
        let past = [sum[0] >= self.split[0], sum[1] >= self.split[1]];
        let q = usize::from(past[0]) | (usize::from(past[1]) << 1);
        let k = &self.kids[q];
        let fits = (k[0] <= lo[0]) & (k[1] <= lo[1]) & (hi[0] <= k[2]) & (hi[1] <= k[3]);
        (q, fits)
    }
}

/// The least `f64` `s` such that `(s * 0.5) as f32`, the centre of two
/// bounds that sum to `s` (see `geom::midpoint`), is at least `mid`. The
/// centre grows with the sum, so `centre >= mid` exactly when
/// `s >= at_least(mid)`.
///
/// Between `mid` and the `f32` below it, half-way is exact in `f64`; a
/// value there rounds to the one of the two whose last bit is even. The
/// least `f64` that rounds to `mid` or above is therefore the half-way
/// point when `mid`'s last bit is even, and otherwise the next `f64` up;
/// twice it is exact. Below `-f32::MAX` lies no finite `f32`, and every
/// sum qualifies.
fn at_least(mid: f32) -> f64 {
    let below = mid.next_down();
    if below == f32::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    let half_way = (f64::from(below) + f64::from(mid)) * 0.5;
    let least = if half_way as f32 >= mid {
        half_way
    } else {
        half_way.next_up()
    };
    debug_assert!(least as f32 >= mid && (least.next_down() as f32) < mid);
    least * 2.0
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::midpoint;
    use crate::scenario::Rng;

    /// `f32` values `k` steps away from `v` (toward +∞ when `k > 0`).
    fn steps(v: f32, k: i32) -> f32 {
        let mut v = v;
        for _ in 0..k.unsigned_abs() {
            v = if k > 0 { v.next_up() } else { v.next_down() };
        }
        v
    }

    /// Centres of every kind: zeros of both signs, subnormals, the
    /// smallest normals, ordinary values with an odd and an even last bit,
    /// the largest values, and random bits.
    fn mids() -> Vec<f32> {
        let mut mids = vec![
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::from_bits(2),
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1.0,
            -1.0,
            1.0f32.next_up(),
            0.1,
            -250.5,
            500.0,
            1e30,
            f32::MAX,
            -f32::MAX,
            f32::MAX.next_down(),
            (-f32::MAX).next_up(),
        ];
        let mut rng = Rng::new(7);
        while mids.len() < 400 {
            let v = f32::from_bits(rng.next_u64() as u32);
            if v.is_finite() {
                mids.push(v);
            }
        }
        mids
    }

    #[test]
    fn at_least_is_the_least_sum_whose_centre_reaches_the_mid() {
        for mid in mids() {
            let t = at_least(mid);
            // Every pair of bounds near `mid`, the ties half-way between two
            // `f32` among them: the threshold answers as the centre does.
            for i in -3..=3 {
                for j in -3..=3 {
                    let (lo, hi) = (steps(mid, i), steps(mid, j));
                    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                        continue;
                    }
                    let sum = f64::from(lo) + f64::from(hi);
                    assert_eq!(
                        sum >= t,
                        midpoint(lo, hi) >= mid,
                        "mid {mid:e} ({:#x}), bounds {lo:e} and {hi:e}",
                        mid.to_bits()
                    );
                }
            }
            // The least such sum: the `f64` just below it falls short.
            if t.is_finite() {
                assert!((t * 0.5) as f32 >= mid, "mid {mid:e}");
                assert!(((t * 0.5).next_down() as f32) < mid, "mid {mid:e}");
            } else {
                assert_eq!(mid, -f32::MAX);
            }
        }
    }

    #[test]
    fn the_sorter_places_as_quadrant_and_the_child_loose_bounds() {
        let mut rng = Rng::new(11);
        // Worlds from a few subnormal steps wide to the whole `f32` range.
        let worlds = [
            Aabb::new([0.0, 0.0], [1000.0, 1000.0]),
            Aabb::new([-1.0, -3.0], [1.0, 5.0]),
            Aabb::new([0.0, 0.0], [f32::from_bits(7), f32::from_bits(5)]),
            Aabb::new([-1e-38, 2e-39], [3e-38, 1e-38]),
            Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]),
            Aabb::new([1e30, -1e30], [3e30, 1e30]),
        ];
        // The root and the nodes down a random path, and down the paths
        // along the upper right and the lower left corners of the world.
        for (world, path) in worlds
            .into_iter()
            .flat_map(|w| [(w, None), (w, Some(3)), (w, Some(0))])
        {
            let mut geo = Geo::root(world);
            for _ in 0..12 {
                let sorter = Sorter::of(&geo);
                let mid = geo.cell.center();
                let checked = core::cell::Cell::new(0);
                let check = |b: Aabb| {
                    if b.validate().is_err() {
                        return;
                    }
                    checked.set(checked.get() + 1);
                    let q = quadrant(&geo.cell, b.center());
                    let fits = geo.child(q).loose.contains(&b);
                    assert_eq!(sorter.place(&b), (q, fits), "{b:?} in {:?}", geo.cell);
                };
                // Sums that `f64` cannot hold exactly: the whole range, and a
                // subnormal bound beside one near twice the centre; and sums
                // past `f32::MAX` (in the widest world), of boxes from the
                // cell's upper edge whose centre lies within steps of its.
                check(Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]));
                let hi = geo.cell.max;
                let mirror = |m: f32, h: f32| (2.0 * f64::from(m) - f64::from(h)) as f32;
                for k in -2..=2 {
                    let (lx, ly) = (steps(mirror(mid.x, hi.x), k), steps(mirror(mid.y, hi.y), k));
                    check(Aabb::new([lx.min(hi.x), ly.min(hi.y)], [hi.x, hi.y]));
                }
                let tiny = f32::from_bits(1);
                for k in -2..=2 {
                    let (tx, ty) = (steps(mid.x * 2.0, k), steps(mid.y * 2.0, k));
                    for t in [tiny, -tiny] {
                        check(Aabb::new([t.min(tx), t.min(ty)], [t.max(tx), t.max(ty)]));
                    }
                }
                for _ in 0..300 {
                    // Bounds a few steps around the centre: ties and the
                    // centre's own bits.
                    let near = |v: f32, rng: &mut Rng| steps(v, rng.below(9) as i32 - 4);
                    let (x0, x1) = (near(mid.x, &mut rng), near(mid.x, &mut rng));
                    let (y0, y1) = (near(mid.y, &mut rng), near(mid.y, &mut rng));
                    check(Aabb::new(
                        [x0.min(x1), y0.min(y1)],
                        [x0.max(x1), y0.max(y1)],
                    ));
                    // Boxes anywhere in the loose bounds (in the cell where
                    // those reach past `f32`), up to half as wide and tall.
                    // (Loose bounds are never inverted: valid means finite.)
                    let c = if geo.loose.validate().is_ok() {
                        geo.loose
                    } else {
                        geo.cell
                    };
                    let (u, v) = (rng.unit(), rng.unit());
                    let x = c.min.x * (1.0 - u) + c.max.x * u;
                    let y = c.min.y * (1.0 - v) + c.max.y * v;
                    let half = |lo: f32, hi: f32| hi * 0.5 - lo * 0.5;
                    let dx = half(c.min.x, c.max.x) * rng.unit() * rng.unit();
                    let dy = half(c.min.y, c.max.y) * rng.unit() * rng.unit();
                    check(Aabb::new([x, y], [x + dx, y + dy]));
                }
                assert!(
                    checked.get() >= 400,
                    "{} boxes checked in {:?}",
                    checked.get(),
                    geo.cell
                );
                geo = geo.child(path.unwrap_or_else(|| rng.below(4) as usize));
            }
        }
    }
}
