//! `for_each_pair_with` and `pairs_with` against brute force: two trees of
//! every generated kind, in the same and in different worlds, with
//! different configurations, built one by one, in bulk, and after removals
//! and moves. Every intersecting pair must come exactly once, with the
//! first key from the tree asked.

use crate::support::shapes::{self, Kind, Rng};
use quadrat::{Aabb, Config, Key, QuadTree, Vec2};

const CONFIGS: [Config; 4] = [
    Config {
        max_items: 1,
        max_depth: 8,
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

fn brute(a: &QuadTree<()>, b: &QuadTree<()>) -> Vec<(Key, Key)> {
    let mut out = Vec::new();
    for (ka, ba, _) in a.iter() {
        for (kb, bb, _) in b.iter() {
            if ba.intersects(&bb) {
                out.push((ka, kb));
            }
        }
    }
    out.sort_unstable();
    out
}

fn check(a: &QuadTree<()>, b: &QuadTree<()>, what: &str) {
    let want = brute(a, b);
    let mut got = Vec::new();
    a.for_each_pair_with(b, |x, y| got.push((x, y)));
    let reported = got.len();
    got.sort_unstable();
    got.dedup();
    assert_eq!(reported, got.len(), "{what}: a pair was reported twice");
    assert_eq!(got, want, "{what}");
    assert_eq!(a.pairs_with(b), want, "{what}: pairs_with");
    // The other way round: the same pairs, keys swapped.
    let mut back: Vec<(Key, Key)> = b.pairs_with(a).into_iter().map(|(y, x)| (x, y)).collect();
    back.sort_unstable();
    assert_eq!(back, want, "{what}: the other way round");
}

fn tree(world: Aabb, config: Config, boxes: &[Aabb], bulk: bool) -> QuadTree<()> {
    let mut t = QuadTree::with_config(world, config);
    if bulk {
        t.insert_many(boxes.iter().map(|&b| (b, ())));
    } else {
        for &b in boxes {
            t.insert(b, ());
        }
    }
    t
}

#[test]
fn every_kind_against_every_kind() {
    let mut rng = Rng::new(0xC055);
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    for ka in Kind::ALL {
        for kb in Kind::ALL {
            for (c, &config) in CONFIGS.iter().enumerate() {
                let xs = shapes::boxes(ka, world, 150, &mut rng);
                let ys = shapes::boxes(kb, world, 120, &mut rng);
                let a = tree(world, config, &xs, c % 2 == 0);
                let b = tree(world, CONFIGS[(c + 1) % CONFIGS.len()], &ys, c % 2 == 1);
                check(&a, &b, &format!("{ka:?} × {kb:?}, {config:?}"));
            }
        }
    }
}

#[test]
fn trees_over_different_worlds() {
    let mut rng = Rng::new(0xD1FF);
    let big = shapes::world(Vec2::new(-50.0, -50.0), 200.0);
    let small = shapes::world(Vec2::new(30.0, 10.0), 7.0);
    let far = shapes::world(Vec2::new(1e6, 1e6), 10.0);
    for (wa, wb) in [(big, small), (small, big), (big, far), (small, small)] {
        for kind in Kind::ALL {
            let xs = shapes::boxes(kind, wa, 200, &mut rng);
            // Boxes of `b` drawn in `a`'s world, so that they meet, but
            // stored in a tree over `wb`: outside its world, many of them.
            let ys = shapes::boxes(Kind::Random, wa, 100, &mut rng);
            let a = tree(wa, CONFIGS[0], &xs, true);
            let b = tree(wb, CONFIGS[1], &ys, false);
            check(&a, &b, &format!("{kind:?}, {wa:?} × {wb:?}"));
        }
    }
}

#[test]
fn extreme_worlds_and_edge_boxes() {
    let mut rng = Rng::new(0xE06E);
    for world in shapes::extreme_worlds() {
        for kind in [Kind::Random, Kind::TouchingGrid, Kind::Pile] {
            let xs = shapes::boxes(kind, world, 100, &mut rng);
            let ys = shapes::boxes(Kind::MixedSizes, world, 100, &mut rng);
            check(
                &tree(world, CONFIGS[0], &xs, false),
                &tree(world, CONFIGS[2], &ys, true),
                &format!("{kind:?} in {world:?}"),
            );
        }
    }
    let world = Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]);
    let xs = shapes::edge_boxes(200, &mut rng);
    let ys = shapes::edge_boxes(200, &mut rng);
    check(
        &tree(world, CONFIGS[0], &xs, false),
        &tree(world, CONFIGS[1], &ys, true),
        "edge boxes",
    );
}

#[test]
fn after_removals_moves_and_on_empty_trees() {
    let mut rng = Rng::new(0x5EA);
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    let xs = shapes::boxes(Kind::GridPoints, world, 400, &mut rng);
    let ys = shapes::boxes(Kind::Random, world, 300, &mut rng);
    let mut a = tree(world, CONFIGS[0], &xs, false);
    let mut b = tree(world, CONFIGS[2], &ys, true);
    let empty: QuadTree<()> = QuadTree::new(world);
    check(&a, &empty, "against an empty tree");
    check(&empty, &b, "from an empty tree");
    let keys_a: Vec<Key> = a.keys().collect();
    let keys_b: Vec<Key> = b.keys().collect();
    for round in 0..6 {
        for (i, &k) in keys_a.iter().enumerate() {
            if (i + round) % 3 == 0 {
                a.remove(k);
            }
        }
        for &k in &keys_b {
            if let Some(bx) = b.aabb(k) {
                let d = Vec2::new(rng.range(-4.0, 4.0), rng.range(-4.0, 4.0));
                b.update(k, Aabb::new(bx.min + d, bx.max + d));
            }
        }
        check(&a, &b, &format!("round {round}"));
    }
}

/// Runs of more than 64 entries (piles at points of a tree that reached
/// its `max_depth`) walk the other tree run by run, not as a narrowed part.
/// Each pile faces a tree of another shape, so that a node of one tree is
/// never confused with the node at the same index in the other.
#[test]
fn long_runs_against_a_tree_of_another_shape() {
    let world = Aabb::new([0.0, 0.0], [64.0, 64.0]);
    let shallow = Config {
        max_items: 4,
        max_depth: 3,
        ..Config::DEFAULT
    };
    let mut rng = Rng::new(0x10_C5);
    let mut piles = Vec::new();
    for p in 0..6 {
        let c = Vec2::new(5.0 + 9.0 * p as f32, 7.0 + 8.0 * (p % 3) as f32);
        for _ in 0..100 {
            let h = rng.range(0.05, 0.6);
            piles.push(Aabb::from_center(c, [h, h]));
        }
    }
    let mut scatter = Vec::new();
    for _ in 0..300 {
        let c = Vec2::new(rng.range(0.0, 64.0), rng.range(0.0, 64.0));
        let h = rng.range(0.1, 1.5);
        scatter.push(Aabb::from_center(c, [h, h]));
    }
    for (i, config) in CONFIGS.into_iter().enumerate() {
        let a = tree(world, shallow, &piles, true);
        let b = tree(world, config, &scatter, i % 2 == 0);
        assert!(
            a.nodes().any(|n| n.items > 64),
            "the piles make runs of more than 64 entries"
        );
        check(&a, &b, &format!("piles against scatter, config {i}"));
    }
}
