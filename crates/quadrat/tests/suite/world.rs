//! The collision world against brute force: random sequences of add, move,
//! reshape, layer changes, remove and step, and of the batch forms
//! (`add_many`, `set_positions`), checked after every operation against
//! every pair of bodies run through `Shape::contact` with the layer rule;
//! queries against testing every body; bad input; determinism.

use proptest::prelude::*;
use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{
    Aabb, Body, CollisionWorld, Config, Contact, ContactPair, Error, Filter, Key, Layers, Ray,
    RayHit, Shape, Vec2,
};
use std::collections::HashMap;

use crate::world_model::{
    Harness, Model, Move, Op, Probe, check_bodies, check_queries, check_step, next_f32,
};

const WORLD: Aabb = Aabb {
    min: Vec2 { x: 0.0, y: 0.0 },
    max: Vec2 { x: 100.0, y: 100.0 },
};

// ---------------------------------------------------------------------------
// Strategies

/// Coordinates that make ties and exact touching likely: a coarse grid (so
/// that integer sizes touch exactly), split lines, and arbitrary values, now
/// and then outside the world.
fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => (0..=20i32).prop_map(|i| i as f32 * 5.0),
        1 => (0..=16i32).prop_map(|i| i as f32 * 6.25),
        3 => 0.0f32..100.0,
        1 => -150.0f32..250.0,
    ]
}

fn pos() -> impl Strategy<Value = Vec2> {
    (coord(), coord()).prop_map(|(x, y)| Vec2::new(x, y))
}

fn size() -> impl Strategy<Value = f32> {
    prop_oneof![
        1 => Just(0.0f32),
        3 => (1..=5i32).prop_map(|i| i as f32 * 2.5),
        3 => 0.0f32..8.0,
        1 => 8.0f32..60.0,
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => size().prop_map(|radius| Shape::Circle { radius }),
        3 => (size(), size()).prop_map(|(x, y)| Shape::Aabb { half_extents: Vec2::new(x, y) }),
        1 => Just(Shape::Point),
        2 => (-6.0f32..6.0, -6.0f32..6.0, size()).prop_map(|(x, y, radius)| Shape::Capsule {
            half_segment: Vec2::new(x, y),
            radius,
        }),
    ]
}

/// Few layer bits, so that filtering in and out both happen often.
fn bits() -> impl Strategy<Value = Layers> {
    prop_oneof![
        3 => Just(Layers::ALL),
        4 => (0u32..8).prop_map(Layers::from_bits),
        1 => any::<u32>().prop_map(Layers::from_bits),
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    (bits(), bits()).prop_map(|(layer, mask)| Filter { layer, mask })
}

/// Any coordinate, now and then one the world refuses.
fn any_coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => coord(),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(-2e18f32),
    ]
}

/// A batch's move: mostly to a position or by a step, now and then no move
/// or a removed key.
fn batch_move(coord: BoxedStrategy<f32>) -> impl Strategy<Value = Move> {
    prop_oneof![
        4 => (any::<usize>(), coord.clone(), coord.clone())
            .prop_map(|(i, x, y)| Move::To(i, Vec2::new(x, y))),
        4 => (any::<usize>(), -2.0f32..2.0, -2.0f32..2.0).prop_map(|(i, x, y)| Move::By(i, x, y)),
        2 => any::<usize>().prop_map(Move::Stay),
        1 => (any::<usize>(), coord.clone(), coord).prop_map(|(i, x, y)| Move::Stale(i, Vec2::new(x, y))),
    ]
}

/// A batch of bodies: a few, or now and then enough for the bulk build.
fn bodies(
    body: BoxedStrategy<(Shape, Vec2, Filter)>,
) -> impl Strategy<Value = Vec<(Shape, Vec2, Filter)>> {
    prop_oneof![
        4 => prop::collection::vec(body.clone(), 0..8),
        1 => prop::collection::vec(body, 65..140),
    ]
}

/// A shape that may be invalid: a negative or NaN size.
fn any_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        8 => shape(),
        1 => Just(Shape::Circle { radius: -1.0 }),
        1 => Just(Shape::Aabb { half_extents: Vec2::new(1.0, f32::NAN) }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (shape(), pos(), filter()).prop_map(|(s, p, f)| Op::Add(s, p, f)),
        2 => bodies((shape(), pos(), filter()).boxed()).prop_map(Op::AddMany),
        1 => bodies((any_shape(), (any_coord(), any_coord()).prop_map(|(x, y)| Vec2::new(x, y)), filter()).boxed())
            .prop_map(Op::TryAddMany),
        2 => (any::<usize>(), 0.0f32..7.0, 0.5f32..6.0, -3i32..4)
            .prop_map(|(i, a, r, n)| Op::AddTouching(i, a, r, n)),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::RemoveStale),
        3 => (any::<usize>(), pos()).prop_map(|(i, p)| Op::Move(i, p)),
        3 => (any::<usize>(), -2.0f32..2.0, -2.0f32..2.0).prop_map(|(i, x, y)| Op::Nudge(i, x, y)),
        2 => (any::<usize>(), shape()).prop_map(|(i, s)| Op::Reshape(i, s)),
        2 => (any::<usize>(), bits()).prop_map(|(i, l)| Op::SetLayer(i, l)),
        2 => (any::<usize>(), bits()).prop_map(|(i, m)| Op::SetMask(i, m)),
        1 => (any::<usize>(), filter()).prop_map(|(i, f)| Op::SetFilter(i, f)),
        3 => prop::collection::vec(batch_move(coord().boxed()), 0..40).prop_map(Op::SetPositions),
        1 => prop::collection::vec(batch_move(any_coord().boxed()), 0..12).prop_map(Op::TrySetPositions),
        1 => (bodies((any_shape(), (any_coord(), any_coord()).prop_map(|(x, y)| Vec2::new(x, y)), filter()).boxed()), any::<usize>())
            .prop_map(|(b, at)| Op::AddManyPanicking(b, at)),
        1 => (prop::collection::vec(batch_move(any_coord().boxed()), 0..40), any::<usize>())
            .prop_map(|(m, at)| Op::SetPositionsPanicking(m, at)),
        1 => any::<u8>().prop_map(Op::BadAdd),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Op::BadMove(i, b)),
        1 => any::<usize>().prop_map(Op::BadShape),
        6 => Just(Op::Step),
        1 => Just(Op::Clear),
        1 => (0usize..500).prop_map(Op::Reserve),
        1 => Just(Op::ShrinkToFit),
    ]
}

fn probe() -> impl Strategy<Value = Probe> {
    (
        (shape(), pos(), pos(), bits()),
        (0usize..10, pos(), -1.0f32..1.0, -1.0f32..1.0, 0u8..4),
    )
        .prop_map(
            |((shape, pos, point, mask), (k, origin, dx, dy, kind))| Probe {
                shape,
                pos,
                point,
                mask,
                k,
                // Axis-aligned rays now and then: they graze edges exactly.
                ray: Ray::new(
                    origin,
                    if kind == 0 {
                        [dx.signum(), 0.0]
                    } else {
                        [dx, dy]
                    },
                ),
                max_dist: if kind == 1 {
                    f32::INFINITY
                } else {
                    20.0 + 300.0 * dx.abs()
                },
            },
        )
}

fn config() -> impl Strategy<Value = Config> {
    prop_oneof![
        Just(Config::default()),
        (1usize..6, 0u8..10).prop_map(|(max_items, max_depth)| Config {
            max_items,
            max_depth,
            ..Config::default()
        }),
    ]
}

// ---------------------------------------------------------------------------
// The model and the checks: tests/support/world.rs, shared with the fuzz
// target.

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

#[cfg(feature = "serde")]
fn json(e: serde_json::Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

fn run(config: Config, ops: Vec<(Op, Probe)>) -> Result<(), TestCaseError> {
    let mut h = Harness::new(WORLD, config);
    for (op, probe) in ops {
        h.apply(&op).map_err(fail)?;
        check_bodies(&h.world, &h.model).map_err(fail)?;
        check_queries(&h.world, &h.model, &probe).map_err(fail)?;
    }
    // A final step always agrees too.
    check_step(&mut h.world, &mut h.model).map_err(fail)
}

/// A world saved to JSON and restored after operation `at`, then both the
/// original and the restored copy run the rest of the operations. Each is
/// checked against the model, and the two must agree on everything: the
/// keys handed out, every step's contacts, began, ended and counts in
/// order, every query, and their whole serialized state after every
/// operation.
#[cfg(feature = "serde")]
fn run_twins(config: Config, ops: Vec<(Op, Probe)>, at: usize) -> Result<(), TestCaseError> {
    let mut h = Harness::new(WORLD, config);
    let at = at % (ops.len() + 1);
    let mut twin: Option<Harness> = None;
    for (i, (op, probe)) in ops.iter().enumerate() {
        if i == at {
            let saved = serde_json::to_string(&h.world).map_err(json)?;
            let restored: CollisionWorld<u32> = serde_json::from_str(&saved).map_err(json)?;
            prop_assert_eq!(&serde_json::to_string(&restored).map_err(json)?, &saved);
            prop_assert_eq!(restored.events(), h.world.events());
            // Through postcard too, a format without field names: the copy
            // that goes on is that one.
            let bytes = postcard::to_allocvec(&h.world).map_err(|e| fail(e.to_string()))?;
            let restored: CollisionWorld<u32> =
                postcard::from_bytes(&bytes).map_err(|e| fail(e.to_string()))?;
            prop_assert_eq!(&serde_json::to_string(&restored).map_err(json)?, &saved);
            prop_assert_eq!(restored.events(), h.world.events());
            twin = Some(h.fork(restored));
        }
        h.apply(op).map_err(fail)?;
        check_bodies(&h.world, &h.model).map_err(fail)?;
        check_queries(&h.world, &h.model, probe).map_err(fail)?;
        if let Some(t) = &mut twin {
            t.apply(op).map_err(fail)?;
            check_bodies(&t.world, &t.model).map_err(fail)?;
            check_queries(&t.world, &t.model, probe).map_err(fail)?;
            // The same keys, in the same order, for the same bodies.
            prop_assert_eq!(
                t.model.live.iter().map(|b| b.0).collect::<Vec<_>>(),
                h.model.live.iter().map(|b| b.0).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                t.world.events(),
                h.world.events(),
                "events differ after {:?}",
                op
            );
            prop_assert_eq!(
                serde_json::to_string(&t.world).map_err(json)?,
                serde_json::to_string(&h.world).map_err(json)?,
                "states differ after {:?}",
                op
            );
        }
    }
    if let Some(t) = &mut twin {
        let (a, b) = (h.world.step(), t.world.step());
        prop_assert_eq!(a, b);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Snapshots restore exactly: see [`run_twins`].
    #[cfg(feature = "serde")]
    #[test]
    fn a_restored_world_behaves_as_the_original(
        config in config(),
        ops in prop::collection::vec((op(), probe()), 1..100),
        at in 0usize..100,
    ) {
        run_twins(config, ops, at)?;
    }

    #[test]
    fn world_matches_brute_force(config in config(), ops in prop::collection::vec((op(), probe()), 1..100)) {
        run(config, ops)?;
    }

    /// Many bodies on few spots: duplicates and ties everywhere.
    #[test]
    fn duplicates_and_ties(
        spots in prop::collection::vec((shape(), (0..4i32, 0..4i32)), 1..40),
        probes in prop::collection::vec(probe(), 1..8),
    ) {
        let mut world = CollisionWorld::with_config(WORLD, Config { max_items: 2, max_depth: 6, ..Config::default() });
        let mut model = Model::default();
        for (i, (shape, (x, y))) in spots.into_iter().enumerate() {
            let p = Vec2::new(40.0 + x as f32 * 5.0, 40.0 + y as f32 * 5.0);
            let filter = Filter::on(Layers::bit(i as u32 % 3));
            let k = world.add(shape, p, filter, i as u32);
            model.live.push((k, Body { shape, position: p, filter }, i as u32));
        }
        let (contacts, _, _) = model.step();
        prop_assert_eq!(world.step().contacts, &contacts[..]);
        for mut probe in probes {
            // Probes at the same spots, and rays along the grid lines.
            probe.point = Vec2::new(40.0 + (probe.k % 4) as f32 * 5.0, probe.point.y.clamp(30.0, 70.0));
            check_queries(&world, &model, &probe).map_err(fail)?;
            probe.ray = Ray::new([0.0, 40.0 + (probe.k % 4) as f32 * 5.0], [1.0, 0.0]);
            check_queries(&world, &model, &probe).map_err(fail)?;
        }
    }
}

// ---------------------------------------------------------------------------
// Hand-written cases

/// The `i % 4`-th of a disc, a box, a capsule and a point, of `size`.
fn shape_of_kind(i: u32, size: f32) -> Shape {
    match i % 4 {
        0 => ball(size),
        1 => Shape::Aabb {
            half_extents: Vec2::new(size, size * 0.5),
        },
        2 => Shape::Capsule {
            half_segment: Vec2::new(size, -size * 0.5),
            radius: size * 0.25,
        },
        _ => Shape::Point,
    }
}

fn ball(r: f32) -> Shape {
    Shape::Circle { radius: r }
}

/// Two circles (radius, centre each) that touch, or nearly: the first
/// centred in `lo..hi` on both axes, the second at the sum of the radii
/// from it, along an axis (where the boxes touch too) or any direction,
/// then moved a few units in the last place either way.
fn touching_circles(rng: &mut Rng, lo: f32, hi: f32) -> (f32, Vec2, f32, Vec2) {
    let ra = rng.range(0.1, 30.0);
    let rb = rng.range(0.1, 30.0);
    let pa = Vec2::new(rng.range(lo, hi), rng.range(lo, hi));
    let dir = match rng.below(3) {
        0 => Vec2::new(1.0, 0.0),
        1 => Vec2::new(0.0, -1.0),
        _ => {
            let t = rng.range(0.0, std::f32::consts::TAU);
            Vec2::new(t.cos(), t.sin())
        }
    };
    let mut pb = pa + dir * (ra + rb);
    for _ in 0..rng.below(4) {
        pb = if rng.below(2) == 0 {
            Vec2::new(next_f32(pb.x, true), next_f32(pb.y, false))
        } else {
            Vec2::new(next_f32(pb.x, false), next_f32(pb.y, true))
        };
    }
    (ra, pa, rb, pb)
}

/// Circles that `Shape::contact` says touch (depth 0 or within a few ulps),
/// whose tight `f32` boxes miss each other, are still found by the step.
#[test]
fn exactly_touching_circles_are_never_lost() {
    let mut rng = Rng::new(99);
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [1000.0, 1000.0]));
    let mut expected = 0usize;
    let mut boxes_miss = 0usize;
    for _ in 0..20_000 {
        world.clear();
        let (ra, pa, rb, pb) = touching_circles(&mut rng, 0.0, 1000.0);
        let a = world.add(ball(ra), pa, Filter::ALL, ());
        let b = world.add(ball(rb), pb, Filter::ALL, ());
        // A contact pair names the smaller key first (after a clear, the
        // first body added need not have it), with the contact from it.
        let ((a, ra, pa), (b, rb, pb)) = if a < b {
            ((a, ra, pa), (b, rb, pb))
        } else {
            ((b, rb, pb), (a, ra, pa))
        };
        let exact = ball(ra).contact(pa, &ball(rb), pb);
        let contacts = world.step().contacts;
        match exact {
            Some(c) => {
                expected += 1;
                assert_eq!(contacts, &[ContactPair { a, b, contact: c }]);
                if !ball(ra).aabb(pa).intersects(&ball(rb).aabb(pb)) {
                    boxes_miss += 1;
                }
            }
            None => assert!(contacts.is_empty()),
        }
    }
    // The test means something: many touching pairs, and some of them
    // would be lost by the tight boxes.
    assert!(expected > 5_000, "{expected}");
    assert!(
        boxes_miss > 0,
        "no pair with missing tight boxes was generated"
    );
}

/// The same touching pairs, found by the incremental step: each pair is
/// added among 64 bodies that stay where they are, so that the step asks
/// the tree about the two changed bodies rather than walking every pair.
/// A quarter of the pairs are two points, or a point and a circle of radius
/// 0, at the origin, where the broad-phase margin relative to the position
/// vanishes and only the smallest margin gives their boxes a size.
#[test]
fn touching_bodies_are_found_by_the_incremental_step_too() {
    let mut rng = Rng::new(7);
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [1000.0, 1000.0]));
    // Far from every pair below, and apart from each other.
    for i in 0..64 {
        let at = Vec2::new(905.0 + (i % 8) as f32 * 12.0, 905.0 + (i / 8) as f32 * 12.0);
        world.add(ball(1.0), at, Filter::ALL, ());
    }
    world.step();
    let (mut expected, mut at_origin) = (0usize, 0usize);
    let mut last: Option<(Key, Key)> = None;
    for _ in 0..20_000 {
        if let Some((a, b)) = last {
            world.remove(a);
            world.remove(b);
            world.step();
        }
        let (sa, pa, sb, pb) = if rng.below(4) == 0 {
            let other = if rng.below(2) == 0 {
                Shape::Point
            } else {
                ball(0.0)
            };
            (Shape::Point, Vec2::ZERO, other, Vec2::ZERO)
        } else {
            let (ra, pa, rb, pb) = touching_circles(&mut rng, 30.0, 800.0);
            (ball(ra), pa, ball(rb), pb)
        };
        let a = world.add(sa, pa, Filter::ALL, ());
        let b = world.add(sb, pb, Filter::ALL, ());
        last = Some((a, b));
        // Freed slots are taken last first: the contact's normal points
        // from the smaller key.
        let (a, b, exact) = if a < b {
            (a, b, sa.contact(pa, &sb, pb))
        } else {
            (b, a, sb.contact(pb, &sa, pa))
        };
        let events = world.step();
        assert!(!events.full_pass);
        match exact {
            Some(c) => {
                expected += 1;
                at_origin += usize::from(pa == Vec2::ZERO);
                assert_eq!(events.contacts, &[ContactPair { a, b, contact: c }]);
            }
            None => assert!(
                events.contacts.is_empty(),
                "{sa:?} at {pa:?}, {sb:?} at {pb:?}"
            ),
        }
    }
    assert!(expected > 5_000, "{expected}");
    assert!(at_origin > 3_000, "{at_origin}");
}

/// A changed body whose broad-phase box only touches another's, edge to
/// edge, is a candidate of the incremental step (boxes are closed), and
/// the exact test then finds the shapes apart by the broad-phase margin.
#[test]
fn boxes_that_only_touch_are_candidates_of_the_incremental_step() {
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [1000.0, 1000.0]));
    for i in 0..64 {
        let at = Vec2::new(905.0 + (i % 8) as f32 * 12.0, 905.0 + (i / 8) as f32 * 12.0);
        world.add(ball(1.0), at, Filter::ALL, ());
    }
    let square = Shape::Aabb {
        half_extents: Vec2::new(2.0, 2.0),
    };
    // The point's box touches the square's on its right, left, top or
    // bottom edge: `(axis, sign)`.
    let sides = [(0, 1.0f32), (0, -1.0), (1, 1.0), (1, -1.0)];
    let coord = |v: Vec2, axis: usize| if axis == 0 { v.x } else { v.y };
    let mut touching = [0; 4];
    for i in 0..400 {
        let at = Vec2::new(100.0 + i as f32 * 1.87, 300.0 + i as f32 * 0.91);
        let (axis, sign) = sides[i % 4];
        let a = world.add(square, at, Filter::ALL, ());
        let broad = world.tree().aabb(a).unwrap();
        let edge = coord(if sign > 0.0 { broad.max } else { broad.min }, axis);
        // A point whose broad-phase box ends exactly at that edge, found
        // by walking a few units in the last place either way.
        let mut t = edge;
        let mut found = None;
        for _ in 0..64 {
            let pos = if axis == 0 {
                Vec2::new(t, at.y)
            } else {
                Vec2::new(at.x, t)
            };
            let p = world.add(Shape::Point, pos, Filter::ALL, ());
            let pb = world.tree().aabb(p).unwrap();
            let near = coord(if sign > 0.0 { pb.min } else { pb.max }, axis);
            if near == edge {
                found = Some(p);
                break;
            }
            world.remove(p);
            t = next_f32(t, near < edge);
        }
        let Some(p) = found else {
            world.remove(a);
            continue;
        };
        touching[i % 4] += 1;
        world.step();
        // A change that leaves the box as it is.
        assert!(world.set_layer(p, Layers::bit(0)));
        let events = world.step();
        assert!(!events.full_pass);
        assert_eq!(
            (events.candidates, events.exact_tests),
            (1, 1),
            "the point at {t} on side {:?} of the square at {at:?}",
            sides[i % 4]
        );
        assert!(events.contacts.is_empty());
        world.remove(a);
        world.remove(p);
        world.step();
    }
    assert!(touching.iter().all(|&t| t > 50), "{touching:?}");
}

#[test]
fn layer_rule_is_symmetric_and_needs_both_sides() {
    let mut world = CollisionWorld::new(WORLD);
    let at = [10.0, 10.0];
    let bits = Layers::from_bits;
    let player = world.add(
        ball(1.0),
        at,
        Filter {
            layer: bits(0b0001),
            mask: bits(0b0110),
        },
        "player",
    );
    let enemy = world.add(
        ball(1.0),
        at,
        Filter {
            layer: bits(0b0010),
            mask: bits(0b0001),
        },
        "enemy",
    );
    // The wall ignores the player.
    let wall = world.add(
        ball(1.0),
        at,
        Filter {
            layer: bits(0b0100),
            mask: bits(0b1000),
        },
        "wall",
    );
    let sensor = world.add(ball(1.0), at, Filter::on(Layers::NONE), "sensor"); // on no layer
    let contacts: Vec<(Key, Key)> = world
        .step()
        .contacts
        .iter()
        .map(ContactPair::keys)
        .collect();
    assert_eq!(contacts, vec![(player, enemy)]);
    // Queries filter by the body's layer only.
    assert_eq!(world.pick(at, bits(0b0100)), vec![wall]);
    assert_eq!(world.pick(at, Layers::ALL), vec![player, enemy, wall]);
    assert_eq!(world.pick(at, Layers::NONE), vec![]);
    assert!(!world.pick(at, Layers::ALL).contains(&sensor));
    // Let the wall see the player: now it interacts.
    world.set_mask(wall, bits(0b0001));
    let events = world.step();
    assert_eq!(events.began.len(), 1);
    assert_eq!(events.began[0].keys(), (player, wall));
}

/// The full pass skips every run and subtree whose layers cannot meet the
/// other side's (the layer unions), so that pairs across layers that never
/// interact are not even candidates when they sit in different nodes. Here
/// wide planks across the world's middle stay in the root, small dust in the
/// nodes below; planks meet only planks and dust only dust. Every candidate
/// must then pass the layer filter, although hundreds of plank–dust boxes
/// touch (which the same world with one more bit in each mask counts).
#[test]
fn layer_unions_keep_pairs_that_cannot_interact_out_of_the_candidates() {
    const PLANK: Layers = Layers::bit(0);
    const DUST: Layers = Layers::bit(1);
    let world_box = Aabb::new([0.0, 0.0], [1000.0, 1000.0]);
    let step = |planks: Filter, dust: Filter| {
        let mut world = CollisionWorld::new(world_box);
        let plank = Shape::Aabb {
            half_extents: Vec2::new(300.0, 20.0),
        };
        for i in 0..8 {
            // Overlapping one another in pairs: some plank pairs are real.
            let y = 100.0 + 100.0 * (i / 2) as f32 + 15.0 * (i % 2) as f32;
            world.add(plank, [500.0, y], planks, ());
        }
        let mut rng = Rng::new(5);
        for _ in 0..2_000 {
            let at = [rng.range(0.0, 1000.0), rng.range(0.0, 1000.0)];
            world.add(ball(3.0), at, dust, ());
        }
        let e = world.step();
        assert!(e.full_pass, "the first step takes the full pass");
        (e.candidates, e.exact_tests, e.contacts.len())
    };
    let apart = step(
        Filter::on(PLANK).colliding_with(PLANK),
        Filter::on(DUST).colliding_with(DUST),
    );
    let together = step(
        Filter::on(PLANK).colliding_with(PLANK | DUST),
        Filter::on(DUST).colliding_with(PLANK | DUST),
    );
    let (candidates, exact_tests, contacts) = apart;
    assert!(contacts >= 4, "plank and dust pairs touch: {apart:?}");
    assert!(
        together.1 >= exact_tests + 200,
        "hundreds of plank–dust boxes touch: {together:?} against {apart:?}"
    );
    assert_eq!(
        candidates, exact_tests,
        "pairs across layers that never interact were candidates: {apart:?}"
    );
}

/// The same pruning one level down: a node's own run is skipped when only
/// its subtree can meet the other side. Boulders, too large for the deepest
/// cells, stay in the runs of nodes below the root, over the planks; below
/// them, pebbles meet the planks. Each such node's subtree may then interact
/// with the planks, its own run may not, and no plank–boulder pair may be a
/// candidate (the same world with planks and boulders seeing each other
/// tests dozens).
#[test]
fn layer_unions_skip_a_run_whose_subtree_alone_can_interact() {
    const PLANK: Layers = Layers::bit(0);
    const PEBBLE: Layers = Layers::bit(1);
    const BOULDER: Layers = Layers::bit(2);
    let world_box = Aabb::new([0.0, 0.0], [1000.0, 1000.0]);
    let step = |planks: Filter, boulders: Filter| {
        // Small leaves, so that every boulder's node has pebbles below it.
        let config = Config {
            max_items: 1,
            ..Config::DEFAULT
        };
        let mut world = CollisionWorld::with_config(world_box, config);
        let plank = Shape::Aabb {
            half_extents: Vec2::new(300.0, 20.0),
        };
        for i in 0..4 {
            world.add(plank, [500.0, 150.0 + 200.0 * i as f32], planks, ());
        }
        let mut rng = Rng::new(9);
        for _ in 0..2_000 {
            let at = [rng.range(0.0, 1000.0), rng.range(0.0, 1000.0)];
            let pebble = Filter::on(PEBBLE).colliding_with(PLANK | PEBBLE | BOULDER);
            world.add(ball(3.0), at, pebble, ());
        }
        let boulder = Shape::Aabb {
            half_extents: Vec2::new(50.0, 50.0),
        };
        for i in 0..4 {
            for j in 0..12 {
                let at = [215.0 + 50.0 * j as f32, 150.0 + 200.0 * i as f32];
                world.add(boulder, at, boulders, ());
            }
        }
        let held_below_the_root = world
            .tree()
            .nodes()
            .filter(|n| n.depth > 0 && !n.is_leaf && n.items > 0)
            .count();
        let e = world.step();
        assert!(e.full_pass, "the first step takes the full pass");
        (
            e.candidates,
            e.exact_tests,
            e.contacts.len(),
            held_below_the_root,
        )
    };
    let apart = step(
        Filter::on(PLANK).colliding_with(PLANK | PEBBLE),
        Filter::on(BOULDER).colliding_with(PEBBLE | BOULDER),
    );
    let together = step(
        Filter::on(PLANK).colliding_with(PLANK | PEBBLE | BOULDER),
        Filter::on(BOULDER).colliding_with(PEBBLE | BOULDER | PLANK),
    );
    let (candidates, exact_tests, contacts, held_below_the_root) = apart;
    assert!(
        held_below_the_root > 0,
        "boulders stay in nodes with children: {apart:?}"
    );
    assert!(contacts >= 4, "planks meet pebbles: {apart:?}");
    assert!(
        together.1 >= exact_tests + 40,
        "the boulders touch the planks: {together:?} against {apart:?}"
    );
    assert_eq!(
        candidates, exact_tests,
        "a run whose layers cannot meet the planks' was swept: {apart:?}"
    );
}

#[test]
fn events_follow_moves_reshapes_removals_and_reuse() {
    let mut world = CollisionWorld::new(WORLD);
    let a = world.add(ball(1.0), [10.0, 10.0], Filter::ALL, 'a');
    let b = world.add(ball(1.0), [12.0, 10.0], Filter::ALL, 'b');
    let e = world.step();
    assert_eq!((e.contacts.len(), e.began.len(), e.ended.len()), (1, 1, 0));
    assert_eq!(e.contacts[0].contact.depth, 0.0); // touching counts

    // Shrinking b ends the contact; growing it again begins a new one.
    world.set_shape(b, ball(0.5));
    assert_eq!(world.step().ended, &[(a, b)]);
    world.set_shape(b, ball(2.0));
    let e = world.step();
    assert_eq!(e.began.len(), 1);
    assert_eq!(e.began[0].contact.depth, 1.0);

    // Removing b, and adding c in its slot: the pair (a, b) ends, (a, c) begins.
    world.remove(b);
    let c = world.add(ball(1.0), [11.0, 10.0], Filter::ALL, 'c');
    assert_eq!(c.index(), b.index());
    assert_ne!(c, b);
    let e = world.step();
    assert_eq!(e.ended, &[(a, b)]);
    assert_eq!(
        e.began.iter().map(ContactPair::keys).collect::<Vec<_>>(),
        vec![(a, c)]
    );
    // Nothing changes: nothing begins or ends.
    let e = world.step();
    assert_eq!((e.contacts.len(), e.began.len(), e.ended.len()), (1, 0, 0));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut world = CollisionWorld::new(WORLD);
    let k = world.add(ball(1.0), [5.0, 5.0], Filter::ALL, 0);
    let other = world.add(ball(1.0), [6.0, 5.0], Filter::ALL, 1);
    world.step();
    let before: Vec<_> = world.iter().map(|(k, b, v)| (k, b, *v)).collect();
    let bad_shapes = [
        (ball(-1.0), "radius (-1) is negative"),
        (ball(f32::NAN), "radius is NaN"),
        (
            Shape::Aabb {
                half_extents: Vec2::new(-0.5, 1.0),
            },
            "half_extents.x (-0.5) is negative",
        ),
        (
            Shape::Capsule {
                half_segment: Vec2::new(f32::INFINITY, 0.0),
                radius: 1.0,
            },
            "half_segment.x is infinite",
        ),
    ];
    for (s, msg) in bad_shapes {
        assert_eq!(
            world
                .try_add(s, [1.0, 1.0], Filter::ALL, 9)
                .unwrap_err()
                .to_string(),
            msg
        );
        assert_eq!(world.try_set_shape(k, s).unwrap_err().to_string(), msg);
    }
    assert_eq!(
        world
            .try_add(ball(1.0), [f32::NAN, 0.0], Filter::ALL, 9)
            .unwrap_err()
            .to_string(),
        "position.x is NaN"
    );
    assert_eq!(
        world
            .try_set_position(k, [0.0, f32::NAN])
            .unwrap_err()
            .to_string(),
        "position.y is NaN"
    );
    // Beyond the world's range: refused, naming the field.
    let huge = world
        .try_add(ball(f32::MAX), [f32::MAX, 0.0], Filter::ALL, 9)
        .unwrap_err();
    assert_eq!(
        huge,
        Error::OutOfRange {
            field: "position.x",
            value: f32::MAX
        }
    );
    let huge = world
        .try_add(ball(2e18), [0.0, 0.0], Filter::ALL, 9)
        .unwrap_err();
    assert_eq!(
        huge.to_string(),
        "radius (2e18) is beyond the collision world's range of ±1e18"
    );
    assert!(world.try_set_position(k, [0.0, -1.5e18]).is_err());
    assert!(world.try_set_shape(k, ball(1.5e18)).is_err());
    let after: Vec<_> = world.iter().map(|(k, b, v)| (k, b, *v)).collect();
    assert_eq!(before, after);
    let e = world.step();
    assert_eq!((e.contacts.len(), e.began.len(), e.ended.len()), (1, 0, 0));
    let _ = other;

    // Queries: invalid input finds nothing.
    let all = Layers::ALL;
    assert_eq!(world.overlap(&ball(-1.0), [5.0, 5.0], all), vec![]);
    assert_eq!(world.overlap(&ball(1.0), [f32::NAN, 5.0], all), vec![]);
    assert_eq!(
        world.overlap_contacts(&ball(f32::NAN), [5.0, 5.0], all),
        vec![]
    );
    assert_eq!(world.pick([f32::NAN, 5.0], all), vec![]);
    assert_eq!(world.pick([5.0, 2e18], all), vec![]);
    assert_eq!(world.nearest([2e18, 5.0], 3, all), vec![]);
    assert_eq!(world.overlap(&ball(2e18), [5.0, 5.0], all), vec![]);
    assert_eq!(
        world.raycast(Ray::new([-2e18, 5.0], [1.0, 0.0]), f32::INFINITY, all),
        None
    );
    assert_eq!(world.nearest([5.0, 5.0], 0, all), vec![]);
    assert_eq!(world.nearest([f32::INFINITY, 5.0], 3, all), vec![]);
    assert_eq!(world.nearest([5.0, 5.0], 3, all).len(), 2); // fewer than k bodies
    let zero = Ray::new([0.0, 5.0], [0.0, 0.0]);
    assert_eq!(world.raycast(zero, 100.0, all), None);
    assert_eq!(world.raycast_all(zero, 100.0, all), vec![]);
    let ray = Ray::new([0.0, 5.0], [1.0, 0.0]);
    assert_eq!(world.raycast(ray, f32::NAN, all), None);
    assert_eq!(world.raycast(ray, -1.0, all), None);
    assert_eq!(
        world.raycast(Ray::new([f32::NAN, 5.0], [1.0, 0.0]), 100.0, all),
        None
    );
    assert_eq!(world.raycast(ray, f32::INFINITY, all).unwrap().0, k);
    assert_eq!(world.raycast(ray, 100.0, Layers::NONE), None); // an empty mask finds nothing
}

#[test]
#[should_panic(expected = "position.x is NaN")]
fn add_panics_on_nan() {
    let mut world = CollisionWorld::new(WORLD);
    world.add(Shape::Point, [f32::NAN, 0.0], Filter::ALL, ());
}

#[test]
#[should_panic(expected = "radius (-2) is negative")]
fn set_shape_panics_on_negative_radius() {
    let mut world = CollisionWorld::new(WORLD);
    let k = world.add(Shape::Point, [1.0, 0.0], Filter::ALL, ());
    world.set_shape(k, ball(-2.0));
}

#[test]
#[should_panic(expected = "position.y is infinite")]
fn set_position_panics_on_infinity() {
    let mut world = CollisionWorld::new(WORLD);
    let k = world.add(Shape::Point, [1.0, 0.0], Filter::ALL, ());
    world.set_position(k, [1.0, f32::INFINITY]);
}

#[test]
fn ray_from_inside_and_nearest_inside() {
    let mut world = CollisionWorld::new(WORLD);
    let big = world.add(
        Shape::Aabb {
            half_extents: Vec2::new(10.0, 10.0),
        },
        [50.0, 50.0],
        Filter::ALL,
        (),
    );
    let small = world.add(ball(1.0), [55.0, 50.0], Filter::ALL, ());
    let ray = Ray::new([50.0, 50.0], [2.0, 0.0]);
    let hits = world.raycast_all(ray, 100.0, Layers::ALL);
    assert_eq!(hits.len(), 2);
    assert_eq!(
        hits[0],
        (
            big,
            RayHit {
                dist: 0.0,
                normal: Vec2::new(-1.0, 0.0)
            }
        )
    );
    assert_eq!(
        hits[1],
        (
            small,
            RayHit {
                dist: 4.0,
                normal: Vec2::new(-1.0, 0.0)
            }
        )
    );
    // Inside both: distance 0 twice, ties by key.
    assert_eq!(
        world.nearest([55.0, 50.0], 5, Layers::ALL),
        vec![(big, 0.0), (small, 0.0)]
    );
}

/// Translates keys to their order of creation, so that two worlds (whose
/// keys differ by a per-tree seed) can be compared.
struct Names(HashMap<Key, usize>);

impl Names {
    fn of(&self, k: Key) -> usize {
        self.0[&k]
    }
    fn pairs(&self, v: &[ContactPair]) -> Vec<(usize, usize, Contact)> {
        v.iter()
            .map(|c| (self.of(c.a), self.of(c.b), c.contact))
            .collect()
    }
}

/// A scripted run: returns every step's results and query answers, keys
/// named by creation order.
fn scripted(seed: u64) -> Vec<String> {
    let s = Scenario::new(Layout::Clustered, 600, seed);
    let mut rng = Rng::new(seed);
    let mut world = CollisionWorld::new(s.world);
    let mut names = Names(HashMap::new());
    let mut keys = Vec::new();
    let mut log = Vec::new();
    for (i, b) in s.boxes().into_iter().enumerate() {
        let shape = match i % 4 {
            0 => ball(b.width() * 0.6),
            1 => Shape::Aabb {
                half_extents: b.size() * 0.5,
            },
            2 => Shape::Capsule {
                half_segment: Vec2::new(b.width() * 0.4, 1.0),
                radius: 2.0,
            },
            _ => Shape::Point,
        };
        let filter = Filter::on(Layers::bit(i as u32 % 3)).colliding_with(Layers::from_bits(0b011));
        let k = world.add(shape, b.center(), filter, i);
        names.0.insert(k, i);
        keys.push(k);
    }
    for frame in 0..12 {
        for &k in &keys {
            if world.contains_key(k) {
                let p = world.position(k).unwrap();
                world.set_position(k, p + Vec2::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
            }
        }
        if frame % 3 == 0 {
            let victim = keys[rng.below(keys.len() as u64) as usize];
            world.remove(victim);
        }
        let e = world.step();
        log.push(format!(
            "{:?} {:?} {:?}",
            names.pairs(e.contacts),
            names.pairs(e.began),
            e.ended
                .iter()
                .map(|&(a, b)| (names.of(a), names.of(b)))
                .collect::<Vec<_>>()
        ));
        let p = Vec2::new(rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        let near: Vec<_> = world
            .nearest(p, 5, Layers::ALL)
            .into_iter()
            .map(|(k, d)| (names.of(k), d))
            .collect();
        let ray = Ray::new(p, [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]);
        let hits: Vec<_> = world
            .raycast_all(ray, 500.0, Layers::ALL)
            .into_iter()
            .map(|(k, h)| (names.of(k), h))
            .collect();
        let over: Vec<_> = world
            .overlap(&ball(40.0), p, Layers::bit(0))
            .into_iter()
            .map(|k| names.of(k))
            .collect();
        log.push(format!("{near:?} {hits:?} {over:?}"));
    }
    log
}

#[test]
fn the_same_calls_give_the_same_results() {
    let a = scripted(5);
    let b = scripted(5);
    assert_eq!(a, b);
    assert!(a.iter().any(|l| l.len() > 100), "the run found nothing");
    assert_ne!(a, scripted(6));
}

/// Hundreds of bodies of every kind, moving for several frames, against
/// brute force: deep trees, bodies straddling nodes, many touching pairs.
#[test]
fn larger_random_world_matches_brute_force() {
    for layout in Layout::ALL {
        let s = Scenario::with_overlaps(layout, 1500, 3, 6.0);
        let mut rng = Rng::new(17);
        let mut world = CollisionWorld::new(s.world);
        let mut model = Model::default();
        for (i, b) in s.boxes().into_iter().enumerate() {
            let h = b.size() * 0.5;
            let shape = match i % 4 {
                0 => ball(h.x),
                1 => Shape::Aabb { half_extents: h },
                2 => Shape::Capsule {
                    half_segment: Vec2::new(h.x * 0.7, -h.y * 0.3),
                    radius: h.x * 0.3,
                },
                _ => Shape::Point,
            };
            let mask = if i % 5 == 0 {
                Layers::from_bits(0b0101)
            } else {
                Layers::ALL
            };
            let filter = Filter::on(Layers::bit(i as u32 % 4)).colliding_with(mask);
            let k = world.add(shape, b.center(), filter, i as u32);
            model.live.push((
                k,
                Body {
                    shape,
                    position: b.center(),
                    filter,
                },
                i as u32,
            ));
        }
        for _ in 0..4 {
            for e in &mut model.live {
                e.1.position += Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
                world.set_position(e.0, e.1.position);
            }
            let (contacts, began, ended) = model.step();
            let events = world.step();
            assert!(contacts.len() > 100, "{}", contacts.len());
            assert_eq!(events.contacts, &contacts[..]);
            assert_eq!(events.began, &began[..]);
            assert_eq!(events.ended, &ended[..]);
        }
    }
}

#[cfg(feature = "serde")]
#[test]
fn bodies_and_contacts_round_trip_through_serde() {
    let mut world = CollisionWorld::new(WORLD);
    world.add(
        ball(1.0),
        [10.0, 10.0],
        Filter {
            layer: Layers::bit(0),
            mask: Layers::from_bits(3),
        },
        (),
    );
    world.add(
        Shape::Aabb {
            half_extents: Vec2::new(1.0, 2.0),
        },
        [11.5, 10.0],
        Filter::on(Layers::bit(1)).colliding_with(Layers::bit(0)),
        (),
    );
    let pair = world.step().contacts[0];
    let text = serde_json::to_string(&pair).unwrap();
    assert_eq!(serde_json::from_str::<ContactPair>(&text).unwrap(), pair);
    for (_, body, _) in world.iter() {
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(serde_json::from_str::<Body>(&text).unwrap(), body);
    }
    // Layers are plain bits, and a filter names its two fields.
    let filter = Filter::on(Layers::bit(1)).colliding_with(Layers::from_bits(0b101));
    let text = serde_json::to_string(&filter).unwrap();
    assert_eq!(text, r#"{"layer":2,"mask":5}"#);
    assert_eq!(serde_json::from_str::<Filter>(&text).unwrap(), filter);
}

/// The same random world at scales from subnormal to near the range limit:
/// contacts, events and every query against brute force. Near 0 the
/// broad-phase margin relative to a body's size vanishes below the spacing
/// of subnormal values; a floor on it keeps ray casts and nearest from
/// pruning a body whose exact distance rounds below its box's.
#[test]
fn worlds_at_every_scale_match_brute_force() {
    for (round, scale) in [1e-41f32, 1e-38, 1e-30, 1e-12, 1.0, 1e12, 1e15]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng::new(round as u64);
        let bounds = Aabb::new([0.0, 0.0], [100.0 * scale, 100.0 * scale]);
        let mut h = Harness::new(bounds, Config::default());
        let at =
            |rng: &mut Rng| Vec2::new(rng.range(0.0, 100.0) * scale, rng.range(0.0, 100.0) * scale);
        for i in 0..300u32 {
            let size = rng.range(0.0, 4.0) * scale;
            let shape = shape_of_kind(i, size);
            let op = Op::Add(shape, at(&mut rng), Filter::on(Layers::bit(0)));
            h.apply(&op).unwrap();
        }
        for step in 0..40 {
            let probe = Probe {
                shape: ball(rng.range(0.0, 10.0) * scale),
                pos: at(&mut rng),
                point: at(&mut rng),
                mask: Layers::ALL,
                k: 1 + step % 5,
                ray: Ray::new(at(&mut rng), [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]),
                max_dist: f32::INFINITY,
            };
            check_queries(&h.world, &h.model, &probe)
                .unwrap_or_else(|e| panic!("scale {scale}: {e}"));
            check_step(&mut h.world, &mut h.model).unwrap_or_else(|e| panic!("scale {scale}: {e}"));
        }
    }
}

/// What lets the tree prune for the world's ray casts and nearest: a body's
/// exact hit distance is never less than where the ray enters its box in
/// the tree, and its exact distance from a point never less than its box's.
/// The box's margin is relative to the body's coordinates; near 0, where
/// that vanishes below the spacing of subnormal values while the exact
/// tests still round by a few such steps, a floor keeps it. Checked here
/// for every shape at scales from subnormal to large.
#[test]
fn exact_distances_never_undercut_the_broad_phase_box() {
    let (mut checked, mut hits) = (0, 0);
    for (round, scale) in [
        1e-44f32, 1e-42, 1e-41, 1e-40, 1e-39, 1e-38, 1e-30, 1.0, 1e15,
    ]
    .into_iter()
    .enumerate()
    {
        let mut rng = Rng::new(100 + round as u64);
        let bounds = Aabb::new([0.0, 0.0], [100.0 * scale, 100.0 * scale]);
        let mut world = CollisionWorld::new(bounds);
        let at =
            |rng: &mut Rng| Vec2::new(rng.range(0.0, 100.0) * scale, rng.range(0.0, 100.0) * scale);
        for i in 0..400u32 {
            let size = rng.range(0.0, 8.0) * scale;
            let shape = shape_of_kind(i, size);
            world.add(shape, at(&mut rng), Filter::ALL, ());
        }
        for _ in 0..200 {
            let p = at(&mut rng);
            let dir = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
            let ray = Ray::new(at(&mut rng), dir);
            for (k, b, ()) in world.iter() {
                let stored = world.tree().aabb(k).unwrap();
                let exact = b.shape.distance_to_point(b.position, p);
                let by_box = stored.distance_to_point(p);
                assert!(
                    exact >= by_box,
                    "scale {scale}: {:?} at {:?}, point {p:?}: {exact} < box {by_box}",
                    b.shape,
                    b.position
                );
                if let Some(hit) = b.shape.raycast(b.position, ray, f32::INFINITY) {
                    let entry = ray.intersect_aabb(&stored, f32::INFINITY);
                    assert!(
                        entry.is_some_and(|t| hit.dist >= t),
                        "scale {scale}: {:?} at {:?}, {ray:?}: hit {} against box {entry:?}",
                        b.shape,
                        b.position,
                        hit.dist
                    );
                    hits += 1;
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 9 * 200 * 400);
    assert!(hits > 20_000 && hits < 300_000, "{hits} ray hits");
}
