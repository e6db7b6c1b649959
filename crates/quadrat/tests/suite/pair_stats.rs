//! `pair_stats`: the pairs it counts are the pairs `for_each_pair`
//! reports, its box tests in a tree of one node are exactly those of a
//! plain sort-and-sweep (counted here independently), and deeper trees over
//! spread-out boxes make fewer of them.

use crate::support::shapes::{self, Kind, Rng};
use quadrat::{Aabb, Config, QuadTree, Vec2};

fn tree(boxes: &[Aabb], world: Aabb, max_items: usize, max_depth: u8) -> QuadTree<()> {
    let config = Config {
        max_items,
        max_depth,
        ..Config::DEFAULT
    };
    let mut tree = QuadTree::with_config(world, config);
    tree.insert_many(boxes.iter().map(|&b| (b, ())));
    tree
}

/// The box tests of a sort-and-sweep over `boxes`: sorted by `min.x`, each
/// box is compared with the following ones until one starts right of its
/// end (that one compared too).
fn sweep_tests(boxes: &[Aabb]) -> u64 {
    let mut sorted = boxes.to_vec();
    sorted.sort_by(|a, b| a.min.x.total_cmp(&b.min.x));
    let mut tests = 0;
    for (i, a) in sorted.iter().enumerate() {
        for b in &sorted[i + 1..] {
            tests += 1;
            if b.min.x > a.max.x {
                break;
            }
        }
    }
    tests
}

#[test]
fn pairs_are_what_for_each_pair_reports() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 100.0);
    for kind in Kind::ALL {
        for (seed, n) in [(1, 0), (2, 1), (3, 50), (4, 700), (5, 2_000)] {
            let boxes = shapes::boxes(kind, world, n, &mut Rng::new(seed));
            for (max_items, max_depth) in [(1, 8), (4, 3), (8, 0), (32, 16)] {
                let t = tree(&boxes, world, max_items, max_depth);
                let stats = t.pair_stats();
                let what = format!("{kind:?}, n {n}, max_items {max_items}, max_depth {max_depth}");
                assert_eq!(stats.pairs, t.pairs().len() as u64, "{what}");
                assert!(stats.box_tests >= stats.pairs, "{what}: {stats:?}");
                if max_depth == 0 {
                    assert_eq!(stats.box_tests, sweep_tests(&boxes), "{what}");
                    assert_eq!(
                        stats.bound_tests, 0,
                        "{what}: one node has no bounds to test"
                    );
                }
            }
        }
    }
}

#[test]
fn deeper_trees_test_fewer_boxes_when_boxes_are_spread() {
    let world = shapes::world(Vec2::new(0.0, 0.0), 1000.0);
    let mut rng = Rng::new(9);
    let boxes: Vec<Aabb> = (0..5_000)
        .map(|_| {
            let c = Vec2::new(rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            Aabb::from_center(c, [3.0, 3.0])
        })
        .collect();
    let mut last = u64::MAX;
    for max_depth in [0, 2, 4, 6] {
        let stats = tree(&boxes, world, 8, max_depth).pair_stats();
        assert!(
            stats.box_tests < last,
            "depth {max_depth}: {} box tests, not fewer than {last}",
            stats.box_tests
        );
        last = stats.box_tests;
    }
    let flat = tree(&boxes, world, 8, 0).pair_stats();
    let deep = tree(&boxes, world, 8, 16).pair_stats();
    assert_eq!(flat.pairs, deep.pairs);
    assert!(
        deep.box_tests * 5 < flat.box_tests,
        "{deep:?} against {flat:?}"
    );
}
