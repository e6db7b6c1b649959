//! Structured inputs that random boxes never produce: grids of points and of
//! exactly touching boxes, piles on one point and along split lines, worlds
//! from 1e-40 to the whole `f32` range; each built one by one (checked
//! after every insert, or with no question until the tree is full, so the
//! inserts wait to be placed in bulk) and in bulk,
//! then drained in insertion, reverse and random order. The tree is
//! validated after every step and compared with brute force along the way.

use crate::support::shapes::{self, Kind, Rng};
use crate::support::tree::{Harness, Op, Probe};

use quadrat::{Aabb, Circle, Config, Key, Ray, Vec2};

const CONFIGS: [Config; 5] = [
    Config {
        max_items: 1,
        max_depth: 8,
        ..Config::DEFAULT
    },
    Config {
        max_items: 2,
        max_depth: 24,
        ..Config::DEFAULT
    },
    Config {
        max_items: 4,
        max_depth: 3,
        ..Config::DEFAULT
    },
    Config {
        max_items: 32,
        max_depth: 16,
        ..Config::DEFAULT
    },
    // The default: leaves of 64 items.
    Config::DEFAULT,
];

/// A probe aimed at the harness's items, so queries have hits.
fn probe(h: &Harness, rng: &mut Rng) -> Probe {
    let live = &h.model.live;
    let pick = |rng: &mut Rng| -> Aabb {
        if live.is_empty() {
            h.tree.world()
        } else {
            live[rng.below(live.len() as u64) as usize].1
        }
    };
    let a = pick(rng);
    let b = pick(rng);
    let area = a.union(&b);
    let c = pick(rng).center();
    let far = pick(rng).center();
    let radius = (f64::from(far.x) - f64::from(c.x)).abs() as f32;
    let dir = Vec2::new(far.x * 0.5 - c.x * 0.5, far.y * 0.5 - c.y * 0.5);
    let dir = if dir.x == 0.0 && dir.y == 0.0 {
        Vec2::new(1.0, 0.0)
    } else {
        dir
    };
    Probe {
        area,
        circle: Circle::new(c, radius.min(f32::MAX)),
        point: pick(rng).min,
        k: rng.below(6) as usize,
        ray: Ray::new(a.min, dir),
        max_dist: if rng.chance(50) {
            f32::INFINITY
        } else {
            radius
        },
    }
}

/// How a tree is filled.
#[derive(Clone, Copy, Debug)]
enum Fill {
    /// One `insert` at a time, checked after each.
    OneByOne,
    /// One `insert` per box with no question in between: deferred, then
    /// placed in bulk by the first question.
    Each,
    /// `insert_many`.
    Bulk,
}

impl Fill {
    const ALL: [Fill; 3] = [Fill::OneByOne, Fill::Each, Fill::Bulk];
}

#[derive(Clone, Copy, Debug)]
enum Drain {
    Insertion,
    Reverse,
    Random,
}

/// Builds `boxes` into a fresh tree (see [`Fill`]), then removes
/// every item in the given order. Validates after each step; compares
/// everything with brute force every `every` steps and at the ends.
fn fill_and_drain(
    world: Aabb,
    config: Config,
    boxes: &[Aabb],
    fill: Fill,
    drain: Drain,
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let mut h = Harness::new(world, config);
    let every = (boxes.len() / 8).max(1);
    let fail = |e: String, what: &str| -> ! {
        panic!(
            "{what} ({world:?}, {config:?}, {fill:?}, {drain:?}, {} boxes): {e}",
            boxes.len()
        )
    };
    match fill {
        Fill::Bulk => h
            .apply(&Op::InsertMany(boxes.to_vec()))
            .unwrap_or_else(|e| fail(e, "insert_many")),
        Fill::Each => {
            h.apply(&Op::InsertEach(boxes.to_vec()))
                .unwrap_or_else(|e| fail(e, "insert each"));
            h.check_items().unwrap_or_else(|e| fail(e, "deferred"));
        }
        Fill::OneByOne => {
            for (i, &b) in boxes.iter().enumerate() {
                h.apply(&Op::Insert(b))
                    .unwrap_or_else(|e| fail(e, "insert"));
                h.check_items().unwrap_or_else(|e| fail(e, "after insert"));
                if i % every == 0 {
                    h.check(&probe(&h, &mut rng))
                        .unwrap_or_else(|e| fail(e, "after insert"));
                }
            }
        }
    }
    h.check(&probe(&h, &mut rng))
        .unwrap_or_else(|e| fail(e, "filled"));
    let mut order: Vec<Key> = h.model.live.iter().map(|e| e.0).collect();
    match drain {
        Drain::Insertion => {}
        Drain::Reverse => order.reverse(),
        Drain::Random => rng.shuffle(&mut order),
    }
    for (i, k) in order.into_iter().enumerate() {
        let at = h.model.live.iter().position(|e| e.0 == k).unwrap();
        h.apply(&Op::Remove(at))
            .unwrap_or_else(|e| fail(e, "remove"));
        h.check_items()
            .unwrap_or_else(|e| fail(e, &format!("after remove #{i}")));
        if i % every == 0 {
            h.check(&probe(&h, &mut rng))
                .unwrap_or_else(|e| fail(e, "after remove"));
        }
    }
    h.check(&probe(&h, &mut rng))
        .unwrap_or_else(|e| fail(e, "drained"));
    // The drained tree takes everything again, and rebuilds.
    h.apply(&Op::InsertMany(boxes.to_vec()))
        .unwrap_or_else(|e| fail(e, "refill"));
    h.apply(&Op::Rebuild).unwrap_or_else(|e| fail(e, "rebuild"));
    h.check(&probe(&h, &mut rng))
        .unwrap_or_else(|e| fail(e, "refilled"));
}

#[test]
fn every_kind_filled_and_drained_in_every_order() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    let mut seed = 1;
    for kind in Kind::ALL {
        for config in CONFIGS {
            for n in [71, 300] {
                let boxes = shapes::boxes(kind, world, n, &mut Rng::new(seed));
                for fill in Fill::ALL {
                    for drain in [Drain::Insertion, Drain::Reverse, Drain::Random] {
                        seed += 1;
                        fill_and_drain(world, config, &boxes, fill, drain, seed);
                    }
                }
            }
        }
    }
}

#[test]
fn grids_of_every_size_drain_cleanly() {
    // Every grid from 1 to 130 points with one item per leaf: the sizes
    // where emptied runs and compactions line up differently.
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    let config = CONFIGS[0];
    for n in 1..=130 {
        let boxes = shapes::boxes(Kind::GridPoints, world, n, &mut Rng::new(n as u64));
        fill_and_drain(
            world,
            config,
            &boxes,
            Fill::ALL[n % 3],
            Drain::Insertion,
            n as u64,
        );
    }
}

#[test]
fn extreme_worlds_and_edge_boxes() {
    let mut seed = 1000;
    for world in shapes::extreme_worlds() {
        for kind in Kind::ALL {
            for config in [CONFIGS[0], CONFIGS[3], CONFIGS[4]] {
                seed += 1;
                let mut rng = Rng::new(seed);
                let mut boxes = shapes::boxes(kind, world, 120, &mut rng);
                boxes.extend(shapes::edge_boxes(20, &mut rng));
                for b in &boxes {
                    assert!(b.validate().is_ok(), "generator made {b:?} in {world:?}");
                }
                let fill = Fill::ALL[seed as usize % 3];
                fill_and_drain(world, config, &boxes, fill, Drain::Random, seed);
            }
        }
    }
}

#[test]
fn a_large_pile_on_one_point_and_on_split_lines() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    for (kind, n) in [(Kind::Pile, 5000), (Kind::SplitLines, 3000)] {
        let boxes = shapes::boxes(kind, world, n, &mut Rng::new(7));
        let mut h = Harness::new(world, CONFIGS[1]);
        h.apply(&Op::InsertMany(boxes.clone())).unwrap();
        h.check(&probe(&h, &mut Rng::new(1))).unwrap();
        for i in 0..n / 2 {
            h.apply(&Op::Remove(i * 7)).unwrap();
        }
        h.check(&probe(&h, &mut Rng::new(2))).unwrap();
        for &b in &boxes[..n / 4] {
            h.apply(&Op::Insert(b)).unwrap();
        }
        h.check(&probe(&h, &mut Rng::new(3))).unwrap();
        // Emptied and filled again one by one: deferred, then placed in
        // bulk by the first question.
        h.apply(&Op::Clear).unwrap();
        h.apply(&Op::InsertEach(boxes.clone())).unwrap();
        h.check_items().unwrap();
        h.check(&probe(&h, &mut Rng::new(4))).unwrap();
        // The placed index then changes like any tree.
        for i in 0..n / 3 {
            h.apply(&Op::Remove(i * 2)).unwrap();
        }
        h.check(&probe(&h, &mut Rng::new(5))).unwrap();
    }
}

/// Random operation mixes over structured boxes, with the caller's code
/// panicking now and then.
#[test]
fn mixed_operations_over_structured_boxes() {
    for seed in 0..24u64 {
        let mut rng = Rng::new(seed);
        let worlds = shapes::extreme_worlds();
        let world = if seed % 3 == 0 {
            worlds[rng.below(worlds.len() as u64) as usize]
        } else {
            shapes::world(Vec2::new(0.0, 0.0), 100.0)
        };
        let config = CONFIGS[seed as usize % CONFIGS.len()];
        let mut h = Harness::new(world, config);
        for step in 0..600 {
            let op = crate::support::ops::random_op(&mut rng, world, &h);
            h.apply(&op)
                .unwrap_or_else(|e| panic!("seed {seed} step {step} {op:?}: {e}"));
            h.check_items()
                .unwrap_or_else(|e| panic!("seed {seed} step {step} {op:?}: {e}"));
            if step % 20 == 0 {
                let p = probe(&h, &mut rng);
                h.check(&p)
                    .unwrap_or_else(|e| panic!("seed {seed} step {step} {p:?}: {e}"));
            }
        }
    }
}

/// `update_all` re-places the items that left their node one by one, all
/// at once, or by rebuilding the tree, by how many left (up to 1/128 of the
/// items, up to 1/16, more). Whichever it takes, the tree is the one
/// `insert_many` builds from the new boxes, node for node, with the same
/// pairs, over structured boxes in every configuration, frame after frame
/// as the share of items that jump elsewhere goes from none to all.
#[test]
fn update_all_gives_the_built_tree_for_any_share_of_movers() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    for (c, &config) in CONFIGS.iter().enumerate() {
        for (k, &kind) in Kind::ALL.iter().enumerate() {
            let mut rng = Rng::new((c * 16 + k) as u64);
            let mut now = shapes::boxes(kind, world, 3000, &mut rng);
            let mut tree = quadrat::QuadTree::with_config(world, config);
            let keys = tree.insert_many(now.iter().copied().zip(0u32..));
            for jump_every in [0u64, 400, 90, 40, 20, 9, 3, 1, 60, 0] {
                for b in now.iter_mut() {
                    *b = if jump_every > 0 && rng.below(jump_every) == 0 {
                        let c = Vec2::new(rng.range(-5.0, 105.0), rng.range(-5.0, 105.0));
                        Aabb::from_center(c, [rng.range(0.0, 2.0), rng.range(0.0, 2.0)])
                    } else {
                        let s = (b.width() + b.height()) * 0.1 + 0.05;
                        b.translate([rng.range(-s, s), rng.range(-s, s)])
                    };
                }
                tree.update_all(|_, &i, _| now[i as usize]);
                let what = format!("{kind:?} {config:?}, one in {jump_every} jumps");
                tree.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut built = quadrat::QuadTree::with_config(world, config);
                built.insert_many(now.iter().copied().zip(0u32..));
                let shape = |t: &quadrat::QuadTree<u32>| {
                    t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>()
                };
                assert_eq!(shape(&tree), shape(&built), "{what}: nodes");
                let pairs = |t: &quadrat::QuadTree<u32>| {
                    let mut p: Vec<(u32, u32)> = Vec::new();
                    t.for_each_pair(|a, b| {
                        let (a, b) = (t[a], t[b]);
                        p.push((a.min(b), a.max(b)));
                    });
                    p.sort_unstable();
                    p
                };
                assert_eq!(pairs(&tree), pairs(&built), "{what}: pairs");
                for (&key, b) in keys.iter().zip(&now) {
                    assert_eq!(tree.aabb(key), Some(*b), "{what}");
                }
            }
        }
    }
}

/// From 2¹⁸ items, once the first 1/32 of the items (by key) are seen,
/// `update_all` rebuilds as soon as more than 1/160 of the items seen left
/// their node, without testing the rest (from 2¹⁵ items, more than 1/32);
/// and `par_update_all` on the pool from 1/512. Whether the first keys
/// speak for the rest or not (the movers all among the first keys, or all
/// among the last), the tree is the one `insert_many` builds from the new
/// boxes, node for node, and every box is the new one.
#[test]
fn a_tree_is_the_built_tree_whatever_its_sample_says() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 1000.0);
    let mut rng = Rng::new(7);
    // A tree where more than 1/160 movers in the sample call for the
    // rebuild, and one where more than 1/32 do.
    let sizes = [(1 << 18) + 40_000, (1 << 15) + 8_000];
    for (kind, n) in [Kind::Random, Kind::GridPoints, Kind::MixedSizes]
        .into_iter()
        .flat_map(|kind| sizes.map(|n| (kind, n)))
    {
        let mut now = shapes::boxes(kind, world, n, &mut rng);
        let mut tree = quadrat::QuadTree::new(world);
        let keys = tree.insert_many(now.iter().copied().zip(0u32..));
        #[cfg(feature = "parallel")]
        let mut par = tree.clone();
        // Which items move each frame, by key: all drift (movers spread
        // evenly), only the sample's jump (the sample overstates), only
        // the keys after it jump (the sample sees none), and one in 64
        // jumps while the rest drift.
        type Moves = fn(usize, usize) -> u8;
        let frames: [(&str, Moves); 4] = [
            ("all drift", |_, _| 1),
            ("the first 1/16 jump", |i, n| if i < n / 16 { 2 } else { 0 }),
            (
                "the last 1/40 jump",
                |i, n| if i >= n - n / 40 { 2 } else { 0 },
            ),
            ("one in 64 jumps", |i, _| if i % 64 == 0 { 2 } else { 1 }),
        ];
        for (what, how) in frames {
            for (i, b) in now.iter_mut().enumerate() {
                *b = match how(i, n) {
                    0 => *b,
                    1 => {
                        let s = (b.width() + b.height()) * 0.3 + 0.2;
                        b.translate([rng.range(-s, s), rng.range(-s, s)])
                    }
                    _ => {
                        let c = Vec2::new(rng.range(-5.0, 1005.0), rng.range(-5.0, 1005.0));
                        Aabb::from_center(c, [rng.range(0.0, 2.0), rng.range(0.0, 2.0)])
                    }
                };
            }
            tree.update_all(|_, &i, _| now[i as usize]);
            let what = format!("{kind:?}, {n} items, {what}");
            tree.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut built = quadrat::QuadTree::new(world);
            built.insert_many(now.iter().copied().zip(0u32..));
            let shape = |t: &quadrat::QuadTree<u32>| {
                t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>()
            };
            assert_eq!(shape(&tree), shape(&built), "{what}: nodes");
            for (&key, b) in keys.iter().zip(&now) {
                assert_eq!(tree.aabb(key), Some(*b), "{what}");
            }
            #[cfg(feature = "parallel")]
            {
                par.par_update_all(|_, &i, _| now[i as usize]);
                par.validate()
                    .unwrap_or_else(|e| panic!("{what}, par_update_all: {e}"));
                assert_eq!(shape(&par), shape(&built), "{what}, par_update_all: nodes");
                for (&key, b) in keys.iter().zip(&now) {
                    assert_eq!(par.aabb(key), Some(*b), "{what}, par_update_all");
                }
            }
        }
    }
}

/// The tutorials' loop, frame after frame, over structured boxes in every
/// configuration: clear, then every box inserted again one by one, so
/// that the first question builds the index of the deferred inserts (from
/// the slots' order when it still follows the last tree's, as it does
/// after a refill in the same order). The boxes drift a little from frame
/// to frame, or stay; now and then they come in another order, fewer of
/// them, or more. Every frame is checked against brute force (items,
/// queries, nearest, ray casts, pairs) and against the tree `insert_many`
/// builds from the same boxes, node for node.
#[test]
fn the_tutorials_loop_frame_after_frame() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    for (c, &config) in CONFIGS.iter().enumerate() {
        for (k, &kind) in Kind::ALL.iter().enumerate() {
            let mut rng = Rng::new((c * 16 + k) as u64 + 900);
            let mut now = shapes::boxes(kind, world, 3000, &mut rng);
            let mut h = Harness::new(world, config);
            for frame in 0..9 {
                match frame {
                    // The same boxes again, in the same order.
                    1 => {}
                    // In another order.
                    4 => rng.shuffle(&mut now),
                    // Fewer: the last third gone.
                    6 => now.truncate(2000),
                    // More than ever: new boxes after the others.
                    7 => now.extend(shapes::boxes(kind, world, 1500, &mut rng)),
                    _ => {
                        for b in now.iter_mut() {
                            let s = (b.width() + b.height()) * 0.1 + 0.05;
                            *b = b.translate([rng.range(-s, s), rng.range(-s, s)]);
                        }
                    }
                }
                let what = format!("{kind:?} {config:?}, frame {frame}");
                h.apply(&Op::Clear).unwrap();
                h.apply(&Op::InsertEach(now.clone())).unwrap();
                h.check(&probe(&h, &mut rng))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut built = quadrat::QuadTree::with_config(world, config);
                built.insert_many(now.iter().copied().zip(0u32..));
                let shape = |t: &quadrat::QuadTree<u32>| {
                    t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>()
                };
                assert_eq!(shape(&h.tree), shape(&built), "{what}: nodes");
            }
        }
    }
}
