//! Questions asked of the world: overlap, pick, nearest, ray casts. Each
//! takes a [`Layers`] `mask` and finds only bodies whose `layer` meets it.

use super::{CollisionWorld, Layers, body_in_range, broad_box, point_in_range};
use crate::geom::{Ray, Vec2};
use crate::key::Key;
use crate::shape::{Contact, RayHit, Shape};

impl<T> CollisionWorld<T> {
    /// `true` when the body of live key `key` is on a layer of `mask`.
    #[inline]
    fn on(&self, key: Key, mask: Layers) -> bool {
        self.filters[key.index() as usize].layer.intersects(mask)
    }

    /// The bodies on a layer of `mask` that `shape` at `pos` touches
    /// (touching counts), sorted by key.
    ///
    /// Empty when the shape is invalid or `pos` is not finite, or either
    /// lies beyond [`WORLD_LIMIT`](crate::WORLD_LIMIT).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// const FRIEND: Layers = Layers::bit(0);
    /// const ENEMY: Layers = Layers::bit(1);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let near = world.add(ball, [10.0, 10.0], Filter::on(ENEMY), "near");
    /// world.add(ball, [30.0, 10.0], Filter::on(ENEMY), "far");
    /// world.add(ball, [11.0, 10.0], Filter::on(FRIEND), "friend");
    /// let blast = Shape::Circle { radius: 5.0 };
    /// assert_eq!(world.overlap(&blast, [14.0, 10.0], ENEMY), vec![near]); // touching at x = 9 + 2
    /// ```
    #[must_use]
    pub fn overlap(&self, shape: &Shape, pos: impl Into<Vec2>, mask: Layers) -> Vec<Key> {
        let mut out = Vec::new();
        self.overlap_into(shape, pos, mask, &mut out);
        out
    }

    /// Appends the keys of [`overlap`](CollisionWorld::overlap) to `out`
    /// (the appended part sorted by key): the form for hot loops that reuse
    /// one `Vec`. Allocates only when `out` must grow.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [5.0, 5.0], Filter::ALL, ());
    /// let mut out = Vec::new();
    /// world.overlap_into(&Shape::Aabb { half_extents: [1.0, 1.0].into() }, [6.0, 6.0], Layers::ALL, &mut out);
    /// assert_eq!(out, vec![k]);
    /// ```
    pub fn overlap_into(
        &self,
        shape: &Shape,
        pos: impl Into<Vec2>,
        mask: Layers,
        out: &mut Vec<Key>,
    ) {
        let pos = pos.into();
        let start = out.len();
        self.visit_overlap(shape, pos, mask, |key, body_shape, body_pos| {
            if shape.intersects(pos, body_shape, body_pos) {
                out.push(key);
            }
        });
        out[start..].sort_unstable();
    }

    /// Like [`overlap`](CollisionWorld::overlap), with the [`Contact`] of
    /// each body: its normal points from the query shape towards the body.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let wall = world.add(Shape::Aabb { half_extents: [1.0, 10.0].into() }, [12.0, 10.0], Filter::ALL, ());
    /// let hits = world.overlap_contacts(&Shape::Circle { radius: 2.0 }, [10.0, 10.0], Layers::ALL);
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!(hits[0].0, wall);
    /// assert_eq!((hits[0].1.normal, hits[0].1.depth), (Vec2::new(1.0, 0.0), 1.0));
    /// ```
    #[must_use]
    pub fn overlap_contacts(
        &self,
        shape: &Shape,
        pos: impl Into<Vec2>,
        mask: Layers,
    ) -> Vec<(Key, Contact)> {
        let pos = pos.into();
        let mut out = Vec::new();
        self.visit_overlap(shape, pos, mask, |key, body_shape, body_pos| {
            if let Some(c) = shape.contact(pos, body_shape, body_pos) {
                out.push((key, c));
            }
        });
        out.sort_unstable_by_key(|x| x.0);
        out
    }

    /// Calls `f(key, shape, position)` for each body on a layer of `mask`
    /// whose broad-phase box meets that of `shape` at `pos`.
    fn visit_overlap(
        &self,
        shape: &Shape,
        pos: Vec2,
        mask: Layers,
        mut f: impl FnMut(Key, &Shape, Vec2),
    ) {
        if !body_in_range(shape, pos) || mask.is_empty() {
            return;
        }
        let area = broad_box(shape, pos);
        for (key, _) in self.tree.query(area) {
            if self.on(key, mask) {
                let (body_shape, body_pos) = &self.placed[key.index() as usize];
                f(key, body_shape, *body_pos);
            }
        }
    }

    /// The bodies on a layer of `mask` that contain the point `p` (their
    /// boundary included), sorted by key. Empty when `p` is not finite or
    /// lies beyond [`WORLD_LIMIT`](crate::WORLD_LIMIT).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = world.add(Shape::Circle { radius: 2.0 }, [10.0, 10.0], Filter::ALL, "ball");
    /// assert_eq!(world.pick([12.0, 10.0], Layers::ALL), vec![ball]); // on the rim
    /// assert_eq!(world.pick([11.5, 11.5], Layers::ALL), vec![]); // in the box, not the disc
    /// ```
    #[must_use]
    pub fn pick(&self, p: impl Into<Vec2>, mask: Layers) -> Vec<Key> {
        let mut out = Vec::new();
        self.pick_into(p, mask, &mut out);
        out
    }

    /// Appends the keys of [`pick`](CollisionWorld::pick) to `out` (the
    /// appended part sorted by key). Allocates only when `out` must grow.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [5.0, 5.0], Filter::ALL, ());
    /// let mut out = Vec::new();
    /// world.pick_into([5.0, 5.0], Layers::ALL, &mut out);
    /// assert_eq!(out, vec![k]);
    /// ```
    pub fn pick_into(&self, p: impl Into<Vec2>, mask: Layers, out: &mut Vec<Key>) {
        let p = p.into();
        if !p.is_finite() || !point_in_range(p) || mask.is_empty() {
            return;
        }
        let start = out.len();
        for (key, _) in self.tree.query_point(p) {
            if self.on(key, mask) {
                let (shape, pos) = &self.placed[key.index() as usize];
                if shape.contains_point(*pos, p) {
                    out.push(key);
                }
            }
        }
        out[start..].sort_unstable();
    }

    /// The `k` bodies on a layer of `mask` nearest to `p`, as
    /// `(key, distance)` with the exact Euclidean distance from `p` to each
    /// body's shape (0 inside or on the boundary), ascending, ties broken by
    /// key.
    ///
    /// Fewer than `k` when fewer bodies are on those layers; empty for
    /// `k = 0`, or a `p` not finite or beyond
    /// [`WORLD_LIMIT`](crate::WORLD_LIMIT).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let (ground, sky) = (Layers::bit(0), Layers::bit(1));
    /// let a = world.add(Shape::Circle { radius: 5.0 }, [10.0, 10.0], Filter::on(ground), ());
    /// let b = world.add(Shape::Point, [20.0, 10.0], Filter::on(ground), ());
    /// world.add(Shape::Point, [16.0, 10.0], Filter::on(sky), ()); // on another layer
    /// assert_eq!(world.nearest([17.0, 10.0], 2, ground), vec![(a, 2.0), (b, 3.0)]);
    /// assert_eq!(world.nearest([17.0, 10.0], 0, ground), vec![]);
    /// ```
    #[must_use]
    pub fn nearest(&self, p: impl Into<Vec2>, k: usize, mask: Layers) -> Vec<(Key, f32)> {
        let p = p.into();
        if mask.is_empty() || !point_in_range(p) {
            return Vec::new();
        }
        self.tree.nearest_with(p, k, |key, _, _| {
            if !self.on(key, mask) {
                return None;
            }
            let (shape, pos) = &self.placed[key.index() as usize];
            Some(shape.distance_to_point(*pos, p))
        })
    }

    /// The first body on a layer of `mask` that `ray` hits within
    /// `max_dist` of its origin, with the [`RayHit`]: the Euclidean
    /// distance along the ray and the shape's outward normal there (see
    /// [`Shape::raycast`]; a ray starting inside a body hits it at distance
    /// 0). Ties are broken by key.
    ///
    /// `None` when nothing is hit, for an invalid ray (a non-finite origin
    /// or direction, or a zero direction), an origin beyond
    /// [`WORLD_LIMIT`](crate::WORLD_LIMIT), and for a NaN or negative
    /// `max_dist`. `max_dist` may be infinite.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Ray, Shape, Vec2};
    /// const ENEMY: Layers = Layers::bit(1);
    /// const TREE: Layers = Layers::bit(2);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let enemy = world.add(Shape::Circle { radius: 1.0 }, [50.0, 10.0], Filter::on(ENEMY), ());
    /// let tree = world.add(Shape::Circle { radius: 3.0 }, [30.0, 12.0], Filter::on(TREE), ());
    /// let bullet = Ray::new([0.0, 10.0], [1.0, 0.0]);
    /// let (hit, at) = world.raycast(bullet, 1000.0, ENEMY | TREE).unwrap();
    /// assert_eq!(hit, tree); // the tree stands in the way
    /// assert!((at.dist - (30.0 - 5.0f32.sqrt())).abs() < 1e-4);
    /// // Through the trees, only enemies:
    /// let (hit, at) = world.raycast(bullet, 1000.0, ENEMY).unwrap();
    /// assert_eq!((hit, at.dist, at.normal), (enemy, 49.0, Vec2::new(-1.0, 0.0)));
    /// assert_eq!(world.raycast(Ray::new([0.0, 0.0], [0.0, 0.0]), 1000.0, ENEMY), None);
    /// ```
    #[must_use]
    pub fn raycast(&self, ray: Ray, max_dist: f32, mask: Layers) -> Option<(Key, RayHit)> {
        if mask.is_empty() || !point_in_range(ray.origin) {
            return None;
        }
        let (key, _) = self.tree.raycast_with(ray, max_dist, |key, _, _| {
            self.exact_hit(key, ray, max_dist, mask).map(|h| h.dist)
        })?;
        self.exact_hit(key, ray, max_dist, mask).map(|h| (key, h))
    }

    /// Every body on a layer of `mask` that `ray` hits within `max_dist`,
    /// with its [`RayHit`], sorted by distance, then key. Empty when
    /// [`raycast`](CollisionWorld::raycast) would be `None` for every body.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Ray, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let far = world.add(ball, [20.0, 0.0], Filter::ALL, ());
    /// let near = world.add(ball, [10.0, 0.0], Filter::ALL, ());
    /// let hits = world.raycast_all(Ray::new([0.0, 0.0], [1.0, 0.0]), 100.0, Layers::ALL);
    /// let found: Vec<_> = hits.iter().map(|(k, h)| (*k, h.dist)).collect();
    /// assert_eq!(found, vec![(near, 9.0), (far, 19.0)]);
    /// ```
    #[must_use]
    pub fn raycast_all(&self, ray: Ray, max_dist: f32, mask: Layers) -> Vec<(Key, RayHit)> {
        if mask.is_empty() || !point_in_range(ray.origin) {
            return Vec::new();
        }
        let found = self.tree.raycast_all_with(ray, max_dist, |key, _, _| {
            self.exact_hit(key, ray, max_dist, mask).map(|h| h.dist)
        });
        let mut out: Vec<(Key, RayHit)> = found
            .into_iter()
            .filter_map(|(key, _)| self.exact_hit(key, ray, max_dist, mask).map(|h| (key, h)))
            .collect();
        out.sort_unstable_by(|x, y| x.1.dist.total_cmp(&y.1.dist).then(x.0.cmp(&y.0)));
        out
    }

    /// The exact hit of `ray` on the body of live key `key`, if it is on a
    /// layer of `mask`.
    #[inline]
    fn exact_hit(&self, key: Key, ray: Ray, max_dist: f32, mask: Layers) -> Option<RayHit> {
        if !self.on(key, mask) {
            return None;
        }
        let (shape, pos) = &self.placed[key.index() as usize];
        shape.raycast(*pos, ray, max_dist)
    }
}
