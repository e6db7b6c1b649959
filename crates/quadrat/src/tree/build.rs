//! Bulk building: many items at once, and rebuilding in place.

use super::order::gather_in_morton_order;
#[cfg(feature = "parallel")]
use super::parallel::map_parts;
use super::{Entry, Geo, Node, QuadTree, Sorter};
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::{Key, Place};

/// Which part of a node's range an entry goes to while building: a
/// quadrant `0..4`, or [`STAYS`] in the node itself.
const STAYS: usize = 4;

impl<T> QuadTree<T> {
    /// Inserts many items at once and returns their keys, in order.
    ///
    /// When the batch is large compared with the tree, the whole tree is
    /// rebuilt from scratch with one partition pass per level (see
    /// [`rebuild`](QuadTree::rebuild)), which is much faster than inserting
    /// one by one; otherwise the items are inserted one by one. The result
    /// is the same tree either way. A batch whose iterator does not tell
    /// its length (its `size_hint` leaves open more than 64 items, as a
    /// `filter` over an unknown number of them does) is built in bulk at
    /// once into an empty tree; into another tree it is collected first and
    /// judged by how many items it held.
    ///
    /// # Panics
    /// When a box is invalid; the message names it. Nothing is inserted
    /// then. [`try_insert_many`](QuadTree::try_insert_many) returns the
    /// error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.insert_many((0..1000).map(|i| {
    ///     let x = (i % 100) as f32;
    ///     (Aabb::new([x, x], [x + 0.5, x + 0.5]), i)
    /// }));
    /// assert_eq!(keys.len(), 1000);
    /// assert_eq!(tree[keys[7]], 7);
    /// ```
    #[track_caller]
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = (Aabb, T)>) -> Vec<Key> {
        match self.try_insert_many(items) {
            Ok(keys) => keys,
            Err(e) => panic!("quadrat: invalid box passed to QuadTree::insert_many: {e}"),
        }
    }

    /// Inserts many items at once, or says why a box is refused; then
    /// nothing is inserted (the values are dropped).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let items = vec![
    ///     (Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a'),
    ///     (Aabb::new([1.0, 1.0], [f32::NAN, 2.0]), 'b'),
    /// ];
    /// assert!(tree.try_insert_many(items).is_err());
    /// assert!(tree.is_empty());
    /// ```
    pub fn try_insert_many(
        &mut self,
        items: impl IntoIterator<Item = (Aabb, T)>,
    ) -> Result<Vec<Key>, Error> {
        self.insert_many_impl(items, false, true)
    }

    /// `try_insert_many`, building in bulk on rayon's pool when `parallel`
    /// (from four times `par_min_items` items, see `splits_build`). Unless
    /// `want`, the keys are not collected and an empty vector is returned
    /// (for `collect`, whose caller gets no keys: at 1M items the vector
    /// would be 8 MB on top of the tree).
    pub(crate) fn insert_many_impl(
        &mut self,
        items: impl IntoIterator<Item = (Aabb, T)>,
        parallel: bool,
        want: bool,
    ) -> Result<Vec<Key>, Error> {
        {
            // Inserts waiting to be placed are built in bulk first, split
            // as the batch's build below is, with the pool kept awake for
            // that build alone (not when a question built their index
            // already: placing them then only adopts it).
            #[cfg(feature = "parallel")]
            let _awake = self.awake(
                self.deferred
                    && self.lazy.get().is_none()
                    && self.splits_build(parallel, self.entries.len()),
            );
            self.undefer_with(parallel);
        }
        let items = items.into_iter();
        // The iterator's word for its length: room is reserved for it only
        // where that can be had (`try_reserve`), since it may claim more
        // than any allocation holds, and a panic here, after `pack` below,
        // would leave the nodes' runs and the slots' places stale.
        let (expected, most) = items.size_hint();
        // A batch at least half the tree's size is built in bulk; a smaller
        // one is collected and goes in one by one. Into an empty tree, a
        // batch that may hold more than 64 items goes in bulk at once
        // (nothing is lost if it holds fewer: the tree is the same); into
        // another, an iterator that does not know its length (a `filter`,
        // a `flat_map`) is collected first, then judged by what it held.
        if self.bulk(expected) || (self.is_empty() && most.is_none_or(|most| most > 64)) {
            self.pack();
            // Slots taken from the free list are recorded as they are handed
            // out. Without one, every item gets a new slot, one after the
            // other, and their keys are made after the build, so that the
            // build's peak does not hold them too (at 1M items, 8 of 84 MB).
            let fresh = self.slab.free_head == super::NONE;
            if fresh && self.entries.is_empty() {
                return self.fill_empty(items, expected, parallel, want);
            }
            let _ = self.entries.try_reserve(expected);
            self.slab.try_reserve(expected);
            let first = self.slab.slots.len();
            let mut keys = Vec::new();
            if !fresh && want {
                let _ = keys.try_reserve(expected);
            }
            // Until the build, an error or a panic in the caller's iterator
            // takes back what this call added (see `Batch`).
            let mut batch = Batch {
                taken: Taken::Entries(self.entries.len()),
                first_new: first,
                tree: self,
                armed: true,
            };
            for (b, v) in items {
                // An invalid box drops `batch`, which takes everything back.
                b.validate()?;
                let tree = &mut *batch.tree;
                let (key, idx) = tree.slab.insert(v, 0, 0);
                tree.entries.push(Entry {
                    aabb: b,
                    owner: idx as u32,
                    generation: tree.slab.slots[idx].generation(),
                });
                if !fresh && want {
                    keys.push(key);
                }
            }
            batch.armed = false;
            let tree = &mut *batch.tree;
            let parallel = tree.splits_build(parallel, tree.entries.len());
            // Woken once the caller's items are in, for the build (see
            // `fill_empty`).
            #[cfg(feature = "parallel")]
            let awake = tree.awake(parallel);
            tree.presort(parallel);
            tree.build_all(parallel);
            #[cfg(feature = "parallel")]
            drop(awake);
            if fresh && want {
                let slab = &tree.slab;
                keys.extend((first..slab.slots.len()).map(|idx| slab.key_at(idx)));
            }
            Ok(keys)
        } else {
            let items: Vec<(Aabb, T)> = items.collect();
            if self.bulk(items.len()) {
                // Known now: the vector's iterator says its length, so this
                // call takes the branch above.
                return self.insert_many_impl(items, parallel, want);
            }
            let mut keys = Vec::new();
            if want {
                let _ = keys.try_reserve(items.len());
            }
            for (b, _) in &items {
                b.validate()?;
            }
            for (b, v) in items {
                let (key, idx) = self.slab.insert(v, super::NONE, super::NONE);
                self.attach(idx as u32, b);
                if want {
                    keys.push(key);
                }
            }
            self.maybe_compact();
            Ok(keys)
        }
    }

    /// Whether `insert_many` builds a batch of `n` items in bulk: one of
    /// more than 64 items and at least half the tree's size. Placed one by
    /// one, an item costs several times its share of a bulk build (1M
    /// uniform boxes into an empty tree: 12–14 times), while a bulk build
    /// redoes the items already in the tree too.
    fn bulk(&self, n: usize) -> bool {
        n > 64 && n >= self.len() / 2
    }

    /// The bulk `insert_many` into a tree with no items and no free slot,
    /// as when a tree is filled once at start-up. Every item gets the next
    /// new slot, so its entry's slot and generation follow from its place
    /// in the batch: the batch is taken in as bare boxes (16 bytes each,
    /// where an entry takes 24), and the entries are made as the presort
    /// gathers them. At 1M items, the build's peak fell from 76 to 68 MB
    /// (to 65.8 since the gather reads 4-byte indices, and to 61.8 since a
    /// slot takes 8 bytes). The slots' places (8 bytes an item) are made
    /// only once the boxes are freed, since the build writes every one of
    /// them anyway; and the build's scratch (a category byte an item, and
    /// the nodes' order) is freed when it ends, since a tree filled once
    /// may never be rebuilt (`update_all` and `rebuild` make it again, and
    /// keep it). At 1M uniform boxes, the gather's peak fell from 60.0 to
    /// 52.0 MB and the tree holds 46.0 where it held 47.3; with the keys
    /// `insert_many` returns, 54.0 (`quadrat-bench --only memory`).
    fn fill_empty(
        &mut self,
        items: impl Iterator<Item = (Aabb, T)>,
        expected: usize,
        parallel: bool,
        want: bool,
    ) -> Result<Vec<Key>, Error> {
        self.slab.try_reserve_slots(expected);
        let first = self.slab.slots.len();
        let mut boxes: Vec<Aabb> = Vec::new();
        let _ = boxes.try_reserve(expected);
        // Until the build, an error or a panic in the caller's iterator
        // takes back the slots this call filled (see `Batch`).
        let mut batch = Batch {
            taken: Taken::Slots(first),
            first_new: first,
            tree: self,
            armed: true,
        };
        for (b, v) in items {
            // An invalid box drops `batch`, which takes everything back.
            b.validate()?;
            let idx = batch.tree.slab.push_unplaced(v);
            debug_assert_eq!(idx, first + boxes.len(), "a new slot");
            boxes.push(b);
        }
        batch.armed = false;
        let tree = &mut *batch.tree;
        let generation = tree.slab.seed;
        let entry = |i: usize| Entry {
            aabb: boxes[i],
            owner: (first + i) as u32,
            generation,
        };
        tree.entries.clear();
        let parallel = tree.splits_build(parallel, boxes.len());
        // A build split on rayon's pool keeps its other threads awake
        // (`parallel::wake_pool`) from here, once the caller's items are in
        // (taking them in may take longer than a woken thread waits), to
        // the end of the build. At 1M boxes on 2 threads, `par_insert_many`
        // took 0.97x the time it took with the pool left to sleep (the
        // median of twelve medians, 0.93-1.05x; ARCHITECTURE.md,
        // *Parallel*).
        #[cfg(feature = "parallel")]
        let awake = tree.awake(parallel);
        gather_in_morton_order(
            &boxes,
            |b| *b,
            entry,
            tree.world,
            parallel,
            None,
            &mut tree.entries,
        );
        drop(boxes);
        tree.slab.place_new();
        tree.build_all(parallel);
        #[cfg(feature = "parallel")]
        drop(awake);
        tree.cats = Vec::new();
        tree.order = Vec::new();
        if !want {
            return Ok(Vec::new());
        }
        let slab = &tree.slab;
        Ok((first..slab.slots.len())
            .map(|idx| slab.key_at(idx))
            .collect())
    }

    /// Rebuilds the whole tree from its items' current boxes, reusing its
    /// allocations (the first rebuild after `insert_many` into a new tree
    /// makes the build's scratch again, which that frees): the nodes are
    /// made again top-down with one in-place partition pass per level, and
    /// every node's items end up contiguous, in depth-first order. Keys, values and boxes are unchanged, and so is
    /// the tree's shape, which depends only on the items.
    ///
    /// Queries and pairs are fastest right after a rebuild. Starting from
    /// the previous order, items that moved little are already nearly in
    /// place, so a rebuild every frame after moving everything is cheap.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// for i in 0..100 {
    ///     tree.insert(Aabb::from_point([i as f32, (i * 7 % 100) as f32]), i);
    /// }
    /// let before: Vec<_> = tree.nodes().collect();
    /// tree.rebuild();
    /// assert_eq!(tree.nodes().collect::<Vec<_>>(), before);
    /// ```
    pub fn rebuild(&mut self) {
        if self.deferred {
            // Placing a deferred tree is a bulk build already.
            self.undefer();
            return;
        }
        self.pack();
        self.build_all(false);
    }

    /// Makes the entry array hold exactly the live entries, run after run in
    /// depth-first order. Free when it already does (as after a build
    /// followed by in-place updates); otherwise one gathering copy. Leaves
    /// the nodes' runs and the slots' positions stale: `build_all` must
    /// follow.
    pub(crate) fn pack(&mut self) {
        debug_assert!(!self.deferred, "pack a deferred tree");
        let mut packed = self.all_entries_live();
        let mut w = 0u32;
        let mut stack = super::NodeStack::with_root();
        while packed && let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            packed = node.start == w || node.len == 0;
            w += node.len;
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
        }
        if packed {
            return;
        }
        let mut entries = Vec::with_capacity(self.len());
        let mut stack = super::NodeStack::with_root();
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            let (start, len) = (node.start as usize, node.len as usize);
            entries.extend_from_slice(&self.entries[start..start + len]);
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
        }
        self.entries = entries;
        self.garbage = 0;
    }

    /// Orders the entries along a Morton (Z-order) curve of their centres
    /// (see `order::morton_order`), from 1,024 entries on, below which that
    /// does not pay; on rayon's pool when `parallel` (already decided by
    /// the caller, see `splits_build`).
    pub(crate) fn presort(&mut self, parallel: bool) {
        if self.entries.len() < super::order::PRESORT_MIN {
            return;
        }
        let mut sorted = Vec::new();
        gather_entries(&self.entries, self.world, parallel, None, &mut sorted);
        self.entries = sorted;
    }

    /// [`presort`](QuadTree::presort) into the buffers of the spare index
    /// (see `QuadTree::spare`): its Morton keys and the radix sort's spare
    /// keys, and its entry array, which takes the place of `entries`, whose
    /// array goes to the spare in turn. For the rebuild of `update_all`
    /// after a frame of far jumps, and for a refill that a change places
    /// before any question (`place_deferred`), so that such frames, one
    /// after another, allocate nothing once warm; the tree keeps the
    /// buffers (40 bytes an item) until
    /// [`shrink_to_fit`](QuadTree::shrink_to_fit), as a tree refilled frame
    /// after frame keeps its spare index.
    pub(crate) fn presort_kept(&mut self, parallel: bool) {
        if self.entries.len() < super::order::PRESORT_MIN {
            return;
        }
        let spare = self.spare.0.get_mut().unwrap_or_else(|e| e.into_inner());
        spare.gather(&self.entries, self.world, parallel);
        core::mem::swap(&mut spare.entries, &mut self.entries);
    }
}

/// Appends `entries` to `out` in the order of [`gather_in_morton_order`]
/// (which keeps its sort's buffers in `kept` when given).
pub(crate) fn gather_entries(
    entries: &[Entry],
    world: Aabb,
    parallel: bool,
    kept: Option<(&mut Vec<u64>, &mut Vec<u64>)>,
    out: &mut Vec<Entry>,
) {
    gather_in_morton_order(
        entries,
        |e| e.aabb,
        |i| entries[i],
        world,
        parallel,
        kept,
        out,
    );
}

/// A bulk insert under way: what it took is in `taken`. Dropped while
/// armed (an invalid box, or a panic in the caller's iterator), it takes
/// that back and builds the tree again from the entries it had: the same
/// tree as before, keys and all, down to the keys it hands out next (the
/// slots go back with the generations they had: no key of them was handed
/// out).
struct Batch<'a, T> {
    tree: &'a mut QuadTree<T>,
    taken: Taken,
    /// The slab's length before the batch: slots from here on are new.
    first_new: usize,
    /// Cleared once every item is in: nothing to take back then.
    armed: bool,
}

/// What a [`Batch`] has added so far.
enum Taken {
    /// The entries from this one on, each with its slot.
    Entries(usize),
    /// The slots from this one on, whose boxes wait outside the tree.
    Slots(usize),
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let tree = &mut *self.tree;
        // In reverse, so the free list hands the slots out again in the
        // order it would have; the values are dropped last, once the tree
        // is whole again (a destructor that panics then loses nothing).
        let mut values = Vec::new();
        match self.taken {
            Taken::Entries(packed) => {
                values.reserve(tree.entries.len() - packed);
                for entry in tree.entries.drain(packed..).rev() {
                    let idx = entry.owner as usize;
                    values.push(tree.slab.take_back(idx, self.first_new));
                }
            }
            Taken::Slots(first) => {
                // The slots of the batch have no place yet: they get one
                // to give back with the slot.
                tree.slab.place_new();
                values.reserve(tree.slab.slots.len() - first);
                for idx in (first..tree.slab.slots.len()).rev() {
                    values.push(tree.slab.take_back(idx, self.first_new));
                }
            }
        }
        tree.build_all(false);
        drop(values);
    }
}

impl<T> QuadTree<T> {
    /// Builds the nodes afresh over the whole (packed) entry array, on
    /// rayon's thread pool when `parallel` (and the feature) is on.
    pub(crate) fn build_all(&mut self, parallel: bool) {
        self.build_all_with(parallel, None);
    }

    /// [`build_all`](QuadTree::build_all), first writing into each entry
    /// the box `fresh` holds for its slot, where it holds one
    /// ([`write_fresh`]). `par_update_all` hands its new boxes to the
    /// rebuild this way: a build split into jobs writes them in the jobs of
    /// its first category pass, a block at a time, just before it
    /// categorizes the block (`par_partition`), not in a pass of their own
    /// before it; any other build writes them first, on the calling
    /// thread.
    pub(crate) fn build_all_with(&mut self, parallel: bool, fresh: Option<&[Aabb]>) {
        let parallel = self.splits(parallel, self.entries.len());
        self.free_blocks.clear();
        self.garbage = 0;
        let limits = Limits {
            max_items: self.config.max_items,
            max_depth: self.config.max_depth,
        };
        let nodes = core::mem::take(&mut self.nodes);
        let scratch = Scratch {
            cats: &mut self.cats,
            order: &mut self.order,
            fresh,
        };
        self.nodes = build_nodes(
            &mut self.entries,
            nodes,
            &mut self.geo,
            scratch,
            self.world,
            limits,
            parallel,
        );
        self.sync_all();
        self.index_slots();
    }

    /// Points every item's slot at its place, node by node: writes the
    /// slab's [`Place`]s. Places are in key order and entries in the
    /// tree's, so each write lands in a random place: the place 32 entries
    /// ahead is prefetched (in a packed array, the next runs' entries).
    /// At 1M uniform boxes rebuilt, this pass took 5.3, 5.7 and 8.1 ms with
    /// the prefetch against 7.2, 6.8 and 8.0 without (medians of 15
    /// rebuilds, three alternations), and 9.3–12.3 ms when the places were
    /// part of the slots (see [`Place`]).
    pub(crate) fn index_slots(&mut self) {
        const AHEAD: usize = 32;
        for (n, node) in self.nodes.iter().enumerate() {
            let (start, end) = (node.start as usize, (node.start + node.len) as usize);
            for p in start..end {
                if let Some(next) = self.entries.get(p + AHEAD) {
                    self.slab.prefetch_place(next.owner);
                }
                self.slab.places[self.entries[p].owner as usize] = Place {
                    node: n as u32,
                    pos: p as u32,
                };
            }
        }
    }
}

/// The configuration a build follows.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_items: usize,
    pub(crate) max_depth: u8,
}

/// Scratch a build reuses from call to call, and the new boxes it is
/// handed to write first.
pub(crate) struct Scratch<'a> {
    /// One category byte per entry.
    pub(crate) cats: &'a mut Vec<u8>,
    /// The nodes in breadth-first order, for the bottom-up bounds pass.
    pub(crate) order: &'a mut Vec<u32>,
    /// New boxes, by slot, to write into the entries before they are
    /// placed (see [`write_fresh`]), when given.
    pub(crate) fresh: Option<&'a [Aabb]>,
}

/// Builds a tree's nodes afresh over all of `entries` (which it reorders
/// into runs, in depth-first order), reusing the allocation of `nodes`:
/// the partition, then the `below` boxes bottom-up, and the nodes'
/// geometry into `geo`. Slots are left to the caller.
pub(crate) fn build_nodes(
    entries: &mut [Entry],
    mut nodes: Vec<Node>,
    geo: &mut Vec<Geo>,
    scratch: Scratch<'_>,
    world: Aabb,
    limits: Limits,
    parallel: bool,
) -> Vec<Node> {
    let fresh = scratch.fresh;
    scratch.cats.clear();
    scratch.cats.resize(entries.len(), 0);
    let len = entries.len();
    let mut part = Part {
        entries,
        cats: scratch.cats,
        base: 0,
    };
    let root = Geo::root(world);
    let before = (nodes.capacity(), geo.capacity());
    #[cfg(feature = "parallel")]
    if parallel {
        (nodes, *geo) = par_build_subtree(part, Node::root(), root, PAR_LEVELS, limits, fresh);
        super::runs::refit_below(&mut nodes, scratch.order);
        trim(&mut nodes, before.0);
        trim(geo, before.1);
        return nodes;
    }
    let _ = parallel;
    if let Some(fresh) = fresh {
        write_fresh(part.entries, fresh);
    }
    nodes.clear();
    nodes.push(Node::root());
    geo.clear();
    geo.push(root);
    build_subtree(&mut part, &mut nodes, geo, 0, 0, len, limits);
    super::runs::refit_below(&mut nodes, scratch.order);
    trim(&mut nodes, before.0);
    trim(geo, before.1);
    nodes
}

/// Writes into each of `entries` the box `fresh` holds at its slot
/// (`fresh` is indexed by slot, as `par_update_all` fills it), except
/// where that box is NaN: those entries keep theirs. Entries whose slot
/// `fresh` does not reach keep theirs too. The boxes are read by slot, at
/// random: each is fetched [`AHEAD`](super::order::AHEAD) entries before
/// it is read once they are too many for the cache, as
/// `order::gather_by` fetches.
pub(crate) fn write_fresh(entries: &mut [Entry], fresh: &[Aabb]) {
    let far = core::mem::size_of_val(fresh) >= super::order::PREFETCH_MIN;
    for i in 0..entries.len() {
        let ahead = entries.get(i + super::order::AHEAD);
        if far && let Some(b) = ahead.and_then(|e| fresh.get(e.owner as usize)) {
            crate::prefetch::prefetch(b);
        }
        let e = &mut entries[i];
        if let Some(b) = fresh.get(e.owner as usize)
            && !b.min.x.is_nan()
        {
            e.aabb = *b;
        }
    }
}

/// [`write_fresh`] over all of `entries`, in stretches of 2¹⁴ on rayon's
/// pool when `parallel` (already decided by the caller, see
/// `splits_build`): for a rebuild that presorts the new boxes, and for
/// `par_update_all`'s second phase when it does not rebuild.
pub(crate) fn write_fresh_all(entries: &mut [Entry], fresh: &[Aabb], parallel: bool) {
    #[cfg(feature = "parallel")]
    if parallel {
        super::parallel::map_chunks(entries, 1 << 14, |_, stretch| write_fresh(stretch, fresh));
        return;
    }
    let _ = parallel;
    write_fresh(entries, fresh);
}

/// Gives back the room a build's growth left in `v` beyond an eighth of its
/// length. Growing doubles the capacity, so the nodes of a tree built once
/// could hold up to twice the memory they use (at 1M boxes, 16 MB for 8).
/// Only a vector that grew in this build (whose capacity is above `before`)
/// is trimmed: a tree rebuilt every frame at about the same size keeps its
/// allocation, and the eighth lets it grow a little without doubling again.
fn trim<T>(v: &mut Vec<T>, before: usize) {
    let keep = v.len() + v.len() / 8;
    if v.capacity() > before && v.capacity() > keep {
        v.shrink_to(keep);
    }
}

/// The part of the entry array one subtree is built over, with the
/// entries' categories; `entries[0]` is entry `base` of the whole array.
struct Part<'a> {
    entries: &'a mut [Entry],
    cats: &'a mut [u8],
    base: usize,
}

/// What a node becomes.
enum Split {
    /// A leaf holding the whole range, with this load.
    Leaf(u32),
    /// An internal node with this load; the range is now partitioned into
    /// `[stays | q0 | q1 | q2 | q3]`, bucket `c` at `begin[c]..end[c]`.
    Inner(u32, [usize; 5], [usize; 5]),
}

/// Decides what `node`, over the part's range `lo..hi`, becomes: a leaf
/// when no more than `max_items` of its entries would move into a child (or
/// at `max_depth`), else an internal node, partitioning the range in place
/// (American flag sort) by where each entry goes.
fn partition(
    part: &mut Part<'_>,
    node: &Node,
    geo: &Geo,
    lo: usize,
    hi: usize,
    limits: Limits,
) -> Split {
    if node.depth >= limits.max_depth {
        return Split::Leaf(0);
    }
    let counts = categorize(
        &part.entries[lo..hi],
        &mut part.cats[lo..hi],
        &Sorter::of(geo),
    );
    split(part, lo, hi, counts, limits)
}

/// [`partition`] with the category pass split into jobs of
/// [`map_parts`]: for the root of a parallel build, whose partition the
/// calling thread would otherwise make alone, before any job starts. Each
/// entry's category depends only on the entry and the node, so the
/// categories and the tree are the same.
///
/// With `fresh`, each job writes the new boxes of its share of the entries
/// ([`write_fresh`]) a block of [`FRESH_BLOCK`] at a time, each block just
/// before it categorizes it; on a pool of one thread, or at `max_depth`,
/// they are written first.
#[cfg(feature = "parallel")]
fn par_partition(
    part: &mut Part<'_>,
    node: &Node,
    geo: &Geo,
    limits: Limits,
    fresh: Option<&[Aabb]>,
) -> Split {
    let len = part.entries.len();
    debug_assert_eq!(part.cats.len(), len, "a category byte per entry");
    if rayon::current_num_threads() == 1 || node.depth >= limits.max_depth {
        if let Some(fresh) = fresh {
            write_fresh(part.entries, fresh);
        }
        if node.depth >= limits.max_depth {
            return Split::Leaf(0);
        }
        // The jobs would run one after the other on the calling thread.
        return partition(part, node, geo, 0, len, limits);
    }
    let sorter = Sorter::of(geo);
    let size = len
        .div_ceil(rayon::current_num_threads() * CATEGORY_JOBS)
        .max(CATEGORY_MIN);
    let jobs: Vec<(&mut [Entry], &mut [u8])> = part
        .entries
        .chunks_mut(size)
        .zip(part.cats.chunks_mut(size))
        .collect();
    let counts = map_parts(jobs, |_, (es, cs)| {
        let Some(fresh) = fresh else {
            return categorize(es, cs, &sorter);
        };
        // A block at a time, so that the entries the new boxes were
        // written into are still in the cache when they are categorized.
        let mut counts = [0usize; 5];
        for (es, cs) in es.chunks_mut(FRESH_BLOCK).zip(cs.chunks_mut(FRESH_BLOCK)) {
            write_fresh(es, fresh);
            let c = categorize(es, cs, &sorter);
            counts = core::array::from_fn(|i| counts[i] + c[i]);
        }
        counts
    })
    .into_iter()
    .fold([0usize; 5], |sum, c| {
        core::array::from_fn(|i| sum[i] + c[i])
    });
    split(part, 0, len, counts, limits)
}

/// Entries of a block that [`par_partition`]'s jobs write the new boxes of
/// and then categorize, when they are given new boxes: 96 KB of entries.
#[cfg(feature = "parallel")]
const FRESH_BLOCK: usize = 4096;

/// Jobs per thread of the pool in [`par_partition`]'s category pass: a
/// few more than threads, so that a thread that starts late finds a share
/// left.
#[cfg(feature = "parallel")]
const CATEGORY_JOBS: usize = 4;

/// The fewest entries a job of [`par_partition`]'s category pass takes
/// (but the last, which takes what is left).
#[cfg(feature = "parallel")]
const CATEGORY_MIN: usize = 1024;

/// Writes into `cats` the category of each entry of `entries` for the node
/// `sorter` stands for (its quadrant, or [`STAYS`]), and returns how many
/// entries each category has.
///
/// Not inlined: inlined into [`build_subtree`], it had the compiler keep
/// the sorter's two thresholds in registers of their own and compare each
/// axis apart, 29 instructions an entry where the pass takes 23 with the
/// sorter read through a reference and both axes compared at once.
#[inline(never)]
fn categorize(entries: &[Entry], cats: &mut [u8], sorter: &Sorter) -> [usize; 5] {
    // One pass computes every entry's destination and remembers it. The
    // counts live in one register, 12 bits per category, emptied into
    // `counts` every `BATCH` entries: consecutive entries mostly share a
    // category (the array is nearly in order), and counting in memory
    // would make each increment wait for the last one's store.
    const BATCH: usize = 4095;
    let mut counts = [0usize; 5];
    for (es, cs) in entries.chunks(BATCH).zip(cats.chunks_mut(BATCH)) {
        let mut acc = 0u64;
        for (e, cat) in es.iter().zip(cs.iter_mut()) {
            let (q, fits) = sorter.place(&e.aabb);
            let c = if fits { q } else { STAYS };
            *cat = c as u8;
            acc += COUNT[c];
        }
        for (c, count) in counts.iter_mut().enumerate() {
            *count += ((acc >> (12 * c)) & 0xFFF) as usize;
        }
    }
    counts
}

/// The rest of [`partition`], once the categories of `lo..hi` are written
/// and counted: a leaf, or the range partitioned in place by category.
fn split(part: &mut Part<'_>, lo: usize, hi: usize, counts: [usize; 5], limits: Limits) -> Split {
    let load = (hi - lo) - counts[STAYS];
    if load <= limits.max_items {
        return Split::Leaf(load as u32);
    }
    let order = [STAYS, 0, 1, 2, 3];
    let mut begin = [0usize; 5];
    let mut at = lo;
    for &c in &order {
        begin[c] = at;
        at += counts[c];
    }
    let end: [usize; 5] = core::array::from_fn(|c| begin[c] + counts[c]);
    let mut next = begin;
    for &c in &order {
        let mut i = next[c];
        loop {
            // Skip what is in place already: most of it, after a presort
            // or in last frame's order.
            i = skip_category(part.cats, i, end[c], c as u8);
            if i == end[c] {
                break;
            }
            let ec = part.cats[i] as usize;
            // Swap the entry into its bucket, over the first entry there
            // that is not in place; look again at what came back. Swapping
            // over the next entry, in place or not, rotated the bucket
            // whenever a bucket before it changed size, and then every node
            // below: at 1M boxes drifting (5.4% leave their node), a
            // rebuild swapped about 4.3M entries per frame; now 0.45–0.5M.
            let j = skip_category(part.cats, next[ec], end[ec], ec as u8);
            debug_assert!(j < end[ec], "a bucket has room for what belongs in it");
            next[ec] = j + 1;
            part.entries.swap(i, j);
            part.cats.swap(i, j);
        }
        next[c] = i;
    }
    Split::Inner(load as u32, begin, end)
}

/// What one entry of each category adds to the counts `categorize` keeps
/// in one register, 12 bits a category: a load, where the shift by
/// `12 * c` took a multiply and a shift.
const COUNT: [u64; 5] = [1, 1 << 12, 1 << 24, 1 << 36, 1 << 48];

/// The first place from `from` up to `to` whose category is not `c`, or
/// `to`: eight categories at a time, since most of a bucket is in place.
#[inline]
fn skip_category(cats: &[u8], mut from: usize, to: usize, c: u8) -> usize {
    // The first byte alone: it is often one the last swap just wrote, and a
    // wide load over a narrow store waits for the store to complete.
    if from >= to || cats[from] != c {
        return from;
    }
    from += 1;
    let all = u64::from_le_bytes([c; 8]);
    while from + 8 <= to {
        let word = u64::from_le_bytes(cats[from..from + 8].try_into().expect("8 bytes"));
        let differ = word ^ all;
        if differ != 0 {
            return from + (differ.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    while from < to && cats[from] == c {
        from += 1;
    }
    from
}

/// Gives `node` the run `lo..lo + len` of the part, sorted by `min.x`, and
/// its load and tight bounds.
fn finish(part: &mut Part<'_>, node: &mut Node, lo: usize, len: usize, load: u32) {
    let run = &mut part.entries[lo..lo + len];
    super::runs::sort_by_min_x(run);
    // An empty run reserves nothing and starts at 0, as everywhere.
    node.start = if len == 0 { 0 } else { (part.base + lo) as u32 };
    node.len = len as u32;
    node.cap = node.len;
    node.load = load;
    node.tight = super::runs::tight_of(run);
}

/// Appends the four children of `nodes[n]`, returning the first's index.
fn push_children(nodes: &mut Vec<Node>, n: u32) -> u32 {
    let kid = Node {
        parent: n,
        ..Node::new(nodes[n as usize].depth + 1)
    };
    let first = nodes.len();
    assert!(first + 4 < super::NONE as usize, "quadrat: too many nodes");
    nodes.extend([kid.clone(), kid.clone(), kid.clone(), kid]);
    nodes[n as usize].children = first as u32;
    first as u32
}

/// Builds the subtree of `nodes[n]` over the part's range `lo..hi`,
/// appending its descendants to `nodes` and their geometry to `geo` (which
/// is as long as `nodes`). Recursion depth is bounded by `max_depth`.
fn build_subtree(
    part: &mut Part<'_>,
    nodes: &mut Vec<Node>,
    geo: &mut Vec<Geo>,
    n: u32,
    lo: usize,
    hi: usize,
    limits: Limits,
) {
    let g = geo[n as usize];
    match partition(part, &nodes[n as usize], &g, lo, hi, limits) {
        Split::Leaf(load) => finish(part, &mut nodes[n as usize], lo, hi - lo, load),
        Split::Inner(load, begin, end) => {
            finish(part, &mut nodes[n as usize], lo, end[STAYS] - lo, load);
            let first = push_children(nodes, n);
            geo.extend((0..4).map(|q| g.child(q)));
            for q in 0..4 {
                build_subtree(part, nodes, geo, first + q as u32, begin[q], end[q], limits);
            }
        }
    }
}

/// Levels of the tree whose subtrees are built as separate tasks: 16 tasks
/// at two levels, enough to keep a few cores busy on uneven data.
#[cfg(feature = "parallel")]
const PAR_LEVELS: u8 = 2;

/// A subtree built apart: its nodes, its root first, and their geometry.
#[cfg(feature = "parallel")]
type Subtree = (Vec<Node>, Vec<Geo>);

/// Below this many entries, a subtree is built on one thread.
#[cfg(feature = "parallel")]
const PAR_MIN: usize = 4096;

/// Builds the subtree of `root` over the whole part, the subtrees of its
/// children as jobs of [`map_parts`] for `levels` more levels; at the top
/// (`levels` is [`PAR_LEVELS`]), the root's category pass is split into
/// jobs too ([`par_partition`]). Returns the
/// subtree's nodes, `root` first, laid out as `build_subtree` lays them
/// out, and their geometry (`geo` first).
#[cfg(feature = "parallel")]
fn par_build_subtree(
    mut part: Part<'_>,
    root: Node,
    geo: Geo,
    levels: u8,
    limits: Limits,
    fresh: Option<&[Aabb]>,
) -> Subtree {
    let mut nodes = vec![root];
    let mut geos = vec![geo];
    let len = part.entries.len();
    if levels == 0 || len < PAR_MIN {
        if let Some(fresh) = fresh {
            write_fresh(part.entries, fresh);
        }
        build_subtree(&mut part, &mut nodes, &mut geos, 0, 0, len, limits);
        return (nodes, geos);
    }
    // The root's partition alone runs before any quadrant's job: its
    // category pass, a stream through every entry, is split too, and
    // writes the new boxes it is given as it goes.
    let top = if levels == PAR_LEVELS {
        par_partition(&mut part, &nodes[0], &geo, limits, fresh)
    } else {
        if let Some(fresh) = fresh {
            write_fresh(part.entries, fresh);
        }
        partition(&mut part, &nodes[0], &geo, 0, len, limits)
    };
    let (load, begin, end) = match top {
        Split::Leaf(load) => {
            finish(&mut part, &mut nodes[0], 0, len, load);
            return (nodes, geos);
        }
        Split::Inner(load, begin, end) => (load, begin, end),
    };
    finish(&mut part, &mut nodes[0], 0, end[STAYS], load);
    let first = push_children(&mut nodes, 0);
    geos.extend((0..4).map(|q| geo.child(q)));
    // Cut the part into the four quadrants' disjoint slices.
    let Part {
        entries,
        cats,
        base,
    } = part;
    let (_, mut entries) = entries.split_at_mut(end[STAYS]);
    let (_, mut cats) = cats.split_at_mut(end[STAYS]);
    let mut parts: Vec<Part<'_>> = Vec::with_capacity(4);
    for q in 0..4 {
        let (e, rest_e) = entries.split_at_mut(end[q] - begin[q]);
        let (c, rest_c) = cats.split_at_mut(end[q] - begin[q]);
        parts.push(Part {
            entries: e,
            cats: c,
            base: base + begin[q],
        });
        entries = rest_e;
        cats = rest_c;
    }
    // Each quadrant is one job; a job takes its part and leaves its subtree.
    let jobs: Vec<(Part<'_>, Node, Geo)> = parts
        .into_iter()
        .enumerate()
        .map(|(q, p)| {
            let k = first as usize + q;
            (p, nodes[k].clone(), geos[k])
        })
        .collect();
    let subs = map_parts(jobs, |_, (p, k, g)| {
        par_build_subtree(p, k, g, levels - 1, limits, None)
    });
    for (q, sub) in subs.into_iter().enumerate() {
        splice(&mut nodes, &mut geos, first + q as u32, sub);
    }
    (nodes, geos)
}

/// Puts the subtree `sub` (its root first, with its geometry) in place of
/// node `at`, appending its descendants and renumbering their links.
#[cfg(feature = "parallel")]
fn splice(nodes: &mut Vec<Node>, geos: &mut Vec<Geo>, at: u32, sub: Subtree) {
    let (sub, sub_geos) = sub;
    geos[at as usize] = sub_geos[0];
    geos.extend_from_slice(&sub_geos[1..]);
    let offset = nodes.len() as u32;
    let remap = |i: u32| match i {
        super::NONE => super::NONE,
        0 => at,
        i => offset + i - 1,
    };
    let mut sub = sub.into_iter();
    let mut root = sub.next().expect("a subtree has a root");
    root.children = remap(root.children);
    nodes[at as usize] = root;
    nodes.extend(sub.map(|mut node| {
        node.children = remap(node.children);
        node.parent = remap(node.parent);
        node
    }));
}

impl<T> FromIterator<(Aabb, T)> for QuadTree<T> {
    /// Builds a tree whose world is the bounding box of the items, with the
    /// default [`Config`](crate::Config). Keys are handed out in order, so
    /// `tree.keys()` lists them as the items came.
    ///
    /// # Panics
    /// When a box is invalid.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let tree: QuadTree<usize> = (0..100)
    ///     .map(|i| (Aabb::from_point([i as f32, 0.0]), i))
    ///     .collect();
    /// assert_eq!(tree.len(), 100);
    /// assert_eq!(tree.world(), Aabb::new([0.0, 0.0], [99.0, 0.0]));
    /// ```
    fn from_iter<I: IntoIterator<Item = (Aabb, T)>>(iter: I) -> QuadTree<T> {
        let items: Vec<(Aabb, T)> = iter.into_iter().collect();
        for (b, _) in &items {
            if let Err(e) = b.validate() {
                panic!("quadrat: invalid box passed to QuadTree::from_iter: {e}");
            }
        }
        let world = items
            .iter()
            .map(|(b, _)| *b)
            .reduce(|a, b| a.join(&b))
            .unwrap_or_default();
        let mut tree = QuadTree::new(world);
        // No keys, since the caller gets none.
        tree.insert_many_impl(items, false, false)
            .expect("the boxes were checked above");
        tree
    }
}
