//! The collision world's steady state allocates nothing: frames of moving
//! bodies (one by one and in batches) and steps, once its buffers have
//! grown, and the `_into` queries.

use quadrat::scenario::{Layout, Scenario};
use quadrat::{CollisionWorld, Filter, Key, Layers, Shape, Vec2};

use crate::counting::allocations_during;

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
