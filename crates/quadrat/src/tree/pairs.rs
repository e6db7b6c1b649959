//! Every intersecting pair of items, each exactly once.

use super::{Entry, QuadTree};
use crate::geom::Aabb;
use crate::key::Key;

/// `true` when the y intervals of two boxes overlap (closed).
#[inline(always)]
fn overlap_y(a: &Aabb, b: &Aabb) -> bool {
    a.min.y <= b.max.y && b.min.y <= a.max.y
}

/// Reports every intersecting pair within one run sorted by `min.x`: each
/// entry meets the entries after it until one starts right of its end.
#[inline]
fn sweep_within<E: FnMut(&Entry, &Entry) + ?Sized>(run: &[Entry], emit: &mut E) {
    for (i, a) in run.iter().enumerate() {
        for b in &run[i + 1..] {
            if b.aabb.min.x > a.aabb.max.x {
                break;
            }
            if overlap_y(&a.aabb, &b.aabb) {
                emit(a, b);
            }
        }
    }
}

/// Reports every intersecting pair with one entry from each of two runs
/// sorted by `min.x`, merging them like sort-and-sweep: whichever entry
/// starts first meets the other run's entries that start before it ends.
/// Each pair is met once, from the entry that starts first (ties: `a`'s).
#[inline]
fn sweep_between<E: FnMut(&Entry, &Entry) + ?Sized>(a: &[Entry], b: &[Entry], emit: &mut E) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].aabb.min.x <= b[j].aabb.min.x {
            let x = &a[i];
            for y in &b[j..] {
                if y.aabb.min.x > x.aabb.max.x {
                    break;
                }
                if overlap_y(&x.aabb, &y.aabb) {
                    emit(x, y);
                }
            }
            i += 1;
        } else {
            let y = &b[j];
            for x in &a[i..] {
                if x.aabb.min.x > y.aabb.max.x {
                    break;
                }
                if overlap_y(&x.aabb, &y.aabb) {
                    emit(x, y);
                }
            }
            j += 1;
        }
    }
}

/// How many entries of a run [`filter`] keeps on the stack.
pub(crate) const FILTER: usize = 32;

/// The entries of `run` (sorted) that meet `area`, copied in order into
/// `buf`; `None` when more than `buf` holds.
#[inline]
fn filter<'a>(run: &[Entry], area: &Aabb, buf: &'a mut [Entry; FILTER]) -> Option<&'a [Entry]> {
    let mut k = 0;
    for e in run {
        if e.aabb.intersects(area) {
            if k == FILTER {
                return None;
            }
            buf[k] = *e;
            k += 1;
        }
    }
    Some(&buf[..k])
}

/// The pair finder's walk: every pair of items in a subtree, as the pairs
/// within each node, between a node's run and the subtrees below it, and
/// between sibling subtrees whose loose bounds meet. Recursion depth is
/// bounded by `max_depth`; every pair is met in exactly one place.
/// The run of node `n`.
#[inline]
fn run<T>(tree: &QuadTree<T>, n: u32) -> &[Entry] {
    let node = &tree.nodes[n as usize];
    &tree.entries[node.start as usize..(node.start + node.len) as usize]
}

pub(crate) struct PairFinder<'t, T, E: ?Sized> {
    tree: &'t QuadTree<T>,
    emit: &'t mut E,
    near_a: [Entry; FILTER],
    near_b: [Entry; FILTER],
}

impl<'t, T, E: FnMut(&Entry, &Entry) + ?Sized> PairFinder<'t, T, E> {
    pub(crate) fn new(tree: &'t QuadTree<T>, emit: &'t mut E) -> Self {
        PairFinder {
            tree,
            emit,
            near_a: [Entry::VACANT; FILTER],
            near_b: [Entry::VACANT; FILTER],
        }
    }

    /// Every pair with an item in node `n`'s own run and the other in its
    /// run or below it.
    pub(crate) fn own_run(&mut self, n: u32) {
        let tree = self.tree;
        let node = &tree.nodes[n as usize];
        sweep_within(run(tree, n), self.emit);
        if node.len > 0 && !node.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree(n, node.children + q);
            }
        }
    }

    /// Every pair with both items in the subtree of `n`.
    pub(crate) fn within_subtree(&mut self, n: u32) {
        let tree = self.tree;
        let node = &tree.nodes[n as usize];
        self.own_run(n);
        if node.is_leaf() {
            return;
        }
        let first = node.children;
        for q in 0..4 {
            self.within_subtree(first + q);
        }
        for i in 0..4 {
            for j in i + 1..4 {
                self.subtree_vs_subtree(first + i, first + j);
            }
        }
    }

    /// Every pair of an item in node `a`'s own run with an item in the
    /// subtree of `b` (which is not `a`'s ancestor).
    fn run_vs_subtree(&mut self, a: u32, b: u32) {
        let tree = self.tree;
        let (na, nb) = (&tree.nodes[a as usize], &tree.nodes[b as usize]);
        if !nb.subtree_bounds().intersects(&na.tight) {
            return;
        }
        if nb.len > 0 && nb.tight.intersects(&na.tight) {
            self.runs(a, b);
        }
        if !nb.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree(a, nb.children + q);
            }
        }
    }

    /// Every pair of an item in the subtree of `a` with an item in the
    /// subtree of `b`, two disjoint subtrees.
    pub(crate) fn subtree_vs_subtree(&mut self, a: u32, b: u32) {
        let tree = self.tree;
        let (na, nb) = (&tree.nodes[a as usize], &tree.nodes[b as usize]);
        if !na.subtree_bounds().intersects(&nb.subtree_bounds()) {
            return;
        }
        if na.len > 0 {
            self.run_vs_subtree(a, b);
        }
        if na.is_leaf() {
            return;
        }
        if nb.len > 0 {
            for q in 0..4 {
                self.run_vs_subtree(b, na.children + q);
            }
        }
        if !nb.is_leaf() {
            for i in 0..4 {
                for j in 0..4 {
                    self.subtree_vs_subtree(na.children + i, nb.children + j);
                }
            }
        }
    }

    /// Every intersecting pair between the runs of nodes `a` and `b`: only
    /// entries that reach the other run's bounds can pair, so both runs are
    /// filtered first when that fits on the stack.
    fn runs(&mut self, a: u32, b: u32) {
        let tree = self.tree;
        let (ta, tb) = (tree.nodes[a as usize].tight, tree.nodes[b as usize].tight);
        let (ra, rb) = (run(tree, a), run(tree, b));
        let Some(fa) = filter(ra, &tb, &mut self.near_a) else {
            sweep_between(ra, rb, self.emit);
            return;
        };
        if fa.is_empty() {
            return;
        }
        match filter(rb, &ta, &mut self.near_b) {
            Some(fb) => sweep_between(fa, fb, self.emit),
            None => sweep_between(ra, rb, self.emit),
        }
    }
}

impl<T> QuadTree<T> {
    /// Calls `f(a, b)` once for every pair of items whose boxes intersect
    /// (touching counts), with `a < b`. No item is paired with itself.
    ///
    /// Each item is stored in exactly one node, whose run of items is kept
    /// sorted by `min.x`. Pairs within a node are found by sweeping its run;
    /// pairs between two nodes by sweeping the two runs together, for each
    /// pair of nodes whose bounds meet, met once by a walk over the tree
    /// that pairs each node with the subtrees below it and each subtree with
    /// its siblings. So no pair is reported twice, no hash set is needed,
    /// and nothing is allocated.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([0.0, 0.0], [10.0, 10.0]), ());
    /// let b = tree.insert(Aabb::new([10.0, 0.0], [20.0, 10.0]), ()); // touches a
    /// tree.insert(Aabb::new([50.0, 50.0], [60.0, 60.0]), ());
    /// let mut found = Vec::new();
    /// tree.for_each_pair(|x, y| found.push((x, y)));
    /// assert_eq!(found, vec![(a, b)]);
    /// ```
    pub fn for_each_pair(&self, mut f: impl FnMut(Key, Key)) {
        let mut emit = |a: &Entry, b: &Entry| {
            let (ka, kb) = (a.key(), b.key());
            if ka < kb { f(ka, kb) } else { f(kb, ka) }
        };
        PairFinder::new(self, &mut emit).within_subtree(0);
    }

    /// Every intersecting pair `(a, b)` with `a < b`, each exactly once,
    /// sorted.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([0.0, 0.0], [10.0, 10.0]), ());
    /// let b = tree.insert(Aabb::new([5.0, 5.0], [15.0, 15.0]), ());
    /// let c = tree.insert(Aabb::new([9.0, 9.0], [9.0, 9.0]), ()); // a point inside both
    /// assert_eq!(tree.pairs(), vec![(a, b), (a, c), (b, c)]);
    /// ```
    #[must_use]
    pub fn pairs(&self) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        self.for_each_pair(|a, b| out.push((a, b)));
        out.sort_unstable();
        out
    }
}
