//! The optional features: parallel pairs agree with the sequential finder,
//! serde round-trips, glam and mint convert.

#[cfg(feature = "parallel")]
#[test]
fn parallel_pairs_equal_sequential_pairs() {
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Config, QuadTree};
    use std::sync::atomic::{AtomicUsize, Ordering};
    for layout in Layout::ALL {
        for (n, max_items) in [(0, 32), (1, 1), (5000, 4), (20_000, 32)] {
            let s = Scenario::new(layout, n, 17);
            let mut tree = QuadTree::with_config(
                s.world,
                Config {
                    max_items,
                    // Split the work at every size, so the parallel walk runs (on a
                    // pool of more than one thread).
                    ..split_everywhere()
                },
            );
            tree.insert_many(s.boxes().into_iter().zip(0..));
            let expected = tree.pairs();
            assert_eq!(tree.par_pairs(), expected, "{layout:?} n={n}");
            let count = AtomicUsize::new(0);
            tree.par_for_each_pair(|a, b| {
                assert!(a < b);
                count.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(count.into_inner(), expected.len());
        }
    }
}

/// Called from a thread outside rayon's pools, where they keep the global
/// pool's threads awake while they run, the parallel calls agree with
/// their sequential twins, frame after frame, with 1% of the items
/// jumping and every call split (`par_min_items` 0).
#[cfg(feature = "parallel")]
#[test]
fn parallel_calls_from_outside_the_pool_agree_with_sequential_ones() {
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Aabb, QuadTree};
    let config = split_everywhere();
    for layout in Layout::ALL {
        let s = Scenario::new(layout, 30_000, 5);
        let boxes: Vec<(Aabb, u32)> = s.boxes().into_iter().zip(0..).collect();
        let (mut seq, mut par) = (
            QuadTree::with_config(s.world, config),
            QuadTree::with_config(s.world, config),
        );
        let (a, b) = boxes.split_at(boxes.len() / 2);
        seq.insert_many(a.iter().copied());
        par.par_insert_many(a.iter().copied());
        seq.insert_many(b.iter().copied());
        par.par_insert_many(b.iter().copied());
        for frame in 0..4u32 {
            let what = format!("{layout:?}, frame {frame}");
            let motion = |_: quadrat::Key, &v: &u32, b: Aabb| {
                if (v + frame).is_multiple_of(100) {
                    let j = (v * 7_919 + frame) % 30_000;
                    boxes[j as usize].0
                } else {
                    b.translate([0.25, -0.25])
                }
            };
            seq.update_all(motion);
            par.par_update_all(motion);
            assert!(seq.nodes().eq(par.nodes()), "{what}: nodes differ");
            let (mut one, mut two) = (Vec::new(), Vec::new());
            seq.map_pairs_into(&mut one, |x, y| (seq[x], seq[y]));
            par.par_map_pairs_into(&mut two, |x, y| (par[x], par[y]));
            one.sort_unstable();
            two.sort_unstable();
            assert!(!one.is_empty(), "{what}: no pairs");
            assert_eq!(one, two, "{what}: par_map_pairs_into");
            assert_eq!(par.par_pairs(), par.pairs(), "{what}: par_pairs");
        }
        seq.rebuild();
        par.par_rebuild();
        assert!(
            seq.nodes().eq(par.nodes()),
            "{layout:?}: rebuilt nodes differ"
        );
    }
}

/// The slot index of every item, in the order a query of everything
/// reports them: node by node, run by run, so two trees with the same
/// nodes give the same list only when every run holds its items in the
/// same order.
/// A job that finds more pairs than its buffer holds hands them on and
/// goes on, and the sorts agree after removals gave reused slots new
/// generations: 200 boxes on one point (19,900 pairs in one node's run),
/// beside a grid, on two threads.
#[cfg(feature = "parallel")]
#[test]
fn a_pile_of_pairs_larger_than_a_jobs_buffer_and_reused_slots() {
    use quadrat::{Aabb, QuadTree};
    let config = split_everywhere();
    let mut tree = QuadTree::with_config(Aabb::new([0.0, 0.0], [100.0, 100.0]), config);
    let pile = Aabb::new([10.0, 10.0], [11.0, 11.0]);
    let mut keys: Vec<_> = (0..200u32).map(|i| tree.insert(pile, i)).collect();
    for i in 0..400u32 {
        let (x, y) = ((i % 20) as f32 * 5.0, (i / 20) as f32 * 5.0);
        keys.push(tree.insert(Aabb::new([x, y], [x + 5.0, y + 5.0]), 1000 + i));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a thread pool");
    for round in 0..3 {
        let mut walked = Vec::new();
        tree.for_each_pair(|a, b| walked.push((tree[a], tree[b])));
        walked.sort_unstable();
        assert!(walked.len() > 19_900, "round {round}: the pile's pairs");
        pool.install(|| {
            let mut mapped = vec![(u32::MAX, u32::MAX)];
            tree.par_map_pairs_into(&mut mapped, |a, b| (tree[a], tree[b]));
            assert_eq!(
                mapped[0],
                (u32::MAX, u32::MAX),
                "round {round}: what out held"
            );
            mapped.remove(0);
            mapped.sort_unstable();
            assert_eq!(mapped, walked, "round {round}: par_map_pairs_into");
            assert_eq!(tree.par_pairs(), tree.pairs(), "round {round}: par_pairs");
        });
        let mut sorted = Vec::new();
        tree.for_each_pair(|a, b| sorted.push((a, b)));
        sorted.sort_unstable();
        assert_eq!(tree.pairs(), sorted, "round {round}: pairs");
        // Every third item out and in again: its slot comes back with a new
        // generation, and the next round pairs it again.
        for (i, key) in keys.iter_mut().enumerate().step_by(3) {
            let value = tree.remove(*key).expect("live");
            let b = if value < 1000 {
                pile
            } else {
                Aabb::from_center([50.0, 50.0 + i as f32 * 0.01], [0.5, 0.5])
            };
            *key = tree.insert(b, value);
        }
    }
}

/// The default config with the work split at every size
/// (`par_min_items` 0), so that the parallel code runs on small trees too
/// (on a pool of more than one thread).
#[cfg(feature = "parallel")]
fn split_everywhere() -> quadrat::Config {
    quadrat::Config {
        par_min_items: 0,
        ..quadrat::Config::default()
    }
}

#[cfg(feature = "parallel")]
fn order<T>(t: &quadrat::QuadTree<T>) -> Vec<u32> {
    let mut keys = Vec::new();
    t.query_keys_into(quadrat::Aabb::new([f32::MIN; 2], [f32::MAX; 2]), &mut keys);
    keys.iter().map(|k| k.index()).collect()
}

/// [`order`], with each stretch of items whose boxes start at the same x
/// sorted by slot: the order of a run up to its ties, which the sort by
/// `min.x` leaves to the way the items got there.
#[cfg(feature = "parallel")]
fn order_up_to_ties<T>(t: &quadrat::QuadTree<T>) -> Vec<u32> {
    let mut keys = Vec::new();
    t.query_keys_into(quadrat::Aabb::new([f32::MIN; 2], [f32::MAX; 2]), &mut keys);
    let x = |i: usize| t.aabb(keys[i]).expect("a live key").min.x.to_bits();
    let mut out: Vec<u32> = keys.iter().map(|k| k.index()).collect();
    let mut i = 0;
    while i < out.len() {
        let j = (i + 1..out.len())
            .find(|&j| x(j) != x(i))
            .unwrap_or(out.len());
        out[i..j].sort_unstable();
        i = j;
    }
    out
}

/// The `par_` forms give the sequential answers on a pool of one thread
/// (where the calling thread does every job) and of three and four (more
/// threads than this machine may have cores: the radix sort cuts its keys
/// in that many chunks), called on the pool and from inside one of its
/// tasks, and with a `par_` question asked from inside the closure of
/// another; also into a tree that has items, to place deferred inserts,
/// and for a pile on one point, where every key ties. (The other tests
/// call them from outside any pool.)
#[cfg(feature = "parallel")]
#[test]
fn parallel_forms_on_any_pool_and_from_inside_it() {
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Aabb, Config, Key, QuadTree};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let config = Config {
        max_items: 8,
        ..split_everywhere()
    };
    let small = Scenario::new(Layout::Clustered, 2_000, 5);
    let mut inner = QuadTree::with_config(small.world, config);
    inner.insert_many(small.boxes().into_iter().zip(0..));
    let inner_pairs = inner.pairs();
    let check = |layout: Layout, what: &str| {
        let s = Scenario::new(layout, 12_000, 23);
        let items = || s.boxes().into_iter().zip(0u32..);
        let mut seq = QuadTree::with_config(s.world, config);
        seq.insert_many(items());
        let mut par = QuadTree::with_config(s.world, config);
        par.par_insert_many(items());
        assert!(seq.nodes().eq(par.nodes()), "{what}: nodes differ");
        assert_eq!(order(&seq), order(&par), "{what}: items in another order");
        let expected = seq.pairs();
        assert_eq!(par.par_pairs(), expected, "{what}: par_pairs");
        let mut mapped: Vec<(Key, Key)> = Vec::new();
        par.par_map_pairs_into(&mut mapped, |a, b| (a, b));
        mapped.sort_unstable();
        assert_eq!(mapped, expected, "{what}: par_map_pairs_into");
        // A parallel question inside the closure of a parallel walk.
        let asked = AtomicUsize::new(0);
        let count = AtomicUsize::new(0);
        par.par_for_each_pair(|_, _| {
            count.fetch_add(1, Ordering::Relaxed);
            if asked.fetch_add(1, Ordering::Relaxed) < 3 {
                assert_eq!(inner.par_pairs(), inner_pairs, "{what}: nested");
            }
        });
        assert_eq!(
            count.into_inner(),
            expected.len(),
            "{what}: par_for_each_pair"
        );
        let step = |k: Key, _: &u32, b: Aabb| b.translate([(k.index() % 5) as f32 - 2.0, 1.5]);
        seq.update_all(step);
        par.par_update_all(step);
        assert!(seq.nodes().eq(par.nodes()), "{what}: moved nodes differ");
        assert_eq!(
            order(&seq),
            order(&par),
            "{what}: moved items in another order"
        );
        assert_eq!(par.par_pairs(), seq.pairs(), "{what}: moved pairs");
        // A second batch into a tree that has items: the presort of every
        // entry, old and new.
        let more = Scenario::new(layout, 9_001, 29);
        let batch = || more.boxes().into_iter().zip(100_000u32..);
        seq.insert_many(batch());
        par.par_insert_many(batch());
        assert!(seq.nodes().eq(par.nodes()), "{what}: second batch");
        assert_eq!(order(&seq), order(&par), "{what}: second batch order");
        // Deferred inserts placed by a rebuild, one way and the other.
        let mut seq = QuadTree::with_config(s.world, config);
        let mut par = QuadTree::with_config(s.world, config);
        for (b, v) in items() {
            seq.insert(b, v);
            par.insert(b, v);
        }
        seq.rebuild();
        par.par_rebuild();
        assert!(seq.nodes().eq(par.nodes()), "{what}: deferred, rebuilt");
        assert_eq!(order(&seq), order(&par), "{what}: deferred, rebuilt order");
    };
    // A pile on one point, of a length no thread count divides: every box
    // ties, so only a stable sort keeps the one-thread order.
    let pile = |what: &str| {
        let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
        let items = || std::iter::repeat_n(Aabb::from_point([25.0, 75.0]), 6_007).zip(0u32..);
        let mut seq = QuadTree::with_config(world, config);
        seq.insert_many(items());
        let mut par = QuadTree::with_config(world, config);
        par.par_insert_many(items());
        assert!(seq.nodes().eq(par.nodes()), "{what}: pile nodes");
        assert_eq!(order(&seq), order(&par), "{what}: pile order");
    };
    for threads in [1, 3, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        for layout in Layout::ALL {
            pool.install(|| check(layout, &format!("{threads} threads, {layout:?}")));
            pool.scope(|s| {
                s.spawn(|_| check(layout, &format!("{threads} threads, in a task, {layout:?}")));
            });
        }
        pool.install(|| pile(&format!("{threads} threads")));
    }
}

/// On a pool of one thread the pair walks are not split: they are the
/// sequential walk, pair for pair in its order, appended after what `out`
/// held. A box as large as the world sits in the root and meets every
/// other: the sequential walk pairs a node's own run after its children,
/// and the split walk's first job is the root's own run, so a split walk
/// would list its pairs first. On two threads the pairs are the same set,
/// appended. A closure that panics leaves what `out` held and a valid tree.
#[cfg(feature = "parallel")]
#[test]
fn pair_walks_on_one_thread_are_the_sequential_walk() {
    use crate::support::tree::{Model, quiet_expected_panics};
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Aabb, Config, Key, QuadTree};
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let config = Config {
        max_items: 8,
        ..split_everywhere()
    };
    quiet_expected_panics();
    let s = Scenario::new(Layout::MixedSizes, 12_000, 41);
    let items: Vec<(Aabb, u32)> = s.boxes().into_iter().chain([s.world]).zip(0..).collect();
    let mut bulk = QuadTree::with_config(s.world, config);
    let keys = bulk.insert_many(items.iter().copied());
    // Inserted one by one: placed by the first question, on the pool.
    let mut deferred = QuadTree::with_config(s.world, config);
    for &(b, v) in &items {
        deferred.insert(b, v);
    }
    let sequential = |tree: &QuadTree<u32>| {
        let mut pairs = Vec::new();
        tree.for_each_pair(|a, b| pairs.push((a, b)));
        pairs
    };
    let expected = sequential(&bulk);
    assert!(
        expected.len() > items.len(),
        "the world box meets every box"
    );
    let mut sorted = expected.clone();
    sorted.sort_unstable();
    let live = keys
        .iter()
        .zip(&items)
        .map(|(&k, &(b, v))| (k, b, v))
        .collect();
    let brute = Model {
        live,
        dead: Vec::new(),
    }
    .brute_pairs();
    assert_eq!(sorted, brute, "for_each_pair against brute force");
    // Not a pair: a key never meets itself.
    let held: (Key, Key) = (expected[0].0, expected[0].0);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        pool.install(|| {
            let what = format!("{threads} threads");
            let mut mapped = vec![held];
            bulk.par_map_pairs_into(&mut mapped, |a, b| (a, b));
            let mut keys = vec![held];
            bulk.par_pairs_into(&mut keys);
            let visited = Mutex::new(vec![held]);
            bulk.par_for_each_pair(|a, b| visited.lock().unwrap().push((a, b)));
            let mut placed = vec![held];
            deferred.par_map_pairs_into(&mut placed, |a, b| (a, b));
            let listed = [
                ("par_map_pairs_into", mapped, &expected),
                ("par_pairs_into", keys, &expected),
                (
                    "par_for_each_pair",
                    visited.into_inner().unwrap(),
                    &expected,
                ),
                (
                    "deferred, par_map_pairs_into",
                    placed,
                    &sequential(&deferred),
                ),
            ];
            for (form, mut got, sequential) in listed {
                assert_eq!(got[0], held, "{what}, {form}: what out held");
                got.remove(0);
                if threads == 1 {
                    let first = got.iter().zip(sequential).position(|(g, s)| g != s);
                    assert_eq!(first, None, "{what}, {form}: the sequential walk's order");
                }
                got.sort_unstable();
                let mut want = sequential.clone();
                want.sort_unstable();
                assert_eq!(got, want, "{what}, {form}: the pairs");
            }
            let calls = AtomicUsize::new(0);
            let mut out = vec![held];
            let caught = catch_unwind(AssertUnwindSafe(|| {
                bulk.par_map_pairs_into(&mut out, |a, b| {
                    assert!(
                        calls.fetch_add(1, Ordering::Relaxed) < 100,
                        "the caller's closure fails"
                    );
                    (a, b)
                });
            }));
            assert!(caught.is_err(), "{what}: the panic reaches the caller");
            assert_eq!(out[0], held, "{what}: what out held, after a panic");
            assert!(
                out.len() <= expected.len() + 1,
                "{what}: pairs after a panic"
            );
            assert!(out[1..].iter().all(|p| sorted.binary_search(p).is_ok()));
            bulk.validate().expect("a valid tree after a panic");
            assert_eq!(sequential(&bulk), expected, "{what}: pairs after a panic");
        });
    }
}

/// A tree of one point at each of `side × side` integer places, the
/// point `i` at `(i % side, i / side)` with value `i`, in slot order.
#[cfg(feature = "parallel")]
fn grid(side: u32) -> quadrat::QuadTree<u32> {
    use quadrat::{Aabb, QuadTree};
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [side as f32, side as f32]));
    tree.insert_many((0..side * side).map(|i| {
        let p = [(i % side) as f32, (i / side) as f32];
        (Aabb::from_point(p), i)
    }));
    tree
}

/// A thread that spins until stopped, taking a core from the pools.
#[cfg(feature = "parallel")]
struct Spinner {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

#[cfg(feature = "parallel")]
impl Spinner {
    fn start() -> Spinner {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        Spinner { stop, thread }
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().expect("the spinner");
    }
}

/// `par_update_all` leaves the same tree, with every run in the same
/// order, whatever the pool's size and however its threads are scheduled:
/// the README promises the same answers in the same order in every
/// process. On a tree large enough for its rebuild to split (2¹⁸ items),
/// the way it takes (re-placing the movers one by one, or a rebuild, after
/// which items whose boxes start at the same `x` can be listed in another
/// order) used to depend on how far each thread had got when another
/// shared its count: movers bunched in the slots where the second thread
/// starts made 1 and 2 threads, or two runs on 2 threads, disagree. The
/// motions: movers bunched where only one prefix of the slots calls for a
/// rebuild, and at a slot where a thread starts, onto other items' points
/// (ties on `min.x`); movers bunched at the start, spread just above the
/// rate that calls for a rebuild, none, and every item jumping to another
/// item's point (a rebuild that sorts the entries first).
#[cfg(feature = "parallel")]
#[test]
fn par_update_all_takes_the_same_way_on_any_pool() {
    use quadrat::{Aabb, Key, QuadTree};
    const SIDE: u32 = 512;
    let base = grid(SIDE);
    type Motion = fn(Key, &u32, Aabb) -> Aabb;
    // The premise: a tree this size takes the pool's ways.
    assert!(base.len() >= 4 * base.config().par_min_items);
    let motions: [(&str, Motion); 6] = [
        // 330 movers in the tenth chunk of 2¹⁴ slots: of the prefixes of
        // whole chunks, only the first ten have more than 1/512 movers, so
        // the way depends on that prefix being judged however the chunks
        // complete.
        ("bunched so that one prefix alone decides", |k, _, b| {
            if (147_456..147_786).contains(&k.index()) {
                b.translate([0.0, 100.0])
            } else {
                b
            }
        }),
        ("bunched where a thread starts", |k, _, b| {
            if (131_072..131_272).contains(&k.index()) {
                b.translate([0.0, 100.0])
            } else {
                b
            }
        }),
        ("bunched at the start", |k, _, b| {
            if k.index() < 300 {
                b.translate([0.0, 9.0])
            } else {
                b
            }
        }),
        ("spread just above the deciding rate", |k, _, b| {
            if k.index() % 480 == 7 {
                b.translate([100.0, 0.0])
            } else {
                b
            }
        }),
        ("none", |_, _, b| b),
        // Every item jumps to another item's point: the rebuild sorts the
        // entries along the Morton curve first, split on the pool, and
        // the points tie on `min.x` in every column.
        ("every item jumping", |k, _, _| {
            let j = (k.index() * 7_919 + 13) % (SIDE * SIDE);
            Aabb::from_point([(j % SIDE) as f32, (j / SIDE) as f32])
        }),
    ];
    // A thread that spins while the pools work, so that their threads run
    // unevenly.
    let spinner = Spinner::start();
    let pool = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    };
    let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2, 3, 4].map(|t| (t, pool(t))).into();
    // `motion` on every pool, `runs` times each, leaves `expected`.
    let same_on_every_pool = |what: &str, motion: Motion, expected: &QuadTree<u32>, runs| {
        let want = order(expected);
        for (threads, pool) in &pools {
            for run in 0..runs {
                let mut tree = base.clone();
                pool.install(|| tree.par_update_all(motion));
                assert!(
                    tree.nodes().eq(expected.nodes()),
                    "{what}: {threads} threads, run {run}: nodes differ"
                );
                assert!(
                    order(&tree) == want,
                    "{what}: {threads} threads, run {run}: items in another order"
                );
            }
        }
    };
    for (what, motion) in motions {
        let mut expected = base.clone();
        pools[0].1.install(|| expected.par_update_all(motion));
        same_on_every_pool(what, motion, &expected, 4);
    }
    // Movers from every chunk of slots onto one point, too few for a
    // rebuild: they join the pile in the order of their slots, as with
    // `update_all`, however many threads found them.
    let pile: Motion = |k, _, b| {
        if k.index().is_multiple_of(4_096) {
            Aabb::from_point([100.5, 100.5])
        } else {
            b
        }
    };
    let mut expected = base.clone();
    expected.update_all(pile);
    same_on_every_pool("pile", pile, &expected, 1);
    spinner.stop();
}

/// Below the pool's bound, from 2¹⁵ items, `par_update_all` judges the
/// share of `update_all`'s sample (more than 1/32 movers) by whole chunks
/// of slots (of 2¹⁴), as it judges the pool's: movers bunched so that one
/// prefix of chunks alone calls for the rebuild (700 at the start of the
/// first chunk: more than 1/32 of it, but not of the first two chunks,
/// nor enough in the whole pass for the count's rebuild), spread just
/// above the share, and none. Each leaves the same tree, every run in the
/// same order, on pools of 1 to 4 threads, while another thread spins.
#[cfg(feature = "parallel")]
#[test]
fn par_update_all_on_a_smaller_tree_takes_the_same_way_on_any_pool() {
    use quadrat::{Aabb, Key};
    const SIDE: u32 = 256;
    let base = grid(SIDE);
    // The premise: a tree this size takes `update_all`'s share, off the pool.
    assert!(base.len() >= 1 << 15 && base.len() < 4 * base.config().par_min_items);
    type Motion = fn(Key, &u32, Aabb) -> Aabb;
    let motions: [(&str, Motion); 3] = [
        ("bunched so that one prefix alone decides", |k, _, b| {
            if k.index() < 700 {
                b.translate([0.0, 100.0])
            } else {
                b
            }
        }),
        ("spread just above the share", |k, _, b| {
            if k.index() % 30 == 7 {
                b.translate([100.0, 0.0])
            } else {
                b
            }
        }),
        ("none", |_, _, b| b),
    ];
    let spinner = Spinner::start();
    for (what, motion) in motions {
        let mut expected = base.clone();
        expected.update_all(motion);
        let want = order_up_to_ties(&expected);
        let mut first: Option<(Vec<u32>, usize)> = None;
        for threads in 1..=4 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            for run in 0..3 {
                let mut tree = base.clone();
                pool.install(|| tree.par_update_all(motion));
                tree.validate().unwrap();
                assert!(
                    tree.nodes().eq(expected.nodes()),
                    "{what}: {threads} threads, run {run}: nodes differ from update_all's"
                );
                assert_eq!(order_up_to_ties(&tree), want, "{what}: {threads} threads");
                let got = order(&tree);
                match &first {
                    None => first = Some((got, threads)),
                    Some((o, t)) => assert!(
                        *o == got,
                        "{what}: {threads} threads, run {run}: items in another order than on {t}"
                    ),
                }
            }
        }
    }
    spinner.stop();
}

/// Items inserted one by one into an empty tree are placed in bulk by the
/// first question: when that is a parallel one, on rayon's pool. The
/// placed tree is the one `insert_many` builds, and it keeps working as
/// the items move and go, in parallel and one by one.
#[cfg(feature = "parallel")]
#[test]
fn deferred_inserts_placed_by_parallel_questions() {
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Config, QuadTree};
    for layout in Layout::ALL {
        for n in [900, 5000] {
            let s = Scenario::new(layout, n, 23);
            let config = Config {
                max_items: 8,
                ..split_everywhere()
            };
            let mut bulk = QuadTree::with_config(s.world, config);
            bulk.insert_many(s.boxes().into_iter().zip(0..));
            let mut tree = QuadTree::with_config(s.world, config);
            for (i, b) in s.boxes().into_iter().enumerate() {
                tree.insert(b, i);
            }
            tree.validate().unwrap();
            let what = format!("{layout:?} n={n}");
            let mut pairs = Vec::new();
            tree.par_pairs_into(&mut pairs);
            pairs.sort_unstable();
            assert_eq!(pairs, bulk.pairs(), "{what}: pairs");
            tree.validate().unwrap();
            assert!(tree.nodes().eq(bulk.nodes()), "{what}: nodes");
            // Moved in parallel (which places the tree), then one by one.
            let step = s.size * 0.3;
            tree.par_update_all(|_, _, b| b.translate([step, -step]));
            bulk.par_update_all(|_, _, b| b.translate([step, -step]));
            tree.validate().unwrap();
            let keys: Vec<_> = tree.keys().step_by(3).collect();
            for &k in &keys {
                tree.remove(k);
                bulk.remove(k);
            }
            tree.validate().unwrap();
            assert_eq!(
                tree.par_pairs(),
                bulk.pairs(),
                "{what}: pairs after changes"
            );
            assert!(tree.nodes().eq(bulk.nodes()), "{what}: nodes after changes");
        }
    }
}

/// The parallel bulk build gives the very tree the sequential one does:
/// the same nodes in the same order, every item in the same place, and a
/// valid tree, over every layout, crowded and shallow configurations, a
/// pile on one point and items far outside the world.
/// At 300k boxes, the Morton gather prefetches (its items take more than
/// 4 MB), on one thread and on the pool: the bulk build, and the deferred
/// index a parallel question places, are the sequential build, run for
/// run.
#[cfg(feature = "parallel")]
#[test]
fn large_parallel_builds_equal_sequential_builds() {
    use quadrat::QuadTree;
    use quadrat::scenario::{Layout, Scenario};
    let config = split_everywhere();
    for layout in [Layout::Uniform, Layout::Clustered] {
        let s = Scenario::new(layout, 300_000, 41);
        let what = format!("{layout:?} n=300k");
        let items = || s.boxes().into_iter().zip(0u32..);
        let mut seq = QuadTree::with_config(s.world, config);
        seq.insert_many(items());
        seq.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut par = QuadTree::with_config(s.world, config);
        par.par_insert_many(items());
        par.validate()
            .unwrap_or_else(|e| panic!("{what}, parallel: {e}"));
        assert!(seq.nodes().eq(par.nodes()), "{what}: nodes differ");
        assert_eq!(order(&seq), order(&par), "{what}: items in another order");
        // One insert at a time, placed by a parallel question.
        let mut deferred = QuadTree::with_config(s.world, config);
        for (b, v) in items() {
            deferred.insert(b, v);
        }
        let mut pairs = Vec::new();
        deferred.par_pairs_into(&mut pairs);
        pairs.sort_unstable();
        assert_eq!(pairs, seq.pairs(), "{what}: pairs of the deferred tree");
        deferred
            .validate()
            .unwrap_or_else(|e| panic!("{what}, deferred: {e}"));
        assert!(seq.nodes().eq(deferred.nodes()), "{what}: deferred nodes");
        assert_eq!(order(&seq), order(&deferred), "{what}: deferred order");
    }
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_build_equals_sequential_build() {
    use quadrat::scenario::{Layout, Rng, Scenario};
    use quadrat::{Aabb, Config, QuadTree};
    fn same<T: PartialEq + std::fmt::Debug>(
        a: &QuadTree<T>,
        b: &QuadTree<T>,
        what: &str,
        exact: bool,
    ) {
        let pile = what.starts_with("one point");
        b.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(a.nodes().eq(b.nodes()), "{what}: nodes differ");
        // Each tree salts its keys' generations; slots must agree.
        let (ia, ib) = (a.iter(), b.iter());
        assert!(
            ia.map(|(k, b, v)| (k.index(), b, v))
                .eq(ib.map(|(k, b, v)| (k.index(), b, v))),
            "{what}: items differ"
        );
        // Each run holds its items in the same order too; after moves, up
        // to ties in `min.x`: from 1/128 to 1/16 of the items leaving their
        // node, `update_all` places them all at once, where `par_update_all`
        // on the pool re-places them one by one (up to 1/32) or rebuilds,
        // and it may rebuild from a sample of 1/512 movers.
        if exact {
            assert_eq!(order(a), order(b), "{what}: items in another order");
        } else {
            assert_eq!(
                order_up_to_ties(a),
                order_up_to_ties(b),
                "{what}: items in another order"
            );
        }
        let pairs = |t: &QuadTree<T>| {
            t.pairs()
                .into_iter()
                .map(|(x, y)| (x.index(), y.index()))
                .collect::<Vec<_>>()
        };
        // (A pile of 6,000 on one point has 18M pairs; its nodes suffice.)
        if !pile {
            assert_eq!(pairs(a), pairs(b), "{what}: pairs differ");
        }
    }
    let mut rng = Rng::new(99);
    let mut scenes: Vec<(String, Aabb, Vec<Aabb>)> = Vec::new();
    for layout in Layout::ALL {
        for n in [0, 100, 5_000, 30_000] {
            let s = Scenario::new(layout, n, 5);
            scenes.push((format!("{layout:?} n={n}"), s.world, s.boxes()));
        }
    }
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    scenes.push((
        "one point".into(),
        world,
        vec![Aabb::from_point([25.0, 25.0]); 6_000],
    ));
    scenes.push((
        "far outside".into(),
        world,
        (0..20_000)
            .map(|_| {
                let c = [rng.range(-1e4, 1e4), rng.range(-1e4, 1e4)];
                Aabb::from_center(c, [rng.range(0.0, 3.0), rng.range(0.0, 3.0)])
            })
            .collect(),
    ));
    for (name, world, boxes) in &scenes {
        // `par_min_items: 0` splits the work at every size, so the parallel
        // build runs.
        for config in [
            split_everywhere(),
            // Leaves of 32 items, the default these scenes were made for.
            Config {
                max_items: 32,
                ..split_everywhere()
            },
            Config {
                max_items: 1,
                max_depth: 3,
                ..split_everywhere()
            },
            Config {
                max_items: 4,
                max_depth: 12,
                ..split_everywhere()
            },
            Config {
                max_items: 2,
                max_depth: 0,
                ..split_everywhere()
            },
        ] {
            let what = format!("{name} {config:?}");
            let items = || boxes.iter().copied().zip(0u32..);
            let mut seq = QuadTree::with_config(*world, config);
            let keys = seq.insert_many(items());
            let mut par = QuadTree::with_config(*world, config);
            let par_keys = par.par_insert_many(items());
            assert!(
                keys.iter()
                    .map(|k| k.index())
                    .eq(par_keys.iter().map(|k| k.index()))
            );
            same(&seq, &par, &what, true);
            // Move everything, then rebuild both ways from the same state.
            let shift = |_, _: &u32, b: Aabb| b.translate([rng.range(-2.0, 2.0), 1.0]);
            let mut moved = seq.clone();
            moved.update_all(shift);
            let mut a = moved.clone();
            a.rebuild();
            let mut b = moved.clone();
            b.par_rebuild();
            same(&a, &b, &format!("{what}, rebuilt"), true);
            // Moving everything far enough that most items leave their node
            // takes the rebuild path of both.
            let far = |k: quadrat::Key, _: &u32, b: Aabb| {
                b.translate([(k.index() % 7) as f32 * 0.7 - 2.1, 1.0])
            };
            let mut a = seq.clone();
            a.update_all(far);
            let mut b = seq.clone();
            b.par_update_all(far);
            same(&a, &b, &format!("{what}, moved"), false);
            // Small steps: most items stay and are written in place, the
            // rest re-placed one by one; a few refusals keep their boxes.
            let near = |k: quadrat::Key, _: &u32, b: Aabb| {
                if k.index() % 997 == 5 {
                    Aabb::new([f32::NAN, 0.0], [1.0, 1.0])
                } else {
                    b.translate([(k.index() % 5) as f32 * 0.02 - 0.04, 0.01])
                }
            };
            let mut a = seq.clone();
            let ea = a.try_update_all(near);
            let mut b = seq.clone();
            let eb = b.try_par_update_all(near);
            assert_eq!(
                ea.map_err(|e| e.0),
                eb.map_err(|e| e.0),
                "{what}: refusals differ"
            );
            same(&a, &b, &format!("{what}, nudged"), false);
            // Again, now that items were re-placed one by one and the entry
            // array has gaps.
            for _ in 0..2 {
                let (ea, eb) = (a.try_update_all(near), b.try_par_update_all(near));
                assert_eq!(ea.map_err(|e| e.0), eb.map_err(|e| e.0));
            }
            same(&a, &b, &format!("{what}, nudged again"), false);
        }
    }
    // A bad box refuses the whole batch and leaves the tree as it was.
    let mut tree = QuadTree::new(world);
    tree.insert(Aabb::from_point([1.0, 1.0]), 0u32);
    let mut bad: Vec<(Aabb, u32)> = (0..10_000)
        .map(|i| (Aabb::from_point([50.0, 50.0]), i))
        .collect();
    bad[7_000].0 = Aabb::new([0.0, 0.0], [f32::INFINITY, 1.0]);
    assert!(tree.try_par_insert_many(bad).is_err());
    assert_eq!(tree.len(), 1);
    tree.validate().unwrap();
}

/// A box `par_update_all` refuses leaves the item's box as it is, not as
/// an earlier call left it in the scratch array the calls share: here the
/// item moved by itself in between.
#[cfg(feature = "parallel")]
#[test]
fn a_refused_box_keeps_the_box_set_since_the_last_par_update_all() {
    use quadrat::{Aabb, QuadTree};
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    let config = split_everywhere();
    let mut tree = QuadTree::with_config(world, config);
    let points = (0..2000u32).map(|i| {
        let (x, y) = ((i % 50) as f32 * 2.0, (i / 50) as f32 * 2.0);
        (Aabb::new([x, y], [x + 0.5, y + 0.5]), i)
    });
    let keys = tree.insert_many(points);
    let k = keys[123];
    // Every box stays where it is.
    tree.par_update_all(|_, _, b| b);
    let moved = tree.aabb(k).unwrap().translate([0.01, 0.01]);
    assert!(tree.update(k, moved));
    let refuse = |key, _: &u32, b: Aabb| {
        if key == k {
            Aabb::new([f32::NAN, 0.0], [1.0, 1.0])
        } else {
            b.translate([0.001, 0.0])
        }
    };
    let err = tree.try_par_update_all(refuse).unwrap_err();
    assert_eq!(err.0, k);
    assert_eq!(tree.aabb(k), Some(moved));
    assert_eq!(
        tree.aabb(keys[124]),
        Some(Aabb::new([48.0, 4.0], [48.5, 4.5]).translate([0.001, 0.0]))
    );
    tree.validate().unwrap();
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips() {
    use quadrat::{Aabb, Circle, Config, QuadTree, Ray, Shape, Vec2};
    fn round<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        v: T,
    ) {
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<T>(&json).unwrap(), v, "{json}");
    }
    round(Vec2::new(1.5, -2.0));
    round(Aabb::new([0.0, 1.0], [2.0, 3.0]));
    round(Circle::new([1.0, 1.0], 4.0));
    round(Ray::new([0.0, 0.0], [1.0, 0.0]));
    round(Shape::Capsule {
        half_segment: Vec2::new(1.0, 2.0),
        radius: 0.5,
    });
    round(Config::default());
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [1.0, 1.0]));
    round(tree.insert(Aabb::new([0.0, 0.0], [1.0, 1.0]), ()));
}

/// Both conversions for one glam version, under its feature; the
/// `quadrat::QuadTree` calls take the glam vectors through `impl Into<Vec2>`.
macro_rules! glam_converts {
    ($name:ident, $glam:ident, $feature:literal) => {
        #[cfg(feature = $feature)]
        #[test]
        fn $name() {
            use $glam as glam;
            let v: quadrat::Vec2 = glam::Vec2::new(3.0, -4.5).into();
            assert_eq!(v, quadrat::Vec2::new(3.0, -4.5));
            let back: glam::Vec2 = v.into();
            assert_eq!(back, glam::Vec2::new(3.0, -4.5));
            let extreme = glam::Vec2::new(f32::MAX, -f32::MIN_POSITIVE);
            let q: quadrat::Vec2 = extreme.into();
            assert_eq!((q.x, q.y), (f32::MAX, -f32::MIN_POSITIVE));
            let mut tree = quadrat::QuadTree::new(quadrat::Aabb::new(
                glam::Vec2::ZERO,
                glam::Vec2::splat(8.0),
            ));
            let k = tree.insert(
                quadrat::Aabb::new(glam::Vec2::ONE, glam::Vec2::splat(2.0)),
                (),
            );
            assert_eq!(
                tree.query_point(glam::Vec2::splat(1.5))
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>(),
                [k]
            );
        }
    };
}

glam_converts!(glam_0_27_converts, glam027, "glam-0_27");
glam_converts!(glam_0_29_converts, glam029, "glam-0_29");
glam_converts!(glam_0_30_converts, glam030, "glam-0_30");
glam_converts!(glam_0_32_converts, glam032, "glam-0_32");
glam_converts!(glam_0_33_converts, glam033, "glam-0_33");
glam_converts!(glam_0_34_converts, glam034, "glam-0_34");

/// `glam` is kept as the name of the newest version's feature.
#[cfg(feature = "glam")]
#[test]
fn glam_is_the_newest() {
    let v: quadrat::Vec2 = glam034::Vec2::new(1.0, 2.0).into();
    assert_eq!(v, quadrat::Vec2::new(1.0, 2.0));
}

#[cfg(feature = "mint")]
#[test]
fn mint_converts() {
    let v: quadrat::Vec2 = mint::Vector2 { x: 3.0, y: 4.0 }.into();
    let p: mint::Point2<f32> = v.into();
    assert_eq!((p.x, p.y), (3.0, 4.0));
}
