//! Hand-written edge cases, one or more per rule of the contract.

use crate::support::Told;
use crate::world_model::catch_expected_at;
use quadrat::{Aabb, Circle, Config, Error, Key, QuadTree, Vec2};

fn world() -> Aabb {
    Aabb::new([0.0, 0.0], [100.0, 100.0])
}

fn sorted_query<T>(tree: &QuadTree<T>, area: Aabb) -> Vec<Key> {
    let mut v: Vec<Key> = tree.query(area).map(|(k, _)| k).collect();
    v.sort_unstable();
    v
}

#[test]
fn touching_edges_and_corners_intersect() {
    let mut tree = QuadTree::new(world());
    let a = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), 'a');
    let right = tree.insert(Aabb::new([20.0, 12.0], [30.0, 18.0]), 'r'); // shares an edge
    let corner = tree.insert(Aabb::new([20.0, 20.0], [25.0, 25.0]), 'c'); // shares a corner
    let apart = tree.insert(Aabb::new([20.001, 0.0], [21.0, 9.999]), 'x'); // just apart from a
    assert_eq!(tree.pairs(), vec![(a, right), (a, corner)]);
    // A query touching only an edge finds the box.
    assert_eq!(
        sorted_query(&tree, Aabb::new([0.0, 0.0], [10.0, 10.0])),
        vec![a]
    );
    // A point on an edge or corner is inside.
    assert_eq!(tree.query_point([10.0, 15.0]).count(), 1);
    assert_eq!(tree.query_point([20.0, 20.0]).count(), 2);
    // A circle touching a box edge counts.
    let hits: Vec<_> = tree
        .query_circle(Circle::new([21.0, 5.0], 0.0))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(hits, vec![apart]);
}

#[test]
fn touching_across_split_lines_of_every_level() {
    // Boxes meeting exactly on the lines where nodes split (50, 25, 12.5, ...),
    // with a tree small enough to split many times.
    let config = Config {
        max_items: 1,
        max_depth: 8,
        ..Config::default()
    };
    let mut tree = QuadTree::with_config(world(), config);
    let mut expected = 0;
    for (i, line) in [50.0f32, 25.0, 12.5, 75.0, 6.25].into_iter().enumerate() {
        let y = 5.0 + i as f32 * 15.0;
        tree.insert(Aabb::new([line - 1.0, y], [line, y + 1.0]), ());
        tree.insert(Aabb::new([line, y], [line + 1.0, y + 1.0]), ());
        expected += 1;
        tree.validate().unwrap();
    }
    assert_eq!(tree.pairs().len(), expected);
}

#[test]
fn zero_size_items_are_valid() {
    let mut tree = QuadTree::new(world());
    let p = tree.insert(Aabb::from_point([30.0, 40.0]), ());
    let q = tree.insert(Aabb::from_point([30.0, 40.0]), ());
    let seg = tree.insert(Aabb::new([30.0, 0.0], [30.0, 100.0]), ()); // vertical segment
    assert_eq!(tree.pairs(), vec![(p, q), (p, seg), (q, seg)]);
    assert_eq!(tree.query_point([30.0, 40.0]).count(), 3);
    assert_eq!(tree.query_point([30.0, 41.0]).count(), 1);
}

#[test]
fn stale_keys_answer_none_forever() {
    let mut tree = QuadTree::new(world());
    let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 1);
    assert_eq!(tree.remove(k), Some(1));
    // The slot is reused by the next insert; the old key must not see it.
    let k2 = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 2);
    assert_eq!(k.index(), k2.index());
    assert_ne!(k, k2);
    assert!(!tree.contains_key(k));
    assert_eq!(tree.get(k), None);
    assert_eq!(tree.get_mut(k), None);
    assert_eq!(tree.aabb(k), None);
    assert_eq!(tree.remove(k), None);
    assert!(!tree.update(k, world()));
    assert_eq!(tree.try_update(k, world()), Err(Error::StaleKey));
    assert_eq!(tree.get(k2), Some(&2));
    // Clear invalidates every key too, and refills reuse the slots.
    tree.clear();
    let k3 = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 3);
    assert_eq!(k3.index(), k2.index());
    assert_eq!(tree.get(k2), None);
    assert_eq!(tree.get(k3), Some(&3));
    // Many removal cycles on one slot never bring an old key back.
    let mut old = Vec::new();
    for i in 0..1000 {
        let k = tree.insert(Aabb::from_point([5.0, 5.0]), i);
        old.push(k);
        tree.remove(k);
    }
    assert!(old.iter().all(|&k| !tree.contains_key(k)));
    tree.validate().unwrap();
}

#[test]
fn keys_of_a_clone_that_moved_on_are_refused() {
    // A clone removes and refills a slot, so its key is one generation
    // ahead of the item the original still holds in that slot: the
    // original must refuse it, as the clone refuses the original's key.
    let mut tree = QuadTree::new(world());
    let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 1);
    let mut clone = tree.clone();
    assert_eq!(clone.remove(k), Some(1));
    let ahead = clone.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 2);
    assert_eq!(ahead.index(), k.index());
    assert_ne!(ahead, k);
    for (t, foreign, own, value) in [(&mut tree, ahead, k, 1), (&mut clone, k, ahead, 2)] {
        assert!(!t.contains_key(foreign));
        assert_eq!(t.get(foreign), None);
        assert_eq!(t.get_mut(foreign), None);
        assert_eq!(t.aabb(foreign), None);
        assert!(!t.update(foreign, world()));
        assert_eq!(t.try_update(foreign, world()), Err(Error::StaleKey));
        assert_eq!(t.remove(foreign), None);
        assert_eq!(t.get(own), Some(&value));
        t.validate().unwrap();
    }
}

#[test]
#[should_panic(expected = "stale or foreign key")]
fn indexing_with_a_stale_key_panics() {
    let mut tree = QuadTree::new(world());
    let k = tree.insert(Aabb::from_point([5.0, 5.0]), 0);
    tree.remove(k);
    let _ = tree[k];
}

#[test]
fn foreign_keys_are_refused() {
    let seeded = |key_seed| Config {
        key_seed,
        ..Config::default()
    };
    let mut a = QuadTree::with_config(world(), seeded(1));
    let mut b = QuadTree::with_config(world(), seeded(2));
    let ka: Vec<Key> = (0..10)
        .map(|i| a.insert(Aabb::from_point([i as f32, 1.0]), i))
        .collect();
    let kb: Vec<Key> = (0..10)
        .map(|i| b.insert(Aabb::from_point([i as f32, 1.0]), i))
        .collect();
    for (&x, &y) in ka.iter().zip(&kb) {
        assert_eq!(x.index(), y.index());
        assert!(!b.contains_key(x));
        assert!(!a.contains_key(y));
        assert_eq!(b.get(x), None);
    }
    // A key for a slot the tree never had.
    let far = Key::from_bits((1_000_000u64 << 32) | 1).unwrap();
    assert_eq!(a.get(far), None);
    assert_eq!(a.remove(far), None);
}

/// Keys follow only from the config and the calls: two trees built side by
/// side (a process-wide counter would set them apart) give the same keys,
/// through removals, reuse and `clear`.
#[test]
fn keys_are_deterministic() {
    let run = || {
        let mut tree = QuadTree::new(world());
        let mut keys = Vec::new();
        for round in 0..3 {
            let ks: Vec<Key> = (0..50)
                .map(|i| tree.insert(Aabb::from_point([i as f32 * 0.3, round as f32]), i))
                .collect();
            for k in ks.iter().step_by(3) {
                tree.remove(*k);
            }
            keys.extend(ks);
            keys.extend(tree.insert_many((0..20).map(|i| (Aabb::from_point([i as f32, 9.0]), i))));
            if round == 1 {
                tree.clear();
            }
        }
        keys
    };
    let first = run();
    let _unrelated = QuadTree::<u8>::new(world());
    assert_eq!(first, run());
    // The same start is the default seed's: another seed gives other keys.
    let mut other = QuadTree::with_config(
        world(),
        Config {
            key_seed: 9,
            ..Config::default()
        },
    );
    assert_ne!(other.insert(Aabb::from_point([0.0, 0.0]), 0), first[0]);
}

#[test]
fn keys_are_8_bytes_and_round_trip() {
    assert_eq!(std::mem::size_of::<Key>(), 8);
    assert_eq!(std::mem::size_of::<Option<Key>>(), 8);
    let mut tree = QuadTree::new(world());
    let k = tree.insert(Aabb::from_point([5.0, 5.0]), ());
    assert_eq!(Key::from_bits(k.to_bits()), Some(k));
    assert_eq!(Key::from_bits(0), None);
}

/// Every way a box can be invalid, with the message that names it.
fn invalid_boxes() -> Vec<(Aabb, &'static str)> {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    vec![
        (Aabb::new([nan, 0.0], [1.0, 1.0]), "min.x is NaN"),
        (Aabb::new([0.0, nan], [1.0, 1.0]), "min.y is NaN"),
        (Aabb::new([0.0, 0.0], [nan, 1.0]), "max.x is NaN"),
        (Aabb::new([0.0, 0.0], [1.0, nan]), "max.y is NaN"),
        (Aabb::new([-inf, 0.0], [1.0, 1.0]), "min.x is infinite"),
        (Aabb::new([0.0, 0.0], [1.0, inf]), "max.y is infinite"),
        (
            Aabb::new([2.0, 0.0], [1.0, 1.0]),
            "min.x (2) is greater than max.x (1)",
        ),
        (
            Aabb::new([0.0, 5.0], [1.0, -5.0]),
            "min.y (5) is greater than max.y (-5)",
        ),
    ]
}

/// Every finite `f32` is a valid coordinate: the largest magnitudes, both
/// zeros and the subnormals. Boxes reaching the ends of the range are taken
/// by every path that checks boxes (one at a time, in bulk, moved one at a
/// time and all at once), kept outside the world, and found by queries
/// and pairs; only the infinities and NaN are refused.
#[test]
fn boxes_at_the_ends_of_f32_are_accepted() {
    let max = f32::MAX;
    let tiny = f32::from_bits(1);
    let edges = [
        Aabb::new([-max, -max], [max, max]),
        Aabb::new([max, max], [max, max]),
        Aabb::new([-max, -max], [-max, -max]),
        Aabb::new([-0.0, -0.0], [0.0, 0.0]),
        Aabb::new([-tiny, tiny], [tiny, f32::MIN_POSITIVE]),
        Aabb::new([50.0, -max], [51.0, max]),
    ];
    for b in edges {
        assert_eq!(b.validate(), Ok(()), "{b:?}");
    }
    assert!(
        Aabb::new([0.0, 0.0], [max.next_up(), 1.0])
            .validate()
            .is_err()
    );
    let mut tree = QuadTree::new(world());
    let inner = tree.insert(Aabb::new([10.0, 10.0], [11.0, 11.0]), usize::MAX);
    let one_by_one: Vec<Key> = edges
        .iter()
        .zip(0..)
        .map(|(b, i)| tree.insert(*b, i))
        .collect();
    let bulk = tree.insert_many(edges.iter().copied().zip(10..));
    tree.validate().unwrap();
    let everything = Aabb::new([-max, -max], [max, max]);
    assert_eq!(sorted_query(&tree, everything).len(), 13);
    // The box over the whole range meets every other item, both copies of
    // it included; the two corner points meet only the boxes over them.
    let pairs = tree.pairs();
    for whole in [one_by_one[0], bulk[0]] {
        let met = pairs
            .iter()
            .filter(|(a, b)| *a == whole || *b == whole)
            .count();
        assert_eq!(met, 12, "{whole:?}");
    }
    let corner = |k: Key| pairs.iter().filter(|(a, b)| *a == k || *b == k).count();
    assert_eq!(
        corner(one_by_one[1]),
        3,
        "the top corner meets its copy and the two boxes over it"
    );
    assert!(tree.update(inner, Aabb::new([max, -max], [max, -max])));
    assert_eq!(tree.aabb(inner), Some(Aabb::new([max, -max], [max, -max])));
    tree.update_all(|_, &i, b| {
        if i % 2 == 0 {
            edges[(i + 1) % edges.len()]
        } else {
            b
        }
    });
    tree.validate().unwrap();
    assert_eq!(sorted_query(&tree, everything).len(), 13);
}

#[test]
fn invalid_boxes_are_refused_and_change_nothing() {
    let mut tree = QuadTree::with_config(
        world(),
        Config {
            max_items: 2,
            max_depth: 6,
            ..Config::default()
        },
    );
    let keys: Vec<Key> = (0..50)
        .map(|i| tree.insert(Aabb::from_center([i as f32 * 2.0, 50.0], [1.5, 1.5]), i))
        .collect();
    let before_pairs = tree.pairs();
    let before_nodes: Vec<_> = tree.nodes().collect();
    for (bad, message) in invalid_boxes() {
        let err = tree.try_insert(bad, 999).unwrap_err();
        assert_eq!(err.to_string(), message);
        let err = tree.try_update(keys[7], bad).unwrap_err();
        assert_eq!(err.to_string(), message);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tree.insert(bad, 0)));
        let msg = caught.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(msg.contains(message), "{msg}");
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tree.update(keys[3], bad)));
        assert!(caught.is_err());
    }
    tree.validate().unwrap();
    assert_eq!(tree.len(), 50);
    assert_eq!(tree.pairs(), before_pairs);
    assert_eq!(tree.nodes().collect::<Vec<_>>(), before_nodes);
    assert_eq!(
        tree.aabb(keys[7]),
        Some(Aabb::from_center([14.0, 50.0], [1.5, 1.5]))
    );
}

/// An insert refused by an empty tree, by one whose inserts wait to be
/// placed (deferred), by one refilled after a clear, or by a placed one,
/// panics with the reason at the caller's line and changes nothing: the
/// tree keeps its items, their keys and the keys to come.
#[test]
fn invalid_boxes_are_refused_by_empty_deferred_refilled_and_placed_trees() {
    let boxes = |n: u32| (0..n).map(|i| Aabb::from_center([i as f32 * 3.0, 40.0], [2.0, 2.0]));
    // (items before the refusals, refilled after a clear, placed)
    let cases = [
        (0, false, false),
        (1, false, false),
        (70, false, false),
        (70, true, false),
        (70, false, true),
    ];
    for (waiting, refilled, placed) in cases {
        let case = format!("{waiting} items, refilled {refilled}, placed {placed}");
        let setup = |t: &mut QuadTree<u32>| -> Vec<Key> {
            let mut keys: Vec<Key> = boxes(waiting)
                .zip(0..)
                .map(|(b, i)| t.insert(b, i))
                .collect();
            if refilled {
                // A question ranks the items; the clear hands their slots
                // out again in the tree's order; half of them come back.
                let _ = t.pairs();
                t.clear();
                keys = boxes(waiting / 2)
                    .zip(0..)
                    .map(|(b, i)| t.insert(b, i))
                    .collect();
            }
            if placed {
                let _ = t.pairs();
                t.insert(Aabb::from_center([90.0, 90.0], [1.0, 1.0]), 999);
            }
            keys
        };
        let (mut tree, mut twin) = (QuadTree::new(world()), QuadTree::new(world()));
        let mut keys = setup(&mut tree);
        setup(&mut twin);
        for (bad, message) in invalid_boxes() {
            let err = tree.try_insert(bad, 999).unwrap_err();
            assert_eq!(err.to_string(), message);
            let line = line!() + 1;
            let (caught, at) = catch_expected_at(|| tree.insert(bad, 0));
            let payload = caught.unwrap_err();
            let msg = payload.downcast_ref::<String>().unwrap();
            assert_eq!(
                *msg,
                format!("quadrat: invalid box passed to QuadTree::insert: {message}")
            );
            // `#[track_caller]`: the caller's line, not the library's.
            assert_eq!(at, Some((file!().to_owned(), line)), "{case}");
        }
        // The rest of the refill, then the next key: those the twin,
        // never refused, hands out.
        if refilled {
            for (t, k) in [(&mut tree, &mut keys), (&mut twin, &mut Vec::new())] {
                k.extend(
                    boxes(waiting)
                        .zip(0u32..)
                        .skip(waiting as usize / 2)
                        .map(|(b, i)| t.insert(b, i)),
                );
            }
        }
        let next = Aabb::from_center([50.0, 60.0], [1.0, 1.0]);
        assert_eq!(tree.insert(next, 7), twin.insert(next, 7), "{case}");
        assert_eq!(tree.len(), twin.len(), "{case}");
        tree.validate().unwrap();
        assert_eq!(tree.pairs(), twin.pairs(), "{case}");
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(tree.get(k), Some(&(i as u32)), "{case}");
        }
    }
}

#[test]
fn invalid_world_and_config_are_refused() {
    for (bad, message) in invalid_boxes() {
        let err = QuadTree::<()>::try_with_config(bad, Config::default()).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    let err = QuadTree::<()>::try_with_config(
        world(),
        Config {
            max_items: 0,
            max_depth: 4,
            ..Config::default()
        },
    );
    assert!(matches!(
        err,
        Err(Error::InvalidConfig {
            field: "max_items",
            ..
        })
    ));
    let err = QuadTree::<()>::try_with_config(
        world(),
        Config {
            max_items: 4,
            max_depth: 25,
            ..Config::default()
        },
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        "config.max_depth must be at most 24 (quadrat::MAX_DEPTH)"
    );
    let caught =
        std::panic::catch_unwind(|| QuadTree::<()>::new(Aabb::new([1.0, 0.0], [0.0, 1.0])));
    assert!(caught.is_err());
}

#[test]
fn invalid_query_shapes_find_nothing() {
    let mut tree = QuadTree::new(world());
    tree.insert(Aabb::new([0.0, 0.0], [100.0, 100.0]), ());
    assert_eq!(
        tree.query(Aabb::new([f32::NAN, 0.0], [1.0, 1.0])).count(),
        0
    );
    assert_eq!(tree.query(Aabb::new([5.0, 5.0], [4.0, 6.0])).count(), 0); // inverted
    assert_eq!(tree.query_circle(Circle::new([5.0, 5.0], -1.0)).count(), 0);
    assert_eq!(
        tree.query_circle(Circle::new([5.0, 5.0], f32::NAN)).count(),
        0
    );
    assert_eq!(tree.query_point([f32::NAN, 5.0]).count(), 0);
    // A NaN centre coordinate is nowhere: not within the item's extent on
    // that axis (the gap along it once came out 0, and the circle then
    // matched every box by its other coordinate alone).
    for center in [[f32::NAN, 5.0], [5.0, f32::NAN], [f32::NAN; 2]] {
        for radius in [0.0, 5.0, f32::INFINITY] {
            let c = Circle::new(center, radius);
            assert_eq!(tree.query_circle(c).count(), 0, "{c:?}");
            let mut keys = Vec::new();
            tree.query_keys_into(c, &mut keys);
            assert!(keys.is_empty(), "{c:?}");
            assert!(!c.contains_point([5.0, 5.0]), "{c:?}");
            assert!(!c.intersects_circle(&Circle::new([5.0, 5.0], 1.0)), "{c:?}");
            assert!(!Circle::new([5.0, 5.0], 1.0).intersects_circle(&c), "{c:?}");
        }
        let b = Aabb::new([0.0, 0.0], [100.0, 100.0]);
        assert!(b.distance_to_point(center).is_nan(), "{center:?}");
        assert!(b.distance_squared_to_point(center).is_nan(), "{center:?}");
        assert!(
            !Circle::new([5.0, 5.0], 1.0).contains_point(center),
            "{center:?}"
        );
    }
    // An infinite query area is fine: it covers everything.
    let all = Aabb::new([f32::NEG_INFINITY; 2], [f32::INFINITY; 2]);
    assert_eq!(tree.query(all).count(), 1);
}

#[test]
fn objects_outside_the_world_are_kept_and_found() {
    let mut tree = QuadTree::with_config(
        world(),
        Config {
            max_items: 2,
            max_depth: 8,
            ..Config::default()
        },
    );
    let mut inside = Vec::new();
    for i in 0..40 {
        inside.push(tree.insert(Aabb::from_center([i as f32 * 2.5, 30.0], [0.5, 0.5]), ()));
    }
    let far = tree.insert(Aabb::new([1e6, 1e6], [1e6 + 1.0, 1e6 + 1.0]), ());
    let far2 = tree.insert(Aabb::new([1e6 + 1.0, 1e6], [1e6 + 2.0, 1e6 + 1.0]), ());
    let below = tree.insert(Aabb::new([10.0, -50.0], [11.0, -49.0]), ());
    let spanning = tree.insert(Aabb::new([-500.0, 29.0], [500.0, 29.5]), ()); // crosses the world
    tree.validate().unwrap();
    assert_eq!(
        tree.query_point([1e6 + 0.5, 1e6 + 0.5]).next().map(|h| h.0),
        Some(far)
    );
    assert_eq!(
        sorted_query(&tree, Aabb::new([9.0, -60.0], [12.0, -40.0])),
        vec![below]
    );
    let pairs = tree.pairs();
    assert!(pairs.contains(&(far, far2)));
    assert_eq!(
        pairs
            .iter()
            .filter(|p| p.0 == spanning || p.1 == spanning)
            .count(),
        40
    );
    // Moving items out of and back into the world.
    assert!(tree.update(inside[0], Aabb::new([-1e5, -1e5], [-1e5 + 1.0, -1e5 + 1.0])));
    assert_eq!(
        sorted_query(&tree, Aabb::new([-2e5, -2e5], [-5e4, -5e4])),
        vec![inside[0]]
    );
    assert!(tree.update(far, Aabb::new([50.0, 50.0], [51.0, 51.0])));
    tree.validate().unwrap();
    assert_eq!(
        tree.query_point([50.5, 50.5]).next().map(|h| h.0),
        Some(far)
    );
}

#[test]
fn a_million_objects_on_one_point() {
    let config = Config::default();
    let mut tree = QuadTree::with_config(world(), config);
    let p = Aabb::from_point([37.5, 37.5]);
    let keys: Vec<Key> = (0..1_000_000u32).map(|i| tree.insert(p, i)).collect();
    assert!(tree.depth() <= config.max_depth);
    assert_eq!(tree.depth(), config.max_depth);
    assert!(tree.node_count() <= 1 + 4 * config.max_depth as usize);
    assert_eq!(tree.query_point([37.5, 37.5]).count(), 1_000_000);
    assert_eq!(tree.query(Aabb::new([0.0, 0.0], [37.0, 37.0])).count(), 0);
    tree.validate().unwrap();
    for k in keys {
        tree.remove(k);
    }
    assert!(tree.is_empty());
    assert_eq!(tree.node_count(), 1);
    tree.validate().unwrap();
}

#[test]
fn every_pair_on_one_point_exactly_once() {
    let mut tree = QuadTree::new(world());
    let n = 2000usize;
    for i in 0..n {
        tree.insert(Aabb::from_point([12.5, 87.5]), i);
    }
    let mut count = 0usize;
    tree.for_each_pair(|a, b| {
        assert!(a < b);
        count += 1;
    });
    assert_eq!(count, n * (n - 1) / 2);
}

#[test]
fn depth_is_capped_for_every_setting() {
    for max_depth in [0, 1, 5, quadrat::MAX_DEPTH] {
        let mut tree = QuadTree::with_config(
            world(),
            Config {
                max_items: 1,
                max_depth,
                ..Config::default()
            },
        );
        for i in 0..200u32 {
            // Adjacent f32 values: the closest distinct points there are.
            tree.insert(
                Aabb::from_point([f32::from_bits(50f32.to_bits() + i), 50.0]),
                i,
            );
        }
        assert!(tree.depth() <= max_depth);
        tree.validate().unwrap();
        assert_eq!(tree.query_point([50.0, 50.0]).count(), 1);
    }
}

#[test]
fn straddlers_and_big_objects_do_not_pile_up_at_the_root() {
    // Small boxes centred exactly on the world's split lines: a tight
    // quadtree keeps every one of them in the root.
    let mut tree = QuadTree::new(world());
    for i in 0..1000 {
        let t = i as f32 * 0.1;
        tree.insert(Aabb::from_center([50.0, t], [0.2, 0.2]), ());
        tree.insert(Aabb::from_center([t, 50.0], [0.2, 0.2]), ());
    }
    let root = tree.nodes().next().unwrap();
    assert_eq!(root.items, 0);
    // Mixed sizes: the big ones sink to the level of their size.
    let s = quadrat::scenario::Scenario::new(quadrat::scenario::Layout::MixedSizes, 10_000, 3);
    let mut tree = QuadTree::new(s.world);
    for b in s.boxes() {
        tree.insert(b, ());
    }
    let views: Vec<_> = tree.nodes().collect();
    assert_eq!(views[0].items, 0);
    let shallow: usize = views.iter().filter(|v| v.depth <= 1).map(|v| v.items).sum();
    assert!(shallow < 100, "{shallow} items in the top two levels");
}

#[test]
fn removing_collapses_quadrants() {
    let mut tree = QuadTree::with_config(
        world(),
        Config {
            max_items: 4,
            max_depth: 10,
            ..Config::default()
        },
    );
    let keys: Vec<Key> = (0..500)
        .map(|i| {
            let x = (i * 37 % 100) as f32;
            let y = (i * 61 % 100) as f32;
            tree.insert(Aabb::from_center([x, y], [0.3, 0.3]), i)
        })
        .collect();
    assert!(tree.node_count() > 50);
    for (i, k) in keys.iter().enumerate() {
        tree.remove(*k);
        if i % 50 == 0 {
            tree.validate().unwrap();
        }
        // Never more structure than the remaining items need.
        let remaining = 500 - i - 1;
        if remaining <= 4 {
            assert_eq!(tree.node_count(), 1);
        }
    }
}

#[test]
fn update_in_place_and_across_the_tree() {
    let mut tree = QuadTree::with_config(
        world(),
        Config {
            max_items: 2,
            max_depth: 8,
            ..Config::default()
        },
    );
    let keys: Vec<Key> = (0..100)
        .map(|i| {
            tree.insert(
                Aabb::from_center(
                    [(i % 10) as f32 * 10.0 + 5.0, (i / 10) as f32 * 10.0 + 5.0],
                    [1.0, 1.0],
                ),
                i,
            )
        })
        .collect();
    // Tiny moves stay in place; big ones cross the world; resizes change depth.
    for (i, &k) in keys.iter().enumerate() {
        let b = tree.aabb(k).unwrap();
        let moved = match i % 4 {
            0 => b.translate([0.01, -0.01]),
            1 => b.translate([50.0, 50.0]),
            2 => Aabb::from_center(b.center(), [30.0, 30.0]),
            _ => Aabb::from_point(b.center()),
        };
        assert!(tree.update(k, moved));
        assert_eq!(tree.aabb(k), Some(moved));
        assert_eq!(tree.get(k), Some(&i));
    }
    tree.validate().unwrap();
    // Updating to the same box changes nothing.
    let before: Vec<_> = tree.nodes().collect();
    for &k in &keys {
        let b = tree.aabb(k).unwrap();
        tree.update(k, b);
    }
    assert_eq!(tree.nodes().collect::<Vec<_>>(), before);
}

#[test]
fn clear_then_refill_gives_the_same_tree() {
    let s = quadrat::scenario::Scenario::new(quadrat::scenario::Layout::Clustered, 5000, 9);
    let boxes = s.boxes();
    let mut tree = QuadTree::new(s.world);
    for (i, &b) in boxes.iter().enumerate() {
        tree.insert(b, i);
    }
    let first: Vec<_> = tree.nodes().collect();
    let pairs_first = tree.pairs().len();
    for _ in 0..3 {
        tree.clear();
        assert_eq!(tree.node_count(), 1);
        for (i, &b) in boxes.iter().enumerate() {
            tree.insert(b, i);
        }
        tree.validate().unwrap();
        assert_eq!(tree.nodes().collect::<Vec<_>>(), first);
        assert_eq!(tree.pairs().len(), pairs_first);
    }
}

#[test]
fn degenerate_and_extreme_worlds() {
    // A world of zero size: everything still works, nothing splits forever.
    let mut tree = QuadTree::new(Aabb::from_point([5.0, 5.0]));
    for i in 0..100 {
        tree.insert(Aabb::from_point([5.0, 5.0]), i);
        tree.insert(Aabb::new([i as f32, 0.0], [i as f32 + 1.0, 1.0]), i);
    }
    tree.validate().unwrap();
    assert_eq!(tree.query_point([5.0, 5.0]).count(), 100);
    // A world near the limits of f32.
    let big = Aabb::new([-3e38, -3e38], [3e38, 3e38]);
    let mut tree = QuadTree::with_config(
        big,
        Config {
            max_items: 1,
            max_depth: 24,
            ..Config::default()
        },
    );
    for i in 0..200 {
        let x = (i as f32 - 100.0) * 1e36;
        tree.insert(Aabb::new([x, x], [x + 1e35, x + 1e35]), i);
        tree.insert(Aabb::from_point([i as f32, 0.0]), i);
    }
    tree.validate().unwrap();
    assert_eq!(tree.query(big).count(), 400);
}

#[test]
fn queries_from_many_threads_at_once() {
    let s = quadrat::scenario::Scenario::new(quadrat::scenario::Layout::Uniform, 20_000, 4);
    let mut tree = QuadTree::new(s.world);
    for (i, b) in s.boxes().into_iter().enumerate() {
        tree.insert(b, i);
    }
    let tree = &tree;
    let expected_pairs = tree.pairs().len();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                scope.spawn(move || {
                    let area =
                        Aabb::from_center(Vec2::new(100.0 + t as f32 * 200.0, 500.0), [50.0, 50.0]);
                    (tree.query(area).count(), tree.pairs().len())
                })
            })
            .collect();
        for h in handles {
            let (hits, pairs) = h.join().unwrap();
            assert!(hits > 0);
            assert_eq!(pairs, expected_pairs);
        }
    });
}

/// Inserted one by one into an empty tree, the items wait for the first
/// question: several threads asking it at once, sequential and parallel
/// questions mixed, all get the answers of a tree built in one go.
#[test]
fn first_questions_from_many_threads_at_once() {
    let s = quadrat::scenario::Scenario::new(quadrat::scenario::Layout::Clustered, 5_000, 9);
    let boxes = s.boxes();
    let mut bulk = QuadTree::new(s.world);
    bulk.insert_many(boxes.iter().copied().zip(0..));
    let expected_pairs = bulk.pairs();
    let probe = |t: usize| Aabb::from_center(boxes[t * 97].center(), [40.0, 40.0]);
    let expected_hits: Vec<Vec<_>> = (0..8)
        .map(|t| {
            let mut v: Vec<_> = bulk.query(probe(t)).map(|(k, _)| k).collect();
            v.sort_unstable();
            v
        })
        .collect();
    for round in 0..4 {
        let mut tree = QuadTree::new(s.world);
        for (i, &b) in boxes.iter().enumerate() {
            tree.insert(b, i);
        }
        let tree = &tree;
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    let expected_pairs = &expected_pairs;
                    scope.spawn(move || {
                        let mut hits: Vec<_> = tree.query(probe(t)).map(|(k, _)| k).collect();
                        hits.sort_unstable();
                        if (t + round) % 2 == 0 {
                            assert_eq!(&tree.pairs(), expected_pairs);
                        } else {
                            #[cfg(feature = "parallel")]
                            assert_eq!(&tree.par_pairs(), expected_pairs);
                        }
                        hits
                    })
                })
                .collect();
            for (t, h) in handles.into_iter().enumerate() {
                assert_eq!(h.join().unwrap(), expected_hits[t]);
            }
        });
        tree.validate().unwrap();
    }
}

#[test]
fn retain_and_iterators() {
    let mut tree = QuadTree::new(world());
    for i in 0..100 {
        tree.insert(Aabb::from_point([i as f32, i as f32]), i);
    }
    for (_, _, v) in tree.iter_mut() {
        *v *= 10;
    }
    tree.retain(|_, b, v| b.min.x < 50.0 && *v % 20 == 0);
    assert_eq!(tree.len(), 25);
    assert!(tree.values().all(|v| v % 20 == 0 && *v < 500));
    assert_eq!(tree.keys().count(), 25);
    tree.validate().unwrap();
    let mut extended = QuadTree::new(world());
    extended.extend((0..10).map(|i| (Aabb::from_point([i as f32, 0.0]), i)));
    assert_eq!(extended.len(), 10);
}

#[test]
fn nearest_and_raycast_bad_input_and_edges() {
    use quadrat::Ray;
    let mut tree = QuadTree::new(world());
    let a = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), ());
    let b = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), ()); // duplicate box: a tie
    let far = tree.insert(Aabb::new([500.0, 0.0], [501.0, 1.0]), ()); // outside the world
    // k = 0, NaN or infinite point: nothing.
    assert!(tree.nearest([0.0, 0.0], 0).is_empty());
    assert!(tree.nearest([f32::NAN, 0.0], 3).is_empty());
    assert!(tree.nearest([f32::INFINITY, 0.0], 3).is_empty());
    // k larger than the tree: everything, ties by key.
    let far_dist = Aabb::new([500.0, 0.0], [501.0, 1.0]).distance_to_point([0.0, 15.0]);
    assert_eq!(
        tree.nearest([0.0, 15.0], 10),
        vec![(a, 10.0), (b, 10.0), (far, far_dist)]
    );
    // Zero direction, NaN origin, NaN or negative max_dist: no hit.
    assert_eq!(tree.raycast(Ray::new([0.0, 15.0], [0.0, 0.0]), 100.0), None);
    assert_eq!(
        tree.raycast(Ray::new([f32::NAN, 15.0], [1.0, 0.0]), 100.0),
        None
    );
    assert_eq!(
        tree.raycast(Ray::new([0.0, 15.0], [1.0, 0.0]), f32::NAN),
        None
    );
    assert_eq!(tree.raycast(Ray::new([0.0, 15.0], [1.0, 0.0]), -1.0), None);
    assert!(
        tree.raycast_all(Ray::new([0.0, 15.0], [0.0, 0.0]), 100.0)
            .is_empty()
    );
    // A ray grazing an edge hits (closed boxes); the tie goes to the smaller key.
    assert_eq!(
        tree.raycast(Ray::new([0.0, 10.0], [1.0, 0.0]), 100.0),
        Some((a, 10.0))
    );
    // Starting inside: distance 0. Reaching exactly max_dist: a hit.
    assert_eq!(
        tree.raycast(Ray::new([15.0, 15.0], [0.0, 1.0]), 1.0),
        Some((a, 0.0))
    );
    assert_eq!(
        tree.raycast(Ray::new([0.0, 15.0], [1.0, 0.0]), 10.0),
        Some((a, 10.0))
    );
    // Direction length does not change distances; far objects are found.
    assert_eq!(
        tree.raycast(Ray::new([0.0, 0.5], [250.0, 0.0]), 1000.0),
        Some((far, 500.0))
    );
    assert_eq!(
        tree.raycast_all(Ray::new([0.0, 15.0], [1.0, 0.0]), 1000.0),
        vec![(a, 10.0), (b, 10.0)]
    );
}

/// The `_with` forms take distances from the caller: a NaN is a miss (never
/// the box's entry, which `f32::max` would give), and `-0.0` is `0.0`, a tie
/// broken by key like any other, in all three forms alike. Every box holds
/// the ray's origin and the point, so each item's box distance is 0 and the
/// answer is the caller's distances sorted, then the keys.
#[test]
fn caller_distances_nan_and_negative_zero() {
    use quadrat::Ray;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    for round in 0..40 {
        let mut tree = QuadTree::new(world());
        let n = [1, 2, 5, 40, 300][round % 5];
        let mut items = Vec::new();
        for _ in 0..n {
            let (l, r) = (next(400) as f32 * 0.1, next(400) as f32 * 0.1);
            let (d, u) = (next(400) as f32 * 0.1, next(400) as f32 * 0.1);
            let b = Aabb::new([50.0 - l, 50.0 - d], [50.0 + r, 50.0 + u]);
            let dist = match next(5) {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => next(8) as f32 * 0.5,
            };
            items.push((tree.insert(b, dist), dist));
        }
        let mut want: Vec<(Key, f32)> = items
            .iter()
            .filter(|(_, d)| !d.is_nan())
            .map(|&(k, d)| (k, d + 0.0))
            .collect();
        want.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let ray = Ray::new([50.0, 50.0], [1.0, 0.25]);
        let dist = |_, &d: &f32, _| Some(d);
        let all = tree.raycast_all_with(ray, 1000.0, dist);
        assert_eq!(all, want, "raycast_all_with, round {round}");
        for (_, d) in &all {
            assert!(d.is_sign_positive(), "a distance of {d:?}");
        }
        assert_eq!(
            tree.raycast_with(ray, 1000.0, dist),
            want.first().copied(),
            "raycast_with, round {round}"
        );
        let within: Vec<_> = want.iter().copied().filter(|w| w.1 <= 1.0).collect();
        assert_eq!(tree.raycast_all_with(ray, 1.0, dist), within);
        for k in [1, 2, 3, 10, n] {
            let near = tree.nearest_with([50.0, 50.0], k, dist);
            assert_eq!(
                near,
                want[..k.min(want.len())],
                "nearest_with k = {k}, round {round}"
            );
        }
    }
    // The cases as found: a NaN hit test on a box the ray enters at 10.
    let mut tree = QuadTree::new(world());
    tree.insert(Aabb::new([10.0, 0.0], [20.0, 10.0]), ());
    let ray = Ray::new([0.0, 5.0], [1.0, 0.0]);
    assert_eq!(
        tree.raycast_with(ray, 100.0, |_, _, _| Some(f32::NAN)),
        None
    );
    assert!(
        tree.raycast_all_with(ray, 100.0, |_, _, _| Some(f32::NAN))
            .is_empty()
    );
    assert!(
        tree.nearest_with([0.0, 5.0], 1, |_, _, _| Some(f32::NAN))
            .is_empty()
    );
}

#[test]
fn update_all_matches_update_for_few_and_many_movers() {
    use quadrat::scenario::{Layout, Rng, Scenario};
    let s = Scenario::new(Layout::Clustered, 4000, 21);
    for jump_every in [1000u32, 50, 2] {
        // Few movers are re-placed one by one; many trigger a rebuild.
        let mut a = QuadTree::new(s.world);
        let keys = a.insert_many(s.boxes().into_iter().zip(0u32..));
        let mut b = a.clone();
        let mut rng = Rng::new(u64::from(jump_every));
        let moved: Vec<Aabb> = keys
            .iter()
            .map(|&k| {
                let bx = a.aabb(k).unwrap();
                if rng.below(u64::from(jump_every)) == 0 {
                    Aabb::from_center([rng.range(0.0, 1000.0), rng.range(0.0, 1000.0)], [2.0, 2.0])
                } else {
                    bx.translate([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)])
                }
            })
            .collect();
        a.update_all(|_, &i, _| moved[i as usize]);
        for (&k, &m) in keys.iter().zip(&moved) {
            b.update(k, m);
        }
        a.validate().unwrap();
        b.validate().unwrap();
        let shape = |t: &QuadTree<u32>| t.nodes().map(|n| (n.bounds, n.items)).collect::<Vec<_>>();
        assert_eq!(shape(&a), shape(&b));
        assert_eq!(a.pairs(), b.pairs());
        for (&k, &m) in keys.iter().zip(&moved) {
            assert_eq!(a.aabb(k), Some(m));
        }
    }
}

/// An iterator may claim any length in its `size_hint`. A claim no
/// allocation can meet (`usize::MAX` items, or 2⁴⁰) once made
/// `insert_many` panic while reserving room, after it had packed the entry
/// array of a tree with a hole in it: the panic left the nodes' runs and
/// the slots' places stale, `validate` failed and the next `aabb`
/// panicked out of bounds (2⁴⁰ aborted the process instead). Room is now
/// reserved only where it can be had: the batch goes in, and the tree is
/// valid, in bulk and one by one, sequential and parallel.
#[test]
fn a_batch_that_claims_too_many_items_goes_in() {
    struct Claims<I>(I, usize);
    impl<I: Iterator> Iterator for Claims<I> {
        type Item = I::Item;
        fn next(&mut self) -> Option<I::Item> {
            self.0.next()
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (self.1, None)
        }
    }
    // 2⁴⁰ where `usize` holds it; on 32-bit targets, half of `usize::MAX`.
    let huge = usize::try_from(1u64 << 40).unwrap_or(usize::MAX / 2);
    for claim in [usize::MAX, huge] {
        for batch in [1u32, 200] {
            for parallel in [false, true] {
                let mut tree = QuadTree::with_config(
                    Aabb::new([0.0, 0.0], [100.0, 100.0]),
                    Config {
                        max_items: 4,
                        ..Config::default()
                    },
                );
                let keys: Vec<Key> = (0..40u32)
                    .map(|i| {
                        let p = [(i * 37 % 100) as f32, (i * 61 % 100) as f32];
                        tree.insert(Aabb::from_point(p), i)
                    })
                    .collect();
                // Placed (a question builds the index of the inserts, the
                // removal adopts it), with a hole in the entry array.
                let _ = tree.node_count();
                tree.remove(keys[0]);
                tree.validate().unwrap();
                let items = (0..batch).map(|i| {
                    let p = [(i % 97) as f32 + 0.5, (i % 89) as f32 + 0.25];
                    (Aabb::from_point(p), 1000 + i)
                });
                let what = format!("claim {claim}, batch {batch}, parallel {parallel}");
                let new = if parallel {
                    #[cfg(feature = "parallel")]
                    {
                        tree.par_insert_many(Claims(items, claim))
                    }
                    #[cfg(not(feature = "parallel"))]
                    {
                        tree.insert_many(Claims(items, claim))
                    }
                } else {
                    tree.insert_many(Claims(items, claim))
                };
                tree.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(new.len(), batch as usize, "{what}");
                assert_eq!(tree.len(), 39 + batch as usize, "{what}");
                for (i, &k) in new.iter().enumerate() {
                    assert_eq!(tree.get(k), Some(&(1000 + i as u32)), "{what}");
                }
                for &k in &keys[1..] {
                    assert!(tree.aabb(k).is_some(), "{what}");
                }
                let all: Vec<(Key, Aabb)> = tree
                    .keys()
                    .map(|k| (k, tree.aabb(k).expect("live")))
                    .collect();
                let mut brute = Vec::new();
                for (i, &(ka, a)) in all.iter().enumerate() {
                    for &(kb, b) in &all[i + 1..] {
                        if a.intersects(&b) {
                            brute.push((ka.min(kb), ka.max(kb)));
                        }
                    }
                }
                brute.sort_unstable();
                let mut found = tree.pairs();
                found.sort_unstable();
                assert_eq!(found, brute, "{what}: pairs");
            }
        }
    }
}

/// A refused bulk batch into a tree with free slots (and then one that
/// also needs new ones) leaves the slab as it was: the next keys, one by
/// one and in bulk, are those an untouched clone hands out, whether the
/// batch's iterator tells its length or not. (The slots taken back used
/// to move on a generation.)
#[test]
fn a_refused_bulk_batch_leaves_the_next_keys_alone() {
    for (n, holes, told) in [(100, 40), (100, 100), (300, 10), (300, 0)]
        .into_iter()
        .flat_map(|(n, holes)| [(n, holes, true), (n, holes, false)])
    {
        let mut tree = QuadTree::new(world());
        let keys = tree.insert_many((0..n).map(|i| (Aabb::from_point([i as f32, 1.0]), i)));
        for &k in keys.iter().step_by(3).take(holes) {
            tree.remove(k);
        }
        let untouched = tree.clone();
        let size = tree.len().max(80);
        let batch = (0..size).map(|i| {
            let b = if i + 1 == size {
                Aabb::new([0.0, 0.0], [f32::NAN, 1.0])
            } else {
                Aabb::from_point([i as f32 * 0.5, 7.0])
            };
            (b, 1000 + i)
        });
        assert!(
            tree.try_insert_many(Told(batch, told)).is_err(),
            "{n} {holes}"
        );
        tree.validate().unwrap();
        let mut twin = untouched.clone();
        let one = tree.insert(Aabb::from_point([3.0, 3.0]), 7);
        assert_eq!(
            one,
            twin.insert(Aabb::from_point([3.0, 3.0]), 7),
            "{n} {holes}"
        );
        let more = |t: &mut QuadTree<usize>| {
            let batch = (0..2 * size).map(|i| (Aabb::from_point([i as f32 * 0.25, 9.0]), i));
            t.insert_many(Told(batch, told))
        };
        assert_eq!(more(&mut tree), more(&mut twin), "{n} {holes}");
        assert_eq!(
            tree.nodes().collect::<Vec<_>>(),
            twin.nodes().collect::<Vec<_>>()
        );
        assert_eq!(
            tree.iter().collect::<Vec<_>>(),
            twin.iter().collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_bulk_batch_with_one_bad_box_changes_nothing() {
    for told in [true, false] {
        let mut tree = QuadTree::new(world());
        let kept = tree.insert_many((0..50).map(|i| (Aabb::from_point([i as f32, 1.0]), i)));
        let before_pairs = tree.pairs();
        let before_nodes: Vec<_> = tree.nodes().collect();
        let batch = (0..500).map(|i| {
            let b = if i == 499 {
                Aabb::new([0.0, 0.0], [f32::NAN, 1.0])
            } else {
                Aabb::from_point([i as f32 * 0.1, 2.0])
            };
            (b, 1000 + i)
        });
        assert_eq!(
            tree.try_insert_many(Told(batch, told))
                .unwrap_err()
                .to_string(),
            "max.x is NaN"
        );
        tree.validate().unwrap();
        assert_eq!(tree.len(), 50);
        assert_eq!(tree.pairs(), before_pairs);
        assert_eq!(tree.nodes().collect::<Vec<_>>(), before_nodes);
        assert!(kept.iter().all(|&k| tree.contains_key(k)));
        let more = tree.insert_many(Told(
            (0..200).map(|i| (Aabb::from_point([i as f32 * 0.2, 3.0]), i)),
            told,
        ));
        assert_eq!(tree.len(), 250);
        assert!(more.iter().all(|&k| tree.contains_key(k)));
        tree.validate().unwrap();
    }
}

/// A bulk batch into a tree that never held anything takes its boxes in
/// apart from the tree (see `QuadTree::insert_many`); a bad box or a panic
/// in the caller's iterator still leaves the tree as it was, down to the
/// keys the next batch gets: those of a tree the batch never touched. (The
/// slots taken back used to move on a generation, as removed slots do,
/// so the next keys differed, though no key of theirs was ever handed out.)
#[test]
fn a_failed_first_batch_leaves_an_empty_tree() {
    let batch = |n: usize, bad: Option<usize>, panic_at: Option<usize>| {
        (0..n).map(move |i| {
            if panic_at == Some(i) {
                panic!("the caller's iterator fails");
            }
            let b = if bad == Some(i) {
                Aabb::new([f32::INFINITY, 0.0], [1.0, 1.0])
            } else {
                Aabb::from_point([i as f32 * 0.05, (i % 97) as f32])
            };
            (b, i)
        })
    };
    for (n, told) in [(100, true), (2000, true), (100, false), (2000, false)] {
        for (bad, panic_at) in [(Some(n - 1), None), (Some(0), None), (None, Some(n / 2))] {
            let mut tree = QuadTree::new(world());
            let mut twin = QuadTree::new(world());
            let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tree.try_insert_many(Told(batch(n, bad, panic_at), told))
            }));
            assert!(!matches!(failed, Ok(Ok(_))), "n = {n}: the batch went in");
            tree.validate().unwrap();
            assert!(tree.is_empty());
            assert_eq!(tree.node_count(), 1);
            let keys = tree.insert_many(Told(batch(n, None, None), told));
            let twin_keys = twin.insert_many(batch(n, None, None));
            assert_eq!(
                keys, twin_keys,
                "n = {n}, told {told}, bad {bad:?}, panic at {panic_at:?}"
            );
            tree.validate().unwrap();
            assert_eq!(tree.len(), n);
            assert_eq!(tree.pairs(), twin.pairs());
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(tree.get(k), Some(&i));
            }
        }
    }
}
