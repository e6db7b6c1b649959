//! Building and pair finding on several threads (feature `parallel`).

use super::QuadTree;
use super::pairs::{Emit, IntoVec, ordered_keys};
use super::update::Replace;
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::Key;
use crate::tree::Entry;
use std::sync::Mutex;

/// Levels of the tree over which the walk is split into jobs: 4 children
/// and 6 sibling pairs per level give hundreds of jobs, plenty to balance
/// a few cores, while the work below stays sequential and allocation-free.
const SPLIT_LEVELS: u8 = 3;

/// Pairs a job of [`par_map_pairs_into`](QuadTree::par_map_pairs_into)
/// gathers before it appends them to the caller's vector.
const BUFFER: usize = 4096;

/// A job's share of [`par_map_pairs_into`](QuadTree::par_map_pairs_into):
/// `f` of each pair it finds, gathered in `found` and handed to `flush`
/// (which appends it to the caller's vector) before it would hold more
/// than [`BUFFER`]. The pairs a sweep has held go in at once, as
/// [`IntoVec`] appends them.
struct Gather<'a, P, F, G> {
    found: Vec<P>,
    f: &'a F,
    flush: &'a G,
}

impl<P, F: Fn(Key, Key) -> P, G: Fn(&mut Vec<P>)> Gather<'_, P, F, G> {
    /// `found` with room for `k` more pairs (at most
    /// [`PENDING`](super::pairs::PENDING), a sweep's), for `f` of each.
    #[inline(always)]
    fn room(&mut self, k: usize) -> IntoVec<'_, P, &F> {
        if self.found.len() + k > BUFFER || self.found.capacity() == 0 {
            self.make_room();
        }
        IntoVec {
            out: &mut self.found,
            f: self.f,
        }
    }

    /// Hands what `found` holds to `flush`, or gives the empty buffer its
    /// room: out of line, as [`IntoVec`]'s `extend` is.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.found.is_empty() {
            self.found.reserve_exact(BUFFER);
        } else {
            (self.flush)(&mut self.found);
        }
    }
}

// A sweep holds at most `PENDING` pairs, so one batch always fits an
// empty buffer.
const _: () = assert!(super::pairs::PENDING <= BUFFER);

impl<P, F: Fn(Key, Key) -> P, G: Fn(&mut Vec<P>)> Emit for Gather<'_, P, F, G> {
    #[inline(always)]
    fn pair(&mut self, a: &Entry, b: &Entry) {
        self.room(1).pair(a, b);
    }

    #[inline(always)]
    fn places(&mut self, a: &[Entry], b: &[Entry], first: &[u8], second: &[u8]) {
        if !first.is_empty() {
            self.room(first.len()).places(a, b, first, second);
        }
    }

    #[inline(always)]
    fn within(&mut self, run: &[Entry], ij: &[(u32, u32)]) {
        if !ij.is_empty() {
            self.room(ij.len()).within(run, ij);
        }
    }
}

impl<T> QuadTree<T> {
    /// Like [`rebuild`](QuadTree::rebuild), with the subtrees of the top
    /// levels built as jobs on the calling thread and rayon's thread pool,
    /// from [`Config::par_min_items`](crate::Config) items (a tree whose
    /// inserts wait is placed by a bulk build, split from four times
    /// that). The tree is the same.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// for i in 0..10_000 {
    ///     tree.insert(Aabb::from_point([(i % 100) as f32, (i * 7 % 100) as f32]), i);
    /// }
    /// let before: Vec<_> = tree.nodes().collect();
    /// tree.par_rebuild();
    /// assert_eq!(tree.nodes().collect::<Vec<_>>(), before);
    /// ```
    pub fn par_rebuild(&mut self) {
        // Deferred inserts are placed in parallel from four times
        // `par_min_items`, a placed tree rebuilt from `par_min_items`.
        let splits = if self.deferred {
            // An index a question built is adopted, not built again.
            self.lazy.get().is_none() && self.splits_build(true, self.len())
        } else {
            self.splits(true, self.len())
        };
        let _awake = self.awake(splits);
        if self.deferred {
            // Placing a deferred tree is a bulk build already.
            self.undefer_with(true);
            return;
        }
        self.pack();
        self.build_all(true);
    }

    /// Like [`insert_many`](QuadTree::insert_many), building in bulk on
    /// the calling thread and rayon's thread pool from four times
    /// [`Config::par_min_items`](crate::Config) items (2¹⁸ by default),
    /// below which it builds on the calling thread. Keys are handed out in
    /// order, and the tree is the same as `insert_many` makes.
    ///
    /// # Panics
    /// When a box is invalid; nothing is inserted then.
    /// [`try_par_insert_many`](QuadTree::try_par_insert_many) returns the
    /// error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let items = (0..10_000).map(|i| (Aabb::from_point([(i % 100) as f32, (i / 100) as f32]), i));
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.par_insert_many(items);
    /// assert_eq!(tree[keys[4321]], 4321);
    /// ```
    #[track_caller]
    pub fn par_insert_many(&mut self, items: impl IntoIterator<Item = (Aabb, T)>) -> Vec<Key> {
        match self.try_par_insert_many(items) {
            Ok(keys) => keys,
            Err(e) => panic!("quadrat: invalid box passed to QuadTree::par_insert_many: {e}"),
        }
    }

    /// Like [`try_insert_many`](QuadTree::try_insert_many), building in bulk
    /// on rayon's thread pool.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let items = vec![(Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a'), (Aabb::new([f32::NAN, 1.0], [2.0, 2.0]), 'b')];
    /// assert!(tree.try_par_insert_many(items).is_err());
    /// assert!(tree.is_empty());
    /// ```
    pub fn try_par_insert_many(
        &mut self,
        items: impl IntoIterator<Item = (Aabb, T)>,
    ) -> Result<Vec<Key>, Error> {
        // The pool is kept awake (`wake_pool`) for the build, from when the
        // caller's items are in: taking them in may take longer than a
        // woken thread waits. (Into a tree of inserts waiting to be placed,
        // also while those are placed first.)
        self.insert_many_impl(items, true, true)
    }

    /// [`wake_pool`] for a call whose work `splits` into jobs (as
    /// `QuadTree::splits` and `QuadTree::splits_build` decide); nothing
    /// otherwise.
    pub(crate) fn awake(&self, splits: bool) -> Awake {
        if splits { wake_pool() } else { Awake(None) }
    }
}

impl<T: Sync> QuadTree<T> {
    /// Like [`update_all`](QuadTree::update_all), on rayon's thread pool:
    /// `f` is called once per item, from the calling thread and any of the
    /// pool's threads, in no particular order; the boxes are written in
    /// parallel on trees of [`Config::par_min_items`](crate::Config) items
    /// and more. From `4 × Config::par_min_items` items (2¹⁸ by default),
    /// the items that left their node are re-placed one by one up to 1/32 of
    /// the items, and by a rebuild on the pool beyond, or as soon as more
    /// than 1/512 of the items of the first chunks of slots (of 2¹⁴ each, in
    /// slot order) left their node, once those chunks hold 1/32 of the
    /// items; on smaller trees they are re-placed by `update_all`'s rule
    /// (the rebuild beyond 1/16 runs on the pool from
    /// `Config::par_min_items` items), except that a tree of 2¹⁵ items and
    /// more (`update::EARLY_SMALL_MIN`) judges the early rebuild of its
    /// sample by whole chunks, not every 64 items as `update_all` does, so
    /// the two can take different ways where the movers bunch in the
    /// slots. The way taken depends only on
    /// the tree and the new boxes, not on the pool's size or how its threads
    /// run, so the same call leaves the same tree, every run in the same
    /// order, on any pool. Every rebuild after a frame of far jumps first
    /// sorts the items along a Morton curve, as `update_all`'s does. The
    /// tree has the same nodes, each with the same items, as `update_all`
    /// makes; within a node, items whose boxes start at the same `x` may be
    /// listed in another order than `update_all` lists them when the two
    /// took different ways.
    ///
    /// # Panics
    /// When `f` returns an invalid box; see
    /// [`try_par_update_all`](QuadTree::try_par_update_all). When `f`
    /// panics, on whichever thread, the panic reaches the caller and every
    /// item keeps its old box: the new boxes are written only once `f` has
    /// returned for every item. (`update_all`, which writes as it goes,
    /// moves the items `f` returned a box for before the block of 64 items
    /// in which it panicked.)
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.insert_many((0..10_000).map(|i| (Aabb::from_point([(i % 100) as f32, (i / 100) as f32]), i)));
    /// tree.par_update_all(|_, _, b| b.translate([0.5, 0.25]));
    /// assert_eq!(tree.aabb(keys[0]), Some(Aabb::from_point([0.5, 0.25])));
    /// ```
    #[track_caller]
    pub fn par_update_all(&mut self, f: impl Fn(Key, &T, Aabb) -> Aabb + Sync) {
        if let Err((key, e)) = self.try_par_update_all(f) {
            panic!("quadrat: invalid box for {key:?} in QuadTree::par_update_all: {e}");
        }
    }

    /// Like [`try_update_all`](QuadTree::try_update_all), on rayon's thread
    /// pool (see [`par_update_all`](QuadTree::par_update_all)). Of several
    /// refusals, the one of the smallest [`Key::index`] is returned.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a');
    /// let b = tree.insert(Aabb::new([5.0, 5.0], [6.0, 6.0]), 'b');
    /// let err = tree.try_par_update_all(|_, &v, bx| {
    ///     if v == 'a' { Aabb::new([f32::NAN, 0.0], [1.0, 1.0]) } else { bx.translate([1.0, 0.0]) }
    /// });
    /// assert_eq!(err.unwrap_err().0, a);
    /// assert_eq!(tree.aabb(b), Some(Aabb::new([6.0, 5.0], [7.0, 6.0])));
    /// ```
    pub fn try_par_update_all(
        &mut self,
        f: impl Fn(Key, &T, Aabb) -> Aabb + Sync,
    ) -> Result<(), (Key, Error)> {
        use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
        let _awake = self.awake(self.splits(true, self.len()));
        self.undefer_with(true);
        /// Slots per task.
        const CHUNK: usize = 1 << 14;
        /// Marks a slot whose entry keeps its box.
        const KEEP: Aabb = Aabb {
            min: crate::geom::Vec2 {
                x: f32::NAN,
                y: f32::NAN,
            },
            max: crate::geom::Vec2 {
                x: f32::NAN,
                y: f32::NAN,
            },
        };
        type Found = (Vec<(u32, Aabb)>, Option<(Key, Error)>);

        // Phase 1 writes every slot's box in `fresh` (`KEEP` where the
        // entry keeps its box), so the buffer kept from the last call is
        // only resized, not filled first: at 1M slots, filling it took
        // 0.8 ms, a pass on one thread over 16 MB before any task starts.
        let mut fresh = core::mem::take(&mut self.fresh);
        fresh.resize(self.slab.slots.len(), KEEP);
        let dirty: Vec<AtomicU64> = (0..self.nodes.len().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        // Phase 1, by slot: each new box, and whether it stays in its node.
        // A task stops testing placement once a rebuild is certain, and
        // from then on keeps every later box as if it stayed: the rebuild
        // places everything. The way taken must not depend on how the
        // pool's threads are scheduled (the same calls give the same tree,
        // runs in the same order, on any pool), so a rebuild is decided
        // only by what the whole pass would find:
        // - the movers counted so far call for one (`plan`): every 64
        //   slots, each task adds the movers it found to a shared count,
        //   which only grows, so the whole pass would call for it too;
        // - or a prefix of the slots, whole chunks in slot order, says it
        //   is cheaper than testing the rest (`Tally::rebuild_early`): each
        //   task that tested a whole chunk records its count, and the
        //   prefixes are judged in order as they complete, every one of
        //   them, so the first that calls for a rebuild is the same on any
        //   pool.
        let (slab, entries, nodes, geo) = (&self.slab, &self.entries, &self.nodes, &self.geo);
        let len = self.len();
        let pool = self.splits_build(true, len);
        let moved = AtomicUsize::new(0);
        let rebuild = AtomicBool::new(false);
        let prefix = Mutex::new(Prefix {
            done: vec![None; fresh.len().div_ceil(CHUNK)],
            next: 0,
            total: super::update::Tally::default(),
        });
        // Each chunk is a job of `run_jobs`, so the calling thread starts on
        // them at once, where a pool asleep takes a while to wake.
        let found: Vec<Found> = map_chunks(&mut fresh, CHUNK, |c, out| {
            let mut movers = Vec::new();
            let mut refused = None;
            let mut stop = false;
            // Movers not yet added to `moved`, and the whole chunk's
            // count.
            let mut unshared = 0;
            let mut chunk = super::update::Tally::default();
            for (j, o) in out.iter_mut().enumerate() {
                if j % 64 == 0 && !stop {
                    let all = moved.fetch_add(unshared, Relaxed) + unshared;
                    unshared = 0;
                    stop = rebuild.load(Relaxed)
                        || super::update::plan(all, len, pool) == super::update::Plan::Rebuild;
                    if stop {
                        rebuild.store(true, Relaxed);
                    }
                }
                let idx = c * CHUNK + j;
                let slot = &slab.slots[idx];
                let Some(value) = slot.value() else {
                    *o = KEEP;
                    continue;
                };
                let key = Key::new(idx as u32, slot.generation());
                let place = slab.places[idx];
                let b = f(key, value, entries[place.pos as usize].aabb);
                if let Err(err) = b.validate() {
                    *o = KEEP;
                    refused.get_or_insert((key, err));
                    continue;
                }
                chunk.seen += 1;
                let n = place.node;
                if stop {
                    *o = b;
                } else if super::update::stays_in(nodes, geo, n, &b) {
                    *o = b;
                    // Most items share their node with others: one
                    // atomic write per node, not per item.
                    let (word, bit) = (&dirty[n as usize / 64], 1 << (n % 64));
                    if word.load(Relaxed) & bit == 0 {
                        word.fetch_or(bit, Relaxed);
                    }
                } else {
                    *o = KEEP;
                    movers.push((idx as u32, b));
                    chunk.movers += 1;
                    unshared += 1;
                }
            }
            if !stop && lock(&prefix).complete(c, chunk, len, pool) {
                rebuild.store(true, Relaxed);
            }
            (movers, refused)
        });
        // In chunk order: the movers by slot, and the first refusal.
        let mut movers = Vec::new();
        let mut refused = None;
        for (m, r) in found {
            movers.extend(m);
            refused = refused.or(r);
        }
        // A task that stopped testing may have left movers out: `settle`
        // must rebuild then, whatever the count of those it has.
        let rebuild =
            rebuild.into_inner() || self.plan(movers.len(), true) == super::update::Plan::Rebuild;
        // Phase 2: write the boxes that stay. A rebuild writes them itself
        // (`settle`, `build_all_with`): split into jobs, in the jobs of its
        // first category pass, a block at a time as each reads its share
        // of the entries (at 1M boxes drifting, a pass of its own over the
        // entries took 3-6 ms on two threads); otherwise first. Without a
        // rebuild, when every entry is live (as after a build), each task
        // takes a stretch of the entry array; else one thread writes them
        // by slot.
        if !rebuild && self.all_entries_live() {
            super::build::write_fresh_all(&mut self.entries, &fresh, true);
        } else if !rebuild {
            for (place, b) in self.slab.places.iter().zip(&fresh) {
                if !b.min.x.is_nan() {
                    self.entries[place.pos as usize].aabb = *b;
                }
            }
        }
        let mut bits = core::mem::take(&mut self.dirty);
        bits.clear();
        bits.extend(dirty.into_iter().map(AtomicU64::into_inner));
        let splits = core::mem::take(&mut self.splits);
        let how = if rebuild {
            Replace::Rebuild(Some(&fresh[..]))
        } else {
            Replace::AsPlanned
        };
        self.settle(movers, splits, bits, true, how);
        self.fresh = fresh;
        match refused {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// Like [`for_each_pair`](QuadTree::for_each_pair), on rayon's thread
    /// pool: `f(a, b)` is called once for every intersecting pair, with
    /// `a < b`, from the calling thread and any of the pool's threads, in
    /// no particular order.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// let count = AtomicUsize::new(0);
    /// tree.par_for_each_pair(|_, _| { count.fetch_add(1, Ordering::Relaxed); });
    /// assert_eq!(count.into_inner(), tree.pairs().len());
    /// ```
    pub fn par_for_each_pair(&self, f: impl Fn(Key, Key) + Sync) {
        let _awake = self.awake(self.splits(true, self.len()));
        self.ix_with(true);
        let start = || {
            |a: &Entry, b: &Entry| {
                let (ka, kb) = ordered_keys(a, b);
                f(ka, kb);
            }
        };
        self.par_walk(0, self.split_levels(), true, start, drop);
    }

    /// Every intersecting pair `(a, b)` with `a < b`, each exactly once,
    /// sorted, found on rayon's thread pool (see
    /// [`par_pairs_into`](QuadTree::par_pairs_into)), then sorted as
    /// [`pairs`](QuadTree::pairs) sorts them (a counting sort by the first
    /// key's slot), on the pool too where the walk splits and the pairs
    /// are many (from 32,768, and at least one for 16 slots): the slots
    /// are cut into ranges, and each range's pairs are sorted as a job.
    /// On two threads, `par_pairs` took 0.68–0.70× the time it took with
    /// the sort on the calling thread at 1M boxes in clustered and mixed
    /// scenes, 0.79–0.83× in uniform ones, 0.71–0.78× at 100k in clustered
    /// and mixed scenes, and 0.90–1.01× in uniform ones (149k pairs)
    /// (ARCHITECTURE.md, *Sorted pairs by a counting sort*).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// assert_eq!(tree.par_pairs(), tree.pairs());
    /// ```
    #[must_use]
    pub fn par_pairs(&self) -> Vec<(Key, Key)> {
        let mut out = self.par_pairs_unordered();
        let slots = self.slab.slots.len();
        if self.walk_splits() && sort_splits(out.len(), slots) {
            let _awake = self.awake(true);
            par_sort_pairs(&mut out, slots);
            // As the sort on the calling thread leaves it: no room beyond
            // the pairs (the walk's vector grew by doubling).
            out.shrink_to_fit();
        } else {
            self.sort_own_pairs(&mut out);
        }
        out
    }

    /// Every intersecting pair `(a, b)` with `a < b`, each exactly once, in
    /// no particular order: [`par_pairs`](QuadTree::par_pairs) without the
    /// final sort.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// let mut pairs = tree.par_pairs_unordered();
    /// pairs.sort_unstable();
    /// assert_eq!(pairs, tree.pairs());
    /// ```
    #[must_use]
    pub fn par_pairs_unordered(&self) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        self.par_pairs_into(&mut out);
        out
    }

    /// Appends every intersecting pair `(a, b)` with `a < b`, each exactly
    /// once, in no particular order, to `out`, found on rayon's thread pool:
    /// [`par_pairs_unordered`](QuadTree::par_pairs_unordered) into a vector
    /// you keep. Reusing `out` from frame to frame saves allocating it
    /// again: each job gathers pairs in a small buffer of its own and
    /// appends it to `out` when full, so the pairs are written into `out`'s
    /// memory once. Below [`Config::par_min_items`](crate::Config) items,
    /// or on a pool of one thread, the walk is not split: it is
    /// [`pairs_into`](QuadTree::pairs_into).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// let mut pairs = Vec::new();
    /// for _frame in 0..2 {
    ///     pairs.clear();
    ///     tree.par_pairs_into(&mut pairs);
    ///     pairs.sort_unstable();
    ///     assert_eq!(pairs, tree.pairs());
    /// }
    /// ```
    pub fn par_pairs_into(&self, out: &mut Vec<(Key, Key)>) {
        // Keys only: no slot is read, so none is prefetched.
        self.par_map_pairs_impl(out, |a, b| (a, b), false);
    }

    /// Appends `f(a, b)` for every intersecting pair `(a, b)` with `a < b`,
    /// each exactly once, in no particular order, to `out`, found on
    /// rayon's thread pool: collect what you need of each pair (your own
    /// ids, say) without a second pass over the pairs. `f` runs on the
    /// calling thread and the pool's threads. Like
    /// [`par_pairs_into`](QuadTree::par_pairs_into), each job fills a small
    /// buffer of its own and appends it to `out` when full. Below
    /// [`Config::par_min_items`](crate::Config) items, or on a pool of one
    /// thread, it is [`map_pairs_into`](QuadTree::map_pairs_into).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000u32).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// // Pairs of the values stored with the boxes.
    /// let mut ids = Vec::new();
    /// tree.par_map_pairs_into(&mut ids, |a, b| (tree[a], tree[b]));
    /// assert_eq!(ids.len(), tree.pairs().len());
    /// ```
    pub fn par_map_pairs_into<P: Send>(&self, out: &mut Vec<P>, f: impl Fn(Key, Key) -> P + Sync) {
        self.par_map_pairs_impl(out, f, true);
    }

    /// `par_map_pairs_into`, prefetching each node's slots before pairing
    /// its items when `warm` (see `PairFinder::warming`).
    fn par_map_pairs_impl<P: Send>(
        &self,
        out: &mut Vec<P>,
        f: impl Fn(Key, Key) -> P + Sync,
        warm: bool,
    ) {
        let _awake = self.awake(self.splits(true, self.len()));
        self.ix_with(true);
        if !self.walk_splits() {
            self.map_pairs_with(out, f, warm);
            return;
        }
        // Room for a first buffer, made here, on the calling thread: the
        // jobs only grow `out`, and a vector grows in the allocator arena
        // it was made in. Made on a pool thread instead (when `out` came
        // empty), it lived in that thread's arena, and with glibc's
        // allocator the calling thread's next large buffers (the next
        // build's) then came back as fresh pages each time.
        out.reserve(BUFFER);
        let shared = Mutex::new(out);
        let flush = |found: &mut Vec<P>| lock(&shared).append(found);
        let start = || Gather {
            found: Vec::new(),
            f: &f,
            flush: &flush,
        };
        let end = |mut job: Gather<'_, P, _, _>| {
            if !job.found.is_empty() {
                flush(&mut job.found);
            }
        };
        self.par_walk(0, SPLIT_LEVELS, warm, start, end);
    }

    /// How many levels of the pair walk are split into jobs: none below
    /// [`Config::par_min_items`](crate::Config) items, or on a pool of one
    /// thread (see [`walk_splits`](QuadTree::walk_splits)).
    fn split_levels(&self) -> u8 {
        if self.walk_splits() { SPLIT_LEVELS } else { 0 }
    }

    /// `true` when the pair walk is split into jobs: from
    /// [`Config::par_min_items`](crate::Config) items, on a pool of more
    /// than one thread. On a pool of one thread, the jobs would all run on
    /// the calling thread, one after the other, and `par_map_pairs_into`
    /// would copy every result once more, from its jobs' buffers into
    /// `out`: at 100k boxes of mixed sizes, it took 1.2–1.4× the time of
    /// `for_each_pair` pushing into a vector.
    fn walk_splits(&self) -> bool {
        self.splits(true, self.len()) && rayon::current_num_threads() > 1
    }

    /// The pair walk of the subtree of `n` (see `PairFinder::within_subtree`),
    /// split into jobs for `levels` more levels (see [`Job`]), each run on
    /// whichever thread takes it (see [`run_jobs`]): a job makes an [`Emit`]
    /// with `start`, hands it every pair it finds, and gives it to `end`.
    /// Each node's slots are prefetched before its items are paired when
    /// `warm` (see `PairFinder::warming`).
    ///
    /// The walk calls the job's `Emit` directly, as `for_each_pair` calls
    /// its closure: through a `dyn FnMut` for every pair,
    /// `par_for_each_pair` ran 1.09× the instructions at 100k boxes of
    /// mixed sizes, and took 1.1–1.3× the time on two threads in clustered
    /// and mixed scenes (ARCHITECTURE.md, *Queries and pairs*, *Parallel*).
    fn par_walk<S: Emit>(
        &self,
        n: u32,
        levels: u8,
        warm: bool,
        start: impl Fn() -> S + Sync,
        end: impl Fn(S) + Sync,
    ) {
        let mut jobs = Vec::new();
        self.list_jobs(n, levels, &mut jobs);
        run_jobs(jobs.len(), |i| {
            let mut state = start();
            self.walk_pairs(&mut state, warm, |p| match jobs[i] {
                Job::Within(n) => p.within_subtree(n),
                Job::Own(n) => p.own_run(n),
                Job::Between(a, b) => p.subtree_vs_subtree(a, b),
            });
            end(state);
        });
    }

    /// Appends the jobs of the pair walk of the subtree of `n`, split for
    /// `levels` more levels, to `jobs`, in depth-first order.
    fn list_jobs(&self, n: u32, levels: u8, jobs: &mut Vec<Job>) {
        let node = &self.ix().nodes[n as usize];
        if levels == 0 || node.is_leaf() {
            jobs.push(Job::Within(n));
            return;
        }
        let first = node.children;
        jobs.push(Job::Own(n));
        for q in 0..4 {
            self.list_jobs(first + q, levels - 1, jobs);
        }
        for i in 0..4 {
            for j in i + 1..4 {
                jobs.push(Job::Between(first + i, first + j));
            }
        }
    }
}

/// The counts of `par_update_all`'s first pass over whole chunks of slots,
/// judged prefix by prefix in slot order (see
/// [`complete`](Prefix::complete)).
struct Prefix {
    /// Per chunk, its count once a task has tested all of it.
    done: Vec<Option<super::update::Tally>>,
    /// The first chunk not yet in `total`.
    next: usize,
    /// The counts of chunks `..next`.
    total: super::update::Tally,
}

impl Prefix {
    /// Records the count of chunk `c`, tested whole, and judges every
    /// prefix of chunks this completes, in order: `true` when one of them
    /// says a rebuild of the tree of `len` items is cheaper than testing
    /// the rest. Every prefix is judged once, whatever order the chunks
    /// complete in, so the answer for the whole pass does not depend on
    /// the pool.
    fn complete(&mut self, c: usize, count: super::update::Tally, len: usize, pool: bool) -> bool {
        self.done[c] = Some(count);
        while let Some(&Some(count)) = self.done.get(self.next) {
            self.total.seen += count.seen;
            self.total.movers += count.movers;
            self.next += 1;
            if self.total.rebuild_early(len, pool) {
                return true;
            }
        }
        false
    }
}

/// One job of the parallel pair walk: the pairs it finds are disjoint from
/// every other job's, and together they are the walk's.
#[derive(Clone, Copy)]
enum Job {
    /// Every pair within the subtree of this node.
    Within(u32),
    /// Every pair between this node's own run and its subtree.
    Own(u32),
    /// Every pair between the subtrees of these two siblings.
    Between(u32, u32),
}

/// Whether [`par_sort_pairs`] sorts `pairs` pairs over `slots` slots:
/// from [`PAR_SORT_MIN`] pairs, where [`sort_pairs`](super::sort_pairs)
/// would sort them by counting (not by comparison, for few pairs among
/// many slots).
fn sort_splits(pairs: usize, slots: usize) -> bool {
    pairs >= PAR_SORT_MIN && pairs.saturating_mul(16) >= slots && pairs <= u32::MAX as usize
}

/// The fewest pairs [`QuadTree::par_pairs`] sorts on the pool.
const PAR_SORT_MIN: usize = 1 << 15;

/// Ranges of slots per thread of the pool that [`par_sort_pairs`] sorts
/// as jobs: a few more than threads, so that a thread that starts late,
/// or a range with more pairs than others, leaves the others work.
const SORT_RANGES: usize = 4;

/// [`sort_pairs`](super::sort_pairs) on rayon's pool, for pairs whose first
/// keys' indices are below `slots`: the same order. The slots are cut into
/// ranges of equal width. Each chunk of the pairs (a job of [`map_parts`])
/// counts its pairs of each range, then copies them into one vector per
/// range, in order; then each range (a job) counts the pairs of each of
/// its slots, from every chunk's vector in turn, moves them into its own
/// stretch of `pairs` in that order (a counting sort, stable as the
/// sequential one), and sorts each run of one first key by the second.
/// Every write goes to a vector or a stretch only one job holds.
fn par_sort_pairs(pairs: &mut [(Key, Key)], slots: usize) {
    let ranges = (rayon::current_num_threads() * SORT_RANGES).clamp(1, slots.max(1));
    let width = slots.div_ceil(ranges).max(1);
    let range = |p: &(Key, Key)| p.0.index() as usize / width;
    let size = pairs.len().div_ceil(ranges).max(1);
    let pieces: Vec<Vec<Vec<(Key, Key)>>> = map_parts(pairs.chunks(size).collect(), |_, chunk| {
        let mut counts = vec![0usize; ranges];
        for p in chunk {
            counts[range(p)] += 1;
        }
        let mut out: Vec<Vec<(Key, Key)>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        for p in chunk {
            out[range(p)].push(*p);
        }
        out
    });
    let mut stretches = Vec::with_capacity(ranges);
    let mut rest = pairs;
    for r in 0..ranges {
        let len = pieces.iter().map(|c| c[r].len()).sum();
        let (stretch, tail) = rest.split_at_mut(len);
        stretches.push(stretch);
        rest = tail;
    }
    debug_assert!(rest.is_empty(), "every pair has a range");
    map_parts(stretches, |r, out| {
        let first = r * width;
        let mut counts = vec![0u32; width + 1];
        let mine = || pieces.iter().flat_map(|c| &c[r]);
        for p in mine() {
            counts[p.0.index() as usize - first + 1] += 1;
        }
        let mut sum = 0;
        for c in &mut counts {
            sum += *c;
            *c = sum;
        }
        for p in mine() {
            let at = &mut counts[p.0.index() as usize - first];
            out[*at as usize] = *p;
            *at += 1;
        }
        for run in out.chunk_by_mut(|x, y| x.0.index() == y.0.index()) {
            if run.len() > 1 {
                run.sort_unstable_by_key(|p| p.1.index());
            }
        }
    });
}

/// Locks `m`, poisoned or not: what the mutexes of the parallel paths
/// guard is written whole under the lock (a job's result, a buffer
/// appended, a part taken), so a panic elsewhere cannot leave it
/// half-written.
fn lock<V>(m: &Mutex<V>) -> std::sync::MutexGuard<'_, V> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job(i, part)` for every part, each moved into one job of
/// [`run_jobs`], and returns what the jobs returned in the order of the
/// parts. A panic in a job reaches the caller, as with `run_jobs`.
pub(crate) fn map_parts<P: Send, R: Send>(
    parts: Vec<P>,
    job: impl Fn(usize, P) -> R + Sync,
) -> Vec<R> {
    // Each part is taken by one job only: the mutexes are never contended,
    // and hand the jobs, which share `&self`, their part by value.
    let parts: Vec<Mutex<Option<P>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let results: Vec<Mutex<Option<R>>> = parts.iter().map(|_| Mutex::new(None)).collect();
    run_jobs(parts.len(), |i| {
        let part = lock(&parts[i]).take().expect("each job runs once");
        let r = job(i, part);
        *lock(&results[i]) = Some(r);
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .expect("run_jobs runs every job or passes its panic on")
        })
        .collect()
}

/// Runs `job(c, chunk)` for every chunk of `items` of `size` elements (the
/// last one shorter), each as a job of [`map_parts`], and returns what the
/// jobs returned in the order of the chunks.
pub(crate) fn map_chunks<E: Send, R: Send>(
    items: &mut [E],
    size: usize,
    job: impl Fn(usize, &mut [E]) -> R + Sync,
) -> Vec<R> {
    map_parts(items.chunks_mut(size).collect(), job)
}

/// How long a keeper of [`wake_pool`] waits for a job before it leaves
/// its thread to rayon, which soon puts it to sleep.
const KEEP_AWAKE: std::time::Duration = std::time::Duration::from_millis(2);

/// Keeps the other threads of rayon's pool awake while it lives (see
/// [`wake_pool`]); dropping it lets them go.
#[must_use = "the pool is let go when this is dropped"]
pub(crate) struct Awake(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);

impl Drop for Awake {
    fn drop(&mut self) {
        if let Some(done) = &self.0 {
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            #[cfg(test)]
            tests::LIVE.with(|l| l.set(l.get() - 1));
        }
    }
}

/// Wakes the other threads of rayon's pool for one parallel call, and
/// keeps them awake until the [`Awake`] it returns is dropped: each runs a
/// task that takes the pool's jobs as they come ([`rayon::yield_now`]),
/// and leaves when the call is over or after [`KEEP_AWAKE`] without one.
/// Between looks it calls `std::thread::yield_now`, which lets the system
/// run another thread there, but the core shows busy while the call runs.
///
/// A call is several rounds of jobs ([`run_jobs`]) with a little work on
/// the calling thread between them. rayon puts a thread to sleep soon
/// after it finds no work, and on a shared 2-core virtual machine a
/// thread asleep took 0.7–4.2 ms to wake (median 2.3 ms), so each round
/// waited for a helper that came too late to help. Over 100k boxes, with
/// 16 ms of sleep before each frame (a game waiting for its next one),
/// `par_update_all` then `par_map_pairs_into` took 0.78–1.19× the time of
/// the calls on one thread; with the pool kept awake through each call,
/// 0.59–0.80× (ARCHITECTURE.md, *Queries and pairs*, *Parallel*).
///
/// The tasks borrow nothing, so the call need not wait for them. Like any
/// rayon job, a task may be taken by a pool thread that waits inside a
/// `join` or `scope` of other work, and that work then goes on once the
/// call is over (or the task has waited [`KEEP_AWAKE`]), as it would after
/// any long job the thread took. Nothing is woken on a pool of one thread,
/// nor when the caller is a thread of a pool: a task spawned there goes
/// to the caller's own queue, where the caller itself could take it while
/// it waits for its jobs.
pub(crate) fn wake_pool() -> Awake {
    // One task for each helper of `run_jobs`.
    let others = rayon::current_num_threads().saturating_sub(1);
    if others == 0 || rayon::current_thread_index().is_some() {
        return Awake(None);
    }
    keep_awake(others, KEEP_AWAKE)
}

/// Spawns `tasks` tasks on rayon's pool that take its jobs until the
/// [`Awake`] returned is dropped, or for `idle` without one.
fn keep_awake(tasks: usize, idle: std::time::Duration) -> Awake {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    #[cfg(test)]
    {
        tests::WOKEN.with(|w| w.set(w.get() + 1));
        tests::LIVE.with(|l| l.set(l.get() + 1));
    }
    let done = Arc::new(AtomicBool::new(false));
    for _ in 0..tasks {
        let done = Arc::clone(&done);
        rayon::spawn(move || {
            let mut since = None;
            while !done.load(Ordering::Relaxed) {
                if rayon::yield_now() == Some(rayon::Yield::Executed) {
                    since = None;
                } else if since.get_or_insert_with(std::time::Instant::now).elapsed() > idle {
                    return;
                } else {
                    std::thread::yield_now();
                }
            }
        });
    }
    Awake(Some(done))
}

/// Runs `job(i)` for every `i` in `0..jobs`, each once: the calling thread
/// and up to one helper task per other thread of rayon's pool take the
/// next job from a shared counter until none is left.
///
/// The calling thread works too, where `rayon::join` or `rayon::scope`
/// called from outside the pool hand everything to the pool and wait. A
/// pool thread that has gone to sleep can take a millisecond or more to
/// wake up on a busy 2-core machine, and then one thread did all of a
/// short parallel walk while the caller waited: a walk of 100k boxes took
/// longer on two threads than on one. Here the caller takes the jobs no
/// helper has taken yet; it still waits for each helper to start, but a
/// helper that starts late finds fewer jobs left, or none. With one job,
/// or no other thread in the pool, the caller runs them alone, without
/// a scope.
pub(crate) fn run_jobs(jobs: usize, job: impl Fn(usize) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    #[cfg(test)]
    tests::ROUNDS.with(|r| r.borrow_mut().push(tests::live_here()));
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= jobs {
                break;
            }
            job(i);
        }
    };
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(jobs.saturating_sub(1));
    if helpers == 0 {
        work();
        return;
    }
    rayon::in_place_scope(|s| {
        for _ in 0..helpers {
            s.spawn(|_| work());
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aabb, Config, QuadTree};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    std::thread_local! {
        /// Calls of [`keep_awake`] made on this thread: a call made on
        /// another thread, as by a test running beside, does not count.
        pub(super) static WOKEN: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// The [`Awake`] guards of [`keep_awake`] alive on this thread.
        pub(super) static LIVE: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
        /// [`LIVE`] at the start of each [`run_jobs`] (a round of jobs)
        /// on this thread.
        pub(super) static ROUNDS: core::cell::RefCell<Vec<usize>> =
            const { core::cell::RefCell::new(Vec::new()) };
    }

    /// The default config with every parallel call split, whatever the
    /// tree's size.
    fn splitting() -> Config {
        Config {
            par_min_items: 0,
            ..Config::default()
        }
    }

    /// [`WOKEN`] on this thread.
    fn woken_here() -> usize {
        WOKEN.with(core::cell::Cell::get)
    }

    /// [`LIVE`] on this thread.
    pub(super) fn live_here() -> usize {
        LIVE.with(core::cell::Cell::get)
    }

    /// What [`ROUNDS`] recorded on this thread during `call`.
    fn rounds_of(call: impl FnOnce()) -> Vec<usize> {
        ROUNDS.with(|r| r.borrow_mut().clear());
        call();
        ROUNDS.with(|r| r.take())
    }

    /// Waits up to 20 s for every task woken with `done` to leave: each
    /// holds a count of it, besides the `held` counts of the caller.
    /// `false` if one is still there.
    fn all_leave(done: &Arc<AtomicBool>, held: usize) -> bool {
        let start = Instant::now();
        while Arc::strong_count(done) > held {
            if start.elapsed() > Duration::from_secs(20) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Whether the global pool has more than one thread, so that this
    /// test thread's parallel calls wake it; a test that needs it says
    /// when it cannot run.
    fn several_threads(test: &str) -> bool {
        let several = rayon::current_num_threads() > 1;
        if !several {
            eprintln!("{test}: skipped, the global pool has one thread");
        }
        several
    }

    /// [`keep_awake`] on every thread of the global pool, from this test
    /// thread: the guard, the flag its tasks share, and how many there are.
    fn woken(idle: Duration) -> (Awake, Arc<AtomicBool>, usize) {
        let tasks = rayon::current_num_threads();
        let awake = keep_awake(tasks, idle);
        let done = Arc::clone(awake.0.as_ref().expect("keep_awake always has tasks"));
        (awake, done, tasks)
    }

    #[test]
    fn the_pools_threads_take_jobs_and_are_let_go_when_the_call_ends() {
        if !several_threads("the_pools_threads_take_jobs") {
            return;
        }
        // Tasks that would wait an hour for a job. They were queued before
        // the helpers of `run_jobs` below, and there is one for each
        // thread of the pool: a thread runs a helper only when a task
        // takes it, or once a task has left.
        let (awake, done, tasks) = woken(Duration::from_secs(3600));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let ran = AtomicUsize::new(0);
            run_jobs(64, |_| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
            let _ = tx.send(ran.into_inner());
        });
        let ran = rx.recv_timeout(Duration::from_secs(20));
        // No task has left while the call lasts: each holds its count,
        // besides the guard's and this test's.
        let stayed = Arc::strong_count(&done) == tasks + 2;
        drop(awake);
        assert_eq!(ran, Ok(64), "the jobs' helpers were not taken");
        assert!(stayed, "a task left before the call ended");
        assert!(all_leave(&done, 1), "a task kept its thread after the call");
    }

    #[test]
    fn the_pools_threads_leave_when_no_job_comes() {
        if !several_threads("the_pools_threads_leave_when_no_job_comes") {
            return;
        }
        let (awake, done, _) = woken(Duration::from_millis(1));
        // The test's count and the guard's.
        assert!(all_leave(&done, 2), "a task kept its thread with no job");
        drop(awake);
    }

    #[test]
    fn the_pool_is_woken_from_outside_it_only() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a thread pool");
        assert!(pool.install(|| wake_pool().0.is_none()));
        if several_threads("the_pool_is_woken_from_outside_it_only") {
            assert!(wake_pool().0.is_some());
        }
    }

    /// Each parallel call whose work splits wakes the pool, once; a
    /// `par_rebuild` that only adopts the index a question built, never.
    #[test]
    fn parallel_calls_wake_the_pool() {
        if !several_threads("parallel_calls_wake_the_pool") {
            return;
        }
        let config = splitting();
        let mut tree = QuadTree::with_config(Aabb::new([0.0, 0.0], [64.0, 64.0]), config);
        tree.insert_many((0..4096u32).map(|i| {
            let (x, y) = ((i % 64) as f32, (i / 64) as f32);
            (Aabb::new([x, y], [x + 1.5, y + 1.5]), i)
        }));
        let mut wakes = |what: &str, call: &mut dyn FnMut(&mut QuadTree<u32>)| {
            let before = woken_here();
            call(&mut tree);
            assert_eq!(woken_here(), before + 1, "{what}");
        };
        wakes("par_update_all", &mut |t| {
            t.par_update_all(|_, _, b| b.translate([0.25, 0.0]));
        });
        wakes("par_map_pairs_into", &mut |t| {
            t.par_map_pairs_into(&mut Vec::new(), |a, b| (a, b));
        });
        wakes("par_pairs_into", &mut |t| t.par_pairs_into(&mut Vec::new()));
        wakes("par_for_each_pair", &mut |t| t.par_for_each_pair(|_, _| {}));
        wakes("par_rebuild", &mut |t| t.par_rebuild());
        // A tree of waiting inserts whose index a question built adopts
        // it: nothing to split, nothing woken.
        let mut asked = QuadTree::with_config(Aabb::new([0.0, 0.0], [64.0, 64.0]), config);
        for i in 0..4096u32 {
            asked.insert(Aabb::from_point([(i % 64) as f32, (i / 64) as f32]), i);
        }
        assert_eq!(asked.query_point([0.0, 0.0]).count(), 1);
        let before = woken_here();
        asked.par_rebuild();
        assert_eq!(woken_here(), before, "par_rebuild adopting a built index");
    }

    /// The sort on the pool leaves pairs in the order of the sequential
    /// sort: pairs over few and many slots (fewer slots than ranges, and
    /// ranges with no pair), many pairs on a few first slots (a large box
    /// meeting many), on the last slot's range only, and in order already
    /// or reversed; on the global pool, whatever its size.
    #[test]
    fn the_sort_on_the_pool_is_the_sequential_sort() {
        use crate::tree::pairs::{random_pairs, test_key as key};
        let mut rng = crate::scenario::Rng::new(0x50_27ED);
        for (slots, count, crowd) in [
            (2, 1, 0),
            (3, 3, 0),
            (7, 21, 0),
            (100, 4000, 0),
            (5000, 40_000, 0),
            (5000, 40_000, 4),
            (100_000, 60_000, 0),
            (100_000, 60_000, 16),
        ] {
            let pairs = random_pairs(|n| rng.below(n), slots, count, crowd, 2);
            let mut want = pairs.clone();
            want.sort_unstable();
            for (what, mut got) in [
                ("shuffled", pairs.clone()),
                ("sorted", want.clone()),
                ("reversed", want.iter().rev().copied().collect()),
            ] {
                par_sort_pairs(&mut got, slots as usize);
                assert_eq!(got, want, "{what}: {count} pairs over {slots} slots");
            }
            // A single pair, of the last two slots.
            let mut last = vec![(key(slots - 2), key(slots - 1))];
            par_sort_pairs(&mut last, slots as usize);
            assert_eq!(last, vec![(key(slots - 2), key(slots - 1))]);
        }
    }

    /// `par_pairs` sorts on the pool from `PAR_SORT_MIN` pairs (where the
    /// pool has several threads), and lists what `pairs` lists.
    #[test]
    fn parallel_pairs_sorted_on_the_pool_are_the_pairs() {
        let config = splitting();
        let mut tree = QuadTree::with_config(Aabb::new([0.0, 0.0], [100.0, 100.0]), config);
        // Shuffled slots: the walk meets them out of order.
        tree.insert_many((0..6000u32).map(|i| {
            let j = i.wrapping_mul(2_654_435_761) % 6000;
            let (x, y) = ((j % 80) as f32 * 1.25, (j / 80) as f32 * 1.25);
            (Aabb::new([x, y], [x + 4.0, y + 4.0]), i)
        }));
        let pairs = tree.pairs();
        assert!(
            sort_splits(pairs.len(), tree.slab.slots.len()),
            "{} pairs",
            pairs.len()
        );
        let before = woken_here();
        assert_eq!(tree.par_pairs(), pairs);
        // On a pool of several threads, the sort is split too: a wake for
        // the walk, and one for the sort.
        if several_threads("parallel_pairs_sorted_on_the_pool_are_the_pairs") {
            assert_eq!(woken_here() - before, 2, "the walk's wake and the sort's");
        }
    }

    /// `par_insert_many` wakes the pool for a build that splits, once the
    /// caller's items are in, and keeps it awake through every round of
    /// the build's jobs: into an empty tree (which takes in bare boxes) and
    /// into one that holds items. Into a tree of inserts waiting to be
    /// placed, it wakes the pool to place them first, for that build alone,
    /// and again for the batch's build; not when a question built their
    /// index already. A batch too small to split wakes nothing, nor does
    /// placing waiting inserts too few to split.
    #[test]
    fn a_parallel_bulk_insert_wakes_the_pool_once_the_items_are_in() {
        if !several_threads("a_parallel_bulk_insert_wakes_the_pool_once_the_items_are_in") {
            return;
        }
        let item = |i: u32| {
            let (x, y) = ((i % 64) as f32, (i / 64) as f32);
            (Aabb::new([x, y], [x + 1.5, y + 1.5]), i)
        };
        let world = Aabb::new([0.0, 0.0], [64.0, 64.0]);
        let waiting = |config: Config, asked: bool| {
            let mut tree = QuadTree::with_config(world, config);
            for i in 0..2048 {
                let (b, v) = item(i);
                tree.insert(b, v);
            }
            if asked {
                // A question builds the index of the waiting inserts.
                assert_eq!(tree.query_point([0.5, 0.5]).count(), 1);
            }
            tree
        };
        let mut full = QuadTree::with_config(world, splitting());
        full.insert_many((0..2048).map(item));
        // The tree, the wakes before the items are taken in and in all,
        // and whether the build's rounds run with the pool awake.
        let cases = [
            (
                "empty",
                QuadTree::with_config(world, splitting()),
                0,
                1,
                true,
            ),
            ("full", full, 0, 1, true),
            ("waiting", waiting(splitting(), false), 1, 2, true),
            ("asked", waiting(splitting(), true), 0, 1, true),
            ("small", QuadTree::new(world), 0, 0, false),
            (
                "small waiting",
                waiting(Config::default(), false),
                0,
                0,
                false,
            ),
        ];
        for (what, mut tree, early, wakes, awake) in cases {
            let before = woken_here();
            // The wakes, and the guards alive, while the items are taken in.
            let mut seen = Vec::new();
            let first = tree.len() as u32;
            let items = (first..first + 2048).map(|i| {
                seen.push((woken_here() - before, live_here()));
                item(i)
            });
            let mut keys = Vec::new();
            let rounds = rounds_of(|| keys = tree.par_insert_many(items));
            assert_eq!(keys.len(), 2048, "{what}");
            assert!(
                seen.iter().all(|&s| s == (early, 0)),
                "{what}: woken {seen:?} as the items were taken in"
            );
            assert_eq!(woken_here() - before, wakes, "{what}: wakes");
            assert_eq!(live_here(), 0, "{what}: a guard left alive");
            if awake {
                assert!(!rounds.is_empty(), "{what}: no round of jobs");
                assert!(
                    rounds.iter().all(|&live| live == 1),
                    "{what}: the guards alive at each round: {rounds:?}"
                );
            }
            assert_eq!(tree.len(), first as usize + 2048, "{what}");
            tree.validate().expect("a valid tree");
        }
    }
}
