//! The run engine: each node's items are one contiguous, `min.x`-sorted
//! run of the entry array. Placing, appending, removing and re-sorting
//! entries, reserving and releasing runs, compaction, and allocating and
//! freeing blocks of four children.

use super::{EMPTY, Entry, Geo, Hot, NONE, Node, NodeStack, QuadTree, quadrant};
use crate::geom::{Aabb, pack};
use crate::key::Place;

impl<T> QuadTree<T> {
    /// The node where a box is stored: the deepest existing node along its
    /// centre's path whose loose bounds contain it.
    pub(crate) fn locate(&self, b: &Aabb) -> u32 {
        self.locate_below(0, b)
    }

    /// The node where a box is stored, given that it is stored in the
    /// subtree of node `n`: the deepest existing node along its centre's
    /// path from `n` whose loose bounds contain it.
    pub(crate) fn locate_below(&self, mut n: u32, b: &Aabb) -> u32 {
        let c = b.center();
        loop {
            let node = &self.nodes[n as usize];
            if node.is_leaf() {
                return n;
            }
            let child = node.children + quadrant(&self.geo[n as usize].cell, c) as u32;
            if !self.geo[child as usize].loose.contains(b) {
                return n;
            }
            n = child;
        }
    }

    /// Whether an item with box `b` stored in leaf `n` would move into a
    /// child if `n` split (and so counts towards its load).
    #[inline]
    pub(crate) fn leaf_wants_deeper(&self, n: u32, b: &Aabb) -> bool {
        if self.nodes[n as usize].depth >= self.config.max_depth {
            return false;
        }
        let geo = &self.geo[n as usize];
        let (_, loose) = geo.child_geometry(quadrant(&geo.cell, b.center()));
        loose.contains(b)
    }

    /// [`leaf_wants_deeper`](QuadTree::leaf_wants_deeper) of an item's old
    /// box `a` and new box `b`, for an update in place: when both centres
    /// go to the same quadrant, as they mostly do, that child's bounds are
    /// computed once. At 100,000 bodies all moving (the brownian scene of
    /// the resting benchmark), a `CollisionWorld::set_position` ran 0.88×
    /// the instructions (callgrind: 633 against 711 a call).
    #[inline]
    pub(crate) fn leaf_wants_deeper_both(&self, n: u32, a: &Aabb, b: &Aabb) -> (bool, bool) {
        if self.nodes[n as usize].depth >= self.config.max_depth {
            return (false, false);
        }
        let geo = &self.geo[n as usize];
        let (qa, qb) = (
            quadrant(&geo.cell, a.center()),
            quadrant(&geo.cell, b.center()),
        );
        let (_, la) = geo.child_geometry(qa);
        let lb = if qa == qb {
            la
        } else {
            geo.child_geometry(qb).1
        };
        (la.contains(a), lb.contains(b))
    }

    /// Records in the slab that entry `p` sits at position `p`.
    #[inline]
    pub(crate) fn set_pos(&mut self, p: usize) {
        self.slab.places[self.entries[p].owner as usize].pos = p as u32;
    }

    /// Records in the slab that entry `p` sits at position `p` of node
    /// `n`'s run.
    #[inline]
    fn set_place(&mut self, p: usize, n: u32) {
        self.slab.places[self.entries[p].owner as usize] = Place {
            node: n,
            pos: p as u32,
        };
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
        node.tight = node.tight.join(&e.aabb);
        self.entries[p] = e;
        self.set_place(p, n);
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
        self.nodes[n as usize].tight = tight_of(run);
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
        sort_by_min_x(&mut self.entries[start..end]);
        self.refit(n);
        for p in start..end {
            self.set_place(p, n);
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
    pub(crate) fn compact(&mut self) {
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
        self.sync_all();
    }

    /// Takes a block of four nodes (from the free list or the end of the
    /// array) and makes it the children of `n`.
    pub(crate) fn alloc_children(&mut self, n: u32) -> u32 {
        let depth = self.nodes[n as usize].depth + 1;
        let kid = Node {
            parent: n,
            ..Node::new(depth)
        };
        let parent = self.geo[n as usize];
        let geos: [Geo; 4] = core::array::from_fn(|q| parent.child(q));
        let hot = Hot::of(&kid);
        let first = match self.free_blocks.pop() {
            Some(first) => {
                for (q, g) in geos.into_iter().enumerate() {
                    self.nodes[first as usize + q] = kid.clone();
                    self.geo[first as usize + q] = g;
                    self.hot[first as usize + q] = hot;
                }
                first
            }
            None => {
                let first = self.nodes.len();
                assert!(first + 4 < NONE as usize, "quadrat: too many nodes");
                self.nodes
                    .extend([kid.clone(), kid.clone(), kid.clone(), kid]);
                self.geo.extend(geos);
                self.hot.extend([hot; 4]);
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
            node.below = node.below.join(b);
            self.hot[p as usize].sub = node.subtree_bounds();
            p = node.parent;
        }
    }

    /// Recomputes every internal node's `below` box exactly, children first.
    pub(crate) fn refit_below_all(&mut self) {
        refit_below(&mut self.nodes, &mut self.order);
    }

    /// Refreshes what the searches read of every node (`hot`), after a
    /// change to many nodes: a build, a compaction, an `update_all`.
    pub(crate) fn sync_all(&mut self) {
        hot_of(&self.nodes, &mut self.hot);
    }

    /// Refreshes `hot` for node `n`, after a change to its run, children
    /// or bounds. (A change that grows the bounds of its ancestors
    /// refreshes theirs where it grows them: `attach`, `grow_below`.)
    #[inline]
    pub(crate) fn sync_node(&mut self, n: u32) {
        self.hot[n as usize] = Hot::of(&self.nodes[n as usize]);
    }

    /// Refreshes `hot` for node `n` and its whole subtree, after `n` split.
    pub(crate) fn sync_subtree(&mut self, n: u32) {
        let mut stack = NodeStack::new();
        stack.push(n);
        while let Some(d) = stack.pop() {
            let node = &self.nodes[d as usize];
            self.hot[d as usize] = Hot::of(node);
            if !node.is_leaf() {
                for q in 0..4 {
                    stack.push(node.children + q);
                }
            }
        }
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

/// Sorts a run by `min.x` (as [`f32::total_cmp`] orders it): the order of
/// every run.
///
/// A run of up to [`LONG_RUN`] entries (most leaves' runs) is sorted as
/// 8-byte keys ([`pack`]: `min.x` as an unsigned integer in `total_cmp`'s
/// order above the entry's place in the run, so equal `min.x` keep their
/// order), and then gathered in that order from a copy. The standard sort
/// sorts a short slice by insertion up to 20 elements, and integers from
/// 21 to 32 with small sorting networks, which branch far less on the data than
/// insertion does on a run in Morton order (after the bulk build's
/// presort) or after a frame of drift, where about half the neighbours are
/// swapped. So the keys are padded to at least [`NETWORK_MIN`] with
/// `u64::MAX`, which sorts after every real key; and each step moves 8
/// bytes instead of a 24-byte entry. (Keys of 33 to 64 entries are first
/// partitioned by the standard sort, then sorted by its networks.)
/// Against sorting the entries, with leaves of 32 items, `insert_many`
/// took 0.89–0.93× the time at 100k and 0.93–0.96× at 1M, and
/// `update_all` after a frame of drift at 1M 0.96× with uniform boxes and
/// 0.93× with clustered ones (ARCHITECTURE.md, *Bulk build*).
///
/// A run whose keys are in order already, as every run is when a rebuild,
/// or a refill in the last tree's order, meets items that did not move, is
/// left as it is: the keys are checked before the sort, and the check
/// stops early after a frame of drift (at the first key that comes down;
/// from 33 keys on, the standard `is_sorted` reads them 33 at a time).
/// Longer runs go to `sort_unstable_by`, whose present implementation
/// returns at once, moving nothing, when the whole slice is in order; its
/// documentation does not promise that.
#[inline]
pub(crate) fn sort_by_min_x(run: &mut [Entry]) {
    let n = run.len();
    if n < 2 {
        return;
    }
    if n <= SHORT_RUN {
        sort_as_keys::<SHORT_RUN>(run);
    } else if n <= LONG_RUN {
        sort_as_keys::<LONG_RUN>(run);
    } else {
        run.sort_unstable_by(|a, b| a.aabb.min.x.total_cmp(&b.aabb.min.x));
    }
}

/// [`sort_by_min_x`] of a run of 2 to `N` entries, as keys in buffers of
/// `N`.
#[inline]
fn sort_as_keys<const N: usize>(run: &mut [Entry]) {
    let n = run.len();
    debug_assert!((2..=N).contains(&n), "a run the buffers hold");
    // The padding, `u64::MAX`, is never a key: a key's low half is its
    // place in the run, below `N`.
    let mut keys = [u64::MAX; N];
    for (i, (k, e)) in keys.iter_mut().zip(run.iter()).enumerate() {
        *k = pack(e.aabb.min.x, i as u32);
    }
    if keys[..n].is_sorted() {
        return;
    }
    keys[..n.max(NETWORK_MIN)].sort_unstable();
    let mut copy = [Entry::VACANT; N];
    copy[..n].copy_from_slice(run);
    for (e, &k) in run.iter_mut().zip(&keys[..n]) {
        *e = copy[k as u32 as usize];
    }
}

/// The fewest keys [`sort_by_min_x`] hands the standard sort: below, it
/// sorts by insertion (Rust 1.81 and later). A shorter run is padded; if
/// the standard sort changes, only the speed does.
const NETWORK_MIN: usize = 21;

/// The longest run [`sort_by_min_x`] sorts as keys in buffers of 32: a
/// buffer of 64 cost more to set up than it saved on short runs (measured
/// with leaves of 32 items, whose runs are mostly short).
const SHORT_RUN: usize = 32;

/// The longest run [`sort_by_min_x`] sorts as keys at all, in buffers of
/// 64: a leaf of the default [`Config`](crate::Config) holds up to 64
/// items that would fit a child, besides those that would not. Longer
/// runs (crowded leaves, large boxes held high) are rare. With leaves of
/// 64 items, sorting the runs of 33 to 64 entries as keys took
/// `insert_many` of 1M uniform boxes from 75.6 to 66.5 ms.
const LONG_RUN: usize = 64;

/// Fills `hot` with what the searches read of each of `nodes`.
pub(crate) fn hot_of(nodes: &[Node], hot: &mut Vec<Hot>) {
    hot.clear();
    hot.extend(nodes.iter().map(Hot::of));
}

/// The box around every entry of `run` (`EMPTY` for none): `tight` of a
/// run. Four boxes are grown side by side, each from every fourth entry,
/// and joined at the end, so that an entry waits for the box four entries
/// back, not the last one: one chain of joins, which the compiler turns
/// into a compare and a blend of both corners, made every entry wait for
/// the one before. Where boxes share a coordinate of both signs of zero,
/// the zero kept may differ from that fold's (`join` keeps the later of
/// equal values); the box compares the same.
#[inline]
pub(crate) fn tight_of(run: &[Entry]) -> Aabb {
    let mut acc = [EMPTY; 4];
    let mut quads = run.chunks_exact(4);
    for q in &mut quads {
        for (a, e) in acc.iter_mut().zip(q) {
            *a = a.join(&e.aabb);
        }
    }
    for (a, e) in acc.iter_mut().zip(quads.remainder()) {
        *a = a.join(&e.aabb);
    }
    acc[0].join(&acc[1]).join(&acc[2].join(&acc[3]))
}

/// Recomputes every internal node's `below` box exactly, children first;
/// `order` is scratch.
pub(crate) fn refit_below(nodes: &mut [Node], order: &mut Vec<u32>) {
    order.clear();
    order.push(0);
    let mut i = 0;
    while i < order.len() {
        let n = order[i];
        i += 1;
        let c = nodes[n as usize].children;
        if c != NONE {
            order.extend(c..c + 4);
        }
    }
    for &n in order.iter().rev() {
        let c = nodes[n as usize].children;
        if c != NONE {
            let b = (c..c + 4).fold(EMPTY, |u, k| u.join(&nodes[k as usize].subtree_bounds()));
            nodes[n as usize].below = b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Entry, LONG_RUN, sort_by_min_x};
    use crate::geom::Aabb;
    use core::num::NonZeroU32;

    /// Up to [`LONG_RUN`] entries, through both key buffers, a run comes
    /// out as a stable sort by `min.x` (`total_cmp`) leaves it: ties keep
    /// their order, and −0 sorts before +0. Longer runs come out ordered by
    /// `min.x`, with the same entries.
    #[test]
    fn runs_sort_as_a_stable_sort_by_min_x() {
        let xs = [
            -0.0f32,
            0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -f32::MAX,
            f32::MAX,
            3.5,
        ];
        let mut rng = crate::scenario::Rng::new(0x5EED);
        for n in 0..=LONG_RUN + 6 {
            for _ in 0..20 {
                let run: Vec<Entry> = (0..n)
                    .map(|i| {
                        let x = xs[rng.below(xs.len() as u64) as usize];
                        Entry {
                            aabb: Aabb::new([x, 0.0], [x, 1.0]),
                            owner: i as u32,
                            generation: NonZeroU32::MIN,
                        }
                    })
                    .collect();
                let mut want = run.clone();
                want.sort_by(|a, b| a.aabb.min.x.total_cmp(&b.aabb.min.x));
                let mut got = run;
                sort_by_min_x(&mut got);
                if n <= LONG_RUN {
                    assert_eq!(got, want, "a run of {n}");
                    // A run in order, ties and zeros among its keys, stays
                    // as it is.
                    let mut again = want.clone();
                    sort_by_min_x(&mut again);
                    assert_eq!(again, want, "a sorted run of {n}");
                } else {
                    let bits =
                        |r: &[Entry]| r.iter().map(|e| e.aabb.min.x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "a run of {n}");
                    let mut owners: Vec<u32> = got.iter().map(|e| e.owner).collect();
                    owners.sort_unstable();
                    assert!(owners.iter().copied().eq(0..n as u32), "a run of {n}");
                }
            }
        }
    }

    /// A run in order comes out as it went in, and one out of order by a
    /// single swap of neighbours anywhere (its start, its middle, its end,
    /// and across the 32nd and 33rd keys) comes out sorted: the check that
    /// skips the sort reads every key.
    #[test]
    fn a_run_out_of_order_anywhere_is_sorted() {
        for n in 2..=LONG_RUN {
            let sorted: Vec<Entry> = (0..n)
                .map(|i| Entry {
                    aabb: Aabb::new([i as f32 - 7.0, 0.0], [i as f32, 1.0]),
                    owner: (n - i) as u32,
                    generation: NonZeroU32::MIN,
                })
                .collect();
            let mut same = sorted.clone();
            sort_by_min_x(&mut same);
            assert_eq!(same, sorted, "a sorted run of {n}");
            for at in [0, n / 2 - 1, n - 2, 31.min(n - 2)] {
                let mut swapped = sorted.clone();
                swapped.swap(at, at + 1);
                sort_by_min_x(&mut swapped);
                assert_eq!(
                    swapped,
                    sorted,
                    "a run of {n} with {at} and {} swapped",
                    at + 1
                );
            }
        }
    }
}
