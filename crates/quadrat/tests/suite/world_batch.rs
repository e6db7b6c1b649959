//! The collision world's batch operations, `add_many` and `set_positions`:
//! the same keys, bodies and steps as the same calls one by one, in bulk
//! and one by one alike; refused batches and iterators that panic leave the
//! world exactly as it was; stale keys, repeated keys and moves to where a
//! body already is.

use std::panic::{AssertUnwindSafe, catch_unwind};

use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{Aabb, CollisionWorld, Error, Filter, Key, Layers, Shape, Vec2, WORLD_LIMIT};

const WORLD: Aabb = Aabb {
    min: Vec2 { x: 0.0, y: 0.0 },
    max: Vec2 {
        x: 1000.0,
        y: 1000.0,
    },
};

type Item = (Shape, Vec2, Filter, u32);

/// `n` bodies of every kind from a clustered scene, on three layers.
fn bodies(n: usize, seed: u64, first: u32) -> Vec<Item> {
    let s = Scenario::with_overlaps(Layout::Clustered, n, seed, 4.0);
    s.boxes()
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let h = b.size() * 0.5;
            let shape = match i % 4 {
                0 => Shape::Circle { radius: h.x },
                1 => Shape::Aabb { half_extents: h },
                2 => Shape::Capsule {
                    half_segment: Vec2::new(h.x * 0.6, -h.y * 0.3),
                    radius: h.x * 0.3,
                },
                _ => Shape::Point,
            };
            let filter = Filter::on(Layers::bit(i as u32 % 3))
                .colliding_with(Layers::from_bits(if i % 7 == 0 { 0b001 } else { 0b111 }));
            // Scenes are built in [0, 1000]²; shift them a little so that
            // two batches do not land on the same spots.
            let at = b.center() + Vec2::new(seed as f32 * 3.0, 0.0);
            (shape, at, filter, first + i as u32)
        })
        .collect()
}

/// Every body with its value, in key order.
fn snapshot(world: &CollisionWorld<u32>) -> Vec<String> {
    world
        .iter()
        .map(|(k, b, v)| format!("{k:?} {b:?} {v}"))
        .collect()
}

/// The next step of a copy of `world`, all of it (lists and counts).
fn next_step(world: &CollisionWorld<u32>) -> String {
    format!("{:?}", world.clone().step())
}

/// Two worlds that must be indistinguishable: the same bodies, the same
/// next step, the same key for the next body, the same tree nodes.
fn assert_same(a: &CollisionWorld<u32>, b: &CollisionWorld<u32>, what: &str) {
    assert_eq!(snapshot(a), snapshot(b), "{what}: bodies");
    assert_eq!(next_step(a), next_step(b), "{what}: the next step");
    let next = |w: &CollisionWorld<u32>| w.clone().add(Shape::Point, [1.0, 1.0], Filter::ALL, 0);
    assert_eq!(next(a), next(b), "{what}: the next key");
    let nodes = |w: &CollisionWorld<u32>| w.tree().nodes().collect::<Vec<_>>();
    assert_eq!(nodes(a), nodes(b), "{what}: the tree's nodes");
    a.tree().validate().unwrap();
}

#[test]
fn add_many_gives_the_keys_and_world_of_a_loop_of_add() {
    let mut world = CollisionWorld::new(WORLD);
    let mut twin = world.clone();
    // Into an empty world (built in bulk), then a batch as large as the
    // world (in bulk again), then a small one (one by one), then a large
    // one after removals: the freed slots are handed out first, in the
    // same order.
    let batches = [(2000, 1), (2500, 2), (40, 3), (3000, 4)];
    let mut first = 0;
    for (round, &(n, seed)) in batches.iter().enumerate() {
        let items = bodies(n, seed, first);
        first += n as u32;
        let keys = world.add_many(items.clone());
        let one_by_one: Vec<Key> = items
            .into_iter()
            .map(|(s, p, f, v)| twin.add(s, p, f, v))
            .collect();
        assert_eq!(keys, one_by_one, "batch {round}: keys");
        assert_same(&world, &twin, &format!("batch {round}"));
        assert_eq!(world.step(), twin.step());
        if round == 2 {
            for k in keys.iter().chain(&one_by_one).step_by(3) {
                world.remove(*k);
                twin.remove(*k);
            }
            let (w, t) = (world.step(), twin.step());
            assert!(!w.ended.is_empty());
            assert_eq!(w, t);
        }
    }
    assert_eq!(world.len(), twin.len());
    // An empty batch adds nothing and changes nothing.
    assert_eq!(world.add_many(Vec::<Item>::new()), vec![]);
    assert_eq!(world.step().changed, 0);
}

#[test]
fn a_refused_batch_changes_nothing() {
    let mut world = CollisionWorld::new(WORLD);
    world.add_many(bodies(500, 1, 0));
    world.step();
    let before = world.clone();
    let ball = Shape::Circle { radius: 1.0 };
    let cases: Vec<(usize, Item, Error)> = vec![
        (
            0,
            (ball, Vec2::new(f32::NAN, 1.0), Filter::ALL, 0),
            Error::NonFinite {
                field: "position.x",
                value: f32::NAN,
            },
        ),
        (
            7,
            (ball, Vec2::new(1.0, -2e18), Filter::ALL, 0),
            Error::OutOfRange {
                field: "position.y",
                value: -2e18,
            },
        ),
        (
            99,
            (Shape::Circle { radius: -1.0 }, Vec2::ZERO, Filter::ALL, 0),
            Error::Negative {
                field: "radius",
                value: -1.0,
            },
        ),
        (
            699,
            (Shape::Circle { radius: 2e18 }, Vec2::ZERO, Filter::ALL, 0),
            Error::OutOfRange {
                field: "radius",
                value: 2e18,
            },
        ),
    ];
    for (at, bad, err) in cases {
        // Small and large batches (one by one and in bulk), the bad body
        // at `at`, valid ones after it.
        let mut items = bodies(800, 2, 1000);
        items.insert(at, bad);
        let got = world.try_add_many(items).unwrap_err();
        assert_eq!(got.0, at);
        assert_eq!(got.1.to_string(), err.to_string());
        assert_same(&world, &before, &format!("refused at {at}"));
    }
    // The panicking form says which body and why.
    let msg = catch_unwind(AssertUnwindSafe(|| {
        let mut items = bodies(3, 3, 0);
        items[1].1 = Vec2::new(1.0, f32::INFINITY);
        world.add_many(items);
    }))
    .unwrap_err();
    assert_eq!(
        msg.downcast_ref::<String>().unwrap(),
        "quadrat: invalid body #1 passed to CollisionWorld::add_many: position.y is infinite"
    );
    assert_same(&world, &before, "after the panic");
}

/// An iterator that yields `items` and panics when asked for item `at`.
fn panicking<T: Clone>(items: &[T], at: usize) -> impl Iterator<Item = T> + '_ {
    items.iter().enumerate().map(move |(i, x)| {
        assert!(i != at, "the caller's iterator panics at item {at}");
        x.clone()
    })
}

/// An iterator that panics midway: the world is as before, keys and all.
#[test]
fn an_iterator_that_panics_leaves_the_world_as_it_was() {
    let mut world = CollisionWorld::new(WORLD);
    let keys = world.add_many(bodies(600, 1, 0));
    world.step();
    for &k in keys.iter().step_by(5) {
        world.remove(k);
    }
    world.set_position(keys[1], [500.0, 500.0]); // a change not yet stepped
    let before = world.clone();
    // Large enough for the bulk build, and small.
    for (n, at) in [(900, 700), (900, 0), (10, 4)] {
        let items = bodies(n, 2, 1000);
        let r = catch_unwind(AssertUnwindSafe(|| world.add_many(panicking(&items, at))));
        assert!(r.is_err());
        assert_same(
            &world,
            &before,
            &format!("add_many panicking at {at} of {n}"),
        );
    }
    let moves: Vec<(Key, Vec2)> = keys
        .iter()
        .map(|&k| (k, Vec2::new(k.index() as f32, 3.0)))
        .collect();
    for at in [0, 1, 599] {
        let r = catch_unwind(AssertUnwindSafe(|| {
            world.set_positions(panicking(&moves, at))
        }));
        assert!(r.is_err());
        assert_same(&world, &before, &format!("set_positions panicking at {at}"));
    }
    // And the world still works: the same batch without the panic.
    assert_eq!(world.set_positions(moves.iter().copied()), 480);
}

#[test]
fn set_positions_skips_stale_keys_and_refuses_bad_positions() {
    let mut world = CollisionWorld::new(WORLD);
    let keys = world.add_many(bodies(100, 1, 0));
    let gone = keys[10];
    world.remove(gone);
    world.step();
    let before = world.clone();

    // Bad positions, for live and stale keys alike: refused at their index,
    // nothing moved, nothing marked.
    let bad = [
        (Vec2::new(f32::NAN, 0.0), "position.x is NaN"),
        (Vec2::new(0.0, f32::NEG_INFINITY), "position.y is infinite"),
        (
            Vec2::new(WORLD_LIMIT * 2.0, 0.0),
            "position.x (2e18) is beyond the collision world's range of ±1e18",
        ),
    ];
    for (p, msg) in bad {
        for key in [keys[3], gone] {
            let moves = [
                (keys[0], Vec2::new(1.0, 1.0)),
                (keys[1], Vec2::new(2.0, 2.0)),
                (key, p),
            ];
            let (i, e) = world.try_set_positions(moves).unwrap_err();
            assert_eq!((i, e.to_string()), (2, msg.to_string()));
            assert_same(&world, &before, msg);
        }
    }
    // Stale keys are skipped and not counted.
    let n = world.set_positions([
        (keys[0], [1.0, 1.0]),
        (gone, [2.0, 2.0]),
        (keys[1], [3.0, 3.0]),
    ]);
    assert_eq!(n, 2);
    assert_eq!(world.position(keys[0]), Some(Vec2::new(1.0, 1.0)));
    assert_eq!(world.body(gone), None);
    assert_eq!(world.step().changed, 2);

    // A key given twice ends at its last position; a move to where a body
    // already is (the same bits) is no change, but -0.0 is not 0.0.
    let k = keys[5];
    world.set_position(k, [0.0, 4.0]);
    world.step();
    assert_eq!(world.set_positions([(k, [9.0, 9.0]), (k, [0.0, 4.0])]), 2);
    assert_eq!(world.position(k), Some(Vec2::new(0.0, 4.0)));
    assert_eq!(world.step().changed, 1); // as the loop of set_position does
    assert_eq!(world.set_positions([(k, [0.0, 4.0])]), 1);
    assert_eq!(world.step().changed, 0);
    assert_eq!(world.set_positions([(k, [-0.0, 4.0])]), 1);
    assert_eq!(world.step().changed, 1);

    // The panicking form says which move and why.
    let msg = catch_unwind(AssertUnwindSafe(|| {
        world.set_positions([(k, [1.0, 1.0]), (k, [f32::NAN, 1.0])]);
    }))
    .unwrap_err();
    assert_eq!(
        msg.downcast_ref::<String>().unwrap(),
        "quadrat: invalid position #1 passed to CollisionWorld::set_positions: position.x is NaN"
    );
    assert_eq!(world.position(k), Some(Vec2::new(-0.0, 4.0)));
}

/// Frames of a game: everything moves, or a few bodies do, or half do with
/// some moved to where they are; bodies come and go. The batch and the loop
/// of `set_position` give the same steps, frame after frame: contacts,
/// began and ended in the same order, and the same counts.
#[test]
fn set_positions_steps_like_a_loop_of_set_position() {
    let mut rng = Rng::new(5);
    let mut world = CollisionWorld::new(WORLD);
    let mut keys = world.add_many(bodies(3000, 1, 0));
    let mut twin = world.clone();
    let mut fulls = 0;
    for frame in 0..40u32 {
        let share = match frame % 4 {
            0 => 1,   // everything: the tree's one pass
            1 => 200, // a few: one by one, and the incremental step
            2 => 2,
            _ => 9, // between the two
        };
        let mut moves = Vec::new();
        for &k in &keys {
            if rng.below(share) != 0 {
                continue;
            }
            let Some(p) = world.position(k) else {
                moves.push((k, Vec2::new(1.0, 1.0))); // a stale key
                continue;
            };
            let p = match rng.below(8) {
                0 => p, // no move
                1 => Vec2::new(rng.range(0.0, 1000.0), rng.range(0.0, 1000.0)),
                2 => p + Vec2::new(2000.0, 0.0), // out of the world's box
                _ => p + Vec2::new(rng.range(-4.0, 4.0), rng.range(-4.0, 4.0)),
            };
            moves.push((k, p));
        }
        let live = moves.iter().filter(|m| twin.set_position(m.0, m.1)).count();
        assert_eq!(world.set_positions(moves.iter().copied()), live);
        if frame % 5 == 4 {
            for _ in 0..20 {
                let k = keys[rng.below(keys.len() as u64) as usize];
                assert_eq!(world.remove(k), twin.remove(k));
            }
            let extra = bodies(30, u64::from(frame), 100_000 * frame);
            let added = world.add_many(extra.clone());
            for (s, p, f, v) in extra {
                twin.add(s, p, f, v);
            }
            keys.extend(added);
        }
        let (a, b) = (world.step(), twin.step());
        fulls += usize::from(a.full_pass);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "frame {frame}");
        assert_eq!(snapshot(&world), snapshot(&twin), "frame {frame}");
        world.tree().validate().unwrap();
    }
    assert!((5..35).contains(&fulls), "{fulls} full passes");
}
