//! The collision world's steady state allocates nothing: frames of moving
//! bodies (one by one and in batches) and steps, once its buffers have
//! grown, and the `_into` queries.

use quadrat::scenario::{Layout, Scenario};
use quadrat::{CollisionWorld, Filter, Key, Layers, Shape, Vec2};

use crate::counting::{allocations_during, held_by};

pub(crate) fn steady_state_steps_allocate_nothing() {
    let s = Scenario::new(Layout::Clustered, 20_000, 11);
    let mut world = CollisionWorld::new(s.world);
    let mut bodies: Vec<(Key, Vec2)> = Vec::new();
    for (i, b) in s.boxes().into_iter().enumerate() {
        let shape = match i % 3 {
            0 => Shape::Circle {
                radius: b.width() * 0.6,
            },
            1 => Shape::Aabb {
                half_extents: b.size() * 0.5,
            },
            _ => Shape::Capsule {
                half_segment: Vec2::new(b.width() * 0.4, 0.0),
                radius: b.width() * 0.2,
            },
        };
        let k = world.add(shape, b.center(), Filter::on(Layers::bit(i as u32 % 2)), i);
        bodies.push((k, b.center()));
    }
    // Every body circles around its start with a period of 16 frames, each
    // with its own phase, so that pairs begin and end.
    let move_all = |world: &mut CollisionWorld<usize>, f: u32| {
        for (i, &(k, p)) in bodies.iter().enumerate() {
            let t = (f + i as u32 % 16) as f32 * core::f32::consts::TAU / 16.0;
            world.set_position(k, p + Vec2::new(t.cos(), t.sin()) * 3.0);
        }
    };
    // Warm up over two periods: the buffers grow to their working sizes.
    for f in 0..32 {
        move_all(&mut world, f);
        world.step();
    }
    let (mut in_steps, mut in_moves) = (0, 0);
    let mut seen = (0, 0, 0);
    for f in 32..48 {
        in_moves += allocations_during(|| move_all(&mut world, f));
        in_steps += allocations_during(|| {
            let e = world.step();
            seen = (
                seen.0 + e.contacts.len(),
                seen.1 + e.began.len(),
                seen.2 + e.ended.len(),
            );
        });
    }
    assert!(
        seen.0 > 10_000 && seen.1 > 1000 && seen.2 > 1000,
        "{seen:?}"
    );
    assert_eq!(
        in_steps, 0,
        "a period of steady steps allocated {in_steps} times"
    );
    // Moving 20,000 bodies a frame: once warm, the tree re-packs its entry
    // array in place, so moves allocate nothing either.
    assert_eq!(in_moves, 0, "a period of moves allocated {in_moves} times");

    // The same frames as one batch a frame: the batch is read into a
    // buffer the world keeps.
    let batch = |f: u32| {
        bodies.iter().enumerate().map(move |(i, &(k, p))| {
            let t = (f + i as u32 % 16) as f32 * core::f32::consts::TAU / 16.0;
            (k, p + Vec2::new(t.cos(), t.sin()) * 3.0)
        })
    };
    for f in 0..32 {
        assert_eq!(world.set_positions(batch(f)), bodies.len());
        world.step();
    }
    let mut in_batches = 0;
    for f in 32..48 {
        in_batches += allocations_during(|| {
            world.set_positions(batch(f));
        });
        world.step();
    }
    assert_eq!(
        in_batches, 0,
        "a period of batched moves allocated {in_batches} times"
    );

    // The incremental step: one body in 50 moves, the rest rest.
    let move_some = |world: &mut CollisionWorld<usize>, f: u32| {
        for &(k, p) in bodies.iter().step_by(50) {
            let t = f as f32 * core::f32::consts::TAU / 16.0;
            world.set_position(k, p + Vec2::new(t.cos(), t.sin()) * 3.0);
        }
    };
    for f in 48..80 {
        move_some(&mut world, f);
        assert!(!world.step().full_pass);
    }
    let mut in_steps = 0;
    for f in 80..96 {
        move_some(&mut world, f);
        in_steps += allocations_during(|| {
            world.step();
        });
    }
    assert_eq!(
        in_steps, 0,
        "a period of incremental steps allocated {in_steps} times"
    );

    // Queries into reused buffers allocate nothing.
    let mut out = Vec::with_capacity(1024);
    let probe = Shape::Circle { radius: 8.0 };
    let n = allocations_during(|| {
        for &(_, p) in bodies.iter().take(2000) {
            out.clear();
            world.overlap_into(&probe, p, Layers::ALL, &mut out);
            world.pick_into(p, Layers::bit(0), &mut out);
        }
    });
    assert!(!out.is_empty());
    assert_eq!(n, 0, "queries into a reused buffer allocated");
}

/// After `reserve(n)`, adding `n` bodies one by one into an empty world
/// allocates nothing (its tree defers their placement to the first
/// question). After most bodies are removed, `shrink_to_fit` leaves the
/// world holding no more than a copy of it, with the same bodies and
/// events.
pub(crate) fn reserve_and_shrink_to_fit() {
    let s = Scenario::new(Layout::Uniform, 20_000, 12);
    let boxes = s.boxes();
    let body = |i: usize| {
        let b = boxes[i];
        let shape = Shape::Circle {
            radius: b.width() * 0.6,
        };
        (shape, b.center(), Filter::on(Layers::bit(i as u32 % 2)))
    };
    let (mut world, built) = held_by(|| {
        let mut world = CollisionWorld::new(s.world);
        world.reserve(boxes.len());
        let adds = allocations_during(|| {
            for i in 0..boxes.len() {
                let (shape, pos, filter) = body(i);
                world.add(shape, pos, filter, i);
            }
        });
        assert_eq!(
            adds,
            0,
            "{} reserved adds allocated {adds} times",
            boxes.len()
        );
        world.step();
        let keys: Vec<Key> = world.keys().collect();
        for k in keys {
            if !k.index().is_multiple_of(10) {
                world.remove(k);
            }
        }
        world.step();
        world
    });
    let state = |w: &CollisionWorld<usize>| {
        let e = w.events();
        let bodies: Vec<_> = w.iter().map(|(k, b, &v)| (k, b, v)).collect();
        (bodies, e.contacts.to_vec(), e.ended.len(), e.began.len())
    };
    let before = state(&world);
    assert_eq!(before.0.len(), boxes.len() / 10);
    assert!(
        !before.1.is_empty() && before.2 > 0,
        "contacts and ended pairs"
    );
    let mut twin = world.clone();
    let ((), change) = held_by(|| world.shrink_to_fit());
    assert_eq!(state(&world), before);
    assert!(change < 0, "shrink_to_fit freed nothing ({change} bytes)");
    let exact = held_by(|| world.clone()).1;
    assert!(
        built + change <= exact,
        "after shrink_to_fit: {} bytes, a copy {exact} (it held {built})",
        built + change
    );
    // The slots of the removed bodies count as room: reserving for as many
    // bodies grows the entry array (24 bytes a body) and the changed list
    // (4), not the slots or the world's per-slot arrays.
    let removed = boxes.len() - world.len();
    let ((), reserved) = held_by(|| world.reserve(removed));
    assert!(
        reserved <= 32 * removed as isize,
        "reserve({removed}) with as many free slots took {reserved} bytes"
    );
    // Shown with `--nocapture`.
    println!(
        "a world of {} bodies drained to a tenth: {built} bytes, {} after shrink_to_fit, {exact} in a copy",
        boxes.len(),
        built + change
    );
    // The next step allocates its scratch again, and answers as the world
    // kept before would.
    for (k, _, _) in state(&world).0.iter().take(50) {
        let p = world.body(*k).unwrap().position + Vec2::new(0.5, 0.0);
        world.set_position(*k, p);
        twin.set_position(*k, p);
    }
    assert_eq!(world.step(), twin.step());
}
