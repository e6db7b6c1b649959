//! Every intersecting pair of items, each exactly once.

use super::{Entry, Ix, QuadTree};
use crate::geom::Aabb;
use crate::key::Key;
use crate::lanes::{self, LANES};
use crate::world::Filter;

/// The layers and masks of a node's items, or-ed together: `own` over the
/// node's own run, `sub` over its whole subtree. Two groups of items can
/// hold an interacting pair only if their unions interact
/// ([`Filter::interacts`] on the unions is implied by it on any two
/// members), so the pair walk skips whatever fails that test.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeFilter {
    pub(crate) own: Filter,
    pub(crate) sub: Filter,
}

/// Where the pair walk hands the pairs it finds: one pair at a time
/// ([`pair`](Emit::pair)), or the pairs a sweep has held, at once
/// ([`places`](Emit::places), [`within`](Emit::within)). Any closure of two
/// entries is an `Emit` that takes the held pairs one at a time;
/// [`IntoVec`] appends them to a vector with one `extend`.
pub(crate) trait Emit {
    /// The pair of `a` and `b`.
    fn pair(&mut self, a: &Entry, b: &Entry);

    /// The pairs of `a[first[k]]` with `b[second[k]]`, in order.
    #[inline(always)]
    fn places(&mut self, a: &[Entry], b: &[Entry], first: &[u8], second: &[u8]) {
        for (&i, &j) in first.iter().zip(second) {
            self.pair(&a[usize::from(i)], &b[usize::from(j)]);
        }
    }

    /// The pairs of `run[i]` with `run[j]` for each `(i, j)` of `ij`, in
    /// order.
    #[inline(always)]
    fn within(&mut self, run: &[Entry], ij: &[(u32, u32)]) {
        for &(i, j) in ij {
            self.pair(&run[i as usize], &run[j as usize]);
        }
    }
}

impl<F: FnMut(&Entry, &Entry) + ?Sized> Emit for F {
    #[inline(always)]
    fn pair(&mut self, a: &Entry, b: &Entry) {
        self(a, b);
    }
}

/// What the pair walk counts as it goes. [`for_each_pair`](QuadTree::for_each_pair)
/// walks with [`NoTally`], whose methods do nothing and compile away, and
/// [`pair_stats`](QuadTree::pair_stats) with [`PairStats`].
pub(crate) trait Tally {
    /// Two items' boxes were compared.
    #[inline(always)]
    fn box_test(&mut self) {
        self.box_tests(1);
    }
    /// Two items' boxes were compared, `n` times.
    fn box_tests(&mut self, n: u64);
    /// A box or a node's bounds were compared with a node's bounds.
    #[inline(always)]
    fn bound_test(&mut self) {
        self.bound_tests(1);
    }
    /// A box or a node's bounds were compared with a node's bounds, `n`
    /// times.
    fn bound_tests(&mut self, n: u64);
    /// A pair was reported.
    #[inline(always)]
    fn pair(&mut self) {
        self.pairs(1);
    }
    /// `n` pairs were reported.
    fn pairs(&mut self, n: u64);
}

/// The tally of the plain walk: counts nothing.
pub(crate) struct NoTally;

impl Tally for NoTally {
    #[inline(always)]
    fn box_tests(&mut self, _: u64) {}
    #[inline(always)]
    fn bound_tests(&mut self, _: u64) {}
    #[inline(always)]
    fn pairs(&mut self, _: u64) {}
}

/// What [`QuadTree::pair_stats`] counts: the work of one walk of
/// [`for_each_pair`](QuadTree::for_each_pair).
///
/// The walk finds pairs within a node by sweeping its run of items (kept
/// sorted by `min.x`), and between two nodes by sweeping their runs
/// together. Each step of a sweep compares one item's box with another's:
/// that is a *box test*, whether it finds the boxes apart, finds them
/// touching, or ends the sweep because the second box starts right of the
/// first one's end. So for a tree of one node, `box_tests` is exactly what
/// a plain sort-and-sweep over all the boxes makes. The sweep within a run
/// compares four boxes at a time, so it may compare up to three more per
/// item past the end of its sweep; those are not counted, and `box_tests`
/// stays the sweep's count whatever the block size. *Bound tests* are the
/// comparisons with a node's bounds that decide which nodes and which
/// items of a run meet at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PairStats {
    /// Pairs of items whose boxes intersect: what `for_each_pair` reports.
    pub pairs: u64,
    /// Comparisons of one item's box with another item's box.
    pub box_tests: u64,
    /// Comparisons of an item's box or a node's bounds with a node's
    /// bounds (pruning whole subtrees, or items of a run).
    pub bound_tests: u64,
}

impl Tally for PairStats {
    #[inline(always)]
    fn box_tests(&mut self, n: u64) {
        self.box_tests += n;
    }
    #[inline(always)]
    fn bound_tests(&mut self, n: u64) {
        self.bound_tests += n;
    }
    #[inline(always)]
    fn pairs(&mut self, n: u64) {
        self.pairs += n;
    }
}

/// `true` when the y intervals of two boxes overlap (closed). Both
/// comparisons are made, so that a caller can use the answer without a
/// branch.
#[inline(always)]
fn overlap_y(a: &Aabb, b: &Aabb) -> bool {
    (a.min.y <= b.max.y) & (b.min.y <= a.max.y)
}

/// How many pairs [`sweep_within`] and [`Held`] can hold: they are emitted
/// once more than `PENDING - LANES` are held, before a block that could
/// overflow.
pub(crate) const PENDING: usize = 64;

/// Reports every intersecting pair within one run sorted by `min.x`: each
/// entry meets the entries after it until one starts right of its end. The
/// walk sweeps a run of at most [`SHORT`] entries with [`sweep_short`],
/// and a longer one with this.
///
/// Within a node, whether two boxes that overlap in x also overlap in y
/// is about as often true as not, so a branch on it mispredicts often;
/// and where a run's sweep stops (the first entry right of the box's end)
/// varies from entry to entry, so a branch on that mispredicts once per
/// entry. The sweep instead tests [`LANES`] candidates at a time, each
/// test whole (in the run, in reach in x, overlapping in y) and without a
/// branch, writes every candidate into a small buffer and moves past only
/// those that intersect, and goes on to the next block only while the
/// last candidate was still in reach; then it emits what the buffer
/// holds (ARCHITECTURE.md gives the measured gains). A block that lies
/// wholly inside the run skips the test of each candidate's place and its
/// clamp: at 300k boxes the walk ran 0.93× the instructions in uniform
/// scenes, 0.96× in clustered and 0.98× in mixed ones (callgrind). Between
/// two nodes' runs, most candidates intersect, the branch is well
/// predicted, and [`sweep_between`] branches. A run of fewer than two
/// entries has no pair, and returns before the buffer is set up.
#[inline]
fn sweep_within<E: Emit + ?Sized, C: Tally>(run: &[Entry], emit: &mut E, tally: &mut C) {
    let n = run.len();
    if n < 2 {
        return;
    }
    let mut ij = [(0u32, 0u32); PENDING];
    let mut k = 0;
    let flush = |ij: &[(u32, u32)], emit: &mut E, tally: &mut C| {
        tally.pairs(ij.len() as u64);
        emit.within(run, ij);
    };
    for (i, a) in run.iter().enumerate() {
        let a = &a.aabb;
        let mut j = i + 1;
        while j < n {
            if k > PENDING - LANES {
                flush(&ij[..k], emit, tally);
                k = 0;
            }
            // Sorted by `min.x`: once a candidate starts right of `a`'s
            // end, so does every later one, and none of them hits.
            let mut reach = 0;
            let mut out = false;
            // Candidate `jj`, `b`, which counts only when `inside` the run
            // (a lane of the last block past the run's end reads its last
            // entry).
            let mut lane = |jj: usize, b: &Aabb, inside: bool| {
                let in_x = b.min.x <= a.max.x;
                ij[k] = (i as u32, jj as u32);
                k += usize::from(inside & in_x & overlap_y(a, b));
                reach += usize::from(inside & in_x);
                out |= inside & !in_x;
            };
            if let Some(block) = run.get(j..j + LANES) {
                // A whole block: no candidate past the run's end.
                for (t, b) in block.iter().enumerate() {
                    lane(j + t, &b.aabb, true);
                }
            } else {
                for jj in j..j + LANES {
                    lane(jj, &run[jj.min(n - 1)].aabb, jj < n);
                }
            }
            // What a sweep branching on each candidate would have
            // compared: those in reach, and the first one out of it.
            tally.box_tests((reach + usize::from(out)) as u64);
            if reach < LANES {
                break;
            }
            j += LANES;
        }
    }
    flush(&ij[..k], emit, tally);
}

/// The longest run [`sweep_short`] takes: [`FILTER`], the default
/// [`Config::max_items`](crate::Config::max_items), so that a leaf's run
/// mostly fits. Its places fit in a byte.
const SHORT: usize = FILTER;

const _: () = assert!(SHORT + LANES <= 256);

/// Entries' coordinates as [`sweep_short`] and [`cross_columns`] read
/// them, an array a coordinate, with [`LANES`] places past the longest
/// run for a last block that reaches past its end.
pub(crate) struct Columns {
    min_x: [f32; SHORT + LANES],
    min_y: [f32; SHORT + LANES],
    max_x: [f32; SHORT + LANES],
    max_y: [f32; SHORT + LANES],
}

impl Columns {
    fn new() -> Columns {
        Columns {
            min_x: [f32::INFINITY; SHORT + LANES],
            min_y: [0.0; SHORT + LANES],
            max_x: [0.0; SHORT + LANES],
            max_y: [0.0; SHORT + LANES],
        }
    }

    /// Copies the coordinates of `boxes` (at most [`SHORT`]: more panics)
    /// to the front of the columns, and sets the [`LANES`] places after
    /// them to candidates that meet nothing: no box of the tree (finite)
    /// ends at or right of an infinite start. Returns how many boxes there
    /// were.
    #[inline(always)]
    fn fill<'e>(&mut self, boxes: impl Iterator<Item = &'e Aabb>) -> usize {
        let mut n = 0;
        for (t, b) in boxes.enumerate() {
            self.min_x[t] = b.min.x;
            self.min_y[t] = b.min.y;
            self.max_x[t] = b.max.x;
            self.max_y[t] = b.max.y;
            n = t + 1;
        }
        self.min_x[n..n + LANES].fill(f32::INFINITY);
        n
    }

    /// The coordinates of `j..j + LANES` in `column`.
    #[inline(always)]
    fn block(column: &[f32; SHORT + LANES], j: usize) -> &[f32; LANES] {
        column[j..j + LANES]
            .try_into()
            .expect("a block is LANES long")
    }
}

/// The pairs a sweep of [`sweep_short`] or [`cross_columns`] holds before
/// it hands them on, as places in its runs (bytes): `first[..k]` with
/// `second[..k]`.
struct Held {
    first: [u8; PENDING],
    second: [u8; PENDING],
    k: usize,
}

impl Held {
    fn new() -> Held {
        Held {
            first: [0; PENDING],
            second: [0; PENDING],
            k: 0,
        }
    }

    /// Whether the next block may not fit.
    #[inline(always)]
    fn full(&self) -> bool {
        self.k > PENDING - LANES
    }

    /// Holds the pairs of place `i` with each candidate of the block from
    /// place `j` that `hit` has (bit `t`: place `j + t`), in order. All
    /// [`LANES`] places are stored, at the end of what is held, and only as
    /// many as hit are kept.
    ///
    /// The count of hits is read from a 64-bit constant that holds
    /// [`HIT_COUNT`] four bits a mask, shifted, not loaded from the table:
    /// at 100k boxes the walk took 0.96× the time in mixed scenes and
    /// 0.97–1.0× in clustered ones (the same in uniform ones), though it
    /// runs a few more instructions.
    #[inline(always)]
    fn push(&mut self, i: usize, j: usize, hit: usize) {
        let k = self.k;
        // Places below 256: adding `j` to each byte carries into none.
        let places = HITS[hit] + (j as u32) * 0x0101_0101;
        self.second[k..k + LANES].copy_from_slice(&places.to_le_bytes());
        self.first[k..k + LANES].copy_from_slice(&((i as u32) * 0x0101_0101).to_le_bytes());
        self.k = k + hit_count(hit);
    }

    /// Hands each pair held on, as entries of `a` and `b`, and empties.
    #[inline(always)]
    fn flush<E: Emit + ?Sized, C: Tally>(
        &mut self,
        a: &[Entry],
        b: &[Entry],
        emit: &mut E,
        tally: &mut C,
    ) {
        tally.pairs(self.k as u64);
        emit.places(a, b, &self.first[..self.k], &self.second[..self.k]);
        self.k = 0;
    }
}

/// For each mask of the candidates of a block that hit (bit `t`: the
/// block's `t`-th), their places in the block, first to last, one a byte
/// from the low byte; the bytes after the last hit hold `LANES - 1`. With
/// the block's first place added to every byte, the word holds the places
/// in the run of the hits, and stored whole, they land in order at the end
/// of what is held, where only as many as hit are kept.
const HITS: [u32; 16] = {
    let mut table = [0u32; 16];
    let mut m = 0;
    while m < 16 {
        let mut word = 0u32;
        let mut at = 0;
        let mut t = 0;
        while t < LANES {
            if m & (1 << t) != 0 {
                word |= (t as u32) << (8 * at);
                at += 1;
            }
            t += 1;
        }
        while at < LANES {
            word |= ((LANES - 1) as u32) << (8 * at);
            at += 1;
        }
        table[m] = word;
        m += 1;
    }
    table
};

/// How many candidates each mask of [`HITS`] has (`count_ones` is no
/// single instruction in the x86-64 baseline).
const HIT_COUNT: [u8; 16] = {
    let mut table = [0u8; 16];
    let mut m = 0;
    while m < 16 {
        table[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    table
};

/// [`HIT_COUNT`], four bits a mask (mask `m` at bits `4m..4m + 4`), for
/// [`hit_count`].
const HIT_COUNTS: u64 = {
    let mut word = 0u64;
    let mut m = 0;
    while m < 16 {
        word |= (HIT_COUNT[m] as u64) << (4 * m);
        m += 1;
    }
    word
};

/// How many candidates the mask `hit` (below 16) has, read from
/// [`HIT_COUNTS`] by a shift: [`Held::push`]'s count.
#[inline(always)]
const fn hit_count(hit: usize) -> usize {
    ((HIT_COUNTS >> (4 * hit)) & 0xF) as usize
}

/// [`sweep_within`] of a run of at most [`SHORT`] entries: its
/// coordinates are first copied into `cols`, so that a block of
/// [`LANES`] candidates is read with one load a coordinate and tested at
/// once ([`lanes::sweep_masks`]), and each block's hits are kept by one
/// store of their places (a byte each, [`HITS`]). The pairs are the same,
/// met in the same order, and `tally` counts the same tests.
///
/// The sweep over entries made each candidate's three tests apart and
/// stored a pair for each, in a chain: where that pair went depended on
/// whether the last candidate hit (ARCHITECTURE.md, *Queries and pairs*,
/// gives the measured gain).
#[inline]
fn sweep_short<E: Emit + ?Sized, C: Tally>(
    run: &[Entry],
    cols: &mut Columns,
    emit: &mut E,
    tally: &mut C,
) {
    let n = run.len();
    // Once a run: every block below starts before `n`.
    assert!(n <= SHORT, "a short run");
    if n < 2 {
        return;
    }
    cols.fill(run.iter().map(|e| &e.aabb));
    let mut held = Held::new();
    for (i, a) in run.iter().enumerate() {
        let a = &a.aabb;
        let mut j = i + 1;
        while j < n {
            if held.full() {
                held.flush(run, run, emit, tally);
            }
            let (near, hit) = lanes::sweep_masks(
                Columns::block(&cols.min_x, j),
                Columns::block(&cols.min_y, j),
                Columns::block(&cols.max_y, j),
                a,
            );
            held.push(i, j, hit);
            // Sorted by `min.x`: the candidates in reach come first, and
            // once one starts right of `a`'s end, so does every later one.
            let reach = (!near).trailing_zeros() as usize;
            let inside = (n - j).min(LANES);
            // What a sweep branching on each candidate would have
            // compared: those in reach, and the first one out of it.
            tally.box_tests((reach + usize::from(reach < inside)) as u64);
            if reach < LANES {
                break;
            }
            j += LANES;
        }
    }
    held.flush(run, run, emit, tally);
}

/// Every intersecting pair of an entry of `a` with one of `b`, both at
/// most [`FILTER`] long (runs as [`filter_at`] or [`filter`] leave them),
/// over `b`'s coordinates in `cols` (as [`Columns::fill`] left them): each
/// entry of `a` is tested against a block of [`LANES`] entries of `b` at
/// once ([`lanes::touch_mask`]), and each block's hits are held by one
/// store of their places ([`Held::push`]), with no branch on the outcome.
/// Between two filtered runs most of the tests hit and the rest are a coin
/// toss, so the merge sweep's branches (which entry comes first, whether it
/// still overlaps in `x` and in `y`) mispredicted far more often than a
/// few extra tests cost (ARCHITECTURE.md, *Queries and pairs*). The pairs,
/// their order and what `tally` counts are those of `cross`, which tested
/// one pair at a time.
#[inline]
fn cross_columns<E: Emit + ?Sized, C: Tally>(
    a: &[Entry],
    b: &[Entry],
    cols: &Columns,
    emit: &mut E,
    tally: &mut C,
) {
    // Once a call: every block below starts before `b.len()`.
    assert!(a.len() <= FILTER && b.len() <= FILTER, "filtered runs");
    let mut held = Held::new();
    for (i, x) in a.iter().enumerate() {
        tally.box_tests(b.len() as u64);
        let mut j = 0;
        while j < b.len() {
            if held.full() {
                held.flush(a, b, emit, tally);
            }
            let hit = lanes::touch_mask(
                Columns::block(&cols.min_x, j),
                Columns::block(&cols.min_y, j),
                Columns::block(&cols.max_x, j),
                Columns::block(&cols.max_y, j),
                &x.aabb,
            );
            held.push(i, j, hit);
            j += LANES;
        }
    }
    held.flush(a, b, emit, tally);
}

/// Reports every intersecting pair with one entry from each of two runs
/// sorted by `min.x`, merging them like sort-and-sweep: whichever entry
/// starts first meets the other run's entries that start before it ends.
/// Each pair is met once, from the entry that starts first (ties: `a`'s).
#[inline]
fn sweep_between<E: Emit + ?Sized, C: Tally>(
    a: &[Entry],
    b: &[Entry],
    emit: &mut E,
    tally: &mut C,
) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].aabb.min.x <= b[j].aabb.min.x {
            let x = &a[i];
            for y in &b[j..] {
                tally.box_test();
                if y.aabb.min.x > x.aabb.max.x {
                    break;
                }
                if overlap_y(&x.aabb, &y.aabb) {
                    tally.pair();
                    emit.pair(x, y);
                }
            }
            i += 1;
        } else {
            let y = &b[j];
            for x in &a[i..] {
                tally.box_test();
                if x.aabb.min.x > y.aabb.max.x {
                    break;
                }
                if overlap_y(&x.aabb, &y.aabb) {
                    tally.pair();
                    emit.pair(x, y);
                }
            }
            j += 1;
        }
    }
}

/// How many entries of a run [`filter`] and [`filter_at`] keep on the
/// stack: the default [`Config::max_items`](crate::Config::max_items)
/// (nothing ties the two; a leaf can hold more, its items that fit no
/// child besides), so that two leaves' runs seldom overflow it into the
/// branchy [`sweep_between`]. With leaves of 64 items and 32 kept, the
/// walk over 1M drifting boxes of mixed sizes took 1.13× the time of
/// leaves of 32; with 64 kept, 0.89×. The walk between two trees narrows
/// a run of up to as many down the other tree as a part
/// (`part_vs_subtree`): with leaves of 64 and parts of at most 32, a leaf
/// of movers walked every tile run under its cell again (ARCHITECTURE.md,
/// *Queries and pairs*).
pub(crate) const FILTER: usize = 64;

// The pair walk's hit lists hold places in a filtered run as `u8`.
const _: () = assert!(FILTER <= 256);

/// The entries of `run` (sorted) that meet `area`, copied in order into
/// `buf`; `None` when more than [`FILTER`] do. For the walk between two
/// trees.
///
/// The scan stops at the first entry that starts right of `area`, as in
/// [`filter_at`]. Between two trees (say a large static map and a few
/// movers), most entries of a run miss the other tree's node, so a branch
/// on the test is well predicted: the branch-free copy that the walk
/// within one tree uses made `for_each_pair_with` up to 40% slower.
#[inline]
fn filter<'a, C: Tally>(
    run: &[Entry],
    area: &Aabb,
    buf: &'a mut [Entry; FILTER + 1],
    tally: &mut C,
) -> Option<&'a [Entry]> {
    let mut k = 0;
    for e in run {
        tally.bound_test();
        if e.aabb.min.x > area.max.x {
            break;
        }
        if e.aabb.intersects(area) {
            buf[k] = *e;
            k += 1;
        }
        if k > FILTER {
            return None;
        }
    }
    Some(&buf[..k])
}

/// The pair finder's walk: every pair of items in a subtree, as the pairs
/// within each node, between a node's run and the subtrees below it, and
/// between sibling subtrees whose loose bounds meet. Recursion depth is
/// bounded by `max_depth`; every pair is met in exactly one place.
pub(crate) struct PairFinder<'t, E: ?Sized, C = NoTally> {
    /// The nodes and entries walked.
    ix: Ix<'t>,
    emit: &'t mut E,
    /// What the walk counts ([`NoTally`]: nothing).
    tally: C,
    near_a: [Entry; FILTER + 1],
    near_b: [Entry; FILTER + 1],
    /// The places [`filter_at`] keeps in each run of [`runs`](Self::runs).
    /// Kept here, set up once a walk: as arrays of `runs`, each call began
    /// by zeroing both (then 520 bytes, a call to `memset`), and at 100k
    /// drifting boxes those calls took 3–4% of the walk (`perf`).
    at_a: [u32; FILTER + LANES],
    at_b: [u32; FILTER + LANES],
    /// The columns [`sweep_short`] copies a run into, and [`runs`](Self::runs)
    /// the entries of `b`'s run it kept.
    cols: Columns,
    /// Per node, the layer unions of its items, when the walk filters by
    /// layer; empty when it does not.
    unions: &'t [NodeFilter],
    /// Called with each node's run before the walk pairs its items, when
    /// set (see [`PairFinder::warming`]).
    warm: Option<&'t Warm<'t>>,
}

/// What [`PairFinder::warming`] calls with a node's run.
pub(crate) type Warm<'w> = dyn Fn(&[Entry]) + 'w;

impl<'t, E: Emit + ?Sized> PairFinder<'t, E> {
    pub(crate) fn new<T>(tree: &'t QuadTree<T>, emit: &'t mut E) -> Self {
        PairFinder::counting(tree, emit, NoTally)
    }

    /// A walk that skips every run and subtree whose layer union cannot
    /// interact with the other side's: `unions` has one entry per node.
    pub(crate) fn filtered<T>(
        tree: &'t QuadTree<T>,
        emit: &'t mut E,
        unions: &'t [NodeFilter],
    ) -> Self {
        debug_assert_eq!(unions.len(), tree.ix().nodes.len());
        PairFinder {
            unions,
            ..PairFinder::new(tree, emit)
        }
    }
}

impl<'t, E: Emit + ?Sized, C: Tally> PairFinder<'t, E, C> {
    /// A walk that counts its work in `tally`.
    pub(crate) fn counting<T>(tree: &'t QuadTree<T>, emit: &'t mut E, tally: C) -> Self {
        PairFinder {
            ix: tree.ix(),
            emit,
            tally,
            near_a: [Entry::VACANT; FILTER + 1],
            near_b: [Entry::VACANT; FILTER + 1],
            at_a: [0; FILTER + LANES],
            at_b: [0; FILTER + LANES],
            cols: Columns::new(),
            unions: &[],
            warm: None,
        }
    }

    /// This walk, calling `warm` with each node's run before it pairs the
    /// run's items. The walks that hand each pair to the caller's closure
    /// prefetch the items' slots there (`QuadTree::walk_pairs`), since the
    /// closure most often reads them (`tree[a]`): in the tutorials' loop
    /// at 1M boxes, the walk with two `get`s per pair took 0.71× the time
    /// in uniform scenes and 0.86× in clustered ones, and a walk reading
    /// nothing 1.07× (see ARCHITECTURE, *Queries and pairs*). A run is
    /// warmed when the walk pairs its node's own items (`own_run`), which
    /// in `within_subtree` comes after the node's descendants.
    pub(crate) fn warming(self, warm: &'t Warm<'t>) -> Self {
        PairFinder {
            warm: Some(warm),
            ..self
        }
    }

    /// `false` when no item of node `a`'s own run (`a_own`) or subtree
    /// can interact with one of `b`'s run (`b_own`) or subtree.
    #[inline(always)]
    fn may_interact(&self, a: u32, a_own: bool, b: u32, b_own: bool) -> bool {
        if self.unions.is_empty() {
            return true;
        }
        let pick = |n: u32, own: bool| {
            let u = &self.unions[n as usize];
            if own { u.own } else { u.sub }
        };
        pick(a, a_own).interacts(pick(b, b_own))
    }

    /// Every pair with an item in node `n`'s own run and the other in its
    /// run or below it.
    pub(crate) fn own_run(&mut self, n: u32) {
        let ix = self.ix;
        let node = &ix.hot[n as usize];
        if let Some(warm) = self.warm {
            warm(ix.run(n));
        }
        if self.may_interact(n, true, n, true) {
            let run = ix.run(n);
            if run.len() <= SHORT {
                sweep_short(run, &mut self.cols, self.emit, &mut self.tally);
            } else {
                sweep_within(run, self.emit, &mut self.tally);
            }
        }
        if node.len > 0 && !node.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree(n, node.children + q);
            }
        }
    }

    /// Every pair with both items in the subtree of `n`: those within each
    /// child's subtree, then those between sibling subtrees, then those of
    /// `n`'s own run. The own run comes last so that the items below it
    /// were met just before, and their slots, which a walk that
    /// [warms](PairFinder::warming) them has prefetched, are still in cache
    /// when the closure reads them again: a node's run mostly holds boxes
    /// too large for its children, which meet many items below. At 1M
    /// boxes of mixed sizes, that took the walk with two `get`s per pair
    /// from 1.06× to 0.88× the time of the walk before warming (own run
    /// first).
    pub(crate) fn within_subtree(&mut self, n: u32) {
        let ix = self.ix;
        let node = &ix.hot[n as usize];
        if !self.may_interact(n, false, n, false) {
            return;
        }
        if node.is_leaf() {
            self.own_run(n);
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
        self.own_run(n);
    }

    /// Every pair of an item in node `a`'s own run with an item in the
    /// subtree of `b` (which is not `a`'s ancestor).
    fn run_vs_subtree(&mut self, a: u32, b: u32) {
        let ix = self.ix;
        let nb = &ix.hot[b as usize];
        let ta = ix.tight(a);
        self.tally.bound_test();
        if !nb.sub.intersects(&ta) || !self.may_interact(a, true, b, false) {
            return;
        }
        if nb.len > 0
            && {
                self.tally.bound_test();
                ix.tight(b).intersects(&ta)
            }
            && self.may_interact(a, true, b, true)
        {
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
    #[inline]
    pub(crate) fn subtree_vs_subtree(&mut self, a: u32, b: u32) {
        let ix = self.ix;
        let (na, nb) = (&ix.hot[a as usize], &ix.hot[b as usize]);
        self.tally.bound_test();
        if !na.sub.intersects(&nb.sub) {
            return;
        }
        self.subtree_vs_subtree_met(a, b);
    }

    /// [`subtree_vs_subtree`](PairFinder::subtree_vs_subtree) of two
    /// subtrees whose bounds meet.
    fn subtree_vs_subtree_met(&mut self, a: u32, b: u32) {
        let ix = self.ix;
        let (na, nb) = (&ix.hot[a as usize], &ix.hot[b as usize]);
        if !self.may_interact(a, false, b, false) {
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
            // Only a child that reaches the other subtree's bounds can meet
            // one of its children (a child's bounds lie inside its
            // parent's): eight tests pick them, and only the pairs of those
            // are tested, here, before a call. Next to each other, two
            // subtrees mostly meet along one side, where two children of
            // each lie: four pair tests instead of sixteen calls. At 300k
            // uniform boxes, the walk ran 8% fewer instructions (callgrind).
            let (sa, sb) = (na.sub, nb.sub);
            let (ca, cb) = (na.children, nb.children);
            let mut ma = 0u32;
            let mut mb = 0u32;
            for q in 0..4 {
                // Two tests: one child of each side.
                self.tally.bound_test();
                self.tally.bound_test();
                ma |= u32::from(ix.hot[(ca + q) as usize].sub.intersects(&sb)) << q;
                mb |= u32::from(ix.hot[(cb + q) as usize].sub.intersects(&sa)) << q;
            }
            let mut bi = ma;
            while bi != 0 {
                let i = bi.trailing_zeros();
                bi &= bi - 1;
                let ki = &ix.hot[(ca + i) as usize].sub;
                let mut bj = mb;
                while bj != 0 {
                    let j = bj.trailing_zeros();
                    bj &= bj - 1;
                    self.tally.bound_test();
                    if ki.intersects(&ix.hot[(cb + j) as usize].sub) {
                        self.subtree_vs_subtree_met(ca + i, cb + j);
                    }
                }
            }
        }
    }

    /// Every intersecting pair between the runs of nodes `a` and `b`: only
    /// entries that reach the other run's bounds can pair, so both runs are
    /// filtered first when that fits on the stack ([`filter_at`]), and the
    /// entries kept are copied next to each other for [`cross_columns`].
    fn runs(&mut self, a: u32, b: u32) {
        let ix = self.ix;
        let (ta, tb) = (ix.tight(a), ix.tight(b));
        let (ra, rb) = (ix.run(a), ix.run(b));
        let tally = &mut self.tally;
        let (ia, ib) = (&mut self.at_a, &mut self.at_b);
        let Some(ka) = filter_at(ra, &tb, ia, tally) else {
            sweep_between(ra, rb, self.emit, tally);
            return;
        };
        if ka == 0 {
            return;
        }
        let Some(kb) = filter_at(rb, &ta, ib, tally) else {
            sweep_between(ra, rb, self.emit, tally);
            return;
        };
        for (d, &i) in self.near_a.iter_mut().zip(&ia[..ka]) {
            *d = ra[i as usize];
        }
        for (d, &i) in self.near_b.iter_mut().zip(&ib[..kb]) {
            *d = rb[i as usize];
        }
        let near_b = &self.near_b[..kb];
        self.cols.fill(near_b.iter().map(|e| &e.aabb));
        cross_columns(&self.near_a[..ka], near_b, &self.cols, self.emit, tally);
    }
}

/// How many entries of `run` (sorted) meet `area`, their places in the run
/// written into `at` in order; `None` when more than [`FILTER`] do.
///
/// The scan stops at the first entry that starts right of `area`: the run
/// is sorted by `min.x`, so no later entry meets it (with the stop, the
/// walk took 0.93–0.95× the time in clustered scenes, 0.99× in uniform
/// ones). Within one tree, the runs filtered are those of nearby nodes,
/// and whether an entry reaches the other node's box is often a coin
/// toss, so there is no branch on the test. The entries are read four at a
/// time and tested at once ([`lanes::filter_masks`]); the places of the
/// block are written whole, at the end of what is kept, and only as many
/// as met `area` are kept ([`HITS`]; `at` has room for a block past a full
/// buffer). The entries of a last block shorter than four are tested one
/// by one. What is kept and what `tally` counts are those of a scan that
/// tests one entry at a time and stops at the first entry past `area`, or
/// at the first one the buffer cannot hold. Writing the 4-byte place
/// instead of the 24-byte entry, and copying only the few entries kept,
/// took the walk at 300k uniform boxes to 0.93× the instructions
/// (callgrind), 0.98× in clustered scenes.
#[inline]
fn filter_at<C: Tally>(
    run: &[Entry],
    area: &Aabb,
    at: &mut [u32; FILTER + LANES],
    tally: &mut C,
) -> Option<usize> {
    let mut k = 0;
    let mut blocks = run.chunks_exact(LANES);
    let mut i = 0;
    for block in &mut blocks {
        let (keep, past) = lanes::filter_masks(
            [
                &block[0].aabb,
                &block[1].aabb,
                &block[2].aabb,
                &block[3].aabb,
            ],
            area,
        );
        at[k..k + LANES].copy_from_slice(&lanes::widen_places(HITS[keep], i as u32));
        let before = k;
        k += usize::from(HIT_COUNT[keep]);
        // Sorted by `min.x`: the entries past `area` come last, and the
        // scan stops at the first of them, which counts as scanned.
        let mut scanned = if past == 0 {
            LANES
        } else {
            past.trailing_zeros() as usize + 1
        };
        if k > FILTER {
            // The scan stops at the entry one past what the buffer holds.
            let mut keep = keep;
            for _ in before..FILTER {
                keep &= keep - 1;
            }
            scanned = keep.trailing_zeros() as usize + 1;
        }
        tally.bound_tests(scanned as u64);
        if k > FILTER {
            return None;
        }
        if past != 0 {
            return Some(k);
        }
        i += LANES;
    }
    for (i, e) in (i..).zip(blocks.remainder()) {
        tally.bound_test();
        if e.aabb.min.x > area.max.x {
            break;
        }
        at[k] = i as u32;
        k += usize::from((area.min.x <= e.aabb.max.x) & overlap_y(&e.aabb, area));
        if k > FILTER {
            return None;
        }
    }
    Some(k)
}

/// Every intersecting pair of an entry of `a` with one of `b`, both at
/// most [`FILTER`] long, tested one pair at a time: the crossing that
/// [`cross_columns`] replaced, kept as the tests' reference.
///
/// Up to [`SMALL_CROSS`] candidates, every hit is held and all are
/// emitted in one loop; beyond that, each entry of `a` emits its own hits
/// (ARCHITECTURE.md, *Queries and pairs*, gives what each way measured).
#[cfg(test)]
#[inline]
fn cross<E: Emit + ?Sized, C: Tally>(a: &[Entry], b: &[Entry], emit: &mut E, tally: &mut C) {
    debug_assert!(a.len() <= FILTER && b.len() <= FILTER);
    if a.len() * b.len() > SMALL_CROSS {
        let mut hits = [0u8; FILTER];
        for x in a {
            let mut k = 0;
            for (j, y) in b.iter().enumerate() {
                tally.box_test();
                hits[k] = j as u8;
                k += usize::from(x.aabb.touches(&y.aabb));
            }
            for &j in &hits[..k] {
                tally.pair();
                emit.pair(x, &b[j as usize]);
            }
        }
        return;
    }
    // At most `SMALL_CROSS` candidates: every hit fits.
    let mut held = [(0u8, 0u8); SMALL_CROSS];
    let mut k = 0;
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            tally.box_test();
            held[k] = (i as u8, j as u8);
            k += usize::from(x.aabb.touches(&y.aabb));
        }
    }
    for &(i, j) in &held[..k] {
        tally.pair();
        emit.pair(&a[i as usize], &b[j as usize]);
    }
}

/// Up to how many candidates (entries of one run times those of the other)
/// [`cross`] holds every hit before emitting any.
#[cfg(test)]
const SMALL_CROSS: usize = 128;

/// The keys of two entries, smaller first. The walks call the caller's
/// closure once with these, not in two places behind a branch on the
/// order: which key is smaller is a coin toss, and with the closure inlined
/// into both arms the branch stayed and mispredicted. At 1M boxes, build
/// and pairs pushed into a vector took 0.70× the time in mixed scenes,
/// 0.80× in clustered and 0.95× in uniform (ARCHITECTURE, *Queries and
/// pairs*).
#[inline]
pub(crate) fn ordered_keys(a: &Entry, b: &Entry) -> (Key, Key) {
    // Keys order by slot first, and the two items of a pair hold two
    // slots: comparing the slots orders the keys.
    debug_assert_ne!(a.owner, b.owner, "a pair of one item");
    let (ka, kb) = (a.key(), b.key());
    if a.owner < b.owner {
        (ka, kb)
    } else {
        (kb, ka)
    }
}

/// An [`Emit`] that appends `f(a, b)` to `out` for each pair, with its
/// keys ordered ([`ordered_keys`]). The pairs a sweep has held go in with
/// one `extend` over the held places: it reserves room once and writes
/// each pair through a length kept in a register, where a `push` a pair
/// (what a closure given to [`for_each_pair`](QuadTree::for_each_pair)
/// does) checks the capacity and reloads the vector's length from memory
/// after every store, since the compiler cannot tell the vector's buffer
/// from its header.
///
/// The `extend` is out of line and cold, behind the test for no pairs
/// held: most sweeps of a scene with few pairs hold none, and inlined into
/// the sweeps, the walk over 100k uniform boxes with 402 pairs took
/// 1.04–1.09× the time of a closure's walk, where it takes 1.00–1.03×
/// (ARCHITECTURE.md, *Pairs into a vector, a sweep's held pairs at once*).
pub(crate) struct IntoVec<'v, P, F> {
    pub(crate) out: &'v mut Vec<P>,
    pub(crate) f: F,
}

impl<P, F: FnMut(Key, Key) -> P> Emit for IntoVec<'_, P, F> {
    #[inline(always)]
    fn pair(&mut self, a: &Entry, b: &Entry) {
        let (ka, kb) = ordered_keys(a, b);
        self.out.push((self.f)(ka, kb));
    }

    #[inline(always)]
    fn places(&mut self, a: &[Entry], b: &[Entry], first: &[u8], second: &[u8]) {
        if !first.is_empty() {
            self.extend_places(a, b, first, second);
        }
    }

    #[inline(always)]
    fn within(&mut self, run: &[Entry], ij: &[(u32, u32)]) {
        if !ij.is_empty() {
            self.extend_within(run, ij);
        }
    }
}

impl<P, F: FnMut(Key, Key) -> P> IntoVec<'_, P, F> {
    /// [`Emit::places`] of at least one pair.
    #[cold]
    #[inline(never)]
    fn extend_places(&mut self, a: &[Entry], b: &[Entry], first: &[u8], second: &[u8]) {
        let f = &mut self.f;
        self.out.extend(first.iter().zip(second).map(|(&i, &j)| {
            let (ka, kb) = ordered_keys(&a[usize::from(i)], &b[usize::from(j)]);
            f(ka, kb)
        }));
    }

    /// [`Emit::within`] of at least one pair.
    #[cold]
    #[inline(never)]
    fn extend_within(&mut self, run: &[Entry], ij: &[(u32, u32)]) {
        let f = &mut self.f;
        self.out.extend(ij.iter().map(|&(i, j)| {
            let (ka, kb) = ordered_keys(&run[i as usize], &run[j as usize]);
            f(ka, kb)
        }));
    }
}

/// Sorts `pairs` of one tree's keys (with `a < b` each) into the keys'
/// order, in time linear in their number plus `slots` (one more than the
/// largest key index): a counting sort by `a`'s index into `scratch`, then
/// each run of equal `a` (short) by `b`'s index, through `counts`. A tree
/// holds one live key a slot, and keys order by slot first, so indices
/// order the keys as the keys do. Few pairs among many slots are sorted by
/// comparison instead, the two indices packed into one `u64`: the counting
/// sort costs `slots` too. The collision world's steps sort their pairs
/// with it, keeping `scratch` and `counts` from step to step, and
/// [`pairs`](QuadTree::pairs) with new ones, as `par_pairs` does where it
/// does not sort on the pool (`parallel::par_sort_pairs`): compared
/// (`sort_unstable`), `pairs` took 1.8–1.9× the time at 100k boxes in
/// uniform and mixed scenes, 2.1–2.3× in clustered ones and 1.5–1.6× at 1M
/// (ARCHITECTURE.md, *Sorted pairs by a counting sort*).
pub(crate) fn sort_pairs(
    pairs: &mut Vec<(Key, Key)>,
    scratch: &mut Vec<(Key, Key)>,
    counts: &mut Vec<u32>,
    slots: usize,
) {
    // The counting sort costs `slots` too: for a few pairs among many
    // items (a step where little moved), a comparison sort is cheaper. Its
    // counts are `u32`: more pairs than that (about 69 GB of them) are
    // compared too.
    if pairs.len() < 64 || pairs.len().saturating_mul(16) < slots || pairs.len() > u32::MAX as usize
    {
        pairs.sort_unstable_by_key(|p| (u64::from(p.0.index()) << 32) | u64::from(p.1.index()));
        return;
    }
    counts.clear();
    counts.resize(slots + 1, 0);
    for p in pairs.iter() {
        counts[p.0.index() as usize + 1] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        sum += *c;
        *c = sum;
    }
    // `counts[i]` is now where the run of `a.index() == i` starts.
    scratch.clear();
    scratch.extend_from_slice(pairs);
    for p in pairs.iter() {
        let at = &mut counts[p.0.index() as usize];
        scratch[*at as usize] = *p;
        *at += 1;
    }
    // Each run of equal `a` is found by comparing neighbouring pairs, not
    // from the counters: a resting world's step has far fewer pairs than
    // slots (about 48,000 against 210,000 with 10,000 movers over 200,000
    // tiles), and the loop over the counters cost a fifth of the sort.
    for run in scratch.chunk_by_mut(|x, y| x.0.index() == y.0.index()) {
        if run.len() > 1 {
            run.sort_unstable_by_key(|p| p.1.index());
        }
    }
    core::mem::swap(pairs, scratch);
}

/// The key of slot `slot` in the sorts' tests: one generation a slot,
/// different from slot to slot, as in a tree.
#[cfg(test)]
pub(crate) fn test_key(slot: u64) -> Key {
    Key::new(
        slot as u32,
        core::num::NonZeroU32::new((slot as u32).wrapping_mul(0x9E37_79B9) | 1)
            .expect("an odd generation"),
    )
}

/// `count` distinct pairs `(a, b)` with `a < b` over `slots` slots, in the
/// order drawn, for the sorts' tests: the first slot is one of the first
/// `crowd` one time in `one_in` (where a large box meets many), any slot
/// otherwise. `below(n)` draws a number below `n`.
#[cfg(test)]
pub(crate) fn random_pairs(
    mut below: impl FnMut(u64) -> u64,
    slots: u64,
    count: usize,
    crowd: u64,
    one_in: u64,
) -> Vec<(Key, Key)> {
    assert!(
        count as u64 <= slots * slots.saturating_sub(1) / 2,
        "so many pairs"
    );
    let mut seen = std::collections::HashSet::new();
    let mut pairs = Vec::new();
    while pairs.len() < count {
        let a = if crowd > 0 && below(one_in) == 0 {
            below(crowd)
        } else {
            below(slots)
        };
        let b = below(slots);
        if a != b && seen.insert((a.min(b), a.max(b))) {
            pairs.push((test_key(a.min(b)), test_key(a.max(b))));
        }
    }
    pairs
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
    /// `f` most often reads the two items (`tree[a]`, `tree.get(b)`), and
    /// items are stored in key order, not in the tree's, so each first read
    /// would miss the cache. So before pairing a node's items, the walk asks
    /// the processor (on x86-64) to start fetching them. At 1M boxes, the
    /// walk with a closure reading both values took 0.7× the time it took
    /// without in uniform scenes, 0.85× in clustered and 0.95× in mixed; a
    /// closure reading only the keys pays for the fetches, up to 1.09×.
    /// [`pairs`](QuadTree::pairs), which gives only keys, fetches nothing.
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
            let (ka, kb) = ordered_keys(a, b);
            f(ka, kb);
        };
        self.walk_pairs(&mut emit, true, |p| p.within_subtree(0));
    }

    /// Runs `walk` on a pair walk of this tree that hands its pairs to
    /// `emit`, prefetching each node's slots before pairing its items when
    /// `warm` (see [`PairFinder::warming`]).
    pub(crate) fn walk_pairs<E: Emit + ?Sized>(
        &self,
        emit: &mut E,
        warm: bool,
        walk: impl FnOnce(&mut PairFinder<'_, E>),
    ) {
        let slots = |run: &[Entry]| {
            for e in run {
                self.slab.prefetch(e.owner);
            }
        };
        let mut finder = PairFinder::new(self, emit);
        if warm {
            finder = finder.warming(&slots);
        }
        walk(&mut finder);
    }

    /// Every intersecting pair `(a, b)` with `a < b`, each exactly once,
    /// sorted.
    ///
    /// The pairs are found as [`pairs_into`](QuadTree::pairs_into) finds
    /// them, then counted into place by the first key's slot, each slot's
    /// few sorted by the second: in time linear in the pairs and the slots,
    /// through a second vector as long as the pairs and a 4-byte count a
    /// slot (with fewer than 64 pairs, or fewer than one for 16 slots, they
    /// are compared in place instead).
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
        self.pairs_into(&mut out);
        self.sort_own_pairs(&mut out);
        out
    }

    /// [`sort_pairs`] of pairs of this tree's keys, with new scratch.
    pub(crate) fn sort_own_pairs(&self, pairs: &mut Vec<(Key, Key)>) {
        sort_pairs(
            pairs,
            &mut Vec::new(),
            &mut Vec::new(),
            self.slab.slots.len(),
        );
    }

    /// Appends every intersecting pair `(a, b)` with `a < b`, each exactly
    /// once, to `out`, in the walk's order (not sorted): the pairs of
    /// [`pairs`](QuadTree::pairs) without the sort, into a vector kept
    /// from frame to frame. Keys only: the walk prefetches nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// let mut pairs = Vec::new();
    /// for _frame in 0..2 {
    ///     pairs.clear();
    ///     tree.pairs_into(&mut pairs);
    ///     pairs.sort_unstable();
    ///     assert_eq!(pairs, tree.pairs());
    /// }
    /// ```
    pub fn pairs_into(&self, out: &mut Vec<(Key, Key)>) {
        // Keys only: no slot is read, so none is prefetched.
        self.map_pairs_with(out, |a, b| (a, b), false);
    }

    /// Appends `f(a, b)` for every intersecting pair `(a, b)` with `a < b`,
    /// each exactly once, to `out`, in the walk's order: collect what you
    /// need of each pair (your own ids, say) without a second pass over
    /// the pairs. Like [`for_each_pair`](QuadTree::for_each_pair), the walk
    /// prefetches each node's slots before pairing its items, for an `f`
    /// that reads the items.
    ///
    /// It finds the same pairs, in the same order, as `for_each_pair` with
    /// a closure that pushes `f(a, b)`, and where there are many, faster:
    /// the pairs a sweep holds go into `out` with one `extend`, where a
    /// push per pair checks the capacity and reloads the vector's length
    /// after every store. At 100k boxes it took 0.87–0.89× the time in
    /// clustered and mixed scenes and 0.99× in uniform ones; with few
    /// pairs, 1.00–1.05× (ARCHITECTURE.md, *Pairs into a vector, a sweep's
    /// held pairs at once*).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert_many((0..1000u32).map(|i| (Aabb::from_center([(i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0], [1.5, 1.5]), i)));
    /// // Pairs of the values stored with the boxes.
    /// let mut ids = Vec::new();
    /// tree.map_pairs_into(&mut ids, |a, b| (tree[a], tree[b]));
    /// let mut pushed = Vec::new();
    /// tree.for_each_pair(|a, b| pushed.push((tree[a], tree[b])));
    /// assert_eq!(ids, pushed);
    /// ```
    pub fn map_pairs_into<P>(&self, out: &mut Vec<P>, f: impl FnMut(Key, Key) -> P) {
        self.map_pairs_with(out, f, true);
    }

    /// Appends `f(a, b)` for every pair to `out` in the walk's order
    /// ([`IntoVec`]), prefetching each node's slots when `warm`: the walk
    /// of `pairs_into`, `map_pairs_into`, and of the parallel forms when
    /// they do not split.
    pub(crate) fn map_pairs_with<P>(
        &self,
        out: &mut Vec<P>,
        f: impl FnMut(Key, Key) -> P,
        warm: bool,
    ) {
        let mut emit = IntoVec { out, f };
        self.walk_pairs(&mut emit, warm, |p| p.within_subtree(0));
    }

    /// The work one [`for_each_pair`](QuadTree::for_each_pair) does on
    /// this tree: the pairs it reports, the box tests its sweeps make to
    /// find them (counted as a sweep that stops at the first box out of
    /// reach makes them), and the tests against nodes' bounds that decide
    /// where to look (see [`PairStats`]). It walks the tree exactly as
    /// `for_each_pair` does, counting as it goes; `for_each_pair` itself
    /// counts nothing and costs nothing more for this.
    ///
    /// Compare `box_tests` with `n (n − 1) / 2`, what testing every pair
    /// costs, and with the same tree built with `max_depth: 0` (one node,
    /// a plain sort-and-sweep over every box) to see what the tree saves.
    ///
    /// ```
    /// use quadrat::{Aabb, Config, QuadTree};
    /// let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    /// let boxes: Vec<Aabb> = (0..400)
    ///     .map(|i| {
    ///         let (x, y) = ((i % 20) as f32 * 5.0, (i / 20) as f32 * 5.0);
    ///         Aabb::new([x, y], [x + 4.0, y + 4.0])
    ///     })
    ///     .collect();
    /// let build = |max_depth| {
    ///     let config = Config { max_items: 4, max_depth, ..Config::default() };
    ///     let mut tree = QuadTree::with_config(world, config);
    ///     tree.insert_many(boxes.iter().map(|&b| (b, ())));
    ///     tree
    /// };
    /// let (deep, flat) = (build(8).pair_stats(), build(0).pair_stats());
    /// assert_eq!(deep.pairs, 0); // 4-unit boxes 5 units apart never touch
    /// assert_eq!(flat.pairs, 0);
    /// assert!(deep.box_tests < flat.box_tests);
    /// ```
    #[must_use]
    pub fn pair_stats(&self) -> PairStats {
        let mut emit = |_: &Entry, _: &Entry| {};
        let mut finder = PairFinder::counting(self, &mut emit, PairStats::default());
        finder.within_subtree(0);
        finder.tally
    }
}

impl<T> QuadTree<T> {
    /// Fills `unions`, one per node, with the layer unions of the items in
    /// the node's run and subtree; `filters` holds one filter per slot.
    /// Linear in the number of items and nodes.
    pub(crate) fn layer_unions(&self, filters: &[Filter], unions: &mut Vec<NodeFilter>) {
        let ix = self.ix();
        unions.clear();
        unions.resize(
            ix.nodes.len(),
            NodeFilter {
                own: Filter::NONE,
                sub: Filter::NONE,
            },
        );
        for (n, node) in ix.nodes.iter().enumerate() {
            if node.depth == u8::MAX {
                continue; // a free node: its run fields are stale
            }
            let run = &ix.entries[node.start as usize..(node.start + node.len) as usize];
            unions[n].own = run
                .iter()
                .fold(Filter::NONE, |u, e| u.union(filters[e.owner as usize]));
        }
        fn sub(ix: Ix<'_>, unions: &mut [NodeFilter], n: u32) -> Filter {
            let node = &ix.nodes[n as usize];
            let mut u = unions[n as usize].own;
            if !node.is_leaf() {
                for q in 0..4 {
                    u = u.union(sub(ix, unions, node.children + q));
                }
            }
            unions[n as usize].sub = u;
            u
        }
        sub(ix, unions, 0);
    }

    /// [`for_each_pair`](QuadTree::for_each_pair) that skips every run and
    /// subtree whose items cannot interact by `filters` (one per slot),
    /// using `unions` as scratch. Pairs of items that do not interact may
    /// still be reported when they share a group that does.
    pub(crate) fn for_each_pair_filtered(
        &self,
        filters: &[Filter],
        unions: &mut Vec<NodeFilter>,
        mut f: impl FnMut(Key, Key),
    ) {
        self.layer_unions(filters, unions);
        let mut emit = |a: &Entry, b: &Entry| {
            let (ka, kb) = ordered_keys(a, b);
            f(ka, kb);
        };
        let warm = |run: &[Entry]| {
            for e in run {
                if let Some(filter) = filters.get(e.owner as usize) {
                    crate::prefetch::prefetch(filter);
                }
            }
        };
        PairFinder::filtered(self, &mut emit, unions)
            .warming(&warm)
            .within_subtree(0);
    }

    /// Calls `f(a, b)` once for every pair of an item `a` of this tree and
    /// an item `b` of `other` whose boxes intersect (touching counts), the
    /// first key always from `self`. The two trees may cover different
    /// worlds and have different configurations.
    ///
    /// This is the broad phase for a world kept in two trees, such as a
    /// level that never moves and the things that move through it: the
    /// movers' pairs with the level come from here, and their pairs among
    /// themselves from the movers' own [`for_each_pair`](QuadTree::for_each_pair).
    /// The walk pairs nodes of the two trees level by level, pruned by
    /// their subtree bounds, and sweeps their sorted runs together, so each
    /// pair is met in exactly one place. Nothing is allocated. Given the
    /// same tree twice, it reports every item with itself and every
    /// intersecting pair in both orders.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    /// let mut level = QuadTree::new(world);
    /// let wall = level.insert(Aabb::new([10.0, 0.0], [12.0, 100.0]), "wall");
    /// level.insert(Aabb::new([90.0, 0.0], [92.0, 100.0]), "far wall");
    /// let mut movers = QuadTree::new(world);
    /// let player = movers.insert(Aabb::new([11.0, 5.0], [13.0, 7.0]), "player");
    /// movers.insert(Aabb::new([50.0, 50.0], [51.0, 51.0]), "bird");
    ///
    /// let mut hits = Vec::new();
    /// level.for_each_pair_with(&movers, |a, b| hits.push((a, b)));
    /// assert_eq!(hits, vec![(wall, player)]);
    /// assert_eq!(movers.pairs_with(&level), vec![(player, wall)]);
    /// ```
    pub fn for_each_pair_with<U>(&self, other: &QuadTree<U>, mut f: impl FnMut(Key, Key)) {
        let mut emit = |a: &Entry, b: &Entry| f(a.key(), b.key());
        CrossFinder {
            a: self.ix(),
            b: other.ix(),
            emit: &mut emit,
            near_a: [Entry::VACANT; FILTER + 1],
            near_b: [Entry::VACANT; FILTER + 1],
            cols: Columns::new(),
        }
        .visit(0, 0);
    }

    /// Every intersecting pair `(a, b)` of an item `a` of this tree and an
    /// item `b` of `other`, each exactly once, sorted: see
    /// [`for_each_pair_with`](QuadTree::for_each_pair_with).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let world = Aabb::new([0.0, 0.0], [10.0, 10.0]);
    /// let mut a = QuadTree::new(world);
    /// let x = a.insert(Aabb::new([0.0, 0.0], [2.0, 2.0]), ());
    /// let mut b = QuadTree::new(world);
    /// let y = b.insert(Aabb::new([1.0, 1.0], [3.0, 3.0]), ());
    /// let z = b.insert(Aabb::from_point([2.0, 0.0]), ()); // on x's edge
    /// b.insert(Aabb::new([5.0, 5.0], [6.0, 6.0]), ());
    /// assert_eq!(a.pairs_with(&b), vec![(x, y), (x, z)]);
    /// ```
    #[must_use]
    pub fn pairs_with<U>(&self, other: &QuadTree<U>) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        self.for_each_pair_with(other, |a, b| out.push((a, b)));
        out.sort_unstable();
        out
    }
}

/// The walk of [`QuadTree::for_each_pair_with`]: node `x` of tree `a`
/// against node `y` of tree `b`, emitting `(entry of a, entry of b)`.
struct CrossFinder<'t, E: ?Sized> {
    a: Ix<'t>,
    b: Ix<'t>,
    emit: &'t mut E,
    near_a: [Entry; FILTER + 1],
    near_b: [Entry; FILTER + 1],
    /// The coordinates of the second side of each crossing.
    cols: Columns,
}

impl<E: Emit + ?Sized> CrossFinder<'_, E> {
    /// Every pair with one item in the subtree of `x` (in `a`) and one in
    /// the subtree of `y` (in `b`), where `x` and `y` are at the same
    /// level: their runs together, each run against the other's subtrees
    /// below, and the children pairwise.
    fn visit(&mut self, x: u32, y: u32) {
        let (nx, ny) = (&self.a.hot[x as usize], &self.b.hot[y as usize]);
        if !nx.sub.intersects(&ny.sub) {
            return;
        }
        if nx.len > 0 && ny.len > 0 && self.a.tight(x).intersects(&self.b.tight(y)) {
            self.runs(x, y);
        }
        if nx.len > 0 && !ny.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree::<true>(x, ny.children + q);
            }
        }
        if ny.len > 0 && !nx.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree::<false>(y, nx.children + q);
            }
        }
        if !nx.is_leaf() && !ny.is_leaf() {
            for i in 0..4 {
                for j in 0..4 {
                    self.visit(nx.children + i, ny.children + j);
                }
            }
        }
    }

    /// The run of node `r` against the subtree of node `n` of the other
    /// tree: `r` in `a` and `n` in `b` when `RUN_IN_A`, else the reverse.
    fn run_vs_subtree<const RUN_IN_A: bool>(&mut self, r: u32, n: u32) {
        let (own, other) = if RUN_IN_A {
            (self.a, self.b)
        } else {
            (self.b, self.a)
        };
        let node = &other.hot[n as usize];
        let (run, tr) = (own.run(r), own.tight(r));
        if run.len() <= FILTER {
            self.part_vs_subtree::<RUN_IN_A>(run, tr, n);
            return;
        }
        if !node.sub.intersects(&tr) {
            return;
        }
        if node.len > 0 && other.tight(n).intersects(&tr) {
            if RUN_IN_A {
                self.runs(r, n);
            } else {
                self.runs(n, r);
            }
        }
        if !node.is_leaf() {
            for q in 0..4 {
                self.run_vs_subtree::<RUN_IN_A>(r, node.children + q);
            }
        }
    }

    /// Every pair of an entry of `part` (some of one node's run, in its
    /// order, all inside `bounds`) with an item in the subtree of node `n`
    /// of the other tree: `b`'s when `PART_IN_A`, else `a`'s. At each node
    /// the part is narrowed to the entries that reach the node's subtree
    /// bounds, and its bounds to theirs, so that a node of a few movers
    /// spread over a large cell descends the other tree only where each of
    /// them is, not wherever the cell is: at 1M tiles and 1,000 movers
    /// spread over them, one movers' leaf used to be swept against every
    /// tile run under its cell.
    fn part_vs_subtree<const PART_IN_A: bool>(&mut self, part: &[Entry], bounds: Aabb, n: u32) {
        let ix = if PART_IN_A { self.b } else { self.a };
        let node = &ix.hot[n as usize];
        let sub = node.sub;
        if !sub.intersects(&bounds) {
            return;
        }
        let mut near = [Entry::VACANT; FILTER];
        let mut k = 0;
        for e in part {
            near[k] = *e;
            k += usize::from(e.aabb.intersects(&sub));
        }
        let (part, bounds) = if k == part.len() {
            (part, bounds)
        } else {
            let near = &near[..k];
            (near, near.iter().fold(super::EMPTY, |t, e| t.join(&e.aabb)))
        };
        if part.is_empty() {
            return;
        }
        if node.len > 0 && ix.tight(n).intersects(&bounds) {
            let run = ix.run(n);
            let tally = &mut NoTally;
            let emit = &mut *self.emit;
            let cols = &mut self.cols;
            match (filter(run, &bounds, &mut self.near_a, tally), PART_IN_A) {
                (Some(f), true) => {
                    cols.fill(f.iter().map(|e| &e.aabb));
                    cross_columns(part, f, cols, emit, tally);
                }
                (Some(f), false) => {
                    cols.fill(part.iter().map(|e| &e.aabb));
                    cross_columns(f, part, cols, emit, tally);
                }
                (None, true) => sweep_between(part, run, emit, tally),
                (None, false) => sweep_between(run, part, emit, tally),
            }
        }
        if !node.is_leaf() {
            for q in 0..4 {
                self.part_vs_subtree::<PART_IN_A>(part, bounds, node.children + q);
            }
        }
    }

    /// The runs of `x` (in `a`) and `y` (in `b`), filtered like
    /// [`PairFinder::runs`].
    fn runs(&mut self, x: u32, y: u32) {
        let (tx, ty) = (self.a.tight(x), self.b.tight(y));
        let (rx, ry) = (self.a.run(x), self.b.run(y));
        let tally = &mut NoTally;
        let Some(fx) = filter(rx, &ty, &mut self.near_a, tally) else {
            sweep_between(rx, ry, self.emit, tally);
            return;
        };
        if fx.is_empty() {
            return;
        }
        match filter(ry, &tx, &mut self.near_b, tally) {
            Some(fy) => {
                self.cols.fill(fy.iter().map(|e| &e.aabb));
                cross_columns(fx, fy, &self.cols, self.emit, tally);
            }
            None => sweep_between(rx, ry, self.emit, tally),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;
    use core::num::NonZeroU32;

    /// A small generator, so that the runs below are the same every time.
    struct Gen(u64);

    impl Gen {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        /// A coordinate on a coarse grid, so that boxes often share an
        /// edge or a corner, with both signed zeros.
        fn coord(&mut self) -> f32 {
            match self.below(14) {
                0 => -0.0,
                1 => 0.0,
                2 => -f32::MAX,
                3 => f32::MAX,
                k => (k as f32 - 8.0) * 0.5,
            }
        }

        /// `n` entries, their owners `0..n`.
        fn entries(&mut self, n: usize) -> Vec<Entry> {
            (0..n)
                .map(|i| {
                    // Corners in order; a corner at `f32::MAX` makes a box
                    // that reaches the end of the finite range.
                    let (x0, x1) = order(self.coord(), self.coord());
                    let (y0, y1) = order(self.coord(), self.coord());
                    Entry {
                        aabb: Aabb {
                            min: Vec2::new(x0, y0),
                            max: Vec2::new(x1, y1),
                        },
                        owner: i as u32,
                        generation: NonZeroU32::MIN,
                    }
                })
                .collect()
        }
    }

    /// The two values, smaller first.
    fn order(a: f32, b: f32) -> (f32, f32) {
        if a <= b { (a, b) } else { (b, a) }
    }

    /// What a sweep reported: its pairs, as owners in the order met, and
    /// its tally.
    fn record(
        sweep: impl FnOnce(&mut dyn FnMut(&Entry, &Entry), &mut PairStats),
    ) -> (Vec<(u32, u32)>, PairStats) {
        let mut got = Vec::new();
        let mut tally = PairStats::default();
        sweep(
            &mut |a: &Entry, b: &Entry| got.push((a.owner, b.owner)),
            &mut tally,
        );
        (got, tally)
    }

    #[test]
    fn sorted_pairs_are_in_the_keys_order() {
        let mut rng = Gen(0xD1B5_4A32_D192_ED03);
        // Kept from case to case, as a world keeps them from step to step.
        let (mut scratch, mut counts) = (Vec::new(), Vec::new());
        // Exactly `count` pairs over `slots`: compared below 64 pairs or
        // one for 16 slots (63 of 64, 124 of 2,000, 600 of 10,000),
        // counted from there (64 of 64, 125 of 2,000, 20,000 of 3,000).
        for (slots, count) in [
            (1, 0),
            (2, 1),
            (5, 9),
            (64, 63),
            (64, 64),
            (2000, 124),
            (2000, 125),
            (3000, 20_000),
            (10_000, 600),
        ] {
            // Few first slots with many pairs each, as where a large box
            // meets many.
            let mut pairs = random_pairs(|n| rng.below(n), slots, count, 4.min(slots), 3);
            let mut want = pairs.clone();
            want.sort_unstable();
            sort_pairs(&mut pairs, &mut scratch, &mut counts, slots as usize);
            assert_eq!(pairs, want, "{count} pairs over {slots} slots");
        }
    }

    #[test]
    fn the_short_sweep_reports_what_the_sweep_over_entries_does() {
        let mut rng = Gen(0x2545_F491_4F6C_DD1D);
        // One set of columns for every run, as in a walk: a run shorter
        // than the last must not read what the last one left.
        let mut cols = Columns::new();
        let mut lens: Vec<usize> = (0..=SHORT).chain((0..=SHORT).rev()).collect();
        lens.extend((0..400).map(|_| rng.below(SHORT as u64 + 1) as usize));
        for n in lens {
            let mut run = rng.entries(n);
            run.sort_by(|a, b| a.aabb.min.x.total_cmp(&b.aabb.min.x));
            let want = record(|emit, tally| sweep_within(&run, emit, tally));
            let got = record(|emit, tally| sweep_short(&run, &mut cols, emit, tally));
            assert_eq!(got, want, "a run of {n}");
            let brute = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .filter(|&(i, j)| run[i].aabb.touches(&run[j].aabb))
                .count();
            assert_eq!(got.0.len(), brute, "a run of {n}");
        }
    }

    #[test]
    fn the_cross_over_columns_reports_what_the_cross_over_entries_does() {
        let mut rng = Gen(0x9E37_79B9_7F4A_7C15);
        let mut cols = Columns::new();
        let mut sizes: Vec<(usize, usize)> = (0..=FILTER).map(|k| (k % 7, FILTER - k)).collect();
        sizes.extend((0..400).map(|_| {
            (
                rng.below(FILTER as u64 + 1) as usize,
                rng.below(FILTER as u64 + 1) as usize,
            )
        }));
        for (na, nb) in sizes {
            let a = rng.entries(na);
            let b: Vec<Entry> = rng
                .entries(nb)
                .into_iter()
                .map(|e| Entry {
                    owner: e.owner + 1000,
                    ..e
                })
                .collect();
            let want = record(|emit, tally| cross(&a, &b, emit, tally));
            assert_eq!(cols.fill(b.iter().map(|e| &e.aabb)), nb);
            let got = record(|emit, tally| cross_columns(&a, &b, &cols, emit, tally));
            assert_eq!(got, want, "{na} against {nb}");
            let brute = a.iter().flat_map(|x| b.iter().map(move |y| (x, y)));
            assert_eq!(
                got.0.len(),
                brute.filter(|(x, y)| x.aabb.touches(&y.aabb)).count()
            );
        }
    }

    /// The filter as it was written before it read four entries at a time:
    /// what `filter_at` must still answer, and count.
    fn filter_by_entry(run: &[Entry], area: &Aabb, tally: &mut PairStats) -> Option<Vec<u32>> {
        let mut at = Vec::new();
        for (i, e) in run.iter().enumerate() {
            tally.bound_test();
            if e.aabb.min.x > area.max.x {
                break;
            }
            if e.aabb.touches(area) {
                at.push(i as u32);
                if at.len() > FILTER {
                    return None;
                }
            }
        }
        Some(at)
    }

    #[test]
    fn the_filter_keeps_what_the_filter_over_entries_keeps() {
        let mut rng = Gen(0xD1B5_4A32_D192_ED03);
        let mut at = [0u32; FILTER + LANES];
        // Short and long runs, large areas that keep more than the buffer
        // holds, and small ones that stop the scan anywhere.
        for round in 0..3000 {
            let n = rng.below(if round % 3 == 0 {
                4 * FILTER as u64
            } else {
                FILTER as u64 + 8
            });
            let mut run = rng.entries(n as usize);
            run.sort_by(|a, b| a.aabb.min.x.total_cmp(&b.aabb.min.x));
            let area = match round % 4 {
                0 => Aabb::new([-10.0, -10.0], [10.0, 10.0]),
                _ => {
                    let (x, y) = (rng.coord(), rng.coord());
                    Aabb::new(
                        [x, y],
                        [x + rng.below(6) as f32 * 0.5, y + rng.below(6) as f32 * 0.5],
                    )
                }
            };
            let mut want_tally = PairStats::default();
            let want = filter_by_entry(&run, &area, &mut want_tally);
            let mut got_tally = PairStats::default();
            let got = filter_at(&run, &area, &mut at, &mut got_tally).map(|k| at[..k].to_vec());
            assert_eq!(got, want, "{n} entries, {area:?}");
            assert_eq!(got_tally, want_tally, "{n} entries, {area:?}");
        }
    }

    #[test]
    fn boxes_that_reach_the_end_of_f32_pair_as_brute_force_says() {
        // Boxes that end at `f32::MAX`, the last finite coordinate: a
        // column padded with anything finite would let them meet places
        // past the run.
        for n in [2usize, 5, 10, 63, 64, 65, 130] {
            let world = Aabb::new([0.0, 0.0], [f32::MAX, 2.0]);
            let mut tree = crate::QuadTree::new(world);
            let boxes: Vec<Aabb> = (0..n)
                .map(|i| Aabb::new([i as f32, (i % 2) as f32], [f32::MAX, 1.0]))
                .collect();
            for (i, b) in boxes.iter().enumerate() {
                tree.insert(*b, i);
            }
            let mut got: Vec<(usize, usize)> = Vec::new();
            tree.for_each_pair(|a, b| {
                let (i, j) = (tree[a], tree[b]);
                got.push((i.min(j), i.max(j)));
            });
            got.sort_unstable();
            let want: Vec<(usize, usize)> = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .filter(|&(i, j)| boxes[i].intersects(&boxes[j]))
                .collect();
            assert_eq!(got, want, "{n} boxes");
        }
    }

    #[test]
    fn each_mask_holds_its_hits_in_order() {
        for (m, (&word, &count)) in HITS.iter().zip(&HIT_COUNT).enumerate() {
            let hits: Vec<u8> = (0..LANES as u8).filter(|&t| m & (1 << t) != 0).collect();
            assert_eq!(usize::from(count), hits.len());
            assert_eq!(hit_count(m), hits.len());
            let bytes = word.to_le_bytes();
            assert_eq!(&bytes[..hits.len()], &hits[..], "mask {m:04b}");
            assert!(bytes[hits.len()..].iter().all(|&b| usize::from(b) < LANES));
        }
    }
}
