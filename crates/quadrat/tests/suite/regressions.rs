//! Reported failures, each kept as the smallest case that showed it. Every
//! test here failed on the code it was reported against.

use std::panic::{AssertUnwindSafe, catch_unwind};

use quadrat::{Aabb, Circle, Config, Key, QuadTree, Ray, Vec2};

/// Points on an `nx` × `ny` grid: `offset + spacing * (i, j)`.
fn grid(nx: usize, ny: usize, spacing: f32, offset: f32) -> Vec<Aabb> {
    let mut out = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            out.push(Aabb::from_point([
                offset + spacing * i as f32,
                offset + spacing * j as f32,
            ]));
        }
    }
    out
}

/// An empty tree over `[0, 100 * scale]²`, splitting at 2 to 7 items by
/// `round`.
fn scaled_tree<T>(scale: f32, round: usize) -> QuadTree<T> {
    QuadTree::with_config(
        Aabb::new([0.0, 0.0], [100.0 * scale, 100.0 * scale]),
        Config {
            max_items: 2 + round % 6,
            ..Config::default()
        },
    )
}

/// Removes every key in order, validating the tree and checking that the
/// rest is still found after each removal.
fn drain_in_order(tree: &mut QuadTree<usize>, keys: &[Key], boxes: &[Aabb]) {
    for (i, &k) in keys.iter().enumerate() {
        assert_eq!(tree.remove(k), Some(i), "remove #{i}");
        tree.validate()
            .unwrap_or_else(|e| panic!("after remove #{i}: {e}"));
        if let Some(&next) = keys.get(i + 1) {
            assert!(tree.query(boxes[i + 1]).any(|(kk, _)| kk == next));
        }
    }
    assert!(tree.is_empty());
}

/// An emptied run kept a start past the end of the entry array once a
/// compaction truncated it; the next insert into that node (or a rebuild)
/// sliced out of range. 71 grid points, removed in insertion order: the
/// 69th removal panicked.
#[test]
fn draining_71_grid_points_in_insertion_order() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    let config = Config {
        max_items: 1,
        max_depth: 8,
        ..Config::default()
    };
    let boxes: Vec<Aabb> = grid(10, 10, 10.0, 1.0).into_iter().take(71).collect();
    let mut tree = QuadTree::with_config(world, config);
    let keys: Vec<Key> = boxes
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let k = tree.insert(b, i);
            tree.validate().unwrap();
            k
        })
        .collect();
    drain_in_order(&mut tree, &keys, &boxes);
}

/// 2,000 grid points inserted one by one with the default configuration,
/// removed in the order they came; and with leaves of 32 items, the
/// default when this was found.
#[test]
fn draining_2000_grid_points_with_the_default_config() {
    let world = Aabb::new([0.0, 0.0], [1000.0, 1000.0]);
    let boxes = grid(50, 40, 19.5, 3.0);
    let old_default = Config {
        max_items: 32,
        ..Config::default()
    };
    for config in [Config::default(), old_default] {
        let mut tree = QuadTree::with_config(world, config);
        let keys: Vec<Key> = boxes
            .iter()
            .enumerate()
            .map(|(i, &b)| tree.insert(b, i))
            .collect();
        tree.validate().unwrap();
        drain_in_order(&mut tree, &keys, &boxes);
    }
}

/// 1,000 points built with `insert_many`: the bulk build gave empty nodes a
/// start inside the array, which later compactions left behind.
#[test]
fn draining_a_bulk_built_tree() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    for config in [
        Config::default(),
        // Leaves of 32 items, the default when this was found.
        Config {
            max_items: 32,
            ..Config::default()
        },
        Config {
            max_items: 1,
            max_depth: 8,
            ..Config::default()
        },
        Config {
            max_items: 4,
            max_depth: 12,
            ..Config::default()
        },
    ] {
        let boxes = grid(40, 25, 2.5, 0.5);
        let mut tree = QuadTree::with_config(world, config);
        let keys = tree.insert_many(boxes.iter().copied().zip(0..));
        tree.validate().unwrap();
        drain_in_order(&mut tree, &keys, &boxes);
        // The emptied tree takes the same items again, one by one and in bulk.
        for (i, &b) in boxes.iter().enumerate() {
            tree.insert(b, i);
        }
        tree.validate().unwrap();
        tree.rebuild();
        tree.validate().unwrap();
    }
}

/// `query_circle` squared the radius in `f32`: a radius of 2e19 became
/// infinite and the query returned a box 1e30 away.
#[test]
fn a_huge_circle_does_not_reach_farther_than_its_radius() {
    let mut tree = QuadTree::new(Aabb::new([-10.0, -10.0], [10.0, 10.0]));
    let near = tree.insert(Aabb::from_point([1.0, 1.0]), ());
    let _far = tree.insert(Aabb::from_point([1e30, 0.0]), ());
    let hits: Vec<Key> = tree
        .query_circle(Circle::new([0.0, 0.0], 2e19))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(hits, vec![near]);
    assert!(!Circle::new([0.0, 0.0], 2e19).intersects_aabb(&Aabb::from_point([1e30, 0.0])));
    // And the other end: a tiny radius still reaches a box just as far away.
    let c = Circle::new([0.0, 0.0], 1e-30);
    assert!(c.intersects_aabb(&Aabb::from_point([1e-30, 0.0])));
    assert!(!c.intersects_aabb(&Aabb::from_point([2e-30, 0.0])));
}

/// `nearest` ranked by a squared distance that underflowed to 0 below
/// ~1e-19, while its cut-off used the unsquared gap.
#[test]
fn nearest_ranks_tiny_distances_exactly() {
    let mut tree = QuadTree::new(Aabb::new([-2.0, -2.0], [2.0, 2.0]));
    let a = tree.insert(Aabb::new([1e-30, 0.0], [1.0, 0.0]), ());
    let b = tree.insert(Aabb::new([-1.0, -1.0], [0.0, 0.0]), ());
    assert_eq!(tree.nearest([0.0, 0.0], 1), vec![(b, 0.0)]);
    assert_eq!(tree.nearest([0.0, 0.0], 2), vec![(b, 0.0), (a, 1e-30)]);
    assert_eq!(
        Aabb::new([1e-30, 0.0], [1.0, 0.0]).distance_to_point([0.0, 0.0]),
        1e-30
    );
    // Distances beyond the square root of f32::MAX do not overflow.
    let far = Aabb::from_point([3e30, 4e30]);
    assert_eq!(far.distance_to_point([0.0, 0.0]), 5e30);
}

/// A ray whose direction is subnormal, or whose length overflows `f32`,
/// answers as the same ray with a tame direction.
#[test]
fn ray_directions_at_the_edges_of_f32() {
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    let wall = tree.insert(Aabb::new([50.0, 0.0], [51.0, 100.0]), ());
    let diag = tree.insert(Aabb::new([80.0, 80.0], [81.0, 81.0]), ());
    let tame = tree.raycast(Ray::new([10.0, 10.0], [1.0, 0.0]), f32::INFINITY);
    assert_eq!(tame, Some((wall, 40.0)));
    for dir in [[1e-39, 0.0], [f32::MIN_POSITIVE, 0.0], [f32::MAX, 0.0]] {
        let ray = Ray::new([10.0, 10.0], dir);
        assert_eq!(tree.raycast(ray, f32::INFINITY), tame, "direction {dir:?}");
        assert_eq!(
            ray.intersect_aabb(&Aabb::new([50.0, 0.0], [51.0, 100.0]), 100.0),
            Some(40.0)
        );
    }
    let up_right = tree.raycast_all(Ray::new([60.0, 60.0], [1.0, 1.0]), f32::INFINITY);
    let huge = tree.raycast_all(Ray::new([60.0, 60.0], [f32::MAX, f32::MAX]), f32::INFINITY);
    let tiny = tree.raycast_all(Ray::new([60.0, 60.0], [1e-40, 1e-40]), f32::INFINITY);
    assert_eq!(up_right.len(), 1);
    assert_eq!(up_right[0].0, diag);
    assert_eq!(huge, up_right);
    assert_eq!(tiny, up_right);
}

/// Boxes farther from a ray's origin than `f32::MAX` are hit at infinity,
/// and found only when the ray's reach is unbounded.
#[test]
fn rays_across_the_whole_f32_range() {
    let mut tree = QuadTree::new(Aabb::new([-f32::MAX, -1.0], [f32::MAX, 1.0]));
    let far = tree.insert(Aabb::new([f32::MAX, 0.0], [f32::MAX, 0.0]), ());
    let ray = Ray::new([-f32::MAX, 0.0], [1.0, 0.0]);
    assert_eq!(tree.raycast(ray, f32::MAX), None);
    assert_eq!(tree.raycast(ray, f32::INFINITY), Some((far, f32::INFINITY)));
    let ray = Ray::new([0.0, 0.0], [1.0, 0.0]);
    assert_eq!(tree.raycast(ray, f32::MAX), Some((far, f32::MAX)));
}

/// An iterator that panicked halfway through a bulk `insert_many` left the
/// tree counting items it could not find, and invalid.
#[test]
fn a_panicking_iterator_leaves_the_tree_as_it_was() {
    for before in [0usize, 10, 5000] {
        let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
        let old: Vec<Key> = (0..before)
            .map(|i| tree.insert(Aabb::from_point([(i % 100) as f32, (i / 100) as f32]), i))
            .collect();
        let shape: Vec<_> = tree.nodes().collect();
        let items = (0..6000usize).map(|i| {
            assert!(i != 3000, "the caller's iterator fails");
            (Aabb::from_point([(i % 97) as f32, (i % 89) as f32]), i)
        });
        let caught = catch_unwind(AssertUnwindSafe(|| tree.insert_many(items)));
        assert!(caught.is_err());
        tree.validate().unwrap();
        assert_eq!(tree.len(), before);
        assert_eq!(tree.nodes().collect::<Vec<_>>(), shape);
        for (i, &k) in old.iter().enumerate() {
            assert_eq!(tree.get(k), Some(&i));
        }
        // And the tree goes on working.
        let k = tree.insert(Aabb::from_point([5.0, 5.0]), usize::MAX);
        tree.validate().unwrap();
        assert_eq!(tree.remove(k), Some(usize::MAX));
    }
}

/// A value whose destructor panics while `clear` drops it leaves an empty,
/// valid tree behind.
#[test]
fn a_panicking_destructor_during_clear() {
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 && !std::thread::panicking() {
                panic!("the caller's destructor fails");
            }
        }
    }
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    for i in 0..200 {
        tree.insert(Aabb::from_point([i as f32 * 0.5, 1.0]), Bomb(i == 50));
    }
    let caught = catch_unwind(AssertUnwindSafe(|| tree.clear()));
    assert!(caught.is_err());
    tree.validate().unwrap();
    assert!(tree.is_empty());
    assert_eq!(tree.iter().count(), 0);
    let k = tree.insert(Aabb::from_point([1.0, 1.0]), Bomb(false));
    assert_eq!(tree.len(), 1);
    assert!(tree.contains_key(k));
    tree.validate().unwrap();
}

/// A body's value whose destructor panics while `CollisionWorld::clear`
/// drops it still leaves a world that knows every body is gone: the next
/// step ends the last step's contacts and reports none, and the world's
/// snapshot reads back. (The world used to learn of the clear only after
/// the tree's `clear` returned, so its next step carried the contact of two
/// removed bodies over, forever, and its snapshot was refused.)
#[test]
fn a_panicking_destructor_during_a_world_clear() {
    use quadrat::{CollisionWorld, Filter, Shape};
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            if std::mem::replace(&mut self.0, false) && !std::thread::panicking() {
                panic!("the caller's destructor fails");
            }
        }
    }
    #[cfg(feature = "serde")]
    impl serde::Serialize for Bomb {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_unit()
        }
    }
    for bomb in [0, 1, 7] {
        let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
        let ball = Shape::Circle { radius: 1.0 };
        let keys: Vec<Key> = (0..8)
            .map(|i| {
                world.add(
                    ball,
                    [10.0 + 1.5 * i as f32, 10.0],
                    Filter::ALL,
                    Bomb(i == bomb),
                )
            })
            .collect();
        let before: Vec<_> = world.step().contacts.iter().map(|c| c.keys()).collect();
        assert_eq!(before.len(), 7);
        assert!(catch_unwind(AssertUnwindSafe(|| world.clear())).is_err());
        assert!(world.is_empty() && keys.iter().all(|&k| !world.contains_key(k)));
        #[cfg(feature = "serde")]
        {
            let json = serde_json::to_string(&world).expect("serialize");
            let copy: CollisionWorld<()> = serde_json::from_str(&json).expect("restore");
            assert!(copy.is_empty());
        }
        let events = world.step();
        assert!(events.contacts.is_empty(), "bomb {bomb}");
        assert_eq!(events.ended, before, "bomb {bomb}");
        assert!(world.step().ended.is_empty());
    }
}

/// A closure that panics inside `update_all` and `retain` leaves the tree
/// valid, with every item still where its box says.
#[test]
fn panicking_closures_in_update_all_and_retain() {
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    let keys: Vec<Key> = (0..3000)
        .map(|i| tree.insert(Aabb::from_point([(i % 100) as f32, (i / 30) as f32]), i))
        .collect();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tree.update_all(|_, &v, b| {
            assert!(v != 1500, "the caller's closure fails");
            b.translate([0.25, 0.0])
        })
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    assert_eq!(tree.len(), 3000);
    for &k in &keys {
        let b = tree.aabb(k).unwrap();
        assert!(tree.query(b).any(|(kk, _)| kk == k));
    }
    // Every item jumps: the pass decides early to rebuild, and from then on
    // writes each box straight into its entry. A panic then leaves every
    // box returned before it written, and the rest as they were.
    let before: Vec<Aabb> = keys.iter().map(|&k| tree.aabb(k).unwrap()).collect();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tree.update_all(|_, &v, b| {
            assert!(v != 2500, "the caller's closure fails");
            b.translate([0.0, 50.0])
        })
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    assert_eq!(tree.len(), 3000);
    let mut moved = 0;
    for (&k, old) in keys.iter().zip(&before) {
        let b = tree.aabb(k).unwrap();
        let jumped = b == old.translate([0.0, 50.0]);
        assert!(
            jumped || b == *old,
            "{k:?}: {b:?} is neither its old box nor its new one"
        );
        moved += usize::from(jumped);
        assert!(tree.query(b).any(|(kk, _)| kk == k));
    }
    // Slots in key order: the items before the one that panicked moved.
    assert_eq!(moved, 2500);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tree.retain(|_, _, v| {
            assert!(*v != 2000, "the caller's closure fails");
            *v % 2 == 0
        })
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    assert_eq!(tree.len(), 3000 - 1000);
    let v = Vec2::new(0.0, 0.0);
    assert!(tree.nearest(v, 1).len() == 1);
}

/// A closure that panics on one of rayon's threads inside `par_update_all`
/// leaves every item where it was.
#[cfg(feature = "parallel")]
#[test]
fn a_panicking_closure_in_par_update_all() {
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    let boxes: Vec<Aabb> = (0..50_000)
        .map(|i| Aabb::from_point([(i % 100) as f32, (i / 500) as f32]))
        .collect();
    let keys = tree.insert_many(boxes.iter().copied().zip(0..));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tree.par_update_all(|_, &v, b| {
            assert!(v != 40_000, "the caller's closure fails");
            b.translate([0.5, 0.5])
        })
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    for (k, b) in keys.iter().zip(&boxes) {
        assert_eq!(tree.aabb(*k), Some(*b));
    }
    tree.par_update_all(|_, _, b| b.translate([0.5, 0.5]));
    tree.validate().unwrap();
    assert_eq!(tree.aabb(keys[7]), Some(boxes[7].translate([0.5, 0.5])));
}

/// The circle query stopped scanning a sorted run at `center.x + radius`
/// rounded to `f32`, while the `f64` test, which rounds too, accepts a box
/// whose gap exceeds the radius by less than its last bit.
#[test]
fn circle_query_cut_off_agrees_with_the_f64_test() {
    let r = 1.490_116_1e-8f32;
    let circle = Circle::new([-r, 4.321_336_7e-7], r);
    let b = Aabb::new([3e-26, 4.321_336_7e-7], [3e-26, 4.321_336_7e-7]);
    assert!(circle.intersects_aabb(&b), "within f64 rounding of the rim");
    let mut tree = QuadTree::new(Aabb::new([-1e-6, -1e-6], [1e-6, 1e-6]));
    let k = tree.insert(b, ());
    let hits: Vec<Key> = tree.query_circle(circle).map(|(k, _)| k).collect();
    assert_eq!(hits, vec![k]);
}

/// The fuzz input `fuzz/corpus/tree_ops/regression-negative-zero`, as its
/// bytes decoded when it was found: a world of zero size at the origin,
/// points at +0 and -0 inserted in one parallel batch, and a ray from the
/// origin. The slab test let a side met going backwards through the origin
/// make the entry distance -0.0, which `total_cmp` orders before the other
/// point's +0.0, so the ray casts disagreed with brute force on ties. Kept
/// here as operations because each new operation in the fuzz input
/// re-maps what committed bytes decode to.
#[test]
fn fuzz_points_at_both_zeros_in_a_zero_size_world() {
    use crate::support::tree::{Harness, Op, Probe};
    let world = Aabb::new([0.0, 0.0], [0.0, 0.0]);
    let config = Config {
        max_items: 20,
        max_depth: 19,
        ..Config::default()
    };
    let mut h = Harness::new(world, config);
    h.panics = false;
    let batch = vec![Aabb::from_point([0.0, 0.0]), Aabb::from_point([-0.0, -0.0])];
    h.apply(&Op::ParInsertMany(batch)).unwrap();
    h.check_items().unwrap();
    let probe = Probe {
        area: world,
        circle: Circle::new([0.0, 0.0], 0.0),
        point: Vec2::new(0.0, 0.0),
        k: 5,
        ray: Ray::new([0.0, 0.0], [0.958_921_3, 0.283_672_15]),
        max_dist: f32::INFINITY,
    };
    h.check(&probe).unwrap();
}

/// A ray from far away along an axis hits every shape its line crosses.
/// From more than 64 sizes away, `Shape::raycast` starts its `f32` tests
/// near the shape's box; that point was taken at the box's entry, computed
/// in `f64` from coordinates as large as the origin's, so from 10¹⁵ on it
/// could round past a shape smaller than that rounding (about a hundred
/// units at 10¹⁷), and the ray missed: 34k of 3M such rays did. Along an
/// axis the line is exact (the other coordinate never changes), so the
/// right answer is known exactly here, and so is, for a box, the distance.
#[test]
fn far_rays_along_an_axis_hit_what_they_cross() {
    use crate::support::shapes::Rng;
    use quadrat::Shape;
    let mut rng = Rng::new(17);
    let (mut hits, mut cases) = (0, 0);
    for i in 0..60_000 {
        let size = 10f32.powf(rng.unit() * 3.0 - 1.0);
        let far = size * 10f32.powf(3.0 + rng.unit() * 15.0);
        let c = Vec2::new((rng.unit() - 0.5) * 200.0, (rng.unit() - 0.5) * 200.0);
        // The shape, and its extent across the ray along x (y) and along y
        // (x), in f64.
        let (shape, across) = match i % 3 {
            0 => (Shape::Circle { radius: size }, [f64::from(size); 2]),
            1 => {
                let h = Vec2::new(size, size * 0.7);
                let across = [f64::from(h.y), f64::from(h.x)];
                (Shape::Aabb { half_extents: h }, across)
            }
            _ => {
                let hs = Vec2::new(
                    (rng.unit() - 0.5) * size * 4.0,
                    (rng.unit() - 0.5) * size * 4.0,
                );
                let r = size * 0.5;
                let across = [
                    f64::from(hs.y.abs()) + f64::from(r),
                    f64::from(hs.x.abs()) + f64::from(r),
                ];
                (
                    Shape::Capsule {
                        half_segment: hs,
                        radius: r,
                    },
                    across,
                )
            }
        };
        let axis = (i / 3) % 4;
        let off = (rng.unit() - 0.5) * size * 6.0;
        // Along x (axis 0, 1) or y (2, 3), toward the shape from either side.
        let (origin, dir, side, centre) = match axis {
            0 => ([c.x + far, c.y + off], [-1.0, 0.0], c.y + off, c.y),
            1 => ([c.x - far, c.y + off], [1.0, 0.0], c.y + off, c.y),
            2 => ([c.x + off, c.y + far], [0.0, -1.0], c.x + off, c.x),
            _ => ([c.x + off, c.y - far], [0.0, 1.0], c.x + off, c.x),
        };
        let gap = (f64::from(side) - f64::from(centre)).abs();
        let extent = across[axis / 2];
        if (gap - extent).abs() < 1e-3 * extent {
            continue; // within rounding of the rim
        }
        cases += 1;
        let ray = Ray::new(origin, dir);
        let hit = shape.raycast(c, ray, f32::INFINITY);
        assert_eq!(
            hit.is_some(),
            gap <= extent,
            "{shape:?} at {c:?}, ray {ray:?}: {hit:?}"
        );
        if let (Some(hit), Shape::Aabb { .. }) = (hit, shape) {
            hits += 1;
            let b = shape.aabb(c);
            let exact = match axis {
                0 => f64::from(origin[0]) - f64::from(b.max.x),
                1 => f64::from(b.min.x) - f64::from(origin[0]),
                2 => f64::from(origin[1]) - f64::from(b.max.y),
                _ => f64::from(b.min.y) - f64::from(origin[1]),
            };
            let ulp = f64::from((exact as f32).next_up() - exact as f32);
            assert!(
                (f64::from(hit.dist) - exact).abs() <= 2.0 * ulp,
                "{shape:?} at {c:?}, ray {ray:?}: {} against {exact}",
                hit.dist
            );
        }
    }
    assert!(
        cases > 50_000 && hits > 5_000,
        "{cases} cases, {hits} box hits"
    );
}

/// `nearest_with` takes a caller's distance up to a relative 2⁻²⁰ below the
/// box's, as an exact distance computed in `f32` may round. A search that
/// stopped at exactly the k-th best distance skipped a box at a distance
/// just above it whose item's own distance was below: the collision world's
/// nearest missed a body about 1e-11 from the point (the `world_ops` input
/// `regression-nearest-rounding`). Here a column of boxes lies at one box
/// distance, each reporting a little less, among random boxes, at scales
/// from 1e-11 to 1e10; the answer must be brute force's.
#[test]
fn nearest_with_finds_distances_that_round_below_their_box() {
    use crate::support::shapes::Rng;
    let mut rng = Rng::new(29);
    let mut checked = 0;
    for scale in [1e-11f32, 1e-3, 1.0, 1e10] {
        for round in 0..40 {
            let mut tree = scaled_tree(scale, round);
            let p = Vec2::new(rng.range(20.0, 80.0) * scale, rng.range(20.0, 80.0) * scale);
            let gap = rng.range(1.0, 10.0) * scale;
            // How far below its box's distance each item reports, relative.
            let below = |rng: &mut Rng| 1.0 - f64::from(rng.unit()) / f64::from(1u32 << 21);
            let mut items = Vec::new();
            for i in 0..60 {
                let b = if i % 2 == 0 {
                    // On the column at `gap` to the right of `p`, across it.
                    let x = p.x + gap;
                    let lo = p.y - rng.range(0.0, 20.0) * scale;
                    let w = rng.range(0.0, 5.0) * scale;
                    Aabb::new([x, lo], [x + w, p.y + rng.range(0.0, 20.0) * scale])
                } else {
                    let c = Vec2::new(rng.range(0.0, 100.0) * scale, rng.range(0.0, 100.0) * scale);
                    let h = rng.range(0.0, 3.0) * scale;
                    Aabb::new(c - Vec2::splat(h), c + Vec2::splat(h))
                };
                items.push(tree.insert(b, below(&mut rng)));
            }
            // The box's distance in f64, scaled by the item's own factor.
            let dist = |_: Key, f: &f64, b: Aabb| {
                let dx = (f64::from(b.min.x) - f64::from(p.x))
                    .max(f64::from(p.x) - f64::from(b.max.x))
                    .max(0.0);
                let dy = (f64::from(b.min.y) - f64::from(p.y))
                    .max(f64::from(p.y) - f64::from(b.max.y))
                    .max(0.0);
                Some(((dx * dx + dy * dy).sqrt() * f) as f32)
            };
            let mut all: Vec<(Key, f32)> = items
                .iter()
                .map(|&k| (k, dist(k, &tree[k], tree.aabb(k).unwrap()).unwrap()))
                .collect();
            all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            for k in [1, 3, 10, 30] {
                assert_eq!(
                    tree.nearest_with(p, k, dist),
                    all[..k].to_vec(),
                    "scale {scale}, round {round}, k {k}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 40 * 4);
}

/// The ray casts with a caller's test raise a hit distance below its box's
/// entry to the entry, so a box entered beyond the best hit so far can be
/// passed over. Without the raise, a hit that rounds below its box's entry
/// beats one at the true entry, and the cast returns whichever of a column
/// of such boxes it happened to visit first. Here a column of boxes across
/// the ray at one entry distance each report a little less, among random
/// boxes, at scales from 1e-11 to 1e10; the answers must be the raised
/// distances, ties by key. Some hits lie beyond their entry, and past
/// `max_dist`: those are not hits.
#[test]
fn ray_casts_with_raise_hits_below_their_box_to_its_entry() {
    use crate::support::shapes::Rng;
    let mut rng = Rng::new(31);
    let (mut checked, mut beyond) = (0, 0);
    for scale in [1e-11f32, 1e-3, 1.0, 1e10] {
        for round in 0..40 {
            let mut tree = scaled_tree(scale, round);
            let o = Vec2::new(rng.range(5.0, 50.0) * scale, rng.range(20.0, 80.0) * scale);
            let gap = rng.range(1.0, 10.0) * scale;
            for i in 0..60 {
                let b = if i % 2 == 0 {
                    // Across the ray at `gap` from its origin.
                    let x = o.x + gap;
                    let w = rng.range(0.0, 5.0) * scale;
                    let (lo, hi) = (rng.range(0.0, 20.0), rng.range(0.0, 20.0));
                    Aabb::new([x, o.y - lo * scale], [x + w, o.y + hi * scale])
                } else {
                    let c = Vec2::new(rng.range(0.0, 100.0) * scale, rng.range(0.0, 100.0) * scale);
                    let h = rng.range(0.0, 3.0) * scale;
                    Aabb::new(c - Vec2::splat(h), c + Vec2::splat(h))
                };
                // How far below its box's entry the item reports: a
                // relative 2⁻²¹ at most, or 0 ("at the box") for one in 8,
                // or up to three times beyond it (past `max_dist`, maybe)
                // for one in 4.
                let f = if rng.chance(12) {
                    0.0
                } else if rng.chance(25) {
                    1.0 + 2.0 * f64::from(rng.unit())
                } else {
                    1.0 - f64::from(rng.unit()) / f64::from(1u32 << 21)
                };
                tree.insert(b, f);
            }
            // Entered at a quarter of `gap`, hit at three quarters: within
            // `max_dist` = `gap`, beyond `max_dist` = `gap / 2`.
            let (x, y) = (o.x + gap * 0.25, o.y);
            tree.insert(Aabb::new([x, y - gap], [x + gap * 0.1, y + gap]), 3.0);
            let ray = Ray::new(o, [1.0, 0.0]);
            // Along +x from `o`, a box the ray crosses is entered at its min.x.
            let hit = |_: Key, f: &f64, b: Aabb| {
                let t = (f64::from(b.min.x) - f64::from(o.x)).max(0.0);
                Some((t * f) as f32)
            };
            for max_dist in [f32::INFINITY, gap * 0.5, gap, gap * 2.0] {
                // Brute force: each box the ray enters within `max_dist`,
                // at the larger of its hit and its entry, if that is within
                // `max_dist` too.
                let mut all: Vec<(Key, f32)> = tree
                    .raycast_all(ray, max_dist)
                    .into_iter()
                    .map(|(k, t0)| (k, hit(k, &tree[k], tree.aabb(k).unwrap()).unwrap().max(t0)))
                    .filter(|&(_, d)| d <= max_dist)
                    .collect();
                beyond += tree.raycast_all(ray, max_dist).len() - all.len();
                all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                let at = format!("scale {scale}, round {round}, max_dist {max_dist}");
                assert_eq!(tree.raycast_all_with(ray, max_dist, hit), all, "{at}");
                assert_eq!(
                    tree.raycast_with(ray, max_dist, hit),
                    all.first().copied(),
                    "{at}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 40 * 4);
    assert!(beyond > 100, "{beyond} hits beyond max_dist");
}

/// Worlds and boxes at odd multiples of the smallest subnormal. Halving
/// each coordinate before adding rounded twice there, so a centre could
/// fall outside its box (the point box at 3 × 2⁻¹⁴⁹ had its centre at
/// 4 × 2⁻¹⁴⁹), and a cell of zero width split at a point outside itself:
/// half of the nodes `nodes()` showed had `min > max`. Queries and pairs
/// still agreed with brute force, since every path placed by the same
/// centre, and `validate()` did not check that a cell lies inside its
/// parent's.
#[test]
fn cells_at_odd_subnormal_coordinates_nest() {
    let u = f32::from_bits;
    let worlds = [
        Aabb::new([u(1), 0.0], [u(1), 100.0]),
        Aabb::from_point([u(3), u(3)]),
        Aabb::new([u(3), u(3)], [u(5), u(5)]),
        Aabb::new([u(1), u(1)], [u(3), u(7)]),
        Aabb::new([-u(5), -u(3)], [u(3), u(5)]),
    ];
    for world in worlds {
        let mut tree = QuadTree::with_config(
            world,
            Config {
                max_items: 1,
                max_depth: 8,
                ..Config::default()
            },
        );
        let mut boxes = Vec::new();
        for i in 0..64u32 {
            let x = world.min.x + (world.max.x - world.min.x) * (i % 8) as f32 / 8.0;
            let y = world.min.y + (world.max.y - world.min.y) * (i / 8) as f32 / 8.0;
            let b = Aabb::new([x, y], [x.max(u(i % 5)), y]);
            assert!(b.contains_point(b.center()), "{b:?}");
            boxes.push((tree.insert(b, i), b));
            tree.validate()
                .unwrap_or_else(|e| panic!("{world:?}, insert #{i}: {e}"));
        }
        let nodes: Vec<_> = tree.nodes().collect();
        assert!(nodes.len() > 1, "{world:?}: the tree split");
        for n in &nodes {
            assert!(
                n.bounds.is_valid() && world.contains(&n.bounds),
                "{world:?}: {n:?}"
            );
            assert!(n.loose.contains(&n.bounds), "{world:?}: {n:?}");
        }
        for &(k, b) in &boxes {
            assert!(tree.query(b).any(|(key, _)| key == k), "{world:?}: {b:?}");
        }
    }
}
