//! The optional features: parallel pairs agree with the sequential finder,
//! serde round-trips, glam and mint convert.

#[cfg(feature = "parallel")]
#[test]
fn parallel_pairs_equal_sequential_pairs() {
    use quadrat::scenario::{Layout, Scenario};
    use quadrat::{Config, QuadTree};
    use std::sync::atomic::{AtomicUsize, Ordering};
    for layout in Layout::ALL {
        for (n, max_items) in [(0, 32), (1, 1), (5000, 4), (20_000, 32)] {
            let s = Scenario::new(layout, n, 17);
            let mut tree = QuadTree::with_config(
                s.world,
                Config {
                    max_items,
                    ..Config::default()
                },
            );
            tree.insert_many(s.boxes().into_iter().zip(0..));
            let expected = tree.pairs();
            assert_eq!(tree.par_pairs(), expected, "{layout:?} n={n}");
            let count = AtomicUsize::new(0);
            tree.par_for_each_pair(|a, b| {
                assert!(a < b);
                count.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(count.into_inner(), expected.len());
        }
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips() {
    use quadrat::{Aabb, Circle, Config, QuadTree, Ray, Shape, Vec2};
    fn round<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        v: T,
    ) {
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<T>(&json).unwrap(), v, "{json}");
    }
    round(Vec2::new(1.5, -2.0));
    round(Aabb::new([0.0, 1.0], [2.0, 3.0]));
    round(Circle::new([1.0, 1.0], 4.0));
    round(Ray::new([0.0, 0.0], [1.0, 0.0]));
    round(Shape::Capsule {
        half_segment: Vec2::new(1.0, 2.0),
        radius: 0.5,
    });
    round(Config::default());
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [1.0, 1.0]));
    round(tree.insert(Aabb::new([0.0, 0.0], [1.0, 1.0]), ()));
}

#[cfg(feature = "glam")]
#[test]
fn glam_converts() {
    let v: quadrat::Vec2 = glam::Vec2::new(3.0, 4.0).into();
    assert_eq!(v, quadrat::Vec2::new(3.0, 4.0));
    let back: glam::Vec2 = v.into();
    assert_eq!(back, glam::Vec2::new(3.0, 4.0));
}

#[cfg(feature = "mint")]
#[test]
fn mint_converts() {
    let v: quadrat::Vec2 = mint::Vector2 { x: 3.0, y: 4.0 }.into();
    let p: mint::Point2<f32> = v.into();
    assert_eq!((p.x, p.y), (3.0, 4.0));
}
