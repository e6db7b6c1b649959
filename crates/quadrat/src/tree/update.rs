//! Moving and resizing items.

use super::{Entry, Geo, NONE, Node, NodeStack, Placing, QuadTree, Sorter, quadrant};
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::Key;

impl<T> QuadTree<T> {
    /// Moves or resizes an item. Returns `false` for a stale or foreign key
    /// (and nothing changes).
    ///
    /// An item that stays in its node costs O(1); one that leaves it is
    /// taken out along its old path and put in along its new one.
    ///
    /// # Panics
    /// When `aabb` is not valid; the message says why. The tree is unchanged
    /// then. [`try_update`](QuadTree::try_update) returns the error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), ());
    /// assert!(tree.update(k, Aabb::new([50.0, 50.0], [51.0, 51.0])));
    /// assert_eq!(tree.query_point([50.5, 50.5]).count(), 1);
    /// tree.remove(k);
    /// assert!(!tree.update(k, Aabb::new([0.0, 0.0], [1.0, 1.0])));
    /// ```
    #[track_caller]
    pub fn update(&mut self, key: Key, aabb: Aabb) -> bool {
        match self.try_update(key, aabb) {
            Ok(()) => true,
            Err(Error::StaleKey) => false,
            Err(e) => panic!("quadrat: invalid box passed to QuadTree::update: {e}"),
        }
    }

    /// Moves or resizes an item, or says why not: [`Error::StaleKey`] for a
    /// stale or foreign key, or what is wrong with the box. On error nothing
    /// changes.
    ///
    /// ```
    /// use quadrat::{Aabb, Error, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let b = Aabb::new([1.0, 1.0], [2.0, 2.0]);
    /// let k = tree.insert(b, ());
    /// let err = tree.try_update(k, Aabb::new([0.0, 0.0], [f32::NAN, 1.0])).unwrap_err();
    /// assert_eq!(err.to_string(), "max.x is NaN");
    /// assert_eq!(tree.aabb(k), Some(b));
    /// ```
    pub fn try_update(&mut self, key: Key, aabb: Aabb) -> Result<(), Error> {
        aabb.validate()?;
        let idx = self.slab.index_of(key).ok_or(Error::StaleKey)?;
        self.undefer();
        let owner = idx as u32;
        let place = self.slab.places[idx];
        let (n, pos) = (place.node, place.pos);
        if self.stays_in(n, &aabb) {
            // A leaf counts in its load the items that would move into a
            // child; whether this one would may change with its box.
            let (was, now) = if self.nodes[n as usize].is_leaf() {
                let old = self.entries[pos as usize].aabb;
                self.leaf_wants_deeper_both(n, &old, &aabb)
            } else {
                (false, false)
            };
            self.entries[pos as usize].aabb = aabb;
            let node = &mut self.nodes[n as usize];
            let tight = node.tight;
            node.tight = tight.join(&aabb);
            // The search copy changes only with the bounds (the run keeps
            // its place and length) or a split.
            let grew = node.tight != tight;
            self.grow_below(n, &aabb);
            self.resort_entry(n, pos);
            let mut split = false;
            if was != now {
                let node = &mut self.nodes[n as usize];
                if now {
                    node.load += 1;
                    self.split_if_needed(n);
                    split = !self.nodes[n as usize].is_leaf();
                } else {
                    node.load -= 1;
                }
            }
            if split {
                self.sync_subtree(n);
            } else if grew {
                self.sync_node(n);
            }
        } else {
            self.detach(owner);
            self.attach(owner, aabb);
        }
        self.maybe_compact();
        Ok(())
    }

    /// Moves every item at once: `f(key, value, box)` returns each item's new
    /// box. Visits the items in slot order (the order of [`Key::index`], so
    /// data kept in a `Vec` indexed by it is read front to back), writes boxes
    /// that stay in their node in place, re-sorts each changed run once, and
    /// only then re-places the items that left their node: one by one when
    /// they are few (up to 1/128 of the items), all at once when more (up
    /// to 1/16: each goes to its new node, and the entries are re-packed in
    /// two sequential passes), and by a [`rebuild`](QuadTree::rebuild)
    /// beyond. From 2¹⁸ items, it also rebuilds as soon as more than 1/160
    /// of the items seen so far left their node (from 2¹⁵ items, more than
    /// 1/32), once the first 1/32 of the items (in slot order) are seen,
    /// and tests no placement after that: in a tree that large, the
    /// rebuild costs less than the tests and the placing from about that
    /// share. A rebuild after a frame in which many items jumped far (more
    /// than a quarter of a sample out of their node) first sorts the items
    /// along a Morton curve, as [`insert_many`](QuadTree::insert_many)
    /// does. The tree is the same whichever way is taken. For a frame in
    /// which everything moves a little, this is much cheaper than calling
    /// [`update`](QuadTree::update) for each item.
    ///
    /// # Panics
    /// When `f` returns an invalid box; the message names it. See
    /// [`try_update_all`](QuadTree::try_update_all).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree, Vec2};
    /// let mut velocity = vec![Vec2::new(1.0, 0.0); 100];
    /// velocity[7] = Vec2::new(50.0, 50.0);
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.insert_many((0..100).map(|i| {
    ///     let p = Vec2::new((i % 10) as f32 * 9.0, (i / 10) as f32 * 9.0);
    ///     (Aabb::from_center(p, [1.0, 1.0]), i)
    /// }));
    /// tree.update_all(|_, &i, b| b.translate(velocity[i]));
    /// assert_eq!(tree.aabb(keys[7]).unwrap().center(), Vec2::new(113.0, 50.0)); // left the world: kept
    /// ```
    #[track_caller]
    pub fn update_all(&mut self, f: impl FnMut(Key, &T, Aabb) -> Aabb) {
        if let Err((key, e)) = self.try_update_all(f) {
            panic!("quadrat: invalid box for {key:?} in QuadTree::update_all: {e}");
        }
    }

    /// Like [`update_all`](QuadTree::update_all), but an invalid box does not
    /// panic: that item keeps its old box, every other item moves, and the
    /// first refusal is returned with the item's key. The tree stays valid.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a');
    /// let b = tree.insert(Aabb::new([5.0, 5.0], [6.0, 6.0]), 'b');
    /// let err = tree.try_update_all(|_, &v, bx| {
    ///     if v == 'a' { Aabb::new([f32::NAN, 0.0], [1.0, 1.0]) } else { bx.translate([1.0, 0.0]) }
    /// });
    /// assert_eq!(err.unwrap_err().0, a);
    /// assert_eq!(tree.aabb(a), Some(Aabb::new([1.0, 1.0], [2.0, 2.0])));
    /// assert_eq!(tree.aabb(b), Some(Aabb::new([6.0, 5.0], [7.0, 6.0])));
    /// ```
    pub fn try_update_all(
        &mut self,
        f: impl FnMut(Key, &T, Aabb) -> Aabb,
    ) -> Result<(), (Key, Error)> {
        self.update_all_impl(f)
    }

    /// `try_update_all`, on the calling thread (`par_update_all` has a
    /// first pass of its own and shares `settle`).
    fn update_all_impl(
        &mut self,
        mut f: impl FnMut(Key, &T, Aabb) -> Aabb,
    ) -> Result<(), (Key, Error)> {
        self.undefer();
        let mut refused = None;
        let mut movers = core::mem::take(&mut self.movers);
        let splits = core::mem::take(&mut self.splits);
        movers.clear();
        let mut dirty = core::mem::take(&mut self.dirty);
        dirty.clear();
        dirty.resize(self.nodes.len().div_ceil(64), 0);
        // Whatever happens from here, the boxes already written are settled
        // into the tree: if `f` panics, the items it returned a box for
        // before move (before a rebuild is decided, those outside the block
        // it panicked in; after, every one), the rest keep their old boxes,
        // and the tree is valid.
        let mut job = Settle {
            tree: self,
            movers,
            splits,
            dirty,
            rebuild: false,
        };
        let tree = &mut *job.tree;
        // Pass 1, in slot order: the caller's data is usually laid out by
        // key, so this reads it front to back, and each item costs one
        // random access into the entries instead of three.
        // Blocks of items: first every new box (touching only the caller's
        // data and the slots, in order), then every placement test and
        // write (random accesses into the nodes and entries, independent of
        // one another, so the processor overlaps their cache misses). The
        // next block's entries (and nodes, while placement is tested) are
        // prefetched before each block: at 1M uniform boxes drifting, the
        // whole `update_all` took 0.92–0.93× the time with it.
        const BLOCK: usize = 64;
        let mut block = [(0u32, super::EMPTY); BLOCK];
        let slots = tree.slab.slots.len();
        let len = tree.len();
        let mut tally = Tally::default();
        let mut start = 0;
        while start < slots {
            let end = (start + BLOCK).min(slots);
            tree.prefetch_places(end..(end + BLOCK).min(slots), !job.rebuild);
            let mut filled = 0;
            for idx in start..end {
                let slot = &tree.slab.slots[idx];
                let Some(value) = slot.value() else {
                    continue;
                };
                let key = Key::new(idx as u32, slot.generation());
                let pos = tree.slab.places[idx].pos as usize;
                let b = f(key, value, tree.entries[pos].aabb);
                if let Err(err) = b.validate() {
                    refused.get_or_insert((key, err));
                    continue;
                }
                tally.seen += 1;
                if job.rebuild {
                    // The tree is rebuilt from the entries at the end: the
                    // box goes straight in, with no placement test.
                    tree.entries[pos].aabb = b;
                } else {
                    block[filled] = (idx as u32, b);
                    filled += 1;
                }
            }
            if !job.rebuild {
                for &(idx, b) in &block[..filled] {
                    let place = tree.slab.places[idx as usize];
                    let (n, pos) = (place.node, place.pos as usize);
                    if tree.stays_in(n, &b) {
                        tree.entries[pos].aabb = b;
                        job.dirty[n as usize / 64] |= 1 << (n % 64);
                    } else {
                        job.movers.push((idx, b));
                    }
                }
                tally.movers = job.movers.len();
                job.rebuild = tally.rebuild_due(len, false);
            }
            start = end;
        }
        drop(job);
        match refused {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// Prefetches the entries of the live items in slots `range`, and
    /// their nodes too when `nodes` (for the placement test).
    #[inline]
    fn prefetch_places(&self, range: core::ops::Range<usize>, nodes: bool) {
        let slots = self.slab.slots[range.clone()].iter();
        for (slot, place) in slots.zip(&self.slab.places[range]) {
            if !slot.is_full() {
                continue;
            }
            if let Some(e) = self.entries.get(place.pos as usize) {
                crate::prefetch::prefetch(e);
            }
            if nodes && let Some(node) = self.nodes.get(place.node as usize) {
                crate::prefetch::prefetch(node);
                crate::prefetch::prefetch(&self.geo[place.node as usize]);
            }
        }
    }

    /// How `settle` will re-place `movers` items that left their node:
    /// see [`plan`]. `parallel` asks for the rebuild on rayon's pool.
    #[inline]
    pub(crate) fn plan(&self, movers: usize, parallel: bool) -> Plan {
        plan(movers, self.len(), self.splits_build(parallel, self.len()))
    }

    /// The second half of `update_all`, after the boxes that stay in their
    /// node were written and their nodes marked in `dirty`: re-places the
    /// `movers` (slot and new box) as `how` says, and re-sorts the marked
    /// runs.
    pub(crate) fn settle(
        &mut self,
        movers: Vec<(u32, Aabb)>,
        mut splits: Vec<u32>,
        mut dirty: Vec<u64>,
        parallel: bool,
        how: Replace<'_>,
    ) {
        splits.clear();
        // Structure changes only now, with no node index held from above.
        let (plan, mut fresh) = match how {
            Replace::AsPlanned => (self.plan(movers.len(), parallel), None),
            Replace::Rebuild(fresh) => (Plan::Rebuild, fresh),
        };
        if plan == Plan::Rebuild {
            // Many items left their node: a rebuild from the current order
            // is cheaper than re-placing them, and gives the same tree. It
            // sorts every run and counts every load itself, so the marked
            // runs are left as they are.
            for &(owner, b) in &movers {
                let pos = self.slab.places[owner as usize].pos;
                self.entries[pos as usize].aabb = b;
            }
            let scrambled = self.scrambled(fresh);
            self.pack();
            if scrambled {
                // The presort orders the new boxes.
                let pool = self.splits_build(parallel, self.entries.len());
                if let Some(fresh) = fresh.take() {
                    super::build::write_fresh_all(&mut self.entries, fresh, pool);
                }
                self.presort_kept(pool);
            }
            self.build_all_with(parallel, fresh);
        } else if plan == Plan::Bulk {
            // Many left their node, but most stayed: the movers are placed
            // all at once, and the runs moved in two sequential passes,
            // where a rebuild would partition every entry at every level.
            self.place_in_bulk(&movers, &mut dirty, &mut splits);
            for &n in &splits {
                self.split_if_needed(n);
            }
            self.collapse_light();
            self.refit_below_all();
            self.sync_all();
        } else {
            self.resort_marked(&dirty, &mut splits);
            self.refit_below_all();
            for &n in &splits {
                self.split_if_needed(n);
            }
            for &(owner, b) in &movers {
                self.detach(owner);
                self.attach(owner, b);
            }
            self.sync_all();
        }
        self.dirty = dirty;
        self.movers = movers;
        self.splits = splits;
        self.maybe_compact();
    }

    /// Moves the `movers` (slot and new box; their entries still hold the
    /// old boxes) to the nodes where their new boxes belong in the tree as
    /// it stands, then re-sorts and refits every run marked in `dirty` and
    /// every run a mover left or joined, recounts those leaves' loads
    /// (pushing the leaves that must split onto `splits`), and recounts the
    /// loads of the internal nodes above them. The entry array is re-packed
    /// in place, in the order the runs sit: one pass from the front moves
    /// each run left over the movers' old places, one pass from the back
    /// moves each run right to make room for the movers that join it; then
    /// every slot is pointed at its place. Nodes that should split or
    /// collapse are left as they are (`settle` sees to them).
    fn place_in_bulk(&mut self, movers: &[(u32, Aabb)], dirty: &mut [u64], splits: &mut Vec<u32>) {
        let mark = |dirty: &mut [u64], n: u32| dirty[n as usize / 64] |= 1 << (n % 64);
        let Placing {
            mut runs,
            mut arrivals,
            mut net,
        } = core::mem::take(&mut self.placing);
        // Every node, keyed by where its run starts. An empty run starts
        // where the last run before it in depth-first order ends, so that
        // what joins it lands among its neighbours (and the reservations
        // of empty runs are given up: the array is re-packed below).
        runs.clear();
        let mut stack = NodeStack::with_root();
        let mut at = 0u32;
        while let Some(n) = stack.pop() {
            let node = &mut self.nodes[n as usize];
            if node.len == 0 {
                node.start = at;
                node.cap = 0;
            } else {
                at = node.start + node.len;
            }
            runs.push((u64::from(node.start) << 32) | u64::from(n));
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
        }
        // After a build the runs sit in depth-first order: sorted already.
        runs.sort_unstable();
        // Each mover leaves its node and finds its new one: up from the old
        // node to the first that its new box fits in and its centre reaches
        // (as `stays_in` tests; the root takes anything), then down as
        // `locate` goes. Every node's count of movers gained minus lost is
        // kept in `net`, for the loads above.
        net.clear();
        net.resize(self.nodes.len(), 0);
        arrivals.clear();
        const AHEAD: usize = 8;
        for (i, &(owner, b)) in movers.iter().enumerate() {
            if let Some(&(next, _)) = movers.get(i + AHEAD) {
                self.slab.prefetch(next);
                self.slab.prefetch_place(next);
            }
            let place = self.slab.places[owner as usize];
            let (old, pos) = (place.node, place.pos);
            let generation = self.slab.slots[owner as usize].generation();
            mark(dirty, old);
            net[old as usize] -= 1;
            self.entries[pos as usize].owner = NONE;
            let c = b.center();
            let mut n = old;
            while n != 0 {
                let g = &self.geo[n as usize];
                if g.reaches(c) && g.loose.contains(&b) {
                    break;
                }
                n = self.nodes[n as usize].parent;
            }
            let n = self.locate_below(n, &b);
            mark(dirty, n);
            net[n as usize] += 1;
            let key = (u64::from(self.nodes[n as usize].start) << 32) | u64::from(n);
            arrivals.push((
                key,
                Entry {
                    aabb: b,
                    owner,
                    generation,
                },
            ));
        }
        arrivals.sort_unstable_by_key(|a| a.0);
        // An internal node's load counts the items below it: it changes by
        // the movers gained minus lost by every node below it. Children
        // first, each adding its subtree's change into `net` of its own.
        self.order.clear();
        self.order.push(0);
        let mut i = 0;
        while i < self.order.len() {
            let c = self.nodes[self.order[i] as usize].children;
            i += 1;
            if c != NONE {
                self.order.extend(c..c + 4);
            }
        }
        for &n in self.order.iter().rev() {
            let c = self.nodes[n as usize].children;
            if c != NONE {
                let below: i32 = (c..c + 4).map(|k| net[k as usize]).sum();
                let node = &mut self.nodes[n as usize];
                node.load = node.load.wrapping_add_signed(below);
                net[n as usize] += below;
            }
        }
        // From the front: each run moves left, without the movers. No run
        // is written before it is read: each lands at or before its start.
        let mut w = 0usize;
        for &k in &runs {
            let node = &mut self.nodes[k as u32 as usize];
            let (start, len) = (node.start as usize, node.len as usize);
            node.start = w as u32;
            for p in start..start + len {
                let e = self.entries[p];
                if e.owner != NONE {
                    self.entries[w] = e;
                    w += 1;
                }
            }
            node.len = w as u32 - node.start;
        }
        // From the back: each run moves right by the movers that join the
        // runs before it, and takes its own after its entries; a marked run
        // is settled there, while it is in cache.
        let total = w + arrivals.len();
        debug_assert_eq!(total, self.len());
        let mut end = total;
        let mut a = arrivals.len();
        for &k in runs.iter().rev() {
            // Every arrival's key is the key of its run.
            let mut first = a;
            while first > 0 && arrivals[first - 1].0 == k {
                first -= 1;
            }
            let node = &mut self.nodes[k as u32 as usize];
            let (from, len) = (node.start as usize, node.len as usize);
            let joins = a - first;
            let to = end - len - joins;
            self.entries.copy_within(from..from + len, to);
            for (i, (_, e)) in arrivals[first..a].iter().enumerate() {
                self.entries[to + len + i] = *e;
            }
            let len = len + joins;
            node.start = if len == 0 { 0 } else { to as u32 };
            node.len = len as u32;
            node.cap = len as u32;
            end = to;
            a = first;
            let n = k as u32;
            if dirty[n as usize / 64] & (1 << (n % 64)) != 0 {
                self.settle_run(n, splits);
            }
        }
        debug_assert!(end == 0 && a == 0);
        self.entries.truncate(total);
        self.garbage = 0;
        self.index_slots();
        self.placing = Placing {
            runs,
            arrivals,
            net,
        };
    }

    /// Sorts node `n`'s run and refits its bounds; for a leaf, recounts its
    /// load (see `recount_leaf`). Slots are left to the caller.
    fn settle_run(&mut self, n: u32, splits: &mut Vec<u32>) {
        let node = &self.nodes[n as usize];
        let (start, end) = (node.start as usize, (node.start + node.len) as usize);
        super::runs::sort_by_min_x(&mut self.entries[start..end]);
        self.refit(n);
        self.recount_leaf(n, splits);
    }

    /// For a leaf `n`, sets its load to the items of its run that would
    /// move into a child (the test of `leaf_wants_deeper`, with the
    /// children's loose bounds computed once), and pushes it onto `splits`
    /// when it must split. Nothing for an internal node.
    fn recount_leaf(&mut self, n: u32, splits: &mut Vec<u32>) {
        let node = &self.nodes[n as usize];
        if !node.is_leaf() {
            return;
        }
        let load = if node.depth < self.config.max_depth {
            let sorter = Sorter::of(&self.geo[n as usize]);
            let run = &self.entries[node.start as usize..(node.start + node.len) as usize];
            run.iter().filter(|e| sorter.place(&e.aabb).1).count()
        } else {
            0
        };
        self.nodes[n as usize].load = load as u32;
        if load > self.config.max_items {
            splits.push(n);
        }
    }

    /// Collapses every highest internal node whose load no longer needs
    /// children (after `place_in_bulk` moved items out of its subtree).
    fn collapse_light(&mut self) {
        let mut stack = NodeStack::with_root();
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if node.is_leaf() {
                continue;
            }
            if node.load <= self.max_items {
                self.collapse(n);
                continue;
            }
            for q in 0..4 {
                stack.push(node.children + q);
            }
        }
    }

    /// Re-sorts the run of each node marked in `dirty` and recounts its
    /// leaf's load, pushing the leaves that must split onto `splits`.
    fn resort_marked(&mut self, dirty: &[u64], splits: &mut Vec<u32>) {
        for (w, &word) in dirty.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let n = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                self.resort_run(n);
                self.recount_leaf(n, splits);
            }
        }
    }

    /// Whether the entries' order says little of where their new boxes go,
    /// as after a frame in which many items jumped across the world: of
    /// the items in every [`SCRAMBLE_STRIDE`]th slot, more than a quarter
    /// no longer belong in the node their place names. A rebuild then first
    /// orders the entries along a Morton curve, as a bulk insert does
    /// (`presort`): the partition of entries in random order is far slower
    /// than the radix sort and gather. After a frame of drift the entries
    /// are nearly in the new tree's order already, and the presort would
    /// only add its cost. The test reads only the tree and the new boxes
    /// (written into the entries), so `update_all` and `par_update_all`
    /// decide alike, on any pool. The sort works in the buffers of the
    /// spare index (`presort_kept`), which the tree keeps for the next
    /// such frame. A slot's new box is read from `fresh` where that holds
    /// one (see [`settle`](QuadTree::settle)).
    fn scrambled(&self, fresh: Option<&[Aabb]>) -> bool {
        let (mut seen, mut left) = (0usize, 0usize);
        for idx in (0..self.slab.slots.len()).step_by(SCRAMBLE_STRIDE) {
            if !self.slab.slots[idx].is_full() {
                continue;
            }
            let place = self.slab.places[idx];
            let b = fresh
                .and_then(|f| f.get(idx))
                .filter(|b| !b.min.x.is_nan())
                .unwrap_or(&self.entries[place.pos as usize].aabb);
            seen += 1;
            left += usize::from(!self.stays_in(place.node, b));
        }
        left * 4 > seen
    }

    /// `true` when `b` would be stored in node `n`: its centre descends to
    /// `n`, `n`'s loose bounds (and so all its ancestors') contain it, and it
    /// does not fit the child of `n` it would descend into.
    fn stays_in(&self, n: u32, b: &Aabb) -> bool {
        stays_in(&self.nodes, &self.geo, n, b)
    }
}

/// `true` when `b` would be stored in node `n` of `nodes` (see
/// `QuadTree::stays_in`).
#[inline]
pub(crate) fn stays_in(nodes: &[Node], geo: &[Geo], n: u32, b: &Aabb) -> bool {
    let (node, g) = (&nodes[n as usize], &geo[n as usize]);
    let c = b.center();
    if n != 0 && !(g.reaches(c) && g.loose.contains(b)) {
        return false;
    }
    node.is_leaf() || {
        let child = node.children + quadrant(&g.cell, c) as u32;
        !geo[child as usize].loose.contains(b)
    }
}

/// Slots between two of those [`QuadTree::scrambled`] tests.
const SCRAMBLE_STRIDE: usize = 256;

/// The second half of an `update_all`, run when it is dropped: on the normal
/// path and when the caller's closure panics alike.
struct Settle<'a, T> {
    tree: &'a mut QuadTree<T>,
    movers: Vec<(u32, Aabb)>,
    splits: Vec<u32>,
    dirty: Vec<u64>,
    /// Set once `settle` is to rebuild the tree: enough items left their
    /// node (see [`plan`]), or a sample says so (see
    /// [`Tally::rebuild_early`]). From then on, new boxes are written in
    /// place without a placement test.
    rebuild: bool,
}

impl<T> Drop for Settle<'_, T> {
    fn drop(&mut self) {
        let movers = core::mem::take(&mut self.movers);
        let splits = core::mem::take(&mut self.splits);
        let dirty = core::mem::take(&mut self.dirty);
        let how = if self.rebuild {
            Replace::Rebuild(None)
        } else {
            Replace::AsPlanned
        };
        self.tree.settle(movers, splits, dirty, false, how);
    }
}

/// How [`QuadTree::settle`] re-places the items that left their node.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Replace<'a> {
    /// As [`QuadTree::plan`] says for their count.
    AsPlanned,
    /// By a rebuild: the first pass stopped testing placement, or its
    /// count called for one. With the new boxes by slot that are not yet
    /// in their entries (NaN where the entry keeps its box: the movers,
    /// whose boxes `movers` holds, refused boxes and vacant slots), from
    /// `par_update_all`: the rebuild's first category pass writes them as
    /// it reads the entries (see `QuadTree::build_all_with`), or, when the
    /// rebuild first presorts the entries, they are written before the
    /// sort, which orders the new boxes.
    Rebuild(Option<&'a [Aabb]>),
}

/// What the first pass of `update_all` has seen so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Items given a valid box.
    pub(crate) seen: usize,
    /// Of those, items that left their node.
    pub(crate) movers: usize,
}

/// The smallest tree in which `update_all` (on one thread) may decide on a
/// rebuild from a sample of more than 1/160 movers: 2¹⁸ items. From 300k
/// boxes the sample's rebuild is cheaper once leaves hold 64 items (it was
/// decided from 2¹⁹ items with leaves of 32): drifting a quarter of their
/// size, 0.80–0.89× the time at 300k uniform and clustered boxes (uniform
/// 12.25–12.68 → 10.93–11.16 ms, clustered 13.85–14.58 → 11.45–11.63) and
/// 0.82–0.92× at 400k in all three scenes; drifting 6%, 0.89–1.0×;
/// drifting 1.5%, 0.93–1.08× (a scratch driver reading the bound from the
/// environment, medians of 21 frames, the ratio of each of two
/// alternations). Below, where the nodes and entries that a placement
/// test reads are mostly in cache, a share that low cost 100k uniform
/// boxes drifting 3% of their size (about 0.6% movers, near the share
/// itself) 1.13–1.20× the time (2.60–2.92 → 3.05–3.29 ms) and 150k
/// uniform and clustered ones 1.04–1.06× (medians of 41 frames, three runs
/// each way); smaller trees take the rebuild early from a larger share
/// ([`EARLY_SMALL_MIN`]).
pub(crate) const EARLY_MIN: usize = 1 << 18;

/// The smallest tree in which `update_all` (on one thread) may decide on a
/// rebuild from a sample of more than 1/32 movers: 2¹⁵ items. From that
/// share, the rebuild mostly costs less than the placement tests it
/// spares and the bulk placement: with boxes drifting a quarter of their
/// size (4.4–6.3% movers), `update_all` took 0.75–0.90× the time at 100k
/// boxes in the three scenes (uniform 3.63–4.36 → 3.21–3.44 ms, clustered
/// 5.36–5.54 → 4.77–4.95, mixed 4.19–4.27 → 3.56–3.71) and 0.84–0.97× at
/// 60k; at 100k, 0.90–0.93× with 3.7% uniform movers and 0.86–0.91× with
/// 3.5% mixed ones, at 200k 0.81–0.89× with 3.7–4.9% movers in the three
/// scenes. Clustered boxes cross over later: 1.03–1.11× at 100k with 3.1%
/// movers and 1.00–1.04× with 4.2%. At 30k, where no sample decides, the
/// rebuild would take 0.81–0.91× the time with the drift above, but
/// 1.06–1.09× for clustered boxes drifting a tenth of their size (5.3%
/// movers) (a scratch driver reading the share and the bound from the
/// environment, medians of 41 frames, three runs each way).
pub(crate) const EARLY_SMALL_MIN: usize = 1 << 15;

impl Tally {
    /// `true` once `settle` is to rebuild: by [`plan`]'s count of movers, or
    /// when the items seen so far, from a tree of `len`, say that a rebuild
    /// is cheaper than testing the placement of the rest: at least
    /// 1/32 of the items seen, and of them more than 1/160 left their node
    /// on one thread (from [`EARLY_MIN`] items; more than 1/32 from
    /// [`EARLY_SMALL_MIN`] items), more than 1/512 on the pool (`pool`). At
    /// 1M boxes drifting, a rebuild without the tests took 0.93–0.96× the
    /// time of the other ways with 0.65–1.8% uniform or
    /// mixed movers, 0.9× with 5.4%, and 0.81–0.86× for clustered boxes
    /// from 1.6% (0.97× with 0.53%); with 0.2–0.45% movers, the other ways
    /// took 0.87–1.0× the rebuild's time. On 2 threads, a rebuild took
    /// 0.75–0.86× from 0.5% movers up, about 0.55× for clustered boxes with
    /// 1.6%, and about the same time with 0.2%.
    #[inline]
    pub(crate) fn rebuild_due(&self, len: usize, pool: bool) -> bool {
        plan(self.movers, len, pool) == Plan::Rebuild || self.rebuild_early(len, pool)
    }

    /// `true` when the items seen so far, from a tree of `len`, say that a
    /// rebuild is cheaper than testing the placement of the rest (see
    /// [`rebuild_due`](Tally::rebuild_due)).
    #[inline]
    pub(crate) fn rebuild_early(&self, len: usize, pool: bool) -> bool {
        let sampled = self.seen >= len / 32;
        if pool {
            sampled && self.movers * 512 > self.seen
        } else {
            let share = if len >= EARLY_MIN {
                160
            } else if len >= EARLY_SMALL_MIN {
                32
            } else {
                return false;
            };
            sampled && self.movers * share > self.seen
        }
    }
}

/// How `settle` re-places the items that left their node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Each with `detach` and `attach`.
    OneByOne,
    /// All at once, with `place_in_bulk`.
    Bulk,
    /// By rebuilding the whole tree.
    Rebuild,
}

/// The rule of [`QuadTree::plan`], for `movers` of `len` items, where
/// `pool` says that the tree is large enough for a rebuild split on
/// rayon's pool to beat the bulk placement (`par_update_all` from four
/// times `Config::par_min_items` items):
/// - on one thread, one by one up to 1/128 of the items, then in bulk up
///   to 1/16, then a rebuild. At 1M uniform boxes drifting, with 0.5%
///   movers one by one took 0.95× the time of the bulk placement (with
///   the pairs after it), with 1.1% 1.04×; a rebuild took 1.18× with
///   5.4%, 1.02× with 6.5% and 1.03× with 10.7%. Clustered boxes cross
///   over earlier: a rebuild took 1.03× with 5.2%, 0.9× with 6.2%.
/// - on the pool, one by one up to 1/32, then a rebuild: the rebuild is
///   split, the bulk placement is not (at 1M drifting boxes on 2 threads,
///   `par_update_all` took 35–39 ms with the rebuild, 44–47 with the bulk
///   placement; at 100k, where the bulk placement is used, 3.3–4.1 ms
///   against 4.7–5.1 with the rebuild).
///
/// Movers are only added, so once a rebuild is due it stays due. Then, or
/// when [`Tally::rebuild_early`] says so, `update_all` and `par_update_all`
/// stop testing placement and tell `settle` to rebuild (the movers it is
/// given are then only those found before).
#[inline]
pub(crate) fn plan(movers: usize, len: usize, pool: bool) -> Plan {
    if pool {
        if movers * 32 > len {
            Plan::Rebuild
        } else {
            Plan::OneByOne
        }
    } else if movers * 16 > len {
        Plan::Rebuild
    } else if movers * 128 > len {
        Plan::Bulk
    } else {
        Plan::OneByOne
    }
}

#[cfg(test)]
mod tests {
    use super::{EARLY_MIN, EARLY_SMALL_MIN, Tally};

    /// The share of movers in the sample that calls for the early rebuild,
    /// by the tree's size: none below 2¹⁵ items, more than 1/32 up to 2¹⁸,
    /// more than 1/160 from there; always more than 1/512 on the pool; and
    /// never before 1/32 of the items are seen.
    #[test]
    fn the_sample_calls_for_a_rebuild_from_a_share_that_falls_with_size() {
        // The docs name the bounds.
        assert_eq!((EARLY_SMALL_MIN, EARLY_MIN), (1 << 15, 1 << 18));
        let early = |len: usize, seen: usize, movers: usize, pool: bool| {
            Tally { seen, movers }.rebuild_early(len, pool)
        };
        for (len, share) in [
            (EARLY_SMALL_MIN, 32),
            (100_000, 32),
            (EARLY_MIN - 1, 32),
            (EARLY_MIN, 160),
            (1 << 20, 160),
        ] {
            let seen = len / 32;
            let at = seen / share;
            assert!(!early(len, seen, at, false), "{len}: {at} of {seen}");
            assert!(early(len, seen, at + 1, false), "{len}: {at} + 1 of {seen}");
            // Not before the sample is taken, however many moved.
            assert!(!early(len, seen - 1, seen - 1, false), "{len}: too soon");
            // On the pool, from 1/512 at any size.
            assert!(early(len, seen, seen / 512 + 1, true), "{len}: pool");
        }
        for len in [1_000, EARLY_SMALL_MIN - 1] {
            assert!(!early(len, len, len, false), "{len}: no sample decides");
            assert!(early(len, len, len / 512 + 1, true), "{len}: pool");
        }
    }
}
