//! Model-based tests: random operation sequences run against the tree and
//! against a plain `Vec` with brute-force answers; after every step the
//! invariants hold and every answer matches the model's exactly.

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

#[derive(Clone, Debug)]
enum Op {
    Insert(Aabb),
    Remove(usize),
    RemoveStale(usize),
    Update(usize, Aabb),
    /// Move by a small step (often stays in its node).
    Nudge(usize, f32, f32),
    Clear,
    Rebuild,
    InsertMany(Vec<Aabb>),
    /// Move every item: by a step, or (every seventh) to another box.
    UpdateAll(f32, f32, Vec<Aabb>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => aabb().prop_map(Op::Insert),
        3 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::RemoveStale),
        3 => (any::<usize>(), aabb()).prop_map(|(i, b)| Op::Update(i, b)),
        3 => (any::<usize>(), -2.0f32..2.0, -2.0f32..2.0).prop_map(|(i, dx, dy)| Op::Nudge(i, dx, dy)),
        1 => Just(Op::Clear),
        1 => Just(Op::Rebuild),
        1 => prop::collection::vec(aabb(), 0..150).prop_map(Op::InsertMany),
        1 => (-3.0f32..3.0, -3.0f32..3.0, prop::collection::vec(aabb(), 1..8))
            .prop_map(|(dx, dy, jumps)| Op::UpdateAll(dx, dy, jumps)),
    ]
}

#[derive(Clone, Debug)]
struct Probe {
    area: Aabb,
    circle: Circle,
    point: Vec2,
    k: usize,
    ray: Ray,
    max_dist: f32,
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
    })
}

#[derive(Default)]
struct Model {
    live: Vec<(Key, Aabb, u32)>,
    dead: Vec<Key>,
}

impl Model {
    fn brute_pairs(&self) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        for (i, a) in self.live.iter().enumerate() {
            for b in &self.live[i + 1..] {
                if a.1.intersects(&b.1) {
                    out.push(if a.0 < b.0 { (a.0, b.0) } else { (b.0, a.0) });
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn brute(&self, hit: impl Fn(&Aabb) -> bool) -> Vec<Key> {
        let mut v: Vec<Key> = self
            .live
            .iter()
            .filter(|e| hit(&e.1))
            .map(|e| e.0)
            .collect();
        v.sort_unstable();
        v
    }
}

fn sorted(it: impl Iterator<Item = Key>) -> Vec<Key> {
    let mut v: Vec<Key> = it.collect();
    v.sort_unstable();
    v
}

fn check(tree: &QuadTree<u32>, model: &Model, probe: &Probe) -> Result<(), TestCaseError> {
    if let Err(e) = tree.validate() {
        return Err(TestCaseError::fail(e));
    }
    prop_assert_eq!(tree.len(), model.live.len());
    prop_assert_eq!(tree.is_empty(), model.live.is_empty());
    for &(k, b, v) in &model.live {
        prop_assert!(tree.contains_key(k));
        prop_assert_eq!(tree.get(k), Some(&v));
        prop_assert_eq!(tree.aabb(k), Some(b));
    }
    for &k in &model.dead {
        prop_assert!(!tree.contains_key(k));
        prop_assert_eq!(tree.get(k), None);
        prop_assert_eq!(tree.aabb(k), None);
    }
    let mut iterated: Vec<(Key, Aabb, u32)> = tree.iter().map(|(k, b, v)| (k, b, *v)).collect();
    iterated.sort_by_key(|e| e.0);
    let mut expected = model.live.clone();
    expected.sort_by_key(|e| e.0);
    prop_assert_eq!(iterated, expected);

    let area = probe.area;
    prop_assert_eq!(
        sorted(tree.query(area).map(|(k, _)| k)),
        model.brute(|b| b.intersects(&area))
    );
    let circle = probe.circle;
    prop_assert_eq!(
        sorted(tree.query_circle(circle).map(|(k, _)| k)),
        model.brute(|b| circle.intersects_aabb(b))
    );
    let p = probe.point;
    prop_assert_eq!(
        sorted(tree.query_point(p).map(|(k, _)| k)),
        model.brute(|b| b.contains_point(p))
    );
    // Each live item finds itself with its own box.
    for &(k, b, _) in model.live.iter().take(8) {
        prop_assert!(tree.query(b).any(|(kk, _)| kk == k));
    }
    // Nearest: all items sorted by (box distance, key), the first k.
    let mut by_dist: Vec<(Key, f32)> = model
        .live
        .iter()
        .map(|e| (e.0, e.1.distance_to_point(p)))
        .collect();
    by_dist.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    by_dist.truncate(probe.k);
    prop_assert_eq!(tree.nearest(p, probe.k), by_dist);
    // Ray casts: every box hit, sorted by (distance, key); the first of them.
    let ray = probe.ray;
    let mut hits: Vec<(Key, f32)> = if ray.validate().is_ok() {
        model
            .live
            .iter()
            .filter_map(|e| ray.intersect_aabb(&e.1, probe.max_dist).map(|d| (e.0, d)))
            .collect()
    } else {
        Vec::new()
    };
    hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    prop_assert_eq!(tree.raycast(ray, probe.max_dist), hits.first().copied());
    prop_assert_eq!(tree.raycast_all(ray, probe.max_dist), hits);
    let pairs = tree.pairs();
    let mut raw = Vec::new();
    tree.for_each_pair(|a, b| raw.push((a, b)));
    prop_assert!(raw.iter().all(|(a, b)| a < b), "pairs not normalised");
    let mut dedup = raw.clone();
    dedup.sort_unstable();
    dedup.dedup();
    prop_assert_eq!(dedup.len(), raw.len(), "a pair was reported twice");
    prop_assert_eq!(pairs, model.brute_pairs());
    Ok(())
}

fn run(config: Config, ops: Vec<(Op, Probe)>) -> Result<(), TestCaseError> {
    let mut tree = QuadTree::with_config(WORLD, config);
    let mut model = Model::default();
    let mut next_value = 0u32;
    for (op, probe) in ops {
        match op {
            Op::Insert(b) => {
                let k = tree.insert(b, next_value);
                model.live.push((k, b, next_value));
                next_value += 1;
            }
            Op::Remove(i) if !model.live.is_empty() => {
                let (k, _, v) = model.live.swap_remove(i % model.live.len());
                prop_assert_eq!(tree.remove(k), Some(v));
                model.dead.push(k);
            }
            Op::RemoveStale(i) if !model.dead.is_empty() => {
                let k = model.dead[i % model.dead.len()];
                prop_assert_eq!(tree.remove(k), None);
                prop_assert!(!tree.update(k, WORLD));
            }
            Op::Update(i, b) if !model.live.is_empty() => {
                let i = i % model.live.len();
                prop_assert!(tree.update(model.live[i].0, b));
                model.live[i].1 = b;
            }
            Op::Nudge(i, dx, dy) if !model.live.is_empty() => {
                let i = i % model.live.len();
                let b = model.live[i].1.translate([dx, dy]);
                prop_assert!(tree.update(model.live[i].0, b));
                model.live[i].1 = b;
            }
            Op::Rebuild => tree.rebuild(),
            Op::UpdateAll(dx, dy, jumps) => {
                let new_box = |v: u32, b: Aabb| {
                    if v.is_multiple_of(7) {
                        jumps[v as usize % jumps.len()]
                    } else {
                        b.translate([dx, dy])
                    }
                };
                tree.update_all(|_, &v, b| new_box(v, b));
                for e in &mut model.live {
                    e.1 = new_box(e.2, e.1);
                }
            }
            Op::InsertMany(boxes) => {
                let values: Vec<u32> = (next_value..next_value + boxes.len() as u32).collect();
                next_value += boxes.len() as u32;
                let keys = tree.insert_many(boxes.iter().copied().zip(values.iter().copied()));
                prop_assert_eq!(keys.len(), boxes.len());
                for ((k, b), v) in keys.into_iter().zip(boxes).zip(values) {
                    model.live.push((k, b, v));
                }
            }
            Op::Clear => {
                tree.clear();
                model.dead.extend(model.live.drain(..).map(|e| e.0));
            }
            _ => {}
        }
        check(&tree, &model, &probe)?;
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
        let mut a = QuadTree::with_config(WORLD, config);
        for (i, &b) in boxes.iter().enumerate() {
            a.insert(b, i);
        }
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        let mut rng = quadrat::scenario::Rng::new(seed);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut b = QuadTree::with_config(WORLD, config);
        // Insert extra items and remove them again, to exercise collapse.
        let extra: Vec<Key> = boxes.iter().map(|&bx| b.insert(bx.translate([1.0, 1.0]), usize::MAX)).collect();
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
        };
        let mut tree = QuadTree::with_config(s.world, config);
        let mut model = Model::default();
        for step in 0..6000u32 {
            let roll = rng.below(10);
            if roll < 5 || model.live.is_empty() {
                let b = pool[rng.below(pool.len() as u64) as usize];
                let k = tree.insert(b, step);
                model.live.push((k, b, step));
            } else if roll < 7 {
                let (k, _, v) = model
                    .live
                    .swap_remove(rng.below(model.live.len() as u64) as usize);
                assert_eq!(tree.remove(k), Some(v));
                model.dead.push(k);
            } else {
                let i = rng.below(model.live.len() as u64) as usize;
                let d = if roll == 9 { 400.0 } else { 2.0 };
                let b = model.live[i]
                    .1
                    .translate([rng.range(-d, d), rng.range(-d, d)]);
                assert!(tree.update(model.live[i].0, b));
                model.live[i].1 = b;
            }
            if step % 500 == 499 {
                let c = rng.range(0.0, 1000.0);
                let probe = Probe {
                    area: Aabb::from_center([c, 1000.0 - c], [60.0, 30.0]),
                    circle: Circle::new([1000.0 - c, c], 45.0),
                    point: model.live[0].1.center(),
                    k: (step % 17) as usize,
                    ray: Ray::new([c, 0.0], [0.3, 1.0]),
                    max_dist: 700.0,
                };
                check(&tree, &model, &probe).unwrap();
            }
        }
    }
}
