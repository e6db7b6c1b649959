//! The tree against a trivially correct model: a `Vec` of live items with
//! brute-force answers. Every mutating operation of `QuadTree` is an [`Op`];
//! [`Harness::apply`] runs one on both and checks what it returned, and
//! [`Harness::check`] compares every query, the pairs (within the tree and
//! of the tree with itself), `nearest` and ray casts with brute force. Shared
//! by the model tests, the structured tests, the soak test and the fuzz
//! target.

#![allow(dead_code, unreachable_pub)]

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::Told;
use quadrat::{Aabb, Circle, Config, Key, QuadTree, Ray, Region, Vec2};

/// One mutating call. Indices pick a live (or dead) item modulo the count.
#[derive(Clone, Debug)]
pub enum Op {
    Insert(Aabb),
    /// An invalid box: refused, and nothing changes.
    InsertInvalid(Aabb),
    InsertMany(Vec<Aabb>),
    /// One `insert` per box, with no question in between: into an empty
    /// tree, the tutorials' loop, whose items wait for the first question.
    InsertEach(Vec<Aabb>),
    /// `insert_many` whose iterator panics after `at` items.
    InsertManyPanics(Vec<Aabb>, usize),
    Remove(usize),
    RemoveStale(usize),
    Update(usize, Aabb),
    /// Move by a small step (often stays in its node).
    Nudge(usize, f32, f32),
    /// Move every item: by a step, or (every seventh value) to a box of
    /// `jumps`; `refuse` makes every eleventh value's box invalid.
    UpdateAll {
        dx: f32,
        dy: f32,
        jumps: Vec<Aabb>,
        refuse: bool,
    },
    /// `update_all` whose closure panics at the item with value `at`.
    UpdateAllPanics {
        dx: f32,
        dy: f32,
        at: u32,
    },
    /// Keep the items whose value is not a multiple of `m` (`m >= 2`).
    Retain(u32),
    /// `retain` whose closure panics at value `at`, removing multiples of 3
    /// before that.
    RetainPanics(u32),
    Rebuild,
    Clear,
    /// The tutorials' loop for `frames` frames: each frame clears the tree
    /// and inserts every live item's box again, one by one in the model's
    /// order (the order of the last refill, if one came before and no
    /// removal moved an item since), moved by `(dx, dy)` a frame; each
    /// frame but the last is then asked a question, so it builds its index
    /// from the deferred inserts (from the slots' order when that still
    /// follows the tree's). `cut` items are left out from the end each
    /// frame, and `swap` swaps two items' places in the order of the first
    /// frame, which the frames after it keep, so a refill can be fewer
    /// than before or come in another order.
    Refill {
        frames: usize,
        dx: f32,
        dy: f32,
        cut: usize,
        swap: Option<(usize, usize)>,
    },
    /// `reserve(n)`: nothing a caller can see changes.
    Reserve(usize),
    /// `shrink_to_fit`: nothing a caller can see changes either.
    ShrinkToFit,
    /// The parallel forms (the sequential ones without feature `parallel`).
    ParInsertMany(Vec<Aabb>),
    ParRebuild,
    ParUpdateAll {
        dx: f32,
        dy: f32,
        jumps: Vec<Aabb>,
    },
}

/// What to ask after a step.
#[derive(Clone, Debug)]
pub struct Probe {
    pub area: Aabb,
    pub circle: Circle,
    pub point: Vec2,
    pub k: usize,
    pub ray: Ray,
    pub max_dist: f32,
}

/// The live items in insertion order, and the keys removed.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub live: Vec<(Key, Aabb, u32)>,
    pub dead: Vec<Key>,
}

impl Model {
    pub fn brute_pairs(&self) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        for (i, a) in self.live.iter().enumerate() {
            for b in &self.live[i + 1..] {
                if a.1.intersects(&b.1) {
                    out.push(if a.0 < b.0 { (a.0, b.0) } else { (b.0, a.0) });
                }
            }
        }
        out.sort_unstable();
        out
    }

    pub fn brute(&self, hit: impl Fn(&Aabb) -> bool) -> Vec<Key> {
        let mut v: Vec<Key> = self
            .live
            .iter()
            .filter(|e| hit(&e.1))
            .map(|e| e.0)
            .collect();
        v.sort_unstable();
        v
    }
}

/// A tree and its model, side by side.
pub struct Harness {
    pub tree: QuadTree<u32>,
    pub model: Model,
    next_value: u32,
    /// Whether operations that panic on purpose run (a fuzzer that aborts
    /// on every panic turns them off).
    pub panics: bool,
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

macro_rules! ensure_eq {
    ($a:expr, $b:expr, $($what:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            return Err(format!("{}: {:?} != {:?}", format!($($what)+), a, b));
        }
    }};
}

fn sorted(it: impl Iterator<Item = Key>) -> Vec<Key> {
    let mut v: Vec<Key> = it.collect();
    v.sort_unstable();
    v
}

impl Harness {
    pub fn new(world: Aabb, config: Config) -> Harness {
        quiet_expected_panics();
        // The parallel forms split their work at every size here, so that
        // small trees test the parallel code too.
        let config = Config {
            par_min_items: 0,
            ..config
        };
        Harness {
            tree: QuadTree::with_config(world, config),
            model: Model::default(),
            next_value: 0,
            panics: true,
        }
    }

    /// A second harness with `tree` (a copy of this one's, as a snapshot
    /// restores it) and the same model, to run on side by side.
    pub fn fork(&self, tree: QuadTree<u32>) -> Harness {
        Harness {
            tree,
            model: self.model.clone(),
            next_value: self.next_value,
            panics: self.panics,
        }
    }

    fn pick(&self, i: usize) -> Option<usize> {
        (!self.model.live.is_empty()).then(|| i % self.model.live.len())
    }

    fn values(&mut self, n: usize) -> Vec<u32> {
        let v: Vec<u32> = (self.next_value..self.next_value + n as u32).collect();
        self.next_value += n as u32;
        v
    }

    /// Runs one operation on the tree and the model, checking what the
    /// tree returned. Cheap: the full comparison is [`Harness::check`].
    pub fn apply(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Insert(b) => {
                let v = self.values(1)[0];
                let k = self.tree.insert(*b, v);
                self.model.live.push((k, *b, v));
            }
            Op::InsertEach(boxes) => {
                let values = self.values(boxes.len());
                for (&b, v) in boxes.iter().zip(values) {
                    let k = self.tree.insert(b, v);
                    self.model.live.push((k, b, v));
                }
            }
            Op::InsertInvalid(b) => {
                let len = self.tree.len();
                ensure(self.tree.try_insert(*b, u32::MAX).is_err(), || {
                    format!("invalid box {b:?} accepted")
                })?;
                ensure_eq!(self.tree.len(), len, "len after a refused insert");
            }
            Op::InsertMany(boxes) | Op::ParInsertMany(boxes) => {
                let values = self.values(boxes.len());
                // A batch of odd length does not tell its length.
                let told = boxes.len() % 2 == 0;
                let items = Told(boxes.iter().copied().zip(values.iter().copied()), told);
                let keys = match op {
                    #[cfg(feature = "parallel")]
                    Op::ParInsertMany(_) => self.tree.par_insert_many(items),
                    _ => self.tree.insert_many(items),
                };
                ensure_eq!(keys.len(), boxes.len(), "keys from insert_many");
                for ((k, b), v) in keys.into_iter().zip(boxes).zip(values) {
                    self.model.live.push((k, *b, v));
                }
            }
            Op::InsertManyPanics(boxes, at) => {
                if !self.panics {
                    return Ok(());
                }
                let at = *at;
                let items = boxes.iter().copied().enumerate().map(|(i, b)| {
                    if i == at {
                        panic!("the caller's iterator fails");
                    }
                    (b, u32::MAX)
                });
                let items = Told(items, boxes.len() % 2 == 0);
                let len = self.tree.len();
                let result = catch_unwind(AssertUnwindSafe(|| self.tree.insert_many(items)));
                if at < boxes.len() {
                    ensure(result.is_err(), || "the iterator did not panic".into())?;
                    ensure_eq!(self.tree.len(), len, "len after a panicking insert_many");
                } else {
                    let keys = result.map_err(|_| "insert_many panicked".to_string())?;
                    for (k, b) in keys.into_iter().zip(boxes) {
                        self.model.live.push((k, *b, u32::MAX));
                    }
                }
            }
            Op::Remove(i) => {
                if let Some(i) = self.pick(*i) {
                    let (k, _, v) = self.model.live.swap_remove(i);
                    ensure_eq!(self.tree.remove(k), Some(v), "remove {k:?}");
                    self.model.dead.push(k);
                }
            }
            Op::RemoveStale(i) => {
                if !self.model.dead.is_empty() {
                    let k = self.model.dead[i % self.model.dead.len()];
                    ensure_eq!(self.tree.remove(k), None, "remove of stale {k:?}");
                    ensure(!self.tree.update(k, Aabb::default()), || {
                        format!("update of stale {k:?}")
                    })?;
                }
            }
            Op::Update(i, b) => {
                if let Some(i) = self.pick(*i) {
                    ensure(self.tree.update(self.model.live[i].0, *b), || {
                        "update".into()
                    })?;
                    self.model.live[i].1 = *b;
                }
            }
            Op::Nudge(i, dx, dy) => {
                if let Some(i) = self.pick(*i) {
                    let b = self.model.live[i].1.translate([*dx, *dy]);
                    if b.validate().is_ok() {
                        ensure(self.tree.update(self.model.live[i].0, b), || "nudge".into())?;
                        self.model.live[i].1 = b;
                    }
                }
            }
            Op::UpdateAll {
                dx,
                dy,
                jumps,
                refuse,
            } => {
                let new_box = |v: u32, b: Aabb| {
                    if *refuse && v % 11 == 3 {
                        Aabb::new([f32::NAN, 0.0], [0.0, 0.0])
                    } else if v.is_multiple_of(7) && !jumps.is_empty() {
                        jumps[v as usize % jumps.len()]
                    } else {
                        b.translate([*dx, *dy])
                    }
                };
                let result = self.tree.try_update_all(|_, &v, b| new_box(v, b));
                let mut any_refused = false;
                for e in &mut self.model.live {
                    let b = new_box(e.2, e.1);
                    if b.validate().is_ok() {
                        e.1 = b;
                    } else {
                        any_refused = true;
                    }
                }
                ensure_eq!(result.is_err(), any_refused, "update_all refusal");
            }
            Op::ParUpdateAll { dx, dy, jumps } => {
                let new_box = |v: u32, b: Aabb| {
                    let b = if v.is_multiple_of(7) && !jumps.is_empty() {
                        jumps[v as usize % jumps.len()]
                    } else {
                        b.translate([*dx, *dy])
                    };
                    if b.validate().is_ok() {
                        b
                    } else {
                        Aabb::default()
                    }
                };
                #[cfg(feature = "parallel")]
                self.tree.par_update_all(|_, &v, b| new_box(v, b));
                #[cfg(not(feature = "parallel"))]
                self.tree.update_all(|_, &v, b| new_box(v, b));
                for e in &mut self.model.live {
                    e.1 = new_box(e.2, e.1);
                }
            }
            Op::UpdateAllPanics { dx, dy, at } => {
                if !self.panics {
                    return Ok(());
                }
                let (dx, dy, at) = (*dx, *dy, *at);
                let step = |b: Aabb| {
                    let m = b.translate([dx, dy]);
                    if m.validate().is_ok() { m } else { b }
                };
                let result = catch_unwind(AssertUnwindSafe(|| {
                    self.tree.update_all(|_, &v, b| {
                        if v == at {
                            panic!("the caller's closure fails");
                        }
                        step(b)
                    })
                }));
                let panicked = result.is_err();
                let had = self.model.live.iter().any(|e| e.2 == at);
                ensure_eq!(panicked, had, "update_all panicked");
                // Each item now has its old box or its new one; the model
                // takes whichever the tree kept.
                for e in &mut self.model.live {
                    let now = self.tree.aabb(e.0).ok_or("an item was lost")?;
                    let new = step(e.1);
                    ensure(now == e.1 || (now == new && e.2 != at), || {
                        format!(
                            "item {:?} has box {now:?}, neither {:?} nor {new:?}",
                            e.0, e.1
                        )
                    })?;
                    e.1 = now;
                }
            }
            Op::Retain(m) => {
                let m = (*m).max(2);
                self.tree.retain(|_, _, v| !v.is_multiple_of(m));
                let (keep, gone): (Vec<_>, Vec<_>) = self
                    .model
                    .live
                    .drain(..)
                    .partition(|e| !e.2.is_multiple_of(m));
                self.model.live = keep;
                self.model.dead.extend(gone.into_iter().map(|e| e.0));
            }
            Op::RetainPanics(at) => {
                if !self.panics {
                    return Ok(());
                }
                let at = *at;
                let result = catch_unwind(AssertUnwindSafe(|| {
                    self.tree.retain(|_, _, v| {
                        if *v == at {
                            panic!("the caller's closure fails");
                        }
                        !v.is_multiple_of(3)
                    })
                }));
                let had = self.model.live.iter().any(|e| e.2 == at);
                ensure_eq!(result.is_err(), had, "retain panicked");
                // Each item is still there, or was removed because its value
                // is a multiple of 3.
                let mut live = Vec::new();
                for e in self.model.live.drain(..) {
                    if self.tree.contains_key(e.0) {
                        live.push(e);
                    } else {
                        ensure(e.2.is_multiple_of(3), || format!("retain lost {:?}", e.0))?;
                        self.model.dead.push(e.0);
                    }
                }
                self.model.live = live;
            }
            Op::Rebuild => self.tree.rebuild(),
            Op::Reserve(n) => self.tree.reserve(*n),
            Op::ShrinkToFit => self.tree.shrink_to_fit(),
            Op::ParRebuild => {
                #[cfg(feature = "parallel")]
                self.tree.par_rebuild();
                #[cfg(not(feature = "parallel"))]
                self.tree.rebuild();
            }
            Op::Clear => {
                self.tree.clear();
                let model = &mut self.model;
                model.dead.extend(model.live.drain(..).map(|e| e.0));
            }
            Op::Refill {
                frames,
                dx,
                dy,
                cut,
                swap,
            } => {
                for frame in 0..*frames {
                    let mut items = core::mem::take(&mut self.model.live);
                    // Every key of the last frame goes stale, the cut ones too.
                    self.model.dead.extend(items.iter().map(|e| e.0));
                    items.truncate(items.len().saturating_sub(*cut));
                    if let Some((i, j)) = *swap
                        && frame == 0
                        && i < items.len()
                        && j < items.len()
                    {
                        items.swap(i, j);
                    }
                    self.tree.clear();
                    for (_, b, v) in items {
                        let moved = b.translate([*dx, *dy]);
                        let b = if moved.validate().is_ok() { moved } else { b };
                        let k = self.tree.insert(b, v);
                        self.model.live.push((k, b, v));
                    }
                    if frame + 1 < *frames {
                        // The question that builds this frame's index, which
                        // the next clear hands its slots out in the order of.
                        let mut pairs = Vec::new();
                        self.tree.for_each_pair(|a, b| pairs.push((a, b)));
                        pairs.sort_unstable();
                        ensure_eq!(
                            pairs,
                            self.model.brute_pairs(),
                            "pairs of refill frame {frame}"
                        );
                        self.tree.validate()?;
                    }
                }
            }
        }
        if self.model.dead.len() > 4096 {
            self.model.dead.drain(..2048);
        }
        Ok(())
    }

    /// The invariants, the length and every stored item.
    pub fn check_items(&self) -> Result<(), String> {
        self.tree.validate()?;
        let (tree, model) = (&self.tree, &self.model);
        ensure_eq!(tree.len(), model.live.len(), "len");
        ensure_eq!(tree.is_empty(), model.live.is_empty(), "is_empty");
        for &(k, b, v) in &model.live {
            ensure_eq!(tree.get(k), Some(&v), "value of {k:?}");
            ensure_eq!(tree.aabb(k), Some(b), "box of {k:?}");
        }
        for &k in &model.dead {
            ensure(!tree.contains_key(k), || {
                format!("stale {k:?} still answers")
            })?;
        }
        Ok(())
    }

    /// Everything: items, iteration, every query, nearest, ray casts and
    /// the pairs against brute force.
    pub fn check(&self, probe: &Probe) -> Result<(), String> {
        self.check_items()?;
        let (tree, model) = (&self.tree, &self.model);
        let mut iterated: Vec<(Key, Aabb, u32)> = tree.iter().map(|(k, b, v)| (k, b, *v)).collect();
        iterated.sort_by_key(|e| e.0);
        let mut expected = model.live.clone();
        expected.sort_by_key(|e| e.0);
        ensure_eq!(iterated, expected, "iter");

        let area = probe.area;
        ensure_eq!(
            sorted(tree.query(area).map(|(k, _)| k)),
            model.brute(|b| b.intersects(&area)),
            "query {area:?}"
        );
        let circle = probe.circle;
        ensure_eq!(
            sorted(tree.query_circle(circle).map(|(k, _)| k)),
            model.brute(|b| circle.intersects_aabb(b)),
            "query_circle {circle:?}"
        );
        let p = probe.point;
        ensure_eq!(
            sorted(tree.query_point(p).map(|(k, _)| k)),
            model.brute(|b| b.contains_point(p)),
            "query_point {p:?}"
        );
        // The allocation-free form finds the same items as the iterators,
        // in the same order.
        same_keys_as_query(tree, area)?;
        same_keys_as_query(tree, circle)?;
        same_keys_as_query(tree, p)?;
        // Each live item finds itself with its own box.
        for &(k, b, _) in model.live.iter().take(8) {
            ensure(tree.query(b).any(|(kk, _)| kk == k), || {
                format!("{k:?} does not find itself")
            })?;
        }
        // Nearest: all items sorted by (box distance, key), the first k.
        if p.is_finite() {
            let mut by_dist: Vec<(Key, f32)> = model
                .live
                .iter()
                .map(|e| (e.0, e.1.distance_to_point(p)))
                .collect();
            by_dist.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            by_dist.truncate(probe.k);
            ensure_eq!(
                tree.nearest(p, probe.k),
                by_dist,
                "nearest({p:?}, {})",
                probe.k
            );
        }
        // Ray casts: every box hit, sorted by (distance, key); the first.
        let ray = probe.ray;
        let mut hits: Vec<(Key, f32)> = model
            .live
            .iter()
            .filter_map(|e| ray.intersect_aabb(&e.1, probe.max_dist).map(|d| (e.0, d)))
            .collect();
        hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        ensure_eq!(
            tree.raycast(ray, probe.max_dist),
            hits.first().copied(),
            "raycast {ray:?} {}",
            probe.max_dist
        );
        ensure_eq!(tree.raycast_all(ray, probe.max_dist), hits, "raycast_all");
        self.check_pairs()?;
        // Again, now that the questions have built the index of a tree
        // whose inserts were deferred.
        tree.validate()
    }

    /// The pairs against brute force: each once, normalised, none missing.
    pub fn check_pairs(&self) -> Result<(), String> {
        let mut raw = Vec::new();
        self.tree.for_each_pair(|a, b| raw.push((a, b)));
        ensure(raw.iter().all(|(a, b)| a < b), || {
            "pairs not normalised".into()
        })?;
        let mut dedup = raw.clone();
        dedup.sort_unstable();
        dedup.dedup();
        ensure_eq!(dedup.len(), raw.len(), "a pair was reported twice");
        let brute = self.model.brute_pairs();
        ensure_eq!(self.tree.pairs(), brute, "pairs");
        // The `_into` forms append the walk's pairs, in its order, after
        // what the vector held.
        let mut into = brute.first().copied().into_iter().collect::<Vec<_>>();
        let kept = into.len();
        self.tree.pairs_into(&mut into);
        ensure_eq!(into[..kept], brute[..kept], "pairs_into kept what it held");
        ensure_eq!(into[kept..], raw[..], "pairs_into");
        let mut values = vec![(u32::MAX, u32::MAX)];
        self.tree
            .map_pairs_into(&mut values, |a, b| (self.tree[a], self.tree[b]));
        let walked: Vec<(u32, u32)> = raw
            .iter()
            .map(|&(a, b)| (self.tree[a], self.tree[b]))
            .collect();
        ensure_eq!(
            values[0],
            (u32::MAX, u32::MAX),
            "map_pairs_into kept what it held"
        );
        ensure_eq!(values[1..], walked[..], "map_pairs_into");
        // The walk between two trees, with the tree against itself: every
        // pair in both orders, and every item with itself.
        let mut both: Vec<(Key, Key)> = brute.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        both.extend(self.model.live.iter().map(|l| (l.0, l.0)));
        both.sort_unstable();
        ensure_eq!(self.tree.pairs_with(&self.tree), both, "pairs_with itself");
        #[cfg(feature = "parallel")]
        ensure_eq!(self.tree.par_pairs(), self.tree.pairs(), "par_pairs");
        Ok(())
    }
}

/// Keeps the panics the harness causes on purpose ("the caller's …") out of
/// the test output; every other panic is reported as usual.
pub fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("");
            if !text.starts_with("the caller's") {
                report(info);
            }
        }));
    });
}

/// `query_keys_into` finds what `query_region` yields, in the same order.
fn same_keys_as_query<R: Region + Copy + std::fmt::Debug>(
    tree: &QuadTree<u32>,
    region: R,
) -> Result<(), String> {
    // Appended to what `out` held.
    let first = Key::from_bits(1).expect("a key");
    let mut keys = vec![first];
    tree.query_keys_into(region, &mut keys);
    let mut iterated = vec![first];
    iterated.extend(tree.query_region(region).map(|(k, _)| k));
    ensure_eq!(keys, iterated, "query_keys_into {region:?}");
    Ok(())
}
