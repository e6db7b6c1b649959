//! Model-based tests: random operation sequences run against the tree and
//! against a plain `Vec` with brute-force answers; after every step the
//! invariants hold and every answer matches the model's exactly.

use crate::support::tree::{Harness, Op, Probe};
use proptest::prelude::*;
use quadrat::{Aabb, Circle, Config, Key, QuadTree, Ray, Vec2};

const WORLD: Aabb = Aabb {
    min: Vec2 { x: 0.0, y: 0.0 },
    max: Vec2 { x: 100.0, y: 100.0 },
};

/// Coordinates that make edge cases likely: exact split lines, touching
/// edges, far outside the world, and arbitrary values.
fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => (0..=16i32).prop_map(|i| i as f32 * 6.25),      // split lines of every level
        3 => 0.0f32..100.0,
        1 => -300.0f32..400.0,                               // outside the world
        1 => Just(50.0f32),                                  // one crowded point
    ]
}

fn size() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => Just(0.0f32),
        4 => 0.0f32..5.0,
        2 => (0..=4i32).prop_map(|i| i as f32 * 6.25),
        1 => 5.0f32..150.0,                                  // huge
    ]
}

fn aabb() -> impl Strategy<Value = Aabb> {
    (coord(), coord(), size(), size()).prop_map(|(x, y, w, h)| Aabb::new([x, y], [x + w, y + h]))
}

fn op() -> impl Strategy<Value = Op> {
    let jumps = || prop::collection::vec(aabb(), 1..8);
    prop_oneof![
        10 => aabb().prop_map(Op::Insert),
        3 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::RemoveStale),
        3 => (any::<usize>(), aabb()).prop_map(|(i, b)| Op::Update(i, b)),
        3 => (any::<usize>(), -2.0f32..2.0, -2.0f32..2.0).prop_map(|(i, dx, dy)| Op::Nudge(i, dx, dy)),
        1 => Just(Op::Clear),
        1 => Just(Op::Rebuild),
        1 => Just(Op::ParRebuild),
        1 => Just(Op::ShrinkToFit),
        1 => (0usize..500).prop_map(Op::Reserve),
        1 => prop::collection::vec(aabb(), 0..150).prop_map(Op::InsertMany),
        1 => prop::collection::vec(aabb(), 0..150).prop_map(Op::InsertEach),
        1 => prop::collection::vec(aabb(), 0..150).prop_map(Op::ParInsertMany),
        1 => (-3.0f32..3.0, -3.0f32..3.0, jumps(), any::<bool>())
            .prop_map(|(dx, dy, jumps, refuse)| Op::UpdateAll { dx, dy, jumps, refuse }),
        1 => (-3.0f32..3.0, -3.0f32..3.0, jumps())
            .prop_map(|(dx, dy, jumps)| Op::ParUpdateAll { dx, dy, jumps }),
        1 => (2u32..6).prop_map(Op::Retain),
    ]
}

fn probe() -> impl Strategy<Value = Probe> {
    (
        (aabb(), coord(), coord(), size(), coord(), coord()),
        (
            0usize..12,
            coord(),
            coord(),
            -1.0f32..1.0,
            -1.0f32..1.0,
            prop_oneof![Just(f32::INFINITY), 0.0f32..300.0],
        ),
    )
        .prop_map(
            |((area, cx, cy, r, px, py), (k, ox, oy, dx, dy, max_dist))| Probe {
                area,
                circle: Circle::new([cx, cy], r),
                point: Vec2::new(px, py),
                k,
                // Axis-aligned rays now and then: they graze edges exactly.
                ray: Ray::new(
                    [ox, oy],
                    if k % 3 == 0 {
                        [dx.signum(), 0.0]
                    } else {
                        [dx, dy]
                    },
                ),
                max_dist,
            },
        )
}

fn config() -> impl Strategy<Value = Config> {
    (1usize..6, 0u8..10).prop_map(|(max_items, max_depth)| Config {
        max_items,
        max_depth,
        ..Config::default()
    })
}

fn run(config: Config, ops: Vec<(Op, Probe)>) -> Result<(), TestCaseError> {
    let mut h = Harness::new(WORLD, config);
    for (op, probe) in ops {
        h.apply(&op).map_err(TestCaseError::fail)?;
        h.check(&probe).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tree_matches_brute_force(config in config(), ops in prop::collection::vec((op(), probe()), 1..80)) {
        run(config, ops)?;
    }

    #[test]
    fn default_config_matches_brute_force(ops in prop::collection::vec((op(), probe()), 1..120)) {
        run(Config::default(), ops)?;
    }

    /// The tree's shape depends only on its items, not on the calls that put
    /// them there: inserting a set in another order gives the same nodes.
    #[test]
    fn shape_is_canonical(config in config(), boxes in prop::collection::vec(aabb(), 0..200), seed in any::<u64>()) {
        // Each insert placed at once: a question after the first one ends
        // the deferral of inserts into an empty tree.
        let mut a = QuadTree::with_config(WORLD, config);
        for (i, &b) in boxes.iter().enumerate() {
            a.insert(b, i);
            if i == 0 {
                prop_assert_eq!(a.query_point(b.min).count(), 1);
            }
        }
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        let mut rng = quadrat::scenario::Rng::new(seed);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut b = QuadTree::with_config(WORLD, config);
        // Insert extra items and remove them again, to exercise collapse.
        let extra: Vec<Key> = boxes.iter().map(|&bx| b.insert(bx.translate([1.0, 1.0]), usize::MAX)).collect();
        let _ = b.node_count();
        for &i in &order {
            b.insert(boxes[i], i);
        }
        for k in extra {
            b.remove(k);
        }
        b.validate().map_err(TestCaseError::fail)?;
        let shape = |t: &QuadTree<usize>| t.nodes().map(|n| (n.bounds, n.depth, n.items)).collect::<Vec<_>>();
        prop_assert_eq!(shape(&a), shape(&b));
        // Built in one go, and rebuilt: the same shape again.
        let mut c = QuadTree::with_config(WORLD, config);
        c.insert_many(boxes.iter().copied().zip(0..));
        c.validate().map_err(TestCaseError::fail)?;
        prop_assert_eq!(shape(&a), shape(&c));
        b.rebuild();
        b.validate().map_err(TestCaseError::fail)?;
        prop_assert_eq!(shape(&a), shape(&b));
        // Deferred, then placed in bulk by the first question.
        let mut d = QuadTree::with_config(WORLD, config);
        for &i in &order {
            d.insert(boxes[i], i);
        }
        d.validate().map_err(TestCaseError::fail)?;
        prop_assert_eq!(shape(&a), shape(&d));
        d.validate().map_err(TestCaseError::fail)?;
    }
}

/// Larger trees than the proptest sequences reach: thousands of items in
/// every layout, random operations, full comparison every few hundred steps.
#[test]
fn large_random_sequences_match_brute_force() {
    use quadrat::scenario::{Layout, Rng, Scenario};
    for (round, layout) in Layout::ALL.into_iter().enumerate() {
        let s = Scenario::new(layout, 3000, round as u64);
        let pool = s.boxes();
        let mut rng = Rng::new(99 + round as u64);
        let config = Config {
            max_items: 1 + round * 3,
            max_depth: 12,
            ..Config::default()
        };
        let mut h = Harness::new(s.world, config);
        for step in 0..6000u32 {
            let roll = rng.below(10);
            let live = h.model.live.len() as u64;
            let op = if roll < 5 || live == 0 {
                Op::Insert(pool[rng.below(pool.len() as u64) as usize])
            } else if roll < 7 {
                Op::Remove(rng.below(live) as usize)
            } else {
                let d = if roll == 9 { 400.0 } else { 2.0 };
                Op::Nudge(rng.below(live) as usize, rng.range(-d, d), rng.range(-d, d))
            };
            h.apply(&op).unwrap();
            if step % 500 == 499 {
                let c = rng.range(0.0, 1000.0);
                let probe = Probe {
                    area: Aabb::from_center([c, 1000.0 - c], [60.0, 30.0]),
                    circle: Circle::new([1000.0 - c, c], 45.0),
                    point: h.model.live[0].1.center(),
                    k: (step % 17) as usize,
                    ray: Ray::new([c, 0.0], [0.3, 1.0]),
                    max_dist: 700.0,
                };
                h.check(&probe).unwrap();
            }
        }
    }
}
