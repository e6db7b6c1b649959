//! Worlds where most bodies stay still for many steps, checked step by step
//! against the brute-force world. A step carries the contacts of unchanged
//! bodies over and asks the tree only about the bodies that changed, so
//! these tests wake single bodies up, teleport them, change their layers,
//! shapes and masks, remove and add them, set positions to where bodies
//! already are, and now and then move many at once (one by one or in one
//! batch) so that the step switches between its incremental form and the
//! full pass and back.

use crate::support::shapes::Rng;
use crate::world_model::{Harness, Move, Op, check_bodies, check_step};
use quadrat::{Aabb, Config, Filter, Layers, Shape, Vec2};

const TILE: Layers = Layers::bit(0);
const MOVER: Layers = Layers::bit(1);
const GHOST: Layers = Layers::bit(2);

/// A body's layer and mask, drawn from the few combinations a game uses.
fn filter(rng: &mut Rng) -> Filter {
    match rng.below(5) {
        0 => Filter::on(TILE).colliding_with(MOVER),
        1 => Filter::on(MOVER).colliding_with(TILE | MOVER),
        2 => Filter::on(MOVER).colliding_with(TILE),
        3 => Filter::on(GHOST).colliding_with(Layers::NONE),
        _ => Filter::on(MOVER | GHOST),
    }
}

fn shape(rng: &mut Rng, size: f32) -> Shape {
    match rng.below(4) {
        0 => Shape::Circle {
            radius: rng.range(0.0, size),
        },
        1 => Shape::Aabb {
            half_extents: Vec2::new(rng.range(0.0, size), rng.range(0.0, size)),
        },
        2 => Shape::Capsule {
            half_segment: Vec2::new(rng.range(-size, size), rng.range(-size, size)),
            radius: rng.range(0.0, size * 0.5),
        },
        _ => Shape::Point,
    }
}

/// The scenes the tests start from.
#[derive(Clone, Copy, Debug)]
enum Scene {
    /// A tile map: unit boxes on a grid, edge to edge, with holes, on a
    /// layer that never meets itself, and movers on it.
    Tiles,
    /// A pile: bodies heaped in a few spots, all interacting, so that many
    /// contacts rest between bodies that never move.
    Pile,
    /// Every kind of shape scattered, some outside the world.
    Scatter,
}

fn populate(h: &mut Harness, scene: Scene, rng: &mut Rng) -> Result<(), String> {
    match scene {
        Scene::Tiles => {
            // The map in one batch.
            let mut tiles = Vec::new();
            for y in 0..20 {
                for x in 0..20 {
                    if rng.chance(10) {
                        continue; // a hole
                    }
                    let half = Vec2::new(0.5, 0.5);
                    let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                    let tile = Filter::on(TILE).colliding_with(MOVER);
                    tiles.push((Shape::Aabb { half_extents: half }, p, tile));
                }
            }
            h.apply(&Op::AddMany(tiles))?;
            for _ in 0..40 {
                let p = Vec2::new(rng.range(0.0, 20.0), rng.range(0.0, 20.0));
                h.apply(&Op::Add(shape(rng, 0.8), p, filter(rng)))?;
            }
        }
        Scene::Pile => {
            for i in 0..300 {
                let spot = Vec2::new((i % 3) as f32 * 7.0 + 3.0, 5.0);
                let p = spot + Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
                let mover = Filter::on(MOVER).colliding_with(TILE | MOVER);
                h.apply(&Op::Add(shape(rng, 1.0), p, mover))?;
            }
        }
        Scene::Scatter => {
            for _ in 0..400 {
                let p = Vec2::new(rng.range(-5.0, 25.0), rng.range(-5.0, 25.0));
                h.apply(&Op::Add(shape(rng, 1.5), p, filter(rng)))?;
            }
        }
    }
    Ok(())
}

/// One random change to one body.
fn change(h: &Harness, rng: &mut Rng) -> Op {
    let i = rng.below(1 << 20) as usize;
    match rng.below(13) {
        0..=2 => Op::Nudge(i, rng.range(-0.7, 0.7), rng.range(-0.7, 0.7)),
        3 => Op::Move(i, Vec2::new(rng.range(-3.0, 23.0), rng.range(-3.0, 23.0))),
        // A far teleport, out of the world and back later.
        4 => Op::Move(i, Vec2::new(rng.range(-500.0, 500.0), 1e4)),
        5 => Op::SetLayer(i, filter(rng).layer),
        6 => Op::SetMask(i, filter(rng).mask),
        7 => Op::Reshape(i, shape(rng, 1.0)),
        8 => Op::Remove(i),
        9 => {
            let p = Vec2::new(rng.range(0.0, 20.0), rng.range(0.0, 20.0));
            Op::Add(shape(rng, 0.8), p, filter(rng))
        }
        10 => Op::AddTouching(i, rng.range(0.0, 6.3), rng.range(0.1, 1.0), 0),
        // A few bodies nudged in one batch, one of them perhaps not at all.
        11 => Op::SetPositions(
            (0..1 + rng.below(4))
                .map(|j| match rng.below(4) {
                    0 => Move::Stay(i + j as usize),
                    _ => Move::By(i + j as usize, rng.range(-0.7, 0.7), rng.range(-0.7, 0.7)),
                })
                .collect(),
        ),
        // Set a body where it already is: not a change.
        _ => match h.model.pick(i) {
            Some(j) => Op::Move(j, h.model.live[j].1.position),
            None => Op::RemoveStale(i),
        },
    }
}

/// Runs `steps` steps from `scene`: mostly a few changes a step, sometimes
/// none, sometimes a third of the bodies moving at once. Returns how many
/// steps were incremental.
fn run(scene: Scene, config: Config, seed: u64, steps: usize) -> Result<usize, String> {
    let mut rng = Rng::new(seed);
    let mut h = Harness::new(Aabb::new([0.0, 0.0], [20.0, 20.0]), config);
    populate(&mut h, scene, &mut rng)?;
    let mut incremental = 0;
    for step in 0..steps {
        let ops = match rng.below(21) {
            0..=3 => 0,
            4..=17 => 1 + rng.below(4) as usize,
            18 => h.model.live.len() / 3, // a burst: the full pass
            19 => {
                // A burst in one batch: most bodies nudged, some kept.
                let n = h.model.live.len();
                let moves = (0..n)
                    .map(|j| match rng.below(5) {
                        0 => Move::Stay(j),
                        _ => Move::By(j, rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)),
                    })
                    .collect();
                h.apply(&Op::SetPositions(moves))
                    .map_err(|e| format!("step {step}, a batch of {n} moves: {e}"))?;
                0
            }
            _ => 12,
        };
        for _ in 0..ops {
            let op = change(&h, &mut rng);
            h.apply(&op)
                .map_err(|e| format!("step {step}, {op:?}: {e}"))?;
        }
        if rng.chance(1) {
            h.apply(&Op::Clear)?;
            populate(&mut h, scene, &mut rng)?;
        }
        check_step(&mut h.world, &mut h.model).map_err(|e| format!("step {step}: {e}"))?;
        let events = h.world.events();
        if !events.full_pass {
            incremental += 1;
            // Only what changed was examined: never more candidate pairs
            // than the changed bodies could have made.
            if events.changed == 0 && events.candidates != 0 {
                return Err(format!(
                    "step {step}: nothing changed, {} candidates",
                    events.candidates
                ));
            }
        }
        if step % 25 == 0 {
            check_bodies(&h.world, &h.model).map_err(|e| format!("step {step}: {e}"))?;
        }
        // Now and then the next step starts from scratch buffers freed.
        if step % 40 == 39 {
            h.apply(&Op::ShrinkToFit)
                .map_err(|e| format!("step {step}: {e}"))?;
        }
    }
    Ok(incremental)
}

const CONFIGS: [Config; 3] = [
    Config {
        max_items: 32,
        max_depth: 16,
        ..Config::DEFAULT
    },
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
];

#[test]
fn resting_worlds_match_brute_force_step_by_step() {
    for scene in [Scene::Tiles, Scene::Pile, Scene::Scatter] {
        for (c, config) in CONFIGS.into_iter().enumerate() {
            let seed = 0x5EED ^ ((c as u64) << 8) ^ scene as u64;
            let steps = 160;
            let incremental = run(scene, config, seed, steps)
                .unwrap_or_else(|e| panic!("{scene:?}, {config:?}: {e}"));
            // The point of these scenes: most steps take the incremental form.
            assert!(
                incremental * 10 >= steps * 7,
                "{scene:?}, {config:?}: only {incremental} of {steps} steps were incremental"
            );
        }
    }
}

/// A body that rests for a long time and then wakes up, against bodies
/// that never move: its contacts begin and end exactly when brute force
/// says, and the resting contacts around it stay reported every step.
#[test]
fn waking_up_after_a_long_rest() {
    let mut h = Harness::new(Aabb::new([0.0, 0.0], [20.0, 20.0]), Config::default());
    let mut rng = Rng::new(7);
    populate(&mut h, Scene::Tiles, &mut rng).unwrap();
    let sleeper = h.model.live.len();
    let ball = Shape::Circle { radius: 0.5 };
    let mover = Filter::on(MOVER).colliding_with(TILE | MOVER);
    h.apply(&Op::Add(ball, Vec2::new(10.0, 10.0), mover))
        .unwrap();
    for step in 0..200 {
        if step % 50 == 49 {
            // Wake up: roll across the map for a few steps.
            for d in 0..5 {
                h.apply(&Op::Nudge(sleeper, 0.3 * d as f32, -0.2)).unwrap();
                check_step(&mut h.world, &mut h.model).unwrap();
            }
        }
        check_step(&mut h.world, &mut h.model).unwrap_or_else(|e| panic!("step {step}: {e}"));
        assert!(!h.world.events().contacts.is_empty());
    }
}

/// The cost of a step follows what changed: with nothing changed, no pair
/// is examined, whatever the world holds; with one body moved, only its
/// pairs are.
#[test]
fn a_step_examines_only_the_pairs_of_what_changed() {
    let mut h = Harness::new(Aabb::new([0.0, 0.0], [20.0, 20.0]), Config::default());
    let mut rng = Rng::new(11);
    populate(&mut h, Scene::Tiles, &mut rng).unwrap();
    let first = h.world.step();
    assert!(first.full_pass);
    let all = first.candidates;
    assert!(all > 0);
    for _ in 0..3 {
        let events = h.world.step();
        assert_eq!(
            (events.changed, events.candidates, events.exact_tests),
            (0, 0, 0)
        );
        assert!(!events.full_pass);
    }
    let key = h.model.live[0].0;
    let p = h.model.live[0].1.position;
    h.world.set_position(key, p + Vec2::new(0.25, 0.0));
    let events = h.world.step();
    assert_eq!(events.changed, 1);
    assert!(!events.full_pass);
    // A unit tile touches at most its 8 neighbours and a few movers.
    assert!(events.candidates <= 20, "{} candidates", events.candidates);
    assert!(events.candidates < all);
}

/// `Events::changed` counts slots: a body removed and another added into
/// the slot it freed count once; after `clear`, it is the bodies the world
/// holds, not those the clear removed.
#[test]
fn changed_counts_slots_and_after_a_clear_the_bodies_held() {
    use quadrat::CollisionWorld;
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    let keys: Vec<_> = (0..5)
        .map(|i| world.add(Shape::Point, [i as f32, 0.0], Filter::ALL, i))
        .collect();
    assert_eq!(world.step().changed, 5);
    assert_eq!(world.remove(keys[2]), Some(2));
    let again = world.add(Shape::Point, [50.0, 50.0], Filter::ALL, 9);
    assert_eq!(again.index(), keys[2].index(), "the freed slot is reused");
    assert_eq!(world.step().changed, 1);
    world.set_position(keys[0], [0.0, 1.0]);
    world.set_position(keys[1], [1.0, 1.0]);
    assert_eq!(world.step().changed, 2);
    world.clear();
    assert_eq!(world.step().changed, 0);
    world.add(Shape::Point, [1.0, 1.0], Filter::ALL, 1);
    world.clear();
    world.add(Shape::Point, [2.0, 2.0], Filter::ALL, 2);
    world.add(Shape::Point, [3.0, 3.0], Filter::ALL, 3);
    assert_eq!(world.step().changed, 2);
}
