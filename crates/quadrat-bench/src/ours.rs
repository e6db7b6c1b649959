//! quadrat itself, behind the same interface as the peers: sequential
//! ([`Quadrat`]) and on all cores ([`QuadratPar`], feature `parallel`).
//!
//! Everything the benchmark does with quadrat goes through this file, using
//! only the library's public API: build is [`QuadTree::insert_many`] (the
//! bulk build; [`QuadTree::par_insert_many`] in parallel) into a tree over
//! the scene's world, all pairs is [`QuadTree::map_pairs_into`] (or
//! [`QuadTree::par_map_pairs_into`]), a
//! range query is [`QuadTree::query_keys_into`] (keys, like the ids the peers
//! keep in their leaves), the k nearest boxes are
//! [`QuadTree::nearest`], the first box a ray hits is [`QuadTree::raycast`],
//! and a moving frame is one [`QuadTree::update_all`] (or
//! [`QuadTree::par_update_all`]) with the new boxes. A
//! fresh tree hands out slot indices in insertion order, so a key's
//! [`Key::index`] is its box's index.

use quadrat::{Aabb, Circle, Key, QuadTree, Ray, Region, Vec2};

use super::peers::{Bbox, BroadPhase, ordered};

/// A [`QuadTree`] holding each box's index; pairs found on one thread.
pub struct Quadrat {
    tree: QuadTree<u32>,
    /// Keys found by the last query.
    found: Vec<Key>,
}

/// The same tree, with pairs found on rayon's thread pool.
pub struct QuadratPar(Quadrat);

impl Quadrat {
    fn new(world: Bbox, boxes: &[Bbox], parallel: bool) -> Quadrat {
        let mut tree = QuadTree::new(Aabb::from(world));
        let items = boxes.iter().map(|&b| Aabb::from(b)).zip(0u32..);
        let keys = if parallel {
            tree.par_insert_many(items)
        } else {
            tree.insert_many(items)
        };
        debug_assert!(
            keys.iter()
                .enumerate()
                .all(|(i, k)| k.index() as usize == i)
        );
        Quadrat {
            tree,
            found: Vec::new(),
        }
    }

    /// Appends the index of every box that shares a point with the closed
    /// disc to `out`.
    pub fn query_circle(&mut self, center: [f32; 2], radius: f32, out: &mut Vec<u32>) {
        self.keys_into(Circle::new(center, radius), out);
    }

    /// Appends the index of every box containing `point` (edges included)
    /// to `out`.
    pub fn query_point(&mut self, point: [f32; 2], out: &mut Vec<u32>) {
        self.keys_into(Vec2::from(point), out);
    }

    /// Appends the box index of every item `region` hits to `out`. The
    /// peers report the id stored in their leaves; quadrat's equivalent is
    /// the key, so the values are not read.
    fn keys_into(&mut self, region: impl Region, out: &mut Vec<u32>) {
        self.found.clear();
        self.tree.query_keys_into(region, &mut self.found);
        out.extend(self.found.iter().map(|&k| index(k)));
    }

    /// Appends the `k` boxes nearest to `point`, as `(index, distance)` by
    /// ascending Euclidean distance to the closed box (0 inside), ties by
    /// index, to `out`.
    pub fn nearest(&self, point: [f32; 2], k: usize, out: &mut Vec<(u32, f32)>) {
        out.extend(
            self.tree
                .nearest(point, k)
                .into_iter()
                .map(|(key, d)| (index(key), d)),
        );
    }

    /// The first box the ray from `origin` along `dir` hits within
    /// `max_dist`, as `(index, distance from the origin)` (0 when the origin
    /// is inside), ties by index.
    #[must_use]
    pub fn raycast(&self, origin: [f32; 2], dir: [f32; 2], max_dist: f32) -> Option<(u32, f32)> {
        self.tree
            .raycast(Ray::new(origin, dir), max_dist)
            .map(|(key, d)| (index(key), d))
    }

    /// Moves every item with one [`QuadTree::update_all`].
    fn move_all(&mut self, boxes: &[Bbox]) {
        self.tree
            .update_all(|_, &i, _| Aabb::from(boxes[i as usize]));
    }
}

/// quadrat as the tutorials use a quadtree, every frame: `clear`, one
/// [`QuadTree::insert`] per box, then [`QuadTree::for_each_pair`] reading
/// both values with [`QuadTree::get`]. A moving frame is that loop again
/// on the same tree, so its allocations are reused as a game's would be.
pub struct QuadratLoop {
    tree: QuadTree<u32>,
    found: Vec<Key>,
}

impl QuadratLoop {
    fn refill(&mut self, boxes: &[Bbox]) {
        self.tree.clear();
        for (b, i) in boxes.iter().zip(0u32..) {
            self.tree.insert(Aabb::from(*b), i);
        }
    }
}

impl BroadPhase for QuadratLoop {
    const NAME: &'static str = "quadrat-loop";
    const INCREMENTAL: bool = true;

    fn build(world: Bbox, boxes: &[Bbox]) -> Self {
        let mut this = QuadratLoop {
            tree: QuadTree::new(Aabb::from(world)),
            found: Vec::new(),
        };
        this.refill(boxes);
        this
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        let tree = &self.tree;
        tree.for_each_pair(|a, b| {
            if let (Some(&i), Some(&j)) = (tree.get(a), tree.get(b)) {
                out.push(ordered(i, j));
            }
        });
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        self.found.clear();
        self.tree.query_keys_into(Aabb::from(area), &mut self.found);
        out.extend(self.found.iter().filter_map(|&k| self.tree.get(k).copied()));
    }

    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.refill(boxes);
    }
}

/// The box index of a key handed out by a fresh `insert_many`.
fn index(key: Key) -> u32 {
    key.index()
}

impl BroadPhase for Quadrat {
    const NAME: &'static str = "quadrat";
    const INCREMENTAL: bool = true;

    fn build(world: Bbox, boxes: &[Bbox]) -> Self {
        Quadrat::new(world, boxes, false)
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        self.tree
            .map_pairs_into(out, |a, b| ordered(index(a), index(b)));
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        self.keys_into(Aabb::from(area), out);
    }

    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.move_all(boxes);
    }
}

impl BroadPhase for QuadratPar {
    const NAME: &'static str = "quadrat-par";
    const INCREMENTAL: bool = true;

    fn build(world: Bbox, boxes: &[Bbox]) -> Self {
        QuadratPar(Quadrat::new(world, boxes, true))
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        self.0
            .tree
            .par_map_pairs_into(out, |a, b| ordered(index(a), index(b)));
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        self.0.query(area, out);
    }

    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.0
            .tree
            .par_update_all(|_, &i, _| Aabb::from(boxes[i as usize]));
    }
}
